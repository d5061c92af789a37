"""The charts: the kit every family uses (kit, kit_files, kit_intervals, kit_labels), the export of a run's data
(export), gnuplot (plot) and one module per chart family. May import read/ and judge/."""

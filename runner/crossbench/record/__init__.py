"""The record contract of one cell (record: fields, schema, ids, time stamps), the figures a cell is judged by
(metrics) and the run directory (rundir). A layer of the runner (runner/README.md): imports the foundation modules
only."""

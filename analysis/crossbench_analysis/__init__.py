"""crossbench analysis: charts (gnuplot) and a one-page report for a run directory, and a compare of two runs.

from crossbench_analysis import analyze
analyze(Path("results/20261122-0130-seed002"))   # charts/*.png|svg, charts/data/*.dat, report.html
"""

from __future__ import annotations

from crossbench_analysis.read.runinfo import AnalysisError

from .pipeline import AnalysisResult, analyze

__all__ = ["AnalysisError", "AnalysisResult", "analyze"]

"""analyze(run_dir): export, plot, findings, report, in that order."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from crossbench_analysis.read.runinfo import AnalysisError, Run, load_run

from .charts import export, plot
from .findings import findings, tfb_reference
from .report import report


@dataclass
class AnalysisResult:
    run_dir: Path
    report: Path
    charts: list[plot.PlotResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def failed_charts(self) -> list[plot.PlotResult]:
        return [c for c in self.charts if not c.ok]


def analyze(run_dir: Path, *, charts: bool = True) -> AnalysisResult:
    """Draws every chart of the run into run_dir/charts/, writes findings.json and findings.md, and
    run_dir/report.html (findings first).

    The report is written even when drawing fails (gnuplot missing, one chart's script failing), so the table
    is never lost; then AnalysisError says what went wrong. charts=False skips gnuplot entirely."""
    run_dir = Path(run_dir)
    return analyzed(load_run(run_dir), charts)


def analyzed(run: Run, charts: bool) -> AnalysisResult:
    run_dir = run.path
    charts_dir = run_dir / "charts"
    jobs = export.export(run, charts_dir)
    drawn = {f"{j.name}.{fmt}" for j in jobs for fmt in plot.FORMATS}
    for stale in [*charts_dir.glob("*.png"), *charts_dir.glob("*.svg")]:
        if stale.name not in drawn:  # a chart an earlier analysis drew that no longer applies
            stale.unlink()
    results: list[plot.PlotResult] = []
    problem = None
    if charts:
        try:
            results = plot.plot_all(jobs, charts_dir, run.footer())
        except plot.GnuplotMissing as e:
            problem = str(e)
            results = [plot.PlotResult(j.name, error="not drawn: gnuplot missing") for j in jobs]
    else:
        results = [plot.PlotResult(j.name, error="not drawn (charts=False)") for j in jobs]
    path = write_report(run, jobs, results)
    result = AnalysisResult(run_dir, path, results, list(run.warnings))
    if problem:
        raise AnalysisError(f"{problem}; {path} has the table without charts")
    if charts and result.failed_charts:
        raise AnalysisError("charts not drawn: " + "; ".join(f"{c.name}: {c.error}" for c in result.failed_charts))
    return result


def write_report(run: Run, jobs, results: list[plot.PlotResult]) -> Path:
    """The findings (citing only the charts drawn), TechEmpower's comparison when the run has its types, and the
    report that shows both; report.html's path."""
    found = findings.write(run, {r.name for r in results if r.ok})  # a chart not drawn is no chart to cite
    compared = tfb_reference.write_for(run)
    return report.write_report(
        run,
        jobs,
        results,
        findings.sections(found),
        tfb_reference.tables(compared) if compared else None,
        findings.written_summary(run.path),
    )

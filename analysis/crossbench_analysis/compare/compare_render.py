"""compare's output: the text table (stdout and compare.txt), the chart's data (through the kit) and
compare.html. Every ratio is printed with its interval and the verdict's word; nothing is judged here."""

from __future__ import annotations

from pathlib import Path

from crossbench.figures.points import fmt_range
from crossbench_analysis.charts import plot
from crossbench_analysis.charts.kit import ChartJob
from crossbench_analysis.charts.kit_files import write_table
from crossbench_analysis.read.runinfo import AnalysisError
from crossbench_analysis.report import pages

from .compare_stats import CANNOT_TELL, FASTER, INCONCLUSIVE, NO_VALUE, SAME, SLOWER, WORDS, Verdict
from .comparison import Comparison, Row

VERDICT_CODE = {SAME: 0, FASTER: 1, SLOWER: 2, CANNOT_TELL: 3, NO_VALUE: 4, INCONCLUSIVE: 5}
PANELS = ("rps", "latency_ms.p99")


def ratio_text(verdict: Verdict) -> str:
    test = verdict.test
    if verdict.ratio is None:
        return "n/a"
    if test is None:
        return f"{verdict.ratio:.3f}"
    return fmt_range(test.ratio, test.low, test.high)


def value(v) -> str:
    return "-" if v is None else f"{v:.4g}"


def summary(cmp: Comparison) -> str:
    counts = cmp.counts()
    named = {SAME: f"same within {100 * cmp.margin:.3g} %"}
    words = ", ".join(f"{counts[w]} {named.get(w, w)}" for w in WORDS if counts.get(w))
    return f"{len(cmp.rows)} point(s) compared by their headline figure: {words}; {cmp.expected_false()}."


def text_table(cmp: Comparison) -> str:
    (name_a, name_b), (run_a, run_b) = cmp.sides, (cmp.run_a, cmp.run_b)
    lines = [
        f"A: {name_a} ({run_a.machine_line()}, {run_a.date})",
        f"B: {name_b} ({run_b.machine_line()}, {run_b.date})",
        f"method: {cmp.method()}",
    ]
    lines += [f"note: {n}" for n in cmp.notes]
    width = max([len(r.label) for r in cmp.rows] + [5])
    header = f"{'point':<{width}} {'n A/B':>6}  {'figure':<17} {'A':>9} {'B':>9}  {'B/A [95% interval]':<26} verdict"
    lines += ["", header, "-" * len(header)]
    for row in cmp.rows:
        for i, (figure, verdict) in enumerate(row.verdicts.items()):
            head = f"{row.label:<{width}} {f'{row.launches[0]}/{row.launches[1]}':>6}" if i == 0 else " " * (width + 7)
            mark = " *" if figure == row.headline else ""
            flag = "  (flagged)" if i == 0 and row.flagged else ""
            lines.append(
                f"{head}  {figure:<17} {value(verdict.a):>9} {value(verdict.b):>9}  "
                f"{ratio_text(verdict):<26} {verdict.said}{mark}{flag}"
            )
    lines += [
        "",
        "* the headline figure: the point's verdict, held to the false discovery rate across the points "
        "(the figures beside it are tested one by one, not adjusted).",
        summary(cmp),
    ]
    return "\n".join(lines) + "\n"


def export(cmp: Comparison, charts_dir: Path) -> ChartJob:
    data_dir = charts_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    columns = ["ordinal", "label", "flagged"] + [
        f"{p}_{c}" for p in ("rps", "p99") for c in ("ratio", "low", "high", "verdict", "floor")
    ]
    rows = []
    for i, row in enumerate(cmp.rows, 1):
        cells: list = [i, row.label, row.flagged]
        for figure in PANELS:
            verdict = row.verdicts[figure]
            test = verdict.test
            cells += [
                verdict.ratio,
                test.low if test else None,
                test.high if test else None,
                VERDICT_CODE[verdict.word],
                verdict.margin,
            ]
        rows.append(cells)
    name_a, name_b = cmp.sides
    write_table(
        data_dir / "compare.dat",
        f"compare B = {name_b} over A = {name_a}: per point, B/A with its "
        "95 % interval (low, high); verdict 0 same within the margin, 1 faster, 2 slower, 3 cannot tell, "
        "4 no value, 5 inconclusive; floor = the equivalence margin (a share)",
        columns,
        rows,
    )
    return ChartJob(
        "compare",
        "compare.gp",
        f"{name_b} (B) over {name_a} (A): B/A per point with its 95 % interval",
        "Per point, B/A of responses per second (top) and of p99 latency (bottom), log scale, with "
        "its 95 % interval (error bars). Grey band: the equivalence margin (1 +/- margin); red: a change "
        "(the whole interval beyond the margin), grey: same within the margin, or inconclusive "
        f"(neither), hollow triangle: cannot tell (too few launches, or tied). {cmp.method()}.",
        {"file_1": "compare.dat", "npoints": len(cmp.rows)},
        ["compare.dat"],
        "; ".join(cmp.notes)[:300],
        "B / A per matching point",
    )


def row_data(row: Row) -> dict:
    figures = [
        {"a": value(v.a), "b": value(v.b), "ratio": ratio_text(v), "word": v.said, "changed": v.changed}
        for v in (row.verdicts[figure] for figure in PANELS)
    ]
    return {
        "label": row.label,
        "launches": row.launches,
        "figures": figures,
        "headline": row.headline,
        "verdict": row.verdict.said,
        "flagged": row.flagged,
    }


def html(cmp: Comparison, job: ChartJob, result: plot.PlotResult) -> str:
    """compare.html from its template (templates/compare.html on the report's base, autoescaped)."""
    facts = []
    for name, run, side in (("A", cmp.run_a, cmp.sides[0]), ("B", cmp.run_b, cmp.sides[1])):
        facts += [
            (name, side),
            (f"{name}: run", f"{run.run_id} ({run.path})"),
            (f"{name}: machine", run.machine_line()),
            (f"{name}: date", run.date),
            (f"{name}: git", run.metadata.get("git_revision")),
        ]
    return pages.render(
        "compare.html",
        cmp=cmp,
        run_facts=facts,
        summary=summary(cmp),
        method=cmp.method(),
        job=job,
        result=result,
        rows=[row_data(row) for row in cmp.rows],
    )


def write(cmp: Comparison, out: Path, charts: bool) -> tuple[Path, str]:
    charts_dir = out / "charts"
    job = export(cmp, charts_dir)
    if charts:
        footer = (
            f"A: {cmp.sides[0]}, {cmp.run_a.machine_line()}, {cmp.run_a.date} | B: "
            f"{cmp.sides[1]}, {cmp.run_b.machine_line()}, {cmp.run_b.date}"
        )
        result = plot.plot_chart(job, charts_dir, footer)
    else:
        result = plot.PlotResult(job.name, error="not drawn (charts=False)")
    text = text_table(cmp)
    (out / "compare.txt").write_text(text)
    html_path = out / "compare.html"
    html_path.write_text(html(cmp, job, result))
    if charts and not result.ok:
        raise AnalysisError(f"compare chart not drawn: {result.error}")
    return html_path, text

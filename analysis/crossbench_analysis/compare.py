"""Compare two runs cell by cell: ratio B/A of rps and of p99 latency, and whether each difference is beyond
noise.

Cells match on KEY_FIELDS (below: what the cell measured and with which server setting); the repetitions of a
key are averaged. Refuses (CompareRefused) when the experiments differ or the two runs do
not hold the same cell keys, unless force=True, which compares the keys both hold and says what was left out.

Noise, per key and figure: when both runs have two or more repetitions with a value, the difference must exceed
twice the larger relative spread ((max - min) / mean) of the two runs' repetitions, and at least FLOOR;
otherwise fixed thresholds (5 % for rps, 10 % for p99). Every row says which rule it used."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from . import plot, report
from .kit import ChartJob, fmt as dat_fmt
from .runinfo import AnalysisError, Run, get, is_valid, load_run, num

KEY_FIELDS = ("group", "server", "setting", "endpoint", "concurrency", "delay_ms", "executor", "max_threads",
              "loadgen", "keepalive", "accept_count", "max_connections", "processes", "backlog", "pipeline", "kind",
              "rate")
FIGURES = {"rps": "rps", "p99": "latency_ms.p99"}
FIXED_THRESHOLD = {"rps": 0.05, "p99": 0.10}
SPREAD_FACTOR = 2.0
FLOOR = 0.01
RULE_REPS = "repetitions"
RULE_FIXED = "fixed"


class CompareRefused(AnalysisError):
    """The two runs are not comparable as asked (exit status 2)."""


def cell_key(cell: dict) -> tuple:
    return tuple(json.dumps(cell.get(f), sort_keys=True) for f in KEY_FIELDS)


def key_labels(keys: list[tuple]) -> dict[tuple, str]:
    """Short labels for the chart and table: server, group or endpoint, delay, concurrency, and any setting
    that varies among the keys (executor, maxThreads, load generator, keep-alive); the group when needed."""
    dicts = {k: {f: json.loads(v) for f, v in zip(KEY_FIELDS, k)} for k in keys}
    varies = {(server, f) for server in {d["server"] for d in dicts.values()}
              for f in ("executor", "max_threads", "loadgen", "keepalive")
              if len({json.dumps(d[f]) for d in dicts.values() if d["server"] == server}) > 1}

    def label(d, with_group):
        endpoint = str(d["endpoint"] or "")
        parts = [str(d["server"])]
        parts.append("static" if endpoint.startswith("/static") else endpoint.rstrip("/").split("/")[-1] or
                     str(d["group"]))
        if with_group:
            parts.append(f"[{d['group']}]")
        if num(d["delay_ms"]):
            parts.append(f"{num(d['delay_ms']) / 1000:g}s")
        if (d["server"], "executor") in varies and d["executor"]:
            parts.append(str(d["executor"]))
        if (d["server"], "max_threads") in varies and d["max_threads"] is not None and d["executor"] != "virtual":
            parts.append(f"maxThreads={d['max_threads']}")
        if (d["server"], "loadgen") in varies:
            parts.append(str(d["loadgen"]))
        if (d["server"], "keepalive") in varies:
            parts.append("keep-alive" if d["keepalive"] else "close")
        parts.append(f"C{d['concurrency']}")
        return " ".join(parts)

    plain = {k: label(d, False) for k, d in dicts.items()}
    clash = {text for text in plain.values() if list(plain.values()).count(text) > 1}
    return {k: (label(dicts[k], True) if plain[k] in clash else plain[k]) for k in keys}


@dataclass
class Figure:
    values: list[float]

    @property
    def mean(self) -> float | None:
        return sum(self.values) / len(self.values) if self.values else None

    @property
    def spread(self) -> float | None:
        """Relative spread of the repetitions, (max - min) / mean; None with fewer than two."""
        if len(self.values) < 2 or not self.mean:
            return None
        return (max(self.values) - min(self.values)) / abs(self.mean)


@dataclass
class Verdict:
    a: float | None
    b: float | None
    ratio: float | None
    threshold: float
    rule: str
    beyond: bool


@dataclass
class Row:
    key: tuple
    label: str
    figures: dict[str, Verdict]
    flagged: bool
    reps: tuple[int, int]


@dataclass
class Comparison:
    run_a: Run
    run_b: Run
    rows: list[Row]
    left_out_a: list[str] = field(default_factory=list)
    left_out_b: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def rules_used(self) -> str:
        counts: dict = {}
        for row in self.rows:
            for name, verdict in row.figures.items():
                counts[verdict.rule] = counts.get(verdict.rule, 0) + 1
        parts = []
        if counts.get(RULE_REPS):
            parts.append(f"repetitions ({counts[RULE_REPS]} figure(s)): beyond noise when |B/A - 1| > "
                         f"{SPREAD_FACTOR:g} x the larger relative spread (max - min) / mean of the two runs' "
                         f"repetitions, at least {FLOOR:.0%}")
        if counts.get(RULE_FIXED):
            parts.append(f"fixed thresholds ({counts[RULE_FIXED]} figure(s), fewer than 2 repetitions in a run): "
                         f"beyond noise when |B/A - 1| > {FIXED_THRESHOLD['rps']:.0%} for rps, "
                         f"{FIXED_THRESHOLD['p99']:.0%} for p99")
        return "; ".join(parts) or "no figure to compare"


def judge(name: str, a: Figure, b: Figure) -> Verdict:
    ratio = b.mean / a.mean if a.mean and b.mean is not None else None
    if a.spread is not None and b.spread is not None:
        threshold, rule = max(SPREAD_FACTOR * max(a.spread, b.spread), FLOOR), RULE_REPS
    else:
        threshold, rule = FIXED_THRESHOLD[name], RULE_FIXED
    beyond = ratio is not None and abs(ratio - 1) > threshold
    return Verdict(a.mean, b.mean, ratio, threshold, rule, beyond)


def _groups(run: Run) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = {}
    for cell in run.cells:
        groups.setdefault(cell_key(cell), []).append(cell)
    return groups


def compare_runs(run_a: Run, run_b: Run, force: bool = False) -> Comparison:
    notes = []
    if run_a.experiment != run_b.experiment:
        what = (f"the experiments differ: {run_a.run_id} ran {run_a.experiment!r}, {run_b.run_id} ran "
                f"{run_b.experiment!r}")
        if not force:
            raise CompareRefused(f"{what}; --force compares the cells both runs hold")
        notes.append(f"--force: {what}")
    groups_a, groups_b = _groups(run_a), _groups(run_b)
    only_a = sorted(set(groups_a) - set(groups_b))
    only_b = sorted(set(groups_b) - set(groups_a))
    if only_a or only_b:
        labels = key_labels(sorted(set(groups_a) | set(groups_b)))
        what = (f"{len(only_a)} cell key(s) only in A ({', '.join(labels[k] for k in only_a[:4])}"
                f"{', ...' if len(only_a) > 4 else ''}), {len(only_b)} only in B "
                f"({', '.join(labels[k] for k in only_b[:4])}{', ...' if len(only_b) > 4 else ''})")
        if not force:
            raise CompareRefused(f"the cell sets differ: {what}; --force compares the cells both runs hold")
        notes.append(f"--force: compared the {len(set(groups_a) & set(groups_b))} cell keys both runs hold; "
                     f"left out {what}")
    if run_a.machine.get("cpu_model") != run_b.machine.get("cpu_model") or \
            run_a.machine.get("cores") != run_b.machine.get("cores"):
        notes.append(f"the machines differ: A {run_a.machine_line()}; B {run_b.machine_line()}")
    common = [k for k in groups_a if k in groups_b]
    if not common:
        raise CompareRefused("the two runs have no cell in common")
    labels = key_labels(sorted(set(groups_a) | set(groups_b)))
    rows = []
    for key in common:  # in run A's reading order
        cells_a, cells_b = groups_a[key], groups_b[key]
        figures = {}
        for name, path in FIGURES.items():
            fa = Figure([v for v in (num(get(c, path)) for c in cells_a) if v is not None])
            fb = Figure([v for v in (num(get(c, path)) for c in cells_b) if v is not None])
            figures[name] = judge(name, fa, fb)
        flagged = not all(is_valid(c) for c in cells_a + cells_b)
        rows.append(Row(key, labels[key], figures, flagged, (len(cells_a), len(cells_b))))
    return Comparison(run_a, run_b, rows, [labels[k] for k in only_a], [labels[k] for k in only_b], notes)


# ---------------------------------------------------------------------------------------------- output

def _pct(verdict: Verdict) -> str:
    return "n/a" if verdict.ratio is None else f"{(verdict.ratio - 1) * 100:+.1f}%"


def _verdict_word(verdict: Verdict) -> str:
    if verdict.ratio is None:
        return "no value"
    return "CHANGED" if verdict.beyond else "noise"


def text_table(cmp: Comparison) -> str:
    lines = [f"A: {cmp.run_a.run_id} ({cmp.run_a.machine_line()}, {cmp.run_a.date})",
             f"B: {cmp.run_b.run_id} ({cmp.run_b.machine_line()}, {cmp.run_b.date})",
             f"noise rule: {cmp.rules_used()}"]
    lines += [f"note: {n}" for n in cmp.notes]
    w = max([len(r.label) for r in cmp.rows] + [4])
    header = (f"{'cell':<{w}} {'rps A':>10} {'rps B':>10} {'B/A':>8} {'noise':>6} {'':<8}"
              f" {'p99 A ms':>10} {'p99 B ms':>10} {'B/A':>8} {'noise':>6} {'':<8} flags")
    lines += ["", header, "-" * len(header)]

    def n(v):
        return "-" if v is None else f"{v:.1f}"
    for row in cmp.rows:
        r, p = row.figures["rps"], row.figures["p99"]
        lines.append(f"{row.label:<{w}} {n(r.a):>10} {n(r.b):>10} {_pct(r):>8} {r.threshold:>6.1%} "
                     f"{_verdict_word(r):<8} {n(p.a):>10} {n(p.b):>10} {_pct(p):>8} {p.threshold:>6.1%} "
                     f"{_verdict_word(p):<8} {'flagged' if row.flagged else ''}")
    changed = sum(1 for row in cmp.rows if any(v.beyond for v in row.figures.values()))
    lines += ["", f"{len(cmp.rows)} cell(s) compared, {changed} with a change beyond noise."]
    return "\n".join(lines) + "\n"


def export_compare(cmp: Comparison, charts_dir: Path) -> ChartJob:
    data_dir = charts_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    columns = ["ordinal", "label", "rps_ratio", "rps_threshold", "rps_beyond", "p99_ratio", "p99_threshold",
               "p99_beyond", "flagged"]
    lines = [f"# crossbench analysis export: compare B = {cmp.run_b.run_id} over A = {cmp.run_a.run_id}",
             f"# columns: {' '.join(columns)}",
             "# one row per matched cell key; ratio = B / A (NaN: no value); *_beyond 1 = beyond the noise "
             "threshold; flagged 1 = a cell of the key is not valid in A or B",
             " ".join(columns)]
    for i, row in enumerate(cmp.rows, 1):
        r, p = row.figures["rps"], row.figures["p99"]
        label = '"' + row.label.replace('"', "'") + '"'
        lines.append(" ".join([str(i), label, dat_fmt(r.ratio), dat_fmt(r.threshold), dat_fmt(r.beyond),
                               dat_fmt(p.ratio), dat_fmt(p.threshold), dat_fmt(p.beyond), dat_fmt(row.flagged)]))
    (data_dir / "compare.dat").write_text("\n".join(lines) + "\n")
    return ChartJob("compare", "compare.gp",
                    f"{cmp.run_b.run_id} (B) over {cmp.run_a.run_id} (A): ratio B/A per matching cell",
                    "Per matching cell, B/A of responses per second (top) and of p99 latency (bottom), log scale. "
                    "Grey bars: the noise band (1 +/- threshold) of each cell; red filled points lie beyond it, "
                    "grey hollow ones within it; triangles mark keys with a flagged cell in either run. "
                    f"Noise rule: {cmp.rules_used()}.",
                    {"file_1": "compare.dat", "ncells": len(cmp.rows)}, ["compare.dat"],
                    "; ".join(cmp.notes)[:300], "B / A per matching cell")


def compare_html(cmp: Comparison, job: ChartJob, result: plot.PlotResult) -> str:
    rows = []
    for row in cmp.rows:
        cells = [f"<td>{escape(row.label)}</td>", f'<td class="n">{row.reps[0]} / {row.reps[1]}</td>']
        for name in FIGURES:
            v = row.figures[name]
            mark = ' style="background:#fde2e1;font-weight:bold"' if v.beyond else ""
            cells += [f'<td class="n">{report.fmt(v.a, 1)}</td>', f'<td class="n">{report.fmt(v.b, 1)}</td>',
                      f'<td class="n"{mark}>{escape(_pct(v))}</td>', f'<td class="n">{v.threshold:.1%} '
                      f"({escape(v.rule)})</td>", f"<td{mark}>{escape(_verdict_word(v))}</td>"]
        cells.append(f"<td>{'flagged' if row.flagged else ''}</td>")
        rows.append(f'<tr class="{"flagged" if row.flagged else ""}">' + "".join(cells) + "</tr>")
    head = ("<tr><th>cell</th><th>reps A / B</th><th>rps A</th><th>rps B</th><th>B/A</th><th>noise</th>"
            "<th>rps</th><th>p99 A ms</th><th>p99 B ms</th><th>B/A</th><th>noise</th><th>p99</th>"
            "<th>flags</th></tr>")
    body = [f"<h1>crossbench compare: {escape(cmp.run_b.run_id)} (B) vs {escape(cmp.run_a.run_id)} (A)</h1>",
            facts_for(cmp),
            f"<p><b>Noise rule</b>: {escape(cmp.rules_used())}.</p>"]
    body += [f'<p class="banner">{escape(n)}</p>' for n in cmp.notes]
    body.append(report.charts_html([job], [result]))
    body.append(f'<table class="cells"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>')
    return report.page(f"crossbench compare {cmp.run_b.run_id} vs {cmp.run_a.run_id}", "\n".join(body))


def facts_for(cmp: Comparison) -> str:
    pairs = []
    for name, run in (("A", cmp.run_a), ("B", cmp.run_b)):
        pairs += [(f"{name}: run", f"{run.run_id} ({run.path})"), (f"{name}: machine", run.machine_line()),
                  (f"{name}: date", run.date), (f"{name}: git", run.metadata.get("git_revision"))]
    return report.facts_html(pairs)


def compare(run_a_dir: Path, run_b_dir: Path, out: Path | None = None, force: bool = False,
            charts: bool = True) -> tuple[Comparison, Path, str]:
    """Compares two run directories; writes OUT/compare.html, OUT/compare.txt and OUT/charts/compare.png|svg
    (OUT defaults to RUN_B/compare-<run id of A>). Returns (comparison, html path, text table)."""
    run_a, run_b = load_run(run_a_dir), load_run(run_b_dir)
    cmp = compare_runs(run_a, run_b, force=force)
    out = Path(out) if out else Path(run_b_dir) / f"compare-{run_a.run_id}"
    charts_dir = out / "charts"
    job = export_compare(cmp, charts_dir)
    if charts:
        footer = f"A: run {run_a.run_id}, {run_a.machine_line()}, {run_a.date} | B: run {run_b.run_id}, " \
                 f"{run_b.machine_line()}, {run_b.date}"
        result = plot.plot_chart(job, charts_dir, footer)
    else:
        result = plot.PlotResult(job.name, error="not drawn (charts=False)")
    text = text_table(cmp)
    (out / "compare.txt").write_text(text)
    html_path = out / "compare.html"
    html_path.write_text(compare_html(cmp, job, result))
    if charts and not result.ok:
        raise AnalysisError(f"compare chart not drawn: {result.error}")
    return cmp, html_path, text

"""report.html: one self-contained page (inline CSS, no scripts, fonts or anything fetched) beside charts/.

The charts are <img src="charts/NAME.png"> with a link to the SVG; the table lists every cell, flagged and
failed ones marked; the run's metadata (machine, versions, git revision, configuration) closes the page. The
HTML is in templates/ (report.html on base.html); this module only prepares the data it shows."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from crossbench.figures import points
from crossbench_analysis.charts.kit import ChartJob
from crossbench_analysis.charts.plot import PlotResult
from crossbench_analysis.read.runinfo import Run, get, is_failed, is_valid, num
from crossbench_analysis.read.setting import label_of

from . import noise_words, pages, tables

DASH = "\u2013"


def text(value, digits: int = 0, unit: str = "") -> str:
    """A number for the table: thousands separated, `digits` decimals (one fewer from 100 up); a dash for none."""
    n = num(value)
    if n is None:
        return DASH
    if digits == 0 and abs(n) >= 1000:
        out = f"{n:,.0f}"
    elif abs(n) >= 100 and digits > 0:
        out = f"{n:,.{max(0, digits - 1)}f}"
    else:
        out = f"{n:,.{digits}f}"
    return out + unit


# (header, tooltip, how to render a cell's value as text)
COLUMNS = [
    ("#", "cell index; hover for the cell id, click for its samples.csv", None),
    ("group", "", lambda c: str(c.get("group") or "")),
    ("server", "", lambda c: str(c.get("server") or "")),
    ("endpoint", "", lambda c: str(c.get("endpoint") or "")),
    (
        "settings",
        "the server's setting as its plug-in words it; the load generator where most cells used another",
        None,
    ),
    ("C", "concurrent clients", lambda c: text(c.get("concurrency"))),
    (
        "delay s",
        "delay of the delay endpoints, seconds",
        lambda c: text((num(c.get("delay_ms")) or 0) / 1000, 1) if num(c.get("delay_ms")) else DASH,
    ),
    ("rep", "repetition", lambda c: text(c.get("repetition"))),
    ("rps", "responses per second: requests / measured window", lambda c: text(c.get("rps"), 1)),
    ("rps steady", "edge-bias-free estimate", lambda c: text(c.get("rps_steady"), 1)),
    ("eff. ratio", "(C / rps) / delay; 1 is ideal", lambda c: text(c.get("efficiency_ratio"), 3)),
    ("lat. ratio", "mean latency / delay", lambda c: text(c.get("latency_ratio"), 3)),
    ("p50 ms", "", lambda c: text(get(c, "latency_ms.p50"), 1)),
    ("p99 ms", "", lambda c: text(get(c, "latency_ms.p99"), 1)),
    ("errors", "error_total (connect, read, write, timeout, non-2xx, other)", lambda c: text(c.get("error_total"))),
    ("threads peak", "", lambda c: text(c.get("threads_peak"))),
    ("RSS MiB", "peak resident memory of the server", lambda c: text(c.get("rss_peak_mb"), 1)),
    ("CPU %", "server process tree, 100 = one core", lambda c: text(c.get("cpu_percent"), 1)),
    ("loadgen CPU %", "load generator, 100 = one core", lambda c: text(c.get("loadgen_cpu_percent"), 1)),
    ("valid", "", None),
    ("flags", "", None),
]
NUMERIC = {
    "C",
    "delay s",
    "rep",
    "rps",
    "rps steady",
    "eff. ratio",
    "lat. ratio",
    "p50 ms",
    "p99 ms",
    "errors",
    "threads peak",
    "RSS MiB",
    "CPU %",
    "loadgen CPU %",
}


def settings_of(cell: dict, usual_loadgen: str | None = None) -> str:
    """The record's `setting` (the plug-in's words) without the server's name, which has its own column."""
    server = str(cell.get("server") or "")
    setting = str(cell.get("setting") or "").removeprefix(server).strip()
    parts = [setting] if setting else []
    if cell.get("processes") is not None:
        parts.append(f"{cell['processes']} proc")
    if cell.get("keepalive") is False:
        parts.append("close")
    if cell.get("loadgen") and cell.get("loadgen") != usual_loadgen:
        parts.append(str(cell["loadgen"]))
    return ", ".join(parts)


def usual_loadgen(cells: list[dict]) -> str | None:
    """The load generator most of the run's cells used (the table names only the others)."""
    counts = Counter(c.get("loadgen") for c in cells if c.get("loadgen"))
    return counts.most_common(1)[0][0] if counts else None


def row(run: Run, cell: dict, usual: str | None = None) -> dict:
    """One table row for the template: its class, and per column the text (and the link of #)."""
    failed, valid = is_failed(cell), is_valid(cell)
    tds = []
    for header, _, render in COLUMNS:
        td = {
            "klass": "n" if header in NUMERIC else ("flags" if header == "flags" else ""),
            "text": "",
            "href": None,
            "title": None,
            "bold": False,
        }
        if header == "#":
            series = cell.get("series") or f"cells/{cell['cell_id']}/samples.csv"
            index = cell.get("index")
            td["text"] = f"{index:04d}" if isinstance(index, int) else str(cell["cell_id"])
            td["href" if (run.path / series).is_file() else "title"] = series
        elif header == "settings":
            td["text"] = settings_of(cell, usual)
        elif header == "valid":
            td.update(text="yes" if valid else ("FAILED" if failed else "no"), bold=not valid)
        elif header == "flags":
            flags = [str(f) for f in cell.get("flags") or []] + ([str(cell["error"])] if cell.get("error") else [])
            td["text"] = ", ".join(flags)
        else:
            td["text"] = render(cell)
        tds.append(td)
    return {"css": "failed" if failed else ("" if valid else "flagged"), "cell_id": cell["cell_id"], "tds": tds}


def machine_facts(run: Run) -> list[tuple]:
    meta = run.metadata
    versions = meta.get("versions") if isinstance(meta.get("versions"), dict) else {}
    return (
        [
            ("run id", run.run_id),
            ("experiment", run.experiment),
            ("started", meta.get("started_at")),
            ("ended", meta.get("ended_at")),
            ("git revision", meta.get("git_revision")),
            ("schema version", meta.get("schema_version")),
        ]
        + [(f"machine: {k}", v) for k, v in run.machine.items()]
        + [(f"version: {k}", v) for k, v in versions.items()]
    )


def with_columns(summary: dict) -> dict:
    """The summary with its column titles and row keys said (tables.columns), as the template reads them."""
    titles, keys = tables.columns(summary)
    return {**summary, "columns": titles, "keys": keys}


OWN_KEYS = (
    "config",
    "machine",
    "versions",
    "run_id",
    "experiment",
    "started_at",
    "ended_at",
    "git_revision",
    "schema_version",
)


def write_report(
    run: Run,
    jobs: list[ChartJob],
    results: list[PlotResult],
    findings: list[dict] = (),
    tfb: dict | None = None,
    summary: dict | None = None,
) -> Path:
    """findings: findings.json's sections, [{"title": ..., "items": [finding, ...]}]; tfb: the comparison with
    TechEmpower's published figures as findings.tfb_reference.tables() shows it (None: the run has no tfb cells);
    summary: findings.json's summary table ({"columns", "rows", "note"}), shown first."""
    meta = run.metadata
    failed = sum(1 for c in run.cells if is_failed(c))
    flagged = sum(1 for c in run.cells if not is_valid(c) and not is_failed(c))
    other = {k: v for k, v in meta.items() if k not in OWN_KEYS}
    usual = usual_loadgen(run.cells)
    html = pages.render(
        "report.html",
        run=run,
        meta=meta,
        jobs=jobs,
        results={r.name: r for r in results},
        findings=list(findings),
        tfb=tfb,
        summary=with_columns(summary or {"rows": []}),
        noise=noise_words.header(meta, run.cells),
        counts={
            "cells": len(run.cells),
            "valid": len(run.cells) - failed - flagged,
            "flagged": flagged,
            "failed": failed,
        },
        columns=[{"name": h, "tip": tip} for h, tip, _ in COLUMNS],
        rows=[row(run, c, usual) for c in run.cells],
        points=point_rows(run),
        machine_facts=machine_facts(run),
        config_json=json.dumps(meta.get("config", {}), indent=2, sort_keys=True),
        other_json=json.dumps(other, indent=2, sort_keys=True, default=str) if other else "",
    )
    path = run.path / "report.html"
    path.write_text(html)
    return path


POINT_FIGURES = (("rps", "req/s"), ("latency_ms.p99", "ms"), ("efficiency_ratio", ""))


def point_rows(run: Run) -> list[dict]:
    """The run's points, each figure as value ± half-width of its 95 % interval (crossbench.figures.points)."""
    rows = []
    for point in points.load(run.path):
        figures = point.get("figures") or {}
        rows.append(
            {
                "label": label_of(point),
                "point_id": point["point_id"],
                "n": point.get("n"),
                "failed": point.get("failed"),
                "flags": ", ".join(point.get("flags") or []),
                "headline": point.get("headline"),
                "cells": point.get("cells") or [],
                "figures": [
                    points.fmt_interval(figures.get(name), unit) if figures.get(name) else "-"
                    for name, unit in POINT_FIGURES
                ],
            }
        )
    return rows

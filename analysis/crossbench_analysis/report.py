"""report.html: one self-contained page (inline CSS, no scripts, fonts or anything fetched) beside charts/.

The charts are <img src="charts/NAME.png"> with a link to the SVG; the table lists every cell, flagged and
failed ones marked; the run's metadata (machine, versions, git revision, configuration) closes the page."""
from __future__ import annotations

import json
from html import escape
from pathlib import Path

from .kit import ChartJob
from .plot import PlotResult
from .runinfo import Run, get, is_failed, is_valid, num

CSS = """
body { font-family: 'DejaVu Sans', Verdana, Arial, sans-serif; margin: 1.5em auto; max-width: 1400px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 2em;
     border-bottom: 1px solid #ccc; } h3 { font-size: 1.05em; margin-bottom: 0.3em; }
.sub { color: #555; margin-top: 0; }
.banner { background: #fff3cd; border: 1px solid #e0c36c; padding: 0.5em 0.8em; margin: 1em 0; }
.problem { background: #fde2e1; border: 1px solid #d9534f; padding: 0.5em 0.8em; margin: 0.5em 0; }
nav a { margin-right: 1em; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #ddd; display: block; }
figcaption { color: #444; font-size: 0.92em; max-width: 1200px; }
.facts { border-collapse: collapse; } .facts th { text-align: left; padding: 2px 1em 2px 0; color: #555;
         font-weight: normal; vertical-align: top; } .facts td { padding: 2px 0; }
table.cells { border-collapse: collapse; font-size: 0.8em; width: 100%; }
.wide { overflow-x: auto; }
table.cells th, table.cells td { border: 1px solid #d4d4d4; padding: 3px 5px; }
table.cells th { background: #f0f0f0; position: sticky; top: 0; }
table.cells td { white-space: nowrap; } table.cells td.flags { white-space: normal; min-width: 12em; }
table.cells td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.cells tr.flagged td { background: #fff3cd; }
table.cells tr.failed td { background: #fde2e1; }
table.cells td.flags { color: #8a4b00; } tr.failed td.flags { color: #a00; font-weight: bold; }
.legend span { display: inline-block; padding: 1px 8px; margin-right: 0.6em; border: 1px solid #ccc; }
.legend .flagged { background: #fff3cd; } .legend .failed { background: #fde2e1; }
pre { background: #f7f7f7; border: 1px solid #e1e1e1; padding: 0.7em; overflow-x: auto; font-size: 0.85em; }
"""


def fmt(value, digits: int = 0, unit: str = "") -> str:
    n = num(value)
    if n is None:
        return "&ndash;"
    if digits == 0 and abs(n) >= 1000:
        text = f"{n:,.0f}"
    elif abs(n) >= 100 and digits > 0:
        text = f"{n:,.{max(0, digits - 1)}f}"
    else:
        text = f"{n:,.{digits}f}"
    return escape(text + unit)


# (header, tooltip, how to render a cell's value)
COLUMNS = [
    ("#", "cell index; hover for the cell id, click for its samples.csv", None),
    ("group", "", lambda c: escape(str(c.get("group") or ""))),
    ("server", "", lambda c: escape(str(c.get("server") or ""))),
    ("endpoint", "", lambda c: escape(str(c.get("endpoint") or ""))),
    ("settings", "Tomcat executor / maxThreads, Tornado processes", None),
    ("C", "concurrent clients", lambda c: fmt(c.get("concurrency"))),
    ("delay s", "delay of the delay endpoints, seconds", lambda c: fmt((num(c.get("delay_ms")) or 0) / 1000, 1)
     if num(c.get("delay_ms")) else "&ndash;"),
    ("rep", "repetition", lambda c: fmt(c.get("repetition"))),
    ("rps", "responses per second: requests / measured window", lambda c: fmt(c.get("rps"), 1)),
    ("rps steady", "edge-bias-free estimate", lambda c: fmt(c.get("rps_steady"), 1)),
    ("eff. ratio", "(C / rps) / delay; 1 is ideal", lambda c: fmt(c.get("efficiency_ratio"), 3)),
    ("lat. ratio", "mean latency / delay", lambda c: fmt(c.get("latency_ratio"), 3)),
    ("p50 ms", "", lambda c: fmt(get(c, "latency_ms.p50"), 1)),
    ("p99 ms", "", lambda c: fmt(get(c, "latency_ms.p99"), 1)),
    ("errors", "error_total (connect, read, write, timeout, non-2xx, other)", lambda c: fmt(c.get("error_total"))),
    ("threads peak", "", lambda c: fmt(c.get("threads_peak"))),
    ("RSS MB", "peak resident memory of the server", lambda c: fmt(c.get("rss_peak_mb"), 1)),
    ("CPU %", "server process tree, 100 = one core", lambda c: fmt(c.get("cpu_percent"), 1)),
    ("loadgen CPU %", "load generator, 100 = one core", lambda c: fmt(c.get("loadgen_cpu_percent"), 1)),
    ("valid", "", None),
    ("flags", "", None),
]
NUMERIC = {"C", "delay s", "rep", "rps", "rps steady", "eff. ratio", "lat. ratio", "p50 ms", "p99 ms", "errors",
           "threads peak", "RSS MB", "CPU %", "loadgen CPU %"}


def settings_of(cell: dict) -> str:
    parts = []
    if cell.get("executor"):
        parts.append(str(cell["executor"]))
    if cell.get("max_threads") is not None and cell.get("executor") != "virtual":
        parts.append(f"maxThreads {cell['max_threads']}")
    if cell.get("processes") is not None:
        parts.append(f"{cell['processes']} proc")
    if cell.get("keepalive") is False:
        parts.append("close")
    if cell.get("loadgen") and cell.get("loadgen") != "wrk":
        parts.append(str(cell["loadgen"]))
    return escape(", ".join(parts))


def row_html(run: Run, cell: dict) -> str:
    failed, valid = is_failed(cell), is_valid(cell)
    css = "failed" if failed else ("" if valid else "flagged")
    cells = []
    for header, _, render in COLUMNS:
        if header == "#":
            series = cell.get("series") or f"cells/{cell['cell_id']}/samples.csv"
            index = cell.get("index")
            text = escape(f"{index:04d}" if isinstance(index, int) else str(cell["cell_id"]))
            title = escape(cell["cell_id"])
            html = (f'<a href="{escape(series)}" title="{title}">{text}</a>' if (run.path / series).is_file()
                    else f'<span title="{title}">{text}</span>')
        elif header == "settings":
            html = settings_of(cell)
        elif header == "valid":
            html = "yes" if valid else ("<b>FAILED</b>" if failed else "<b>no</b>")
        elif header == "flags":
            flags = [str(f) for f in cell.get("flags") or []]
            if cell.get("error"):
                flags.append(str(cell["error"]))
            html = escape(", ".join(flags))
        else:
            html = render(cell)
        klass = ' class="n"' if header in NUMERIC else (' class="flags"' if header == "flags" else "")
        cells.append(f"<td{klass}>{html}</td>")
    return f'<tr class="{css}" data-cell="{escape(cell["cell_id"])}">' + "".join(cells) + "</tr>"


def table_html(run: Run) -> str:
    head = "".join(f'<th title="{escape(tip)}">{escape(h)}</th>' if tip else f"<th>{escape(h)}</th>"
                   for h, tip, _ in COLUMNS)
    rows = "\n".join(row_html(run, c) for c in run.cells)
    return (f'<div class="wide"><table class="cells" id="cell-table"><thead><tr>{head}</tr></thead>\n<tbody>\n'
            f"{rows}\n</tbody></table></div>")


def facts_html(pairs) -> str:
    rows = "".join(f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>" for k, v in pairs
                   if v not in (None, ""))
    return f'<table class="facts">{rows}</table>'


def charts_html(jobs: list[ChartJob], results: list[PlotResult], prefix: str = "charts/") -> str:
    by_name = {r.name: r for r in results}
    parts = []
    for job in jobs:
        result = by_name.get(job.name)
        anchor = f"chart-{escape(job.name)}"
        parts.append(f'<figure id="{anchor}"><h3>{escape(job.heading or job.name)}</h3>')
        if result and result.ok:
            parts.append(f'<a href="{prefix}{escape(job.name)}.svg"><img src="{prefix}{escape(job.name)}.png" '
                         f'width="1200" height="750" alt="{escape(job.title)}"></a>')
        else:
            reason = result.error if result else "not drawn"
            parts.append(f'<p class="problem">Chart not drawn: {escape(reason)}</p>')
        data = ", ".join(f'<a href="{prefix}data/{escape(f)}">{escape(f)}</a>' for f in job.data_files)
        note = f" <b>{escape(job.note)}.</b>" if job.note else ""
        parts.append(f"<figcaption>{escape(job.caption)}{note} <a href=\"{prefix}{escape(job.name)}.svg\">SVG"
                     f"</a> &middot; data: {data}</figcaption></figure>")
    return "\n".join(parts)


def page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head>\n<body>\n{body}\n</body></html>\n")


def write_report(run: Run, jobs: list[ChartJob], results: list[PlotResult]) -> Path:
    meta = run.metadata
    cells = run.cells
    failed = [c for c in cells if is_failed(c)]
    flagged = [c for c in cells if not is_valid(c) and not is_failed(c)]
    body = [f"<h1>crossbench: {escape(run.run_id)}</h1>",
            f'<p class="sub">experiment <b>{escape(str(run.experiment or "?"))}</b> &middot; '
            f'{escape(str(meta.get("started_at") or "?"))} to {escape(str(meta.get("ended_at") or "?"))} &middot; '
            f"{escape(run.machine_line())}</p>"]
    if meta.get("synthetic"):
        body.append('<p class="banner"><b>SYNTHETIC data</b>: this run directory was generated for testing the '
                    "charts; nothing in it was measured.</p>")
    body.append(f"<p><b>{len(cells)}</b> cells: {len(cells) - len(failed) - len(flagged)} valid, "
                f"<b>{len(flagged)}</b> flagged, <b>{len(failed)}</b> failed. "
                '<span class="legend"><span class="flagged">flagged row</span>'
                '<span class="failed">failed row</span></span></p>')
    for warning in run.warnings:
        body.append(f'<p class="problem">{escape(warning)}</p>')
    body.append('<nav><a href="#charts">charts</a><a href="#cells">cells</a><a href="#run">machine and '
                'versions</a><a href="#config">configuration</a></nav>')
    body.append('<h2 id="charts">Charts</h2>')
    body.append(charts_html(jobs, results) if jobs else "<p>No chart applies to these cells.</p>")
    body.append('<h2 id="cells">Cells</h2>')
    body.append("<p>Every cell of the run, by group, delay, server and concurrency. rps is the seed's "
                "definition (requests / measured window); the efficiency ratio is (C / rps) / delay, 1.0 ideal; "
                "a cell with errors or another problem is flagged, never averaged away. Hover a header for "
                "its definition; # links to the cell's samples.csv (hover it for the cell id).</p>")
    body.append(table_html(run))
    machine = run.machine
    versions = meta.get("versions") if isinstance(meta.get("versions"), dict) else {}
    body.append('<h2 id="run">Machine and versions</h2>')
    body.append(facts_html([("run id", run.run_id), ("experiment", run.experiment),
                            ("started", meta.get("started_at")), ("ended", meta.get("ended_at")),
                            ("git revision", meta.get("git_revision")), ("schema version", meta.get("schema_version"))]
                           + [(f"machine: {k}", v) for k, v in machine.items()]
                           + [(f"version: {k}", v) for k, v in versions.items()]))
    body.append('<h2 id="config">Configuration</h2>')
    body.append(f"<pre>{escape(json.dumps(meta.get('config', {}), indent=2, sort_keys=True))}</pre>")
    other = {k: v for k, v in meta.items() if k not in ("config", "machine", "versions", "run_id", "experiment",
                                                       "started_at", "ended_at", "git_revision", "schema_version")}
    if other:
        body.append("<h3>Other metadata</h3>")
        body.append(f"<pre>{escape(json.dumps(other, indent=2, sort_keys=True, default=str))}</pre>")
    path = run.path / "report.html"
    path.write_text(page(f"crossbench {run.run_id}", "\n".join(body)))
    return path

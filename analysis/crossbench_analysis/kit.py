"""The chart kit every chart family uses: ChartJob (one chart: script, data files, parameters), the palettes,
the data-file writer, and the series, panel, note and heading helpers.

Every .dat file opens with comment lines naming its columns. It holds one block per series (gnuplot's
`index N`), blocks separated by two blank lines; each block's first line is the quoted series label followed by
the column names (so `title columnheader(1)` names the line and `column('rps')` finds the column). Every chart
file has the same series blocks in the same order in every panel, so a series keeps its colour across panels; a
series a panel lacks is a block with one row of NaN. NaN marks a value that is not there (a failed cell, a null
figure). A cell row's figures are followed by its tail, `valid repetition cell_id`, then (charts that draw
intervals) each figure's point mean and 95 % interval over launches, `<figure>_mean _lo _hi`."""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from crossbench.servers import PLUGINS

from .runinfo import Run, get, is_failed, is_valid, num, offered_rate, server_rank

# Colours: one family of shades per server, so a server looks the same in every chart and five stay apart; each
# plug-in names its own (ServerPlugin.palette); a server without one gets these.
OTHER_PALETTE = ("#984ea3", "#999999", "#4d9221", "#444444")


def palette(server) -> tuple[str, ...]:
    """A server's shades, from its plug-in (Tomcat's warm reds, Tornado's blues, ...)."""
    plugin = PLUGINS.get(server)
    return tuple(plugin.palette) if plugin and plugin.palette else OTHER_PALETTE


@dataclass
class ChartJob:
    """One chart: gnuplot/<script> draws charts/<name>.png and .svg from data files in charts/data/."""
    name: str
    script: str
    title: str
    caption: str
    params: dict = field(default_factory=dict)
    data_files: list[str] = field(default_factory=list)
    note: str = ""
    heading: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ChartJob":
        return cls(**{k: d[k] for k in ("name", "script", "title", "caption", "params", "data_files", "note", "heading")
                      if k in d})


# ---------------------------------------------------------------------------------------------- formatting

def fmt(value) -> str:
    if value is None:
        return "NaN"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "NaN" if value != value else f"{value:.6g}"
    text = re.sub(r"\s+", "_", str(value))
    return text or "-"


def write_table(path: Path, description: str, columns: list[str], rows: list[list]) -> int:
    """Writes one gnuplot data file of a single table whose first line names the columns (gnuplot:
    `set datafile columnheaders`, then column('name')); text cells are quoted. Returns the rows written."""
    def cell(value):
        return '"' + value.replace('"', "'") + '"' if isinstance(value, str) else fmt(value)
    lines = [f"# crossbench analysis export: {description}", f"# columns: {' '.join(columns)}",
             "# NaN = no value", " ".join(columns)]
    lines += [" ".join(cell(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return len(rows)


def write_blocks(path: Path, description: str, columns: list[str], blocks: list[tuple[str, list[list]]]) -> int:
    """Writes one gnuplot data file; returns the number of data rows written (NaN placeholders excluded)."""
    lines = [f"# crossbench analysis export: {description}",
             f"# columns: {' '.join(columns)}",
             "# one block per series (gnuplot `index N`), blocks separated by two blank lines; a block's first",
             "# line is the series label then the column names. NaN = no value (failed cell or null figure)."]
    written = 0
    for i, (label, rows) in enumerate(blocks):
        if i:
            lines += ["", ""]
        lines.append('"' + label.replace('"', "'") + '"\t' + "\t".join(columns[1:]))
        if not rows:
            rows = [["-" if name == "cell_id" else None for name in columns]]
        else:
            written += len(rows)
        lines += ["\t".join(fmt(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return written


# ---------------------------------------------------------------------------------------------- series, panels

LABEL_FIELDS = [  # (field, how it reads in a label); the server's own knobs come between endpoint and processes
    ("endpoint", lambda v: str(v)),
    ("processes", lambda v: f"{v} proc"),
    ("loadgen", lambda v: str(v)),
    ("keepalive", lambda v: "keep-alive" if v else "Connection: close"),
]


def label_fields(server) -> list[tuple]:
    """The fields a server's series labels may show: its plug-in's knobs that say how they read in a label
    (Knob.label, e.g. Tomcat's "maxThreads={}"), in the plug-in's order, among the shared ones."""
    plugin = PLUGINS.get(server)
    knobs = [(k.name, k.label.format) for k in (plugin.knobs if plugin else ()) if k.label]
    return [LABEL_FIELDS[0], *knobs, *LABEL_FIELDS[1:]]


@dataclass
class Series:
    label: str
    server: str
    sort: tuple
    color: str = "#444444"
    dash: int = 1


def series_of(cells: list[dict], panel_of) -> tuple[list[Series], dict[str, Series]]:
    """Labels the cells' series: the server, plus each setting that varies among that server's cells within a
    panel (endpoint, executor, maxThreads, ...; the endpoint then for every server), plus the group when
    nothing else tells two cells apart. Series are ordered by server, then by the run order of their first
    cell (so the experiment's main pairing comes first); panel_style colours them."""
    varying: dict = {server: [] for server in {c.get("server") for c in cells}}
    for server in varying:
        for f, show in label_fields(server):
            values: dict = {}
            for c in cells:
                if c.get("server") == server:
                    values.setdefault(panel_of(c), set()).add(json.dumps(c.get(f), sort_keys=True))
            if any(len(v) > 1 for v in values.values()):
                varying[server].append((f, show))
    if any(f == "endpoint" for fields in varying.values() for f, _ in fields):
        for server, fields in varying.items():
            if not any(f == "endpoint" for f, _ in fields):
                fields.insert(0, LABEL_FIELDS[0])

    def label(cell, with_group):
        parts = [str(cell.get("server") or "?")]
        parts += [show(cell.get(f)) for f, show in varying[cell.get("server")] if cell.get(f) is not None]
        if with_group:
            parts.append(f"[{cell.get('group')}]")
        return " ".join(parts)

    seen: dict[tuple, set] = {}
    for c in cells:
        key = (label(c, False), panel_of(c), c.get("concurrency"), c.get("repetition"))
        seen.setdefault(key, set()).add(c.get("group"))
    with_group = any(len(groups) > 1 for groups in seen.values())

    by_label: dict[str, Series] = {}
    of_cell: dict[str, Series] = {}
    for position, c in enumerate(sorted(cells, key=lambda c: (num(c.get("index")) or 0))):
        text = label(c, with_group)
        if text not in by_label:
            by_label[text] = Series(text, c.get("server"), (server_rank(c.get("server")),
                                                            str(c.get("server")), position))
        of_cell[c["cell_id"]] = by_label[text]
    return sorted(by_label.values(), key=lambda s: s.sort), of_cell


def shade(server, counters: dict) -> tuple[str, int]:
    """The next shade of a server's palette and its dash: a server's k-th series gets the k-th shade (dashed once
    the palette wraps); `counters` counts the series handed out per server."""
    shades = palette(server)
    k = counters.get(shades, 0)
    counters[shades] = k + 1
    return shades[k % len(shades)], 1 + k // len(shades)


def panel_style(p: int, present: list[Series], keyed: dict) -> dict:
    """Per-panel gnuplot parameters: how many series blocks, their colours and dashes, and whether the panel
    shows a key. Colours go by rank within the panel: a server's first series takes its palette's first shade
    (Tomcat orange, Tornado blue), its k-th series the k-th shade. A panel shows a key when it is the first,
    or has a series no earlier key showed, or one whose colour differs from an earlier key's."""
    counters: dict = {}
    for s in present:
        s.color, s.dash = shade(s.server, counters)
    show_key = p == 1 or any(keyed.get(s.label) != s.color for s in present)
    if show_key:
        keyed.update({s.label: s.color for s in present})
    return {f"nseries_{p}": len(present), f"colors_{p}": " ".join(s.color for s in present) or "#000000",
            f"dashes_{p}": " ".join(str(s.dash) for s in present) or "1", f"key_{p}": int(show_key)}


def against_concurrency(cells: list[dict]) -> list[dict]:
    """Cells whose x axis is concurrency: all but open-loop cells (offered rate is theirs; openloop.py draws them)."""
    return [c for c in cells if not offered_rate(c)]


def is_delay(cell: dict) -> bool:
    return (num(cell.get("delay_ms")) or 0) > 0


def panel_key(cell: dict) -> str:
    if is_delay(cell):
        return f"d{int(num(cell.get('delay_ms')))}"
    return re.sub(r"[^A-Za-z0-9_-]+", "_", str(cell.get("group") or "cells"))


def panel_order(cells: list[dict]) -> list[tuple[str, str]]:
    """[(key, title)]: groups without a delay first, then the delays in ascending order."""
    panels = {}
    for c in cells:
        key = panel_key(c)
        if key in panels:
            continue
        if is_delay(c):
            panels[key] = ((1, num(c.get("delay_ms")), ""), f"delay {num(c.get('delay_ms')) / 1000:g} s")
        else:
            endpoints = sorted({str(x.get("endpoint")) for x in cells if panel_key(x) == key})
            title = str(c.get("group") or key)
            if len(endpoints) == 1:
                title += f" ({endpoints[0]})"
            panels[key] = ((0, 0, title), title)
    return [(k, t) for k, (_, t) in sorted(panels.items(), key=lambda kv: kv[1][0])]


def count(cells: list[dict], *figures: str) -> int:
    """How many cells have a concurrency and a value for any of the figures: drawable points. A panel with
    none gets a notice instead of a plot."""
    return sum(1 for c in cells if num(c.get("concurrency")) is not None
               and any(num(get(c, f)) is not None for f in figures))


def tail(cell: dict) -> list:
    return [is_valid(cell), cell.get("repetition"), cell["cell_id"]]


def by_c(cells):
    return sorted(cells, key=lambda c: (num(c.get("concurrency")) or 0, num(c.get("repetition")) or 0))


def with_headings(found: list[ChartJob | None], headings: dict[str, str]) -> list[ChartJob]:
    """A family's charts that were drawn (a chart function returns None when the run has nothing for it),
    each with its report heading."""
    drawn = [job for job in found if job is not None]
    for job in drawn:
        job.heading = headings[job.name]
    return drawn


def how(cells: list[dict]) -> str:
    """'wrk, keep-alive, 60 s per cell' from whatever the cells agree on."""
    parts = []
    loadgens = {c.get("loadgen") for c in cells if c.get("loadgen")}
    if len(loadgens) == 1:
        parts.append(str(loadgens.pop()))
    keepalive = {c.get("keepalive") for c in cells if c.get("keepalive") is not None}
    if len(keepalive) == 1:
        parts.append("keep-alive" if keepalive.pop() else "Connection: close")
    durations = {num(c.get("duration_s")) for c in cells if num(c.get("duration_s"))}
    if len(durations) == 1:
        parts.append(f"{durations.pop():g} s per cell")
    return ", ".join(parts)


def missing_note(cells: list[dict], *figures: str) -> str:
    """Which cells a chart cannot draw (no value for any of its figures), so none goes missing silently."""
    lost = [c for c in cells if num(c.get("concurrency")) is None or all(num(get(c, f)) is None for f in figures)]
    if not lost:
        return ""
    failed = sum(1 for c in lost if is_failed(c))
    ids = ", ".join(c["cell_id"] for c in lost[:3]) + (", ..." if len(lost) > 3 else "")
    kind = f"{failed} failed, " if failed else ""
    return f"not drawable (no value): {len(lost)} cell(s) ({kind}see report table): {ids}"


def interval_columns(columns: list[str], row_of, first: int = 1) -> list[str]:
    """For each figure column of a chart (every column row_of gives from `first` on; before it the x and any
    label), the names of its point's mean and 95 % interval, appended after the tail so the existing columns keep
    their places."""
    figures = columns[first:len(columns) - len(TAIL_COLUMNS)]
    return [f"{name}_{part}" for name in figures for part in ("mean", "lo", "hi")]


TAIL_COLUMNS = ("valid", "repetition", "cell_id")


def interval_of(values: list) -> list:
    """[mean, low, high]: the 95 % interval of the values' mean (Student's t, crossbench.stats; low and high None
    with one value, all None with none)."""
    from crossbench import stats
    values = [float(x) for v in values if isinstance(x := num(v), float | int) and x == x]
    if not values:
        return [None, None, None]
    interval = stats.t_interval(values)
    return [interval.mean, interval.low, interval.high]


def same_point(cells: list[dict], cell: dict) -> list[dict]:
    """The launches of cell's point among cells."""
    from crossbench.points import point_id
    return [c for c in cells if point_id(c) == point_id(cell)]


def point_interval(cells: list[dict], cell: dict, value_of) -> list:
    """[mean, low, high] of value_of over the launches of cell's point among cells (as with_intervals)."""
    return interval_of([value_of(c) for c in same_point(cells, cell)])


def with_intervals(cells: list[dict], row_of, first: int = 1) -> list[list]:
    """Each launch's row, followed by its point's mean and 95 % interval (Student's t over the point's launches,
    crossbench.stats) for every figure column: the chart draws the launches as points and the interval as a bar."""
    from crossbench import stats
    from crossbench.points import point_id
    launches: dict[str, list[list]] = {}
    for c in cells:
        launches.setdefault(point_id(c), []).append(row_of(c))
    rows = []
    for c in cells:
        own = launches[point_id(c)]
        extra = []
        for i in range(first, len(own[0])):
            values = [v for row in own if isinstance(v := num(row[i]), float | int) and v == v]
            if not values:
                extra += [None, None, None]
                continue
            interval = stats.t_interval([float(v) for v in values])
            extra += [interval.mean, interval.low, interval.high]
        rows.append(row_of(c) + tail(c) + extra)
    return rows


def launches_per_point(cells: list[dict]) -> list[int]:
    """How many launches with a value each point of the cells has (failed launches do not count)."""
    from crossbench.points import point_id
    counted: dict[str, int] = {}
    for c in cells:
        counted[point_id(c)] = counted.get(point_id(c), 0) + (c.get("status", "ok") == "ok")
    return list(counted.values())


def interval_key(cells: list[dict]) -> dict:
    """The chart's key entry for its interval bars (gnuplot `ikey`): what a bar is, and that a point of one launch
    has none."""
    counts = launches_per_point(cells)
    if counts and max(counts) < 2:
        return {"ikey": "one launch a point: no interval"}
    if counts and min(counts) < 2:
        return {"ikey": "bar: 95% interval over launches (none: one launch)"}
    return {"ikey": "bar: 95% interval over launches"}


def panels(cells: list[dict]):
    """Each panel (group or delay) in order: its key, title, cells, the series present and each cell's series."""
    for key, title in panel_order(cells):
        here = [c for c in cells if panel_key(c) == key]
        yield (key, title, here, *series_of(here, panel_key))


def write_series(path: Path, about: str, columns: list[str], row_of, cells: list[dict], series, of_cell) -> None:
    """A block per series of the points' launches, each row with its point's mean and 95 % interval columns."""
    write_blocks(path, f"{about}; <figure>_mean, _lo, _hi: the point's mean over its launches and its 95 % "
                 "interval (NaN with one launch)", columns + interval_columns(columns, row_of),
                 [(s.label, with_intervals([c for c in by_c(cells) if of_cell[c["cell_id"]] is s], row_of))
                  for s in series])


def panel_files(run: Run, data_dir: Path, chart: str, cells: list[dict], columns: list[str], row_of,
                figures: tuple, extra=None) -> tuple[dict, list[str]]:
    """One data file per panel (group or delay) holding the blocks of the series present there."""
    series, of_cell = series_of(cells, panel_key)
    panels = panel_order(cells)
    params: dict = {"panels": len(panels), **interval_key(cells)}
    files, keyed = [], {}
    for p, (key, title) in enumerate(panels, 1):
        here = [c for c in cells if panel_key(c) == key]
        present = [s for s in series if any(of_cell[c["cell_id"]] is s for c in here)]
        name = f"{chart}_{key}.dat" if len(panels) > 1 else f"{chart}.dat"
        write_series(data_dir / name, f"{chart}, panel '{title}' (run {run.run_id})", columns, row_of, here,
                     present, of_cell)
        files.append(name)
        params.update({f"file_{p}": name, f"title_{p}": title, **panel_style(p, present, keyed),
                       f"values_{p}": count(here, *figures)})
        if extra:
            params.update({f"{k}_{p}": v for k, v in extra(here).items()})
    return params, files


def flagged(cells, *figures) -> int:
    """Flagged cells the chart can draw (a failed cell without figures is in the note instead)."""
    return sum(1 for c in cells if not is_valid(c) and any(num(get(c, f)) is not None for f in figures))


def max_threads_of(cells) -> dict:
    values = sorted({int(num(c.get("max_threads"))) for c in cells
                     if c.get("executor") == "platform" and num(c.get("max_threads"))})
    return {"maxthreads": " ".join(str(v) for v in values)}

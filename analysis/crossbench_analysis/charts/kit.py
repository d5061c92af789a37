"""The chart kit every chart family uses: ChartJob (one chart: script, data files, parameters), the palettes,
the data-file writer, and the series, panel, note and heading helpers. The palettes and series labels are in
kit_labels.py, the data-file writers in kit_files.py, the interval columns in kit_intervals.py; kit re-exports them,
so a family imports the kit alone.

Every .dat file opens with comment lines naming its columns. It holds one block per series (gnuplot's
`index N`), blocks separated by two blank lines; each block's first line is the quoted series label followed by
the column names (so `title columnheader(1)` names the line and `column('rps')` finds the column). Every chart
file has the same series blocks in the same order in every panel, so a series keeps its colour across panels; a
series a panel lacks is a block with one row of NaN. NaN marks a value that is not there (a failed cell, a null
figure). A cell row's figures are followed by its tail, `valid repetition cell_id`, then (charts that draw
intervals) each figure's point mean and 95 % interval over launches, `<figure>_mean _lo _hi`."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from crossbench.figures.points import LaunchRule
from crossbench_analysis.read.runinfo import Run, get, is_failed, is_valid, num, offered_rate
from crossbench_analysis.read.setting import pool_size

from .kit_files import write_blocks
from .kit_intervals import (
    interval_columns,
    interval_key,
    with_intervals,
)
from .kit_labels import panel_style, series_of


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
    def from_dict(cls, d: dict) -> ChartJob:
        return cls(
            **{
                k: d[k]
                for k in ("name", "script", "title", "caption", "params", "data_files", "note", "heading")
                if k in d
            }
        )


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
    return sum(
        1 for c in cells if num(c.get("concurrency")) is not None and any(num(get(c, f)) is not None for f in figures)
    )


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


def panels(cells: list[dict]):
    """Each panel (group or delay) in order: its key, title, cells, the series present and each cell's series."""
    for key, title in panel_order(cells):
        here = [c for c in cells if panel_key(c) == key]
        yield (key, title, here, *series_of(here, panel_key))


def write_series(
    path: Path, about: str, columns: list[str], row_of, cells: list[dict], series, of_cell, rule: LaunchRule
) -> None:
    """A block per series of the points' launches, each row with its point's mean and 95 % interval columns (under
    the run's launch rule)."""
    write_blocks(
        path,
        f"{about}; <figure>_mean, _lo, _hi: the point's mean over its launches and its 95 % "
        "interval (NaN with one launch)",
        columns + interval_columns(columns, row_of),
        [
            (s.label, with_intervals([c for c in by_c(cells) if of_cell[c["cell_id"]] is s], row_of, rule))
            for s in series
        ],
    )


def panel_files(
    run: Run, data_dir: Path, chart: str, cells: list[dict], columns: list[str], row_of, figures: tuple, extra=None
) -> tuple[dict, list[str]]:
    """One data file per panel (group or delay) holding the blocks of the series present there."""
    series, of_cell = series_of(cells, panel_key)
    panels = panel_order(cells)
    params: dict = {"panels": len(panels), **interval_key(cells)}
    files, keyed = [], {}
    for p, (key, title) in enumerate(panels, 1):
        here = [c for c in cells if panel_key(c) == key]
        present = [s for s in series if any(of_cell[c["cell_id"]] is s for c in here)]
        name = f"{chart}_{key}.dat" if len(panels) > 1 else f"{chart}.dat"
        write_series(
            data_dir / name,
            f"{chart}, panel '{title}' (run {run.run_id})",
            columns,
            row_of,
            here,
            present,
            of_cell,
            run.launch_rule,
        )
        files.append(name)
        params.update(
            {
                f"file_{p}": name,
                f"title_{p}": title,
                **panel_style(p, present, keyed),
                f"values_{p}": count(here, *figures),
            }
        )
        if extra:
            params.update({f"{k}_{p}": v for k, v in extra(here).items()})
    return params, files


def flagged(cells, *figures) -> int:
    """Flagged cells the chart can draw (a failed cell without figures is in the note instead)."""
    return sum(1 for c in cells if not is_valid(c) and any(num(get(c, f)) is not None for f in figures))


def max_threads_of(cells) -> dict:
    values = sorted({int(num(pool_size(c))) for c in cells if num(pool_size(c))})
    return {"maxthreads": " ".join(str(v) for v in values)}

"""The latency percentile spectrum (HdrHistogram's view): per panel (a delay, or a group), a line per point (server
setting and concurrency) through its latency at every percentile from 1 to 99.99, read from the samples the
requests had (the load generator's percentiles over its raw output: oha's window rows, wrk's recovered histogram),
else the record's own p50 / p90 / p99 / max. A point's line is one launch's, the one with its median p99: a
percentile of merged launches is not the launches' mean, and three lines a point would hide the shape."""

from __future__ import annotations

from pathlib import Path

from crossbench import loadgen
from crossbench.loadgen.base import LoadgenError
from crossbench_analysis.read.runinfo import Run, get, is_valid, num

from .kit import ChartJob, against_concurrency, panels, with_headings
from .kit_files import write_blocks

NAME = "latency_spectrum"
HEADINGS = {NAME: "Latency percentile spectrum"}
# Dense where the tail bends; a launch's line stops where fewer than one request lies beyond the percentile.
PERCENTS = (*range(1, 90), *(90 + i / 2 for i in range(19)), 99.5, 99.7, 99.8, 99.9, 99.95, 99.99)
RECORDED = {"p50": 50.0, "p90": 90.0, "p99": 99.0}
WIDTH_STEP = 0.7  # each concurrency's line this much thicker than the one below it (1 for the fewest clients)
LOG_SPAN = 20  # latencies spanning this many times or more get a log y axis (a narrower one shows one tick)


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    cells = [
        c
        for c in against_concurrency(run.cells)
        if c.get("status") == "ok"
        and c.get("kind") != "open_loop"
        and num(get(c, "latency_ms.p99")) is not None
        and num(c.get("concurrency")) is not None
    ]
    if not cells:
        return []
    params, files, drawn = {}, [], 0
    for p, (key, title, here, series, of_cell) in enumerate(panels(cells), 1):
        blocks, lines = [], []
        for s in series:
            color = s.color
            for rank, concurrency in enumerate(
                sorted({num(c["concurrency"]) for c in here if of_cell[c["cell_id"]] is s})
            ):
                launch = median_launch(
                    [c for c in here if of_cell[c["cell_id"]] is s and num(c["concurrency"]) == concurrency]
                )
                blocks.append(
                    (
                        f"{s.label}, C={concurrency:g}",
                        [
                            [pct, 100 / (100 - pct), ms, is_valid(launch), launch["cell_id"]]
                            for pct, ms in spectrum(run, launch)
                        ],
                    )
                )
                lines.append((s.label, color, concurrency, rank))
        name = f"spectrum_{key}.dat"
        drawn += write_blocks(
            data_dir / name,
            f"latency percentile spectrum, '{title}' (run {run.run_id}); "
            "x = 100 / (100 - percentile); a block per point, its median-p99 launch",
            ["percentile", "x", "latency_ms", "valid", "cell_id"],
            blocks,
        )
        delay = num(here[0].get("delay_ms")) if all(num(c.get("delay_ms")) for c in here) else None
        values = [row[2] for _, rows in blocks for row in rows if row[2]]
        spans = bool(values) and max(values) >= LOG_SPAN * min(values)
        params.update(
            {
                f"file_{p}": name,
                f"title_{p}": title,
                f"nseries_{p}": len(blocks),
                f"key_{p}": 1,
                f"values_{p}": sum(1 for _, rows in blocks if rows),
                f"delay_{p}": f"{delay:g}" if delay else "",
                f"logy_{p}": "1" if spans else "0",
                **line_styles(p, lines),
            }
        )
        files.append(name)
    job = ChartJob(
        NAME,
        "latency_spectrum.gp",
        "Latency percentile spectrum: latency at every percentile, per point",
        "Each point's latency at every percentile, log-log (HdrHistogram's view): a flat line is a "
        "uniform service, a line that rises late is a tail, a step is a share of requests that waited "
        "(a queue behind a pool, a stall). From the samples the requests had (oha's rows inside the "
        "window, wrk's histogram with its synthetic samples taken out); one launch a point, the one with "
        "the point's median p99, so no interval (launches are not averaged: a percentile of merged "
        "launches is not the launches' mean). A line stops where fewer than one request lies beyond the "
        "percentile. A colour per server setting, its lines thicker the more clients; grey dotted: the "
        "delay.",
        {"panels": len(files), **params},
        files,
    )
    return with_headings([job if drawn else None], HEADINGS)


def line_styles(p: int, lines: list[tuple[str, str, float, int]]) -> dict:
    """A panel's line styles from its (setting, colour, concurrency, rank) lines: a colour per setting, a width per
    concurrency. When every setting was measured at the same concurrencies the key names each setting once (its
    colour) and each concurrency once (its width), not every line: a dozen settings by seven concurrencies stay
    readable (`compact_p`, `keytitle_p_k`, `keycolors_p`, `keyconcurrencies_p`, `keywidths_p`)."""
    out = {
        f"colors_{p}": " ".join(color for _, color, _, _ in lines),
        f"widths_{p}": " ".join(f"{1 + WIDTH_STEP * rank:g}" for *_, rank in lines),
    }
    settings = list(dict.fromkeys(label for label, *_ in lines))
    grids = {label: tuple(c for other, _, c, _ in lines if other == label) for label in settings}
    compact = len(settings) > 1 and len(set(grids.values())) == 1
    out[f"compact_{p}"] = "1" if compact else "0"
    out.update({f"linetitle_{p}_{i}": f"{label}, C={c:g}" for i, (label, _, c, _) in enumerate(lines, 1)})
    if compact:
        colors = {label: color for label, color, _, _ in lines}
        out[f"keycolors_{p}"] = " ".join(colors[label] for label in settings)
        out[f"keyconcurrencies_{p}"] = " ".join(f"{c:g}" for c in grids[settings[0]])
        out[f"keywidths_{p}"] = " ".join(f"{1 + WIDTH_STEP * rank:g}" for rank in range(len(grids[settings[0]])))
        out.update({f"keytitle_{p}_{k}": label for k, label in enumerate(settings, 1)})
    return out


def median_launch(launches: list[dict]) -> dict:
    """The launch with the median p99 (valid launches first: a flagged one is drawn only when no other is)."""
    pool = [c for c in launches if is_valid(c)] or launches
    ordered = sorted(pool, key=lambda c: num(get(c, "latency_ms.p99")))
    return ordered[(len(ordered) - 1) // 2]


def spectrum(run: Run, cell: dict) -> list[tuple[float, float]]:
    """(percent, ms) over the samples the cell's requests had, up to the percentile one request still lies beyond;
    the record's own percentiles where its tool keeps no samples or its raw output is not there."""
    n = int(num(cell.get("requests")) or 0)
    wanted = [p for p in PERCENTS if n * (1 - p / 100) >= 1]
    try:
        tool = loadgen.get(str(cell.get("loadgen")))
        curve = tool.percentiles(run.path / "cells" / cell["cell_id"], wanted) if tool.percentiles else []
    except (LoadgenError, OSError, ValueError, KeyError, TypeError):
        curve = []
    if curve:
        return [(p, ms) for p, ms in curve if ms is not None]
    return [
        (p, num(get(cell, f"latency_ms.{name}")))
        for name, p in RECORDED.items()
        if num(get(cell, f"latency_ms.{name}")) is not None
    ]

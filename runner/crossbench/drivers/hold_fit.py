"""Seed 003's per-connection figures, from two time series joined on time: the holder's timeline
(connections held) and the process-tree sampler's (server RSS, CPU, threads). Pure functions."""

from __future__ import annotations

import bisect
import csv
from pathlib import Path

from crossbench import stats
from crossbench.stats import LineFit


def least_squares(xs: list[float], ys: list[float]) -> LineFit | None:
    """y = slope * x + intercept (stats.least_squares); None with fewer than 3 points or no spread in x."""
    return stats.least_squares(xs, ys, min_points=3)


def read_timeline(path: Path) -> list[dict]:
    """holder.csv rows as dicts of floats (phase kept as text)."""
    with open(path, newline="") as f:
        return [{k: (v if k == "phase" else float(v)) for k, v in row.items()} for row in csv.DictReader(f)]


def value_at(timeline: list[dict], t: float, column: str) -> float | None:
    """The timeline's `column` at time t, linearly interpolated; None outside the timeline."""
    times = [row["t_epoch"] for row in timeline]
    i = bisect.bisect_left(times, t)
    if i == len(times) or (i == 0 and t < times[0]):
        return None
    if times[i] == t or i == 0:
        return timeline[i][column]
    before, after = timeline[i - 1], timeline[i]
    share = (t - before["t_epoch"]) / (after["t_epoch"] - before["t_epoch"])
    return before[column] + share * (after[column] - before[column])


def joined(
    timeline: list[dict], samples, column: str, t0: float, t1: float, connections: str = "connections_held"
) -> list[tuple[float, float, float]]:
    """(t, connections, sample.column) for every server sample in [t0, t1] that has a value."""
    out = []
    for s in samples:
        y = getattr(s, column)
        if not t0 <= s.t_epoch <= t1 or y is None:
            continue
        x = value_at(timeline, s.t_epoch, connections)
        if x is not None:
            out.append((s.t_epoch, x, y))
    return out


def rss_per_connection(timeline: list[dict], samples, t0: float, t1: float) -> dict:
    """Server RSS against connections held, fitted over [t0, t1] (where the held count rises): the slope
    is the memory per connection. CPU and threads are not fitted: during the ramp the server's CPU follows
    the constant rate of new connections, and Tomcat's pool grows in steps, so neither is linear in the
    count; the records give them at idle and while holding instead."""
    points = joined(timeline, samples, "rss_mb", t0, t1)
    fit = least_squares([p[1] for p in points], [p[2] for p in points])
    return {
        "rss_per_connection_kb": fit.slope * 1024.0 if fit else None,
        "rss_per_connection_kb_r2": fit.r2 if fit else None,
        "rss_fit_points": fit.n if fit else 0,
        "rss_fit_intercept_mb": fit.intercept if fit else None,
    }


def client_per_connection(timeline: list[dict], t0: float, t1: float) -> float | None:
    """The holder's own RSS growth per open connection (KiB) over [t0, t1]."""
    rows = [r for r in timeline if t0 <= r["t_epoch"] <= t1]
    fit = least_squares([r["connections_open"] for r in rows], [r["client_rss_mb"] for r in rows])
    return fit.slope * 1024.0 if fit else None

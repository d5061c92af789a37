"""A point's figures with their error: the launches of each point (cells.jsonl, the raw data) reduced to one
record per point (points.jsonl), each figure with its mean and 95 % interval over launches and the method.

A point is what was measured and with which settings, everything but the repetition (the record's point_id); a
launch is one repetition, the whole stack started afresh. Percentiles of a point come from all its launches'
latencies merged exactly where the raw output allows (wrk's histograms added, the rows of oha and k6 and ab's
per-request times concatenated: each adapter's launches_percentile); their interval comes from the launches' own
percentiles.
"""
from __future__ import annotations

import json
import math
from dataclasses import fields
from pathlib import Path

from . import servers, stats
from .cellplan import CellPlan, point_of
from .record import upgrade
from .sampling.noise import NOISY_HOST, SERVER_CLOSED
from .servers.tomcat_jfr import UNREADABLE as JFR_UNREADABLE

POINTS_FILE = "points.jsonl"
# Figures every point states when its launches have them (dotted names read inside an object).
FIGURES = ("rps", "latency_ms.p50", "latency_ms.p99", "latency_ms.p999", "efficiency_ratio", "latency_ratio",
           "threads_peak", "cpu_percent", "rss_peak_mb")
MERGED_PERCENTILES = {"latency_ms.p50": 50.0, "latency_ms.p90": 90.0, "latency_ms.p99": 99.0,
                      "latency_ms.p999": 99.9}
NOT_IDENTITY = {"cell_id", "repetition", "index", "settings", "peak_cell"}
# Flags that say what happened around a launch, not what the point is: such a launch is left out of its point's
# figures while the point has a launch without them (and the precision target then asks for another launch).
DISTURBED = frozenset({NOISY_HOST})
IMPRECISE = "imprecise"
# Flags that say how sure a point is or how its server behaves, not that its measurement went wrong: the point
# stays valid (findings, advice and knees read it). imprecise: its interval is wider than the target, and says
# so; server_closed_connections: the server answers one request per connection (gunicorn's sync workers), which
# is what it does, and findings say it beside its figures; jfr_unreadable: a launch's JFR recording is missing
# (its GC and wait figures null), its window's figures stand.
CAVEATS = frozenset({IMPRECISE, SERVER_CLOSED, JFR_UNREADABLE})
IDENTITY = tuple(f.name for f in fields(CellPlan) if f.name not in NOT_IDENTITY) + (
    "setting", "parallel_limit", "processes")


def value_at(record: dict, name: str):
    """A figure by dotted name: "latency_ms.p99" is record["latency_ms"]["p99"]."""
    value = record
    for part in name.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def point_id(record: dict) -> str:
    return record.get("point_id") or point_of(record["cell_id"])


def headline(record: dict) -> str:
    from .drivers import of_record
    driver = of_record(record)
    return driver.headline(record) if driver else "rps"


def aggregate(records: list[dict], run_dir: Path | None = None, precision: float | None = None) -> list[dict]:
    """One record per point, in the order points first appear; the last record of a cell run again wins."""
    by_cell = {r["cell_id"]: r for r in records}
    by_point: dict[str, list[dict]] = {}
    for record in by_cell.values():
        by_point.setdefault(point_id(record), []).append(record)
    return [point_record(pid, sorted(launches, key=lambda r: r.get("repetition") or 0), run_dir, precision)
            for pid, launches in by_point.items()]


def point_record(pid: str, launches: list[dict], run_dir: Path | None, precision: float | None) -> dict:
    ok = [r for r in launches if r.get("status") == "ok"]
    counted = [r for r in ok if not DISTURBED.intersection(r.get("flags") or ())] or ok
    first = (counted or launches)[0]
    knobs = {k.name for plugin in servers.PLUGINS.values() for k in plugin.knobs}
    identity = {k: first.get(k) for k in (*IDENTITY, *sorted(knobs)) if k in first}
    flags = sorted({flag for r in counted for flag in r.get("flags") or []})
    main = headline(first)
    names = [*FIGURES, *([main] if main not in FIGURES else [])]
    figures = {name: figure for name in names if (figure := point_figure(name, counted, run_dir)) is not None}
    if precision is not None and not precise(figures.get(main), precision):
        flags.append(IMPRECISE)
    failed = [r["cell_id"] for r in launches if r.get("status") != "ok"]
    return {**identity, "point_id": pid, "cells": [r["cell_id"] for r in counted], "failed_cells": failed,
            "disturbed_cells": [r["cell_id"] for r in ok if r not in counted],
            "n": len(counted), "failed": len(failed), "headline": main,
            "flags": flags, "valid": bool(counted) and not set(flags) - CAVEATS, "figures": figures}


def point_figure(name: str, launches: list[dict], run_dir: Path | None) -> dict | None:
    values = [float(v) for r in launches if isinstance(v := value_at(r, name), (int, float)) and math.isfinite(v)]
    if not values:
        return None
    interval = stats.t_interval(values)
    merged, how = merged_percentile(name, launches, run_dir) if name in MERGED_PERCENTILES else (None, None)
    figure = {"value": merged if merged is not None else interval.mean, "mean": interval.mean,
              "ci95_low": interval.low, "ci95_high": interval.high,
              "half_width_rel": interval.half_width_rel, "n": interval.n, "method": interval.method}
    if name in MERGED_PERCENTILES:
        figure["value_method"] = how or "mean of the launches' percentiles (no raw latencies to merge)"
    return figure


def merged_percentile(name: str, launches: list[dict], run_dir: Path | None) -> tuple[float | None, str | None]:
    """The percentile of all the launches' latencies as one population, from their raw output; None when any
    launch's raw data is missing (fixture runs keep none) or its tool keeps neither histogram nor rows."""
    if run_dir is None or len(launches) < 2:
        return None, None
    from .loadgen import ADAPTERS
    tools = {r.get("loadgen") for r in launches}
    launches_percentile = getattr(ADAPTERS.get(tools.pop()), "launches_percentile", None) if len(tools) == 1 else None
    if launches_percentile is None:       # the tool keeps neither a histogram nor rows, or the launches mix tools
        return None, None
    try:
        return launches_percentile([Path(run_dir) / "cells" / r["cell_id"] for r in launches],
                                   MERGED_PERCENTILES[name])
    except Exception:  # noqa: BLE001 - raw output missing or torn: the mean of the launches' figures stands
        return None, None


def precise(figure: dict | None, precision: float) -> bool:
    """The interval is within `precision` of the mean (a figure with no interval never is)."""
    if not figure or figure.get("half_width_rel") is None:
        return False
    return figure["half_width_rel"] <= precision


def write(run_dir: Path, records: list[dict], precision: float | None = None) -> list[dict]:
    points = aggregate(records, run_dir, precision)
    tmp = Path(run_dir) / (POINTS_FILE + ".tmp")
    tmp.write_text("".join(json.dumps(p, sort_keys=True) + "\n" for p in points))
    tmp.replace(Path(run_dir) / POINTS_FILE)
    return points


def load(run_dir: Path) -> list[dict]:
    """A run's points: points.jsonl, or computed from cells.jsonl when the run has none (older runs)."""
    run_dir = Path(run_dir)
    path = run_dir / POINTS_FILE
    if path.is_file():
        return read_jsonl(path)
    return aggregate([upgrade(r) for r in read_jsonl(run_dir / "cells.jsonl")], run_dir)


def read_jsonl(path: Path) -> list[dict]:
    """The objects of a JSON-lines file; a line cut short by a crash is skipped, as the runner does."""
    found = []
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found


def fmt_interval(figure: dict | None, unit: str = "") -> str:
    """"2710 ± 60 req/s": the value and the interval's half-width (two significant figures on the half-width,
    the value to the same place); "2710 req/s (1 launch)" without an interval."""
    if not figure:
        return "n/a"
    suffix = f" {unit}" if unit else ""
    value = figure["value"]
    if figure.get("ci95_low") is None:
        return f"{sig(value, 3)}{suffix} (1 launch)"
    half = (figure["ci95_high"] - figure["ci95_low"]) / 2
    if half <= 0:
        return f"{sig(value, 3)} ± 0{suffix}"
    places = max(0, 1 - math.floor(math.log10(half)))
    return f"{value:.{places}f} ± {half:.{places}f}{suffix}"


def sig(value: float, digits: int) -> str:
    if value == 0:
        return "0"
    places = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{places}f}"

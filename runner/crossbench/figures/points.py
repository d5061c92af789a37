"""A point's figures with their error: the launches of each point (cells.jsonl, the raw data) reduced to one
record per point (points.jsonl), each figure with its value and 95 % interval from one estimator, named in the
figure (stats.estimate: the geometric mean of the launches, Student's t on their logs; under the precision target
stats.stein_estimate, whose interval covers as stated when the first launches set how many there are; fewer than
three launches give the launch values, indicative, and no interval).

A point is what was measured and with which settings, everything but the repetition (the record's point_id); a
launch is one repetition, the whole stack started afresh. A percentile of a point is estimated like every other
figure, from its launches' own percentiles: the launch is the unit that varies, so the value and its interval
come from the same launches (a merged histogram's percentile would be one estimate and the launches' spread
another). Which launches count is decided here once (`counted`), for points.jsonl, the charts and findings alike.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from crossbench import kinds, known_servers, stats
from crossbench.figures import service_time
from crossbench.flags import JFR_UNREADABLE, LATENCY_UNRECOVERABLE, NOISY_HOST, SERVER_CLOSED, WINDOW_TOO_SHORT
from crossbench.record.record import point_of, upgrade

POINTS_FILE = "points.jsonl"
# Figures every point states when its launches have them (dotted names read inside an object).
FIGURES = (
    "rps",
    "latency_ms.p50",
    "latency_ms.p90",
    "latency_ms.p99",
    "latency_ms.p999",
    "efficiency_ratio",
    "latency_ratio",
    "threads_peak",
    "cpu_percent",
    "rss_peak_mb",
    service_time.FIELD,
)
NOT_IDENTITY = {"cell_id", "repetition", "index", "settings", "peak_cell"}
# Flags that say what happened around a launch, not what the point is: such a launch is left out of its point's
# figures while the point has a launch without them (and the precision target then asks for another launch).
# window_too_short: a held window too short for its round trips to average out (metrics.held_truth_broken); a
# longer launch of the same point measures it (decide/disturbed.py launches one).
DISTURBED = frozenset({NOISY_HOST, WINDOW_TOO_SHORT})
IMPRECISE = "imprecise"
# Flags that say how sure a point is or how its server behaves, not that its measurement went wrong: the point
# stays valid (findings, advice and knees read it). imprecise: its interval is wider than the target, and says
# so; server_closed_connections: the server answers one request per connection (gunicorn's sync workers), which
# is what it does, and findings say it beside its figures; jfr_unreadable: a launch's JFR recording is missing
# (its GC and wait figures null), its window's figures stand; latency_unrecoverable: no latency figure could be
# trusted (wrk's histogram under pipelining) and the record keeps none, its throughput stands (seed001's headline
# rests on Tomcat's pipelined launches).
CAVEATS = frozenset({IMPRECISE, SERVER_CLOSED, JFR_UNREADABLE, LATENCY_UNRECOVERABLE})
# A launch whose load generator filled its core: its throughput is the generator's ceiling, not the server's.
# TechEmpower's reference still states such a best level (its figure is what the setup carries), and says so.
GENERATOR_CEILING = "loadgen_saturated"
# What a point is: every field of a cell's plan but those of one launch (NOT_IDENTITY; a test holds the two to
# plan.cellplan.CellPlan), and what its server's settings make of it.
IDENTITY = (
    "experiment",
    "group",
    "server",
    "endpoint",
    "concurrency",
    "delay_ms",
    "duration_s",
    "warmup_s",
    "loadgen",
    "keepalive",
    "pipeline",
    "server_cpus",
    "loadgen_cpus",
    "loadgen_threads",
    "kind",
    "rate",
    "rate_share",
    "target_ms",
    "proxy",
    "pooler",
    "sweep",
    "sweep_step",
    "options",
    "point_id",
    "setting",
    "parallel_limit",
    "processes",
)


def value_at(record: dict, name: str):
    """A figure by dotted name: "latency_ms.p99" is record["latency_ms"]["p99"]."""
    value = record
    for part in name.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def point_id(record: dict) -> str:
    return record.get("point_id") or point_of(record["cell_id"])


def headline(record: dict) -> str:
    return kinds.headline(record)


def aggregate(records: list[dict], precision: float | None = None) -> list[dict]:
    """One record per point, in the order points first appear; the last record of a cell run again wins. A user
    endpoint's launches carry their ratios against its C=1 service time, and its points' ratio intervals the service
    time's own (service_time.py)."""
    by_cell = {r["cell_id"]: r for r in service_time.with_ratios(records, IDENTITY, counted)}
    by_point: dict[str, list[dict]] = {}
    for record in by_cell.values():
        by_point.setdefault(point_id(record), []).append(record)
    found = [
        point_record(pid, sorted(launches, key=lambda r: r.get("repetition") or 0), precision)
        for pid, launches in by_point.items()
    ]
    return service_time.carried(found, IDENTITY)


def counted(launches: list[dict]) -> list[dict]:
    """The launches a point's figures rest on: those that ran, less the disturbed ones (DISTURBED) while the
    point has an undisturbed launch."""
    ok = [r for r in launches if r.get("status", "ok") == "ok"]
    return [r for r in ok if not DISTURBED.intersection(r.get("flags") or ())] or ok


# A launch whose headline figure lies far outside its siblings' (the point's other counted launches) is launched
# again even without a flag (decide/disturbed.py): its log more than OUTLIER_SPREADS robust spreads from the
# siblings' median, the spread 1.4826 x their median absolute deviation of logs (the standard deviation, were the
# logs normal) and never under OUTLIER_MIN_SPREAD, since two siblings that agree to the digit leave none: at least
# 16 % over or 14 % under (exp(0.15)). It stays in its point's figures (leaving it out would make the interval
# narrower than the launches are); the launch added gives the point one more to rest on.
OUTLIER_SPREADS = 3.0
OUTLIER_MIN_SPREAD = 0.05
MAD_TO_SD = 1.4826


def outliers(launches: list[dict]) -> list[str]:
    """The cell ids of a point's counted launches whose headline figure lies far outside their siblings' (at
    least two siblings with the figure)."""
    kept = counted(launches)
    if len(kept) < 3:
        return []
    name = headline(kept[0])
    logs = {r["cell_id"]: math.log(v) for r in kept for v in launch_values([r], name) if v > 0}
    found = []
    for cell, value in logs.items():
        siblings = [other for c, other in logs.items() if c != cell]
        if len(siblings) < 2:
            continue
        centre = statistics.median(siblings)
        spread = max(MAD_TO_SD * statistics.median(abs(s - centre) for s in siblings), OUTLIER_MIN_SPREAD)
        if abs(value - centre) > OUTLIER_SPREADS * spread:
            found.append(cell)
    return found


def point_record(pid: str, launches: list[dict], precision: float | None) -> dict:
    ok = [r for r in launches if r.get("status") == "ok"]
    counted_launches = counted(ok)
    first = (counted_launches or launches)[0]
    knobs = known_servers.knob_names()
    identity = {k: first.get(k) for k in (*IDENTITY, *sorted(knobs)) if k in first}
    flags = sorted({flag for r in counted_launches for flag in r.get("flags") or []})
    main = headline(first)
    names = [*FIGURES, *([main] if main not in FIGURES else [])]
    figures = {
        name: figure
        for name in names
        if (figure := point_figure(name, counted_launches, LaunchRule.of(precision))) is not None
    }
    if precision is not None and not precise(figures.get(main), precision):
        flags.append(IMPRECISE)
    failed = [r["cell_id"] for r in launches if r.get("status") != "ok"]
    return {
        **identity,
        "point_id": pid,
        "cells": [r["cell_id"] for r in counted_launches],
        "failed_cells": failed,
        "disturbed_cells": [r["cell_id"] for r in ok if r not in counted_launches],
        "n": len(counted_launches),
        "failed": len(failed),
        "headline": main,
        "flags": flags,
        "valid": bool(counted_launches) and not set(flags) - CAVEATS,
        "figures": figures,
    }


def launch_values(launches: list[dict], value_of) -> list[float]:
    """The finite numbers `value_of` gives for the launches (a dotted figure name or a function of a record)."""
    get = (lambda r: value_at(r, value_of)) if isinstance(value_of, str) else value_of
    return [
        float(v)
        for r in launches
        if isinstance(v := get(r), (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    ]


@dataclass(frozen=True)
class LaunchRule:
    """How a run set its points' launch counts, which picks the estimator of every figure read from them: fixed in
    advance (stats.estimate) or adaptive, set by the precision target (stats.stein_estimate, whose interval covers
    as stated when the first launches set how many there are). A property of the run, passed to whatever computes
    a figure from its launches."""

    adaptive: bool = False

    @classmethod
    def of(cls, precision: float | None) -> LaunchRule:
        """The rule of a run with this precision target (None: no target, launches fixed in advance)."""
        return cls(adaptive=precision is not None)

    def figure(self, values: list[float]) -> dict | None:
        """A figure in points.jsonl's shape from its launch values in launch order; None without values."""
        if not values:
            return None
        return (stats.stein_estimate if self.adaptive else stats.estimate)(values).as_figure()


FIXED = LaunchRule(adaptive=False)
ADAPTIVE = LaunchRule(adaptive=True)


def figure_of(values: list[float], rule: LaunchRule) -> dict | None:
    """A figure in points.jsonl's shape from its launch values under the run's launch rule. Charts, findings and
    advice that need a figure points.jsonl does not keep call this, so every bar and every ± of the suite comes
    from the one estimator (stats.estimate, or stats.stein_estimate under the precision target)."""
    return rule.figure(values)


def point_figure(name: str, launches: list[dict], rule: LaunchRule) -> dict | None:
    return figure_of(launch_values(launches, name), rule)


def precise(figure: dict | None, precision: float) -> bool:
    """The interval is within `precision` of the value (a figure with no interval never is)."""
    if not figure or figure.get("half_width_rel") is None:
        return False
    return figure["half_width_rel"] <= precision


def write(run_dir: Path, records: list[dict], precision: float | None = None) -> list[dict]:
    points = aggregate(records, precision)
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
    return aggregate([upgrade(r) for r in read_jsonl(run_dir / "cells.jsonl")])


def read_jsonl(path: Path) -> list[dict]:
    """The objects of a JSON-lines file; a line cut short by a crash is skipped, as the runner does."""
    found = []
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found


def best_throughput(found: list[dict], stack_of) -> dict:
    """{stack_of(point): its point whose picking launch had the highest throughput}, over the points that have
    one: TechEmpower's "best level" of each stack, as the runner relaunches it and the analysis ranks it. The pick
    reads one launch of each level (the first counted, which every planned level has), never a mean over more:
    the launches that confirm the best level afterwards (best_level_launches) then estimate it apart from the
    luck that picked it (the winner's curse: the best of many single launches reads high)."""
    best: dict = {}
    for point in found:
        rps = picking_rps(point)
        if rps is None:
            continue
        stack = stack_of(point)
        if stack not in best or rps > picking_rps(best[stack]):
            best[stack] = point
    return best


def may_be_best(point: dict) -> bool:
    """A point TechEmpower's reference may state as a stack's best level: launches counted and no flag beyond a
    caveat or the generator's ceiling. The runner launches again only a best level picked among these, so the
    launches it adds are those of the level the analysis states."""
    return bool(point["n"]) and not set(point["flags"]) - CAVEATS - {GENERATOR_CEILING}


def picking_rps(point: dict) -> float | None:
    """The throughput of a point's first counted launch (its figure's launches are in launch order)."""
    launches = ((point.get("figures") or {}).get("rps") or {}).get("launches") or []
    return launches[0] if launches else None


def confirming(point: dict, records: list[dict]) -> dict:
    """A best level's point from the launches after the one that picked it (`best_throughput`), its records among
    `records`; the point unchanged when it has no such launch (its figure then carries the pick's luck)."""
    after_pick = set(point.get("cells", [])[1:])
    later = [r for r in records if r.get("cell_id") in after_pick]
    if not later:
        return point
    again = point_record(point["point_id"], later, None)
    kept = ("failed_cells", "failed", "disturbed_cells")
    return {**point, **again, **{k: point[k] for k in kept if k in point}, "picked_by": point["cells"][0]}


def fmt_interval(figure: dict | None, unit: str = "") -> str:
    """A figure as the suite prints it everywhere, in one notation: "2710 [2650, 2770] req/s", the value and its 95 %
    interval's ends, to the place of the nearer end's first significant figure (the second when that is a 1 or a
    2; the farther end's when one end is the value itself, as a knee fitted on a measured concurrency may
    be): no more digits than the interval supports, but never a positive end rounded to 0. Launches that tie:
    "229 threads (all 3 launches)". Without an interval, the launch values themselves: "2710 req/s (1 launch)",
    "2 launches: 2438, 2303 req/s (indicative)"."""
    if not figure:
        return "n/a"
    suffix = f" {unit}" if unit else ""
    value, low, high = figure["value"], figure.get("ci95_low"), figure.get("ci95_high")
    if low is None or high is None:
        return indicative_text(figure, suffix)
    sides = [d for d in (value - low, high - value) if d > 1e-9 * abs(value)]
    if not sides:  # launches that tie, but for rounding: no interval of zero width
        n = figure.get("n") or len(figure.get("launches") or [])
        return f"{short(value)}{suffix} (all {n} launches)" if n else f"{short(value)}{suffix}"
    side = min(sides)  # an end at the value itself (a fitted knee on a measured C): the other's
    exponent = math.floor(math.log10(side))
    places = -exponent + (1 if int(side / 10**exponent) <= 2 else 0)
    if low > 0 and round(low, places) == 0:  # a positive end is shown to its own first significant figure, not 0
        places = -math.floor(math.log10(low))
    shown = [f"{round(v, places):.{max(0, places)}f}" for v in (value, low, high)]
    return f"{shown[0]} [{shown[1]}, {shown[2]}]{suffix}"


def fmt_range(value: float, low: float, high: float, unit: str = "") -> str:
    """A value and the ends of its 95 % interval that are not a point's figure (a ratio test's, a fitted knee's),
    printed as fmt_interval prints a figure."""
    return fmt_interval({"value": value, "ci95_low": low, "ci95_high": high}, unit)


def indicative_text(figure: dict, suffix: str) -> str:
    launches = figure.get("launches") or []
    n = figure.get("n") or len(launches)
    if n <= 1:
        return f"{short(figure['value'])}{suffix} (1 launch)"
    if launches and figure.get("estimator") == stats.INDICATIVE:
        return f"{n} launches: {', '.join(short(v) for v in launches)}{suffix} (indicative)"
    why = "one at zero" if figure.get("estimator") == stats.NOT_POSITIVE else "no interval"
    return f"{short(figure['value'])}{suffix} ({n} launches, {why})"


def sig(value: float | None, digits: int = 3, commas: bool = False) -> str:
    """A number to `digits` significant figures, never in exponent form, "?" for None: the suite's one rule
    (1.5 -> '1.5'; 2710.4 -> '2710', or '2,710' with commas, as the findings write it)."""
    if value is None:
        return "?"
    if value == 0:
        return "0"
    places = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:,.{places}f}" if commas else f"{value:.{places}f}"


def short(value: float) -> str:
    """Three significant figures without trailing zeros: 10.0 -> '10', 2438.0 -> '2438', 1.5 -> '1.5'."""
    text = sig(value, 3)
    return text.rstrip("0").rstrip(".") if "." in text else text

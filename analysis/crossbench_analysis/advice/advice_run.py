"""What a maxthreads run measured that maxThreads advice rests on: per setting its knee (and whether it sits at
maxThreads), the JVM's own threads, RSS per busy platform thread and CPU per request (least squares over the
run's points), the p99 a request pays with no queue, what queueing past maxThreads and past the connector's
limits looked like, and the virtual-thread cells. Works on points (crossbench.figures.points: a figure's value and 95 %
interval over launches); flagged points feed nothing and are listed instead. Each figure names its points."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from crossbench import stats
from crossbench.figures import service_time
from crossbench.figures.points import load as load_run_points
from crossbench.figures.points import point_id
from crossbench_analysis.charts.kit_pools import beyond_queues, queue_groups, sweep_cells, tomcat_ok
from crossbench_analysis.judge import knee_rule
from crossbench_analysis.judge import knees as knee_finder
from crossbench_analysis.read.runinfo import Run, get, load_run, num
from crossbench_analysis.read.setting import pool_size, setting, sweeps_pool

from . import held

# A point flagged only ratio_disagreement whose two ratios are both above 1.1 is past the knee by either: the flag
# says how far past is uncertain, not whether, so it may close a knee's bracket (it feeds no other figure).
PAST_EITHER_WAY = {"ratio_disagreement"}
FOLLOWS = (0.8, 1.3)  # a knee within -20 % .. +30 % of maxThreads counts as "at maxThreads"
BUSY_FLAGS = ("loadgen_saturated", "noisy_host")  # cells the machine, not the server, may have decided
RUN_IT = "./runner/run_all.sh --experiment maxthreads"


class AdviceRefused(RuntimeError):
    """The run lacks the cells advice needs; the message says which experiment to run."""


def load_points(run: Run) -> list[dict]:
    """The run's points (points.jsonl, or computed from cells.jsonl for older runs), each with `cell`: its first
    record (connector limits, peaks the point does not aggregate)."""
    by_id = run.cell_by_id
    found = load_run_points(run.path)
    for point in found:
        point["cell"] = next((by_id[i] for i in point.get("cells") or [] if i in by_id), None) or next(
            (c for c in run.cells if point_id(c) == point["point_id"]), {}
        )
    return found


def value(point: dict, name: str) -> float | None:
    return num((point.get("figures") or {}).get(name, {}).get("value"))


def figure(point: dict, name: str) -> dict | None:
    return (point.get("figures") or {}).get(name)


def setting_of(point: dict) -> str:
    return setting(point["cell"])


def sweep_points(run: Run, all_points: list[dict]) -> list[dict]:
    """Points of Tomcat's blocking delay sweep (charts.kit_pools.sweep_cells) and of its sweep of a user's path
    (held.user_sweep_cells), refused when there are none."""
    ids = {point_id(c) for c in sweep_cells(run.cells) + held.user_sweep_cells(run.cells)}
    found = [point for point in all_points if point["point_id"] in ids]
    settings = sorted({pool_size(point["cell"]) for point in found if pool_size(point["cell"]) is not None})
    if len(settings) < 2:
        had = f"only maxThreads={settings[0]}" if settings else "no maxThreads sweep"
        raise AdviceRefused(
            f"run {run.run_id} has {had} (Tomcat platform threads on /delay/sync or on a --path of a --war); "
            "advice compares "
            f"two settings or more: run {RUN_IT} (about 45 min; --quick: about 2 min)"
        )
    return sorted(
        found,
        key=lambda point: (
            pool_size(point["cell"]) is None,
            num(pool_size(point["cell"])) or 0,
            str(point["cell"].get("endpoint")),
            num(point["cell"].get("delay_ms")) or 0,
            num(point["cell"]["concurrency"]),
        ),
    )


def left_out(points: list[dict]) -> list[dict]:
    return [
        {
            "point": point["point_id"],
            "concurrency": point["cell"].get("concurrency"),
            "flags": point.get("flags") or ["not valid"],
        }
        for point in points
        if not point.get("valid")
    ]


def knee_between(knee: knee_rule.Knee) -> tuple[float, float] | None:
    """The two measured concurrencies the knee lies between: the bracket, those around a fitted N, or for a knee
    only known to lie under a bound, the lowest measured and the first at or above the bound."""
    if knee.status == "bracket":
        return knee.bracket
    if knee.status == "fitted":
        return knee_rule.neighbours(list(knee.measured), knee.concurrency)
    return knee.under_bracket()


def follows(knee: knee_rule.Knee, max_threads: float | None) -> bool | None:
    """A pool alone puts the hinge at N = maxThreads: the knee follows maxThreads when its interval (or the
    bracket that holds it) reaches maxThreads give or take FOLLOWS; a knee known only to lie under a bound below
    that does not; None where the fit places no knee."""
    if not max_threads:
        return None
    under = knee.bent_under()
    if under is not None:
        return False if under < max_threads * FOLLOWS[0] else None
    if knee.status not in ("fitted", "bracket"):
        return None
    low, high = (knee.low, knee.high) if knee.status == "fitted" else knee.bracket
    return low <= max_threads * FOLLOWS[1] and high >= max_threads * FOLLOWS[0]


def past_either_way(point: dict) -> bool:
    flags = set(point.get("flags") or [])
    return (
        bool(flags)
        and flags <= PAST_EITHER_WAY
        and all((value(point, ratio) or 0) > knee_finder.THRESHOLD for ratio in ("latency_ratio", "efficiency_ratio"))
    )


def knees(points: list[dict]) -> list[dict]:
    """Per setting and delay (or user path): the knee the hinge fitted over every launch of its valid points places
    (knees.judge, the rule of the knees file and the findings), the measured concurrencies around it, and
    whether it follows maxThreads."""
    by_setting: dict[tuple, list[dict]] = defaultdict(list)
    for point in points:
        cell = point["cell"]
        by_setting[(setting_of(point), num(cell.get("delay_ms")), cell.get("endpoint"))].append(point)
    found = []
    for (name, delay, _), mine in by_setting.items():
        held_for = min(mine, key=lambda point: point["cell"]["concurrency"])
        past = [point for point in mine if past_either_way(point)]
        valid = [point for point in mine if point.get("valid")] + past
        used = (
            "latency_ratio"
            if valid and all(value(point, "latency_ratio") is not None for point in valid)
            else "efficiency_ratio"
        )
        valid = sorted(
            (point for point in valid if value(point, used) is not None), key=lambda point: point["cell"]["concurrency"]
        )
        knee = knee_rule.judge(
            knee_rule.figure_launches([(point["cell"]["concurrency"], figure(point, used)) for point in valid])
        )
        limit = num(pool_size(mine[0]["cell"]))
        between = knee_between(knee)
        found.append(
            {
                "setting": name,
                "max_threads": int(limit) if limit else None,
                "delay_ms": delay,
                "held": held.label(held_for),
                "knee_concurrency": knee_finder.rounded(knee.concurrency),
                "status": knee.status,
                "text": knee_rule.knee_text(knee, int(limit) if limit else None),
                "knee_low": knee_finder.rounded(knee.low),
                "knee_high": knee_finder.rounded(knee.high),
                "knee_between": list(between) if between else None,
                "indicative": knee.indicative,
                "follows_max_threads": follows(knee, limit),
                "ratio": used,
                "ratios": {point["point_id"]: round(value(point, used), 3) for point in valid},
                "measured": [[point["cell"]["concurrency"], round(value(point, used), 3)] for point in valid],
                "tracks_pool": tracks_pool(valid, used, limit),
                "max_concurrency": max((point["cell"]["concurrency"] for point in valid), default=None),
                "points": [point["point_id"] for point in valid],
                "flagged_but_past": [point["point_id"] for point in past],
                "left_out": [x for x in left_out(mine) if x["point"] not in {p["point_id"] for p in past}],
            }
        )
    return found


TRACK_SHARE = 0.15  # a ratio within this share of C / maxThreads past the pool (and near 1 below it) tracks it


def tracks_pool(valid: list[dict], ratio: str, limit: float | None) -> bool | None:
    """What was observed, before any model: past maxThreads each measured ratio within TRACK_SHARE of C /
    maxThreads, and at or under it near 1. None without a pool or without a point past it."""
    if not limit:
        return None
    pairs = [(point["cell"]["concurrency"], value(point, ratio)) for point in valid]
    past = [(c, r) for c, r in pairs if c > limit]
    if not past:
        return None
    return all(abs(r / (c / limit) - 1) <= TRACK_SHARE for c, r in past) and all(
        r <= knee_finder.THRESHOLD for c, r in pairs if c <= limit
    )


def platform(points: list[dict]) -> list[dict]:
    return [point for point in points if pool_size(point["cell"]) is not None and point.get("valid")]


def jvm_own_threads(points: list[dict]) -> dict | None:
    """Threads beyond the pool where the pool was full (C >= maxThreads): the JVM's and Tomcat's own; median."""
    own = {
        point["point_id"]: value(point, "threads_peak") - pool_size(point["cell"])
        for point in platform(points)
        if value(point, "threads_peak") is not None and point["cell"]["concurrency"] >= pool_size(point["cell"])
    }
    if not own:
        return None
    ordered = sorted(own.values())
    mid = len(ordered) // 2
    median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return {"value": median, "method": "median of threads_peak - maxThreads where C >= maxThreads", "points": own}


def line_fit(xs: list[float], ys: list[float]) -> dict | None:
    """Least squares y = slope x + intercept with the slope's 95 % interval (stats.least_squares: Student t, n - 2
    degrees of freedom; none from two points), as advice.json keeps it. None with fewer than two points or no
    spread in x."""
    fit = stats.least_squares(xs, ys)
    if fit is None:
        return None
    if fit.slope_low is None:
        return {
            "slope": fit.slope,
            "intercept": fit.intercept,
            "n": fit.n,
            "slope_ci95": None,
            "method": "least squares through two points: no interval",
        }
    return {
        "slope": fit.slope,
        "intercept": fit.intercept,
        "n": fit.n,
        "slope_ci95": [fit.slope_low, fit.slope_high],
        "method": f"least squares over {fit.n} points, slope +- t({fit.n - 2}) x its standard error",
    }


def cost_fit(points: list[dict], x: str, y: str, *, settings_needed: int = 2) -> dict:
    """y against x over the valid points of at least `settings_needed` settings, or the reason there is none."""
    used = [
        point for point in points if point.get("valid") and value(point, x) is not None and value(point, y) is not None
    ]
    settings = {setting_of(point) for point in used}
    if len(settings) < settings_needed or len(used) < 2:
        return {
            "fit": None,
            "points": [point["point_id"] for point in used],
            "why_not": f"{len(used)} valid point{'s' * (len(used) != 1)} from {len(settings)} "
            f"setting{'s' * (len(settings) != 1)}: too few to fit "
            f"(needs {settings_needed} settings)",
        }
    fit = line_fit([value(point, x) for point in used], [value(point, y) for point in used])
    return {
        "fit": fit,
        "points": [point["point_id"] for point in used],
        "why_not": None if fit else f"no spread in {x} across the points",
    }


def p99_overhead(points: list[dict]) -> dict | None:
    """What a request pays beyond its holding time with no queue: p99 - delay (or service time) at the valid
    platform points whose ratio stayed at or under 1.1 (the largest: the safe side)."""
    quiet = [
        point
        for point in platform(points)
        if value(point, "latency_ms.p99") is not None
        and (value(point, "latency_ratio") or value(point, "efficiency_ratio") or 9) <= knee_finder.THRESHOLD
    ]
    if not quiet:
        return None
    worst = max(quiet, key=lambda point: value(point, "latency_ms.p99") - held.hold_ms(point))
    return {
        "value_ms": round(value(worst, "latency_ms.p99") - held.hold_ms(worst), 1),
        "point": worst["point_id"],
        "p99": figure(worst, "latency_ms.p99"),
        "of": [point["point_id"] for point in quiet],
    }


def queueing(points: list[dict]) -> list[dict]:
    """Valid platform points with more clients than threads: the ratio against C / maxThreads (each request
    waits its turn in Tomcat's queue), p50 and p99, threads busy and connections Tomcat held."""
    return [
        {
            "point": point["point_id"],
            "concurrency": point["cell"]["concurrency"],
            "max_threads": pool_size(point["cell"]),
            "ratio": round(value(point, "latency_ratio") or value(point, "efficiency_ratio") or math.nan, 3),
            "predicted": round(point["cell"]["concurrency"] / pool_size(point["cell"]), 3),
            "p50_ms": value(point, "latency_ms.p50"),
            "p99_ms": value(point, "latency_ms.p99"),
            "pool_busy_peak": point["cell"].get("pool_busy_peak"),
            "connections_held": point["cell"].get("tomcat_connection_count_peak"),
        }
        for point in platform(points)
        if point["cell"]["concurrency"] > pool_size(point["cell"])
    ]


def queue_limits(run: Run) -> list[dict]:
    """Cells past maxConnections or maxThreads + acceptCount (the full experiment's group `queues`)."""
    groups = queue_groups(run.cells)
    return [
        {
            "cell": c["cell_id"],
            "concurrency": c["concurrency"],
            "max_threads": pool_size(c),
            "accept_count": c.get("accept_count"),
            "max_connections": c.get("max_connections"),
            "connections_held": c.get("tomcat_connection_count_peak"),
            "rps": num(c.get("rps")),
            "errors": c.get("error_total"),
            "ratio": num(c.get("efficiency_ratio")),
            "flags": c.get("flags"),
        }
        for c in tomcat_ok(run.cells)
        if c.get("group") in groups and beyond_queues(c)
    ]


def busy_machine(run: Run) -> dict[str, list[str]]:
    """Cells with a flag that speaks of the machine (or of too few launches), by flag."""
    found: dict[str, list[str]] = defaultdict(list)
    for c in run.cells:
        for flag in c.get("flags") or []:
            if flag in BUSY_FLAGS:
                found[flag].append(c["cell_id"])
    return dict(found)


def measure(run_dir: Path | Run) -> dict:
    """Everything the advice takes from the run (AdviceRefused when it has no maxThreads sweep)."""
    run = run_dir if isinstance(run_dir, Run) else load_run(Path(run_dir))
    points = sweep_points(run, load_points(run))
    plat = [point for point in points if pool_size(point["cell"]) is not None]
    virt = [point for point in points if sweeps_pool(point["cell"]) and pool_size(point["cell"]) is None]
    return {
        "run_id": run.run_id,
        "run_dir": str(run.path),
        "experiment": run.experiment,
        "machine": run.machine_line(),
        "server_cores": len(plat[0]["cell"].get("server_cpus") or [1]),
        "jdk": get(plat[0]["cell"], "jvm.vm_version"),
        "somaxconn": num(run.machine.get("somaxconn")),
        "heap": sorted({str(get(point["cell"], "server_settings.heap")) for point in plat}),
        "delays_ms": sorted(
            {point["cell"]["delay_ms"] for point in points if not service_time.is_user_record(point["cell"])}
        ),
        "service_times": held.service_times(points),
        "max_threads_measured": sorted({pool_size(point["cell"]) for point in plat}),
        "max_concurrency": max(point["cell"]["concurrency"] for point in points),
        "launches": sorted({point.get("n") or 0 for point in points}),
        "knees": knees(points),
        "jvm_own_threads": jvm_own_threads(points),
        "rss_per_thread": cost_fit(plat, "threads_peak", "rss_peak_mb"),
        "cpu_per_request": (
            held.cpu_per_request(plat)
            if all(service_time.is_user_record(point["cell"]) for point in plat)
            else cost_fit(plat, "rps", "cpu_percent")
        ),
        "cpu_per_request_virtual": cost_fit(virt, "rps", "cpu_percent", settings_needed=1) if virt else None,
        "p99_overhead": p99_overhead(points),
        "queueing": queueing(points),
        "queue_limits": queue_limits(run),
        "virtual_points": [point["point_id"] for point in virt],
        "left_out": left_out(points),
        "busy_machine": busy_machine(run),
        "foreign_cpu_max": max(
            (num(c.get("foreign_cpu_percent")) for c in run.cells if num(c.get("foreign_cpu_percent")) is not None),
            default=None,
        ),
    }

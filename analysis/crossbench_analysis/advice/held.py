"""How long a request of a maxthreads sweep holds its thread: the delay it was asked for on /delay/sync, or, on a
user's path (--war --path), its service time, the latency it had at C=1 in the same run and setting
(crossbench.figures.service_time). Advice sizes a pool from that holding time, and a run of a user's path gives
the one it measured when no --hold-ms is stated."""

from __future__ import annotations

import statistics

from crossbench.endpoints import SERVICE_CONCURRENCY
from crossbench.figures import service_time
from crossbench.figures.points import fmt_interval, short

from ..charts.kit_pools import queue_groups, tomcat_ok
from ..read.runinfo import num
from ..read.setting import setting


class NoServiceTime(ValueError):
    """The run measured no service time to hold a thread for, or several, one per path."""


def user_sweep_cells(cells: list[dict]) -> list[dict]:
    """Tomcat's cells on a user's path (no delay, its ratios against its own C=1 latency), outside the
    queue-limit groups: what a --war run sweeps, as /delay/sync is what maxthreads sweeps."""
    queues = queue_groups(cells)
    return [c for c in tomcat_ok(cells) if service_time.is_user_record(c) and c.get("group") not in queues]


def hold_ms(point: dict) -> float:
    """What a request of the point held its thread for, ms: its delay, or its series' service time (0 where the
    C=1 point that gives it is missing)."""
    cell = point["cell"]
    if not service_time.is_user_record(cell):
        return num(cell.get("delay_ms")) or 0.0
    return num((point.get("figures") or {}).get(service_time.FIELD, {}).get("value")) or 0.0


def label(point: dict) -> str:
    """'100 ms' for a delay; '/orders (service time 1.08 ms)' for a user's path."""
    if not service_time.is_user_record(point["cell"]):
        return f"{hold_ms(point):g} ms"
    return f"{point['cell'].get('endpoint')} (service time {short(hold_ms(point))} ms)"


def service_times(points: list[dict]) -> list[dict]:
    """Per user path and setting: its C=1 point's service time with its interval over launches."""
    found = []
    for point in points:
        if service_time.is_user_record(point["cell"]) and point["cell"].get("concurrency") == SERVICE_CONCURRENCY:
            fig = (point.get("figures") or {}).get(service_time.FIELD)
            if fig and num(fig.get("value")):
                found.append({"path": point["cell"].get("endpoint"), "setting": setting(point["cell"]), "figure": fig})
    return found


def measured_hold(points: list[dict]) -> dict:
    """The holding time advice takes from a run of one user path when none is stated: the median over settings
    of its C=1 service time (each setting's is the same request's; they differ by the run's noise).
    NoServiceTime where the run has no user path, or several (each would want its own pool)."""
    times = service_times(points)
    paths = sorted({t["path"] for t in times})
    if not paths:
        raise NoServiceTime(
            "the run measured no service time (no --path of yours at C=1): state how long a request holds a "
            "thread with --hold-ms"
        )
    if len(paths) > 1:
        each = "; ".join(f"{p}: {values_ms(times, p)} ms" for p in paths)
        raise NoServiceTime(f"the run measured {len(paths)} paths ({each}): say which with --hold-ms")
    value = statistics.median(t["figure"]["value"] for t in times)
    each = ", ".join(f"{t['setting']} {fmt_interval(t['figure'])}" for t in times)
    return {
        "value_ms": value,
        "path": paths[0],
        "words": f"the service time of {paths[0]} measured at C=1 in this run, the median over its settings "
        f"({each} ms)",
    }


def values_ms(times: list[dict], path: str) -> str:
    return ", ".join(short(t["figure"]["value"]) for t in times if t["path"] == path)


def cpu_per_request(points: list[dict]) -> dict:
    """CPU per request of a user's path, as advice_run.cost_fit gives it (its `fit`: slope in % of a core per
    req/s, intercept 0): the server's CPU over its throughput at each valid point, their median, and the range
    they span in place of an interval. A CPU-bound path fills its core at every concurrency, so a line of CPU
    against throughput has no spread in CPU to fit; the share at each point is still what a request cost."""
    shares = {
        point["point_id"]: cpu / rps
        for point in points
        if point.get("valid")
        and (cpu := num((point.get("figures") or {}).get("cpu_percent", {}).get("value")))
        and (rps := num((point.get("figures") or {}).get("rps", {}).get("value")))
    }
    if not shares:
        return {"fit": None, "points": [], "why_not": "no valid point with both CPU and throughput"}
    values = sorted(shares.values())
    return {
        "fit": {
            "slope": statistics.median(values),
            "intercept": 0.0,
            "n": len(values),
            "slope_ci95": [values[0], values[-1]],
            "method": f"cpu_percent / rps at each of {len(values)} points: their median, and their range",
        },
        "points": list(shares),
        "why_not": None,
        "per_point": True,
    }

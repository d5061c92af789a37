"""maxThreads advice for a stated workload from a maxthreads run on this machine: the pool size (Little's law
and headroom, workload.py), checked against where the run's knees sit (advice_run.py); what that pool costs here
in memory and CPU; acceptCount and maxConnections for bursts; whether virtual threads remove the knee. Every
number names the points it comes from, and `could_not_tell` says what the run could not; beside it, the
capacity a capacity run measured per setting against the models' (advice_capacity.py). Written as advice.json
and advice.md in the run directory (advice_text.py renders the words)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from crossbench.advice_load import Workload
from crossbench_analysis.judge.workload import (
    FULL_SHARE,
    P99_SHARE,
    pool_for_headroom,
    pool_for_p99,
    queue_within_target,
)
from crossbench_analysis.read import points_run
from crossbench_analysis.read.runinfo import Run, load_run

from . import advice_capacity, advice_run, advice_text, held
from .advice_capacity import NoCapacity
from .advice_run import AdviceRefused

TOMCAT_MAX_CONNECTIONS = 8192  # NIO connector defaults (Tomcat 9)
TOMCAT_ACCEPT_COUNT = 100
BURST_S = 1.0  # acceptCount holds this long of arrivals as new connections

__all__ = ["AdviceRefused", "NoCapacity", "advise", "measured_hold", "write"]


def measured_hold(run: Run) -> dict:
    """The holding time a run of one user path measured (held.measured_hold): what advice sizes the pool for when
    no --hold-ms is stated. AdviceRefused where the run has none to give."""
    try:
        return held.measured_hold(advice_run.load_points(run))
    except held.NoServiceTime as e:
        raise AdviceRefused(f"run {run.run_id}: {e}") from e


def advise(
    run_dir: Path | Run, workload: Workload | None, capacity_dir: Path | None = None, hold_from: dict | None = None
) -> dict:
    """The advice as a dict (advice.json); without a workload, only what the run says about this machine. The
    measured capacity per setting comes from `capacity_dir` (a capacity run; NoCapacity when it has no search
    of Tomcat), else from run_dir itself when it searched capacity, else it is missing and said to be.
    `hold_from` is measured_hold's answer where the workload's holding time is the run's own."""
    run = run_dir if isinstance(run_dir, Run) else points_run.load_any(Path(run_dir))  # read once for both parts
    meas = advice_run.measure(run)
    pool = size_pool(workload, meas) if workload else None
    capacity = capacity_beside(run, capacity_dir, pool["value"] if pool else None)
    advice = {
        "source": source(run),
        "run": {
            key: meas[key]
            for key in (
                "run_id",
                "run_dir",
                "experiment",
                "machine",
                "jdk",
                "server_cores",
                "delays_ms",
                "service_times",
                "max_threads_measured",
                "max_concurrency",
                "launches",
            )
        },
        "workload": workload.to_dict() if workload else None,
        "hold_from": hold_from,
        "max_threads": pool,
        "knee_check": knee_check(meas),
        "cost": cost(meas, pool["value"] if pool else None, workload),
        "connections": connections(meas, pool, workload),
        "virtual_threads": virtual(meas, workload),
        "capacity": capacity,
        "measurements": meas,
    }
    advice["could_not_tell"] = could_not_tell(meas, advice, workload)
    return advice


def source(run: Run) -> dict:
    """What the advice read: a run's records, or a reference run's points alone (no raw records: the JDK's
    version and the connections Tomcat held are not kept)."""
    if points_run.has_points_only(run.path):
        return {
            "kind": "reference",
            "words": f"the points.jsonl of the reference run {run.run_id} (its raw "
            "records, with the JDK's version and the connections Tomcat held, stay with the run)",
        }
    return {"kind": "run", "words": f"the run {run.run_id} ({run.path})"}


def capacity_beside(run: Run, capacity_dir: Path | None, pool: int | None) -> dict | None:
    """The capacity run's brackets beside the models (advice_capacity.py); None without one."""
    if capacity_dir is not None:
        return advice_capacity.measured(capacity_dir, pool)
    try:
        return advice_capacity.measured(run, pool)
    except advice_capacity.NoCapacity:
        return None


def size_pool(w: Workload, meas: dict) -> dict:
    """Little's law for the busy threads, then headroom: the pool full at most FULL_SHARE of the time, and with a
    p99 target, at most P99_SHARE of requests waiting past what the target leaves after the holding time and
    the run's own p99 overhead."""
    busy = w.busy
    head = pool_for_headroom(busy)
    overhead = (meas["p99_overhead"] or {}).get("value_ms") or 0.0
    budget = w.p99_ms - w.hold_ms - overhead if w.p99_ms is not None else None
    for_p99 = pool_for_p99(busy, w.hold_ms, budget) if budget is not None else None
    value = max(head, for_p99 or 0)
    return {
        "value": value,
        "busy": round(busy, 3),
        "for_headroom": head,
        "for_p99": for_p99,
        "headroom_threads": round(value - busy, 3),
        "headroom_percent": round(100 * (value - busy) / busy, 1) if busy else None,
        "full_share": FULL_SHARE,
        "p99_share": P99_SHARE,
        "p99_overhead_ms": overhead,
        "wait_budget_ms": None if budget is None else round(budget, 3),
        "p99_reachable": None if budget is None else budget >= 0,
        "checked": any(bend["points"] for bend in meas["knees"] if bend["max_threads"]),
        "from": (meas["p99_overhead"] or {}).get("point"),
        "p99_figure": (meas["p99_overhead"] or {}).get("p99"),
    }


def knee_check(meas: dict) -> dict:
    """Does the knee follow maxThreads on this machine? Per platform setting: the bracket it lies in."""
    mine = [bend for bend in meas["knees"] if bend["max_threads"]]
    judged = [bend for bend in mine if bend["follows_max_threads"] is not None]
    not_following = [bend for bend in judged if not bend["follows_max_threads"]]
    verdict = None if not judged else not not_following
    limit = min((bend["knee_between"][1] for bend in not_following), default=None)
    observed = [bend for bend in mine if bend.get("tracks_pool") is not None]
    return {
        "follows": verdict,
        "settings_judged": [bend["setting"] for bend in judged],
        "settings_not_following": [bend["setting"] for bend in not_following],
        "machine_limit_concurrency": limit,
        "observed_tracking": [bend["setting"] for bend in observed if bend["tracks_pool"]],
        "observed_judged": [bend["setting"] for bend in observed],
        "knees": mine,
    }


def cost(meas: dict, pool: int | None, w: Workload | None) -> dict:
    """RSS of `pool` busy platform threads (slope x threads, its interval from the slope's) and the server CPU
    the stated rate takes (intercept + slope x rate, in % of one core)."""
    rss, cpu = meas["rss_per_thread"], meas["cpu_per_request"]
    out: dict = {"rss": dict(rss), "cpu": dict(cpu)}
    fit = rss["fit"]
    if fit:
        out["rss"]["kb_per_thread"] = round(fit["slope"] * 1024, 1)
        out["rss"]["kb_per_thread_ci95"] = scaled(fit["slope_ci95"], 1024)
        if pool:
            own = (meas["jvm_own_threads"] or {}).get("value") or 0
            out["rss"]["pool_mb"] = round(fit["slope"] * pool, 1)
            out["rss"]["pool_mb_ci95"] = scaled(fit["slope_ci95"], pool)
            out["rss"]["total_mb"] = round(fit["intercept"] + fit["slope"] * (pool + own), 1)
    fit = cpu["fit"]
    if fit:
        out["cpu"]["ms_per_request"] = round(fit["slope"] * 10, 3)  # 1 % of a core = 10 ms of CPU per second
        out["cpu"]["ms_per_request_ci95"] = scaled(fit["slope_ci95"], 10, places=3)
        out["cpu"]["idle_percent"] = round(fit["intercept"], 1)
        if w:
            at_rate = fit["intercept"] + fit["slope"] * w.rate
            out["cpu"]["at_rate_percent"] = round(at_rate, 1)
            out["cpu"]["at_rate_percent_ci95"] = (
                None if not fit["slope_ci95"] else [round(fit["intercept"] + s * w.rate, 1) for s in fit["slope_ci95"]]
            )
            out["cpu"]["server_cores"] = meas["server_cores"]
            out["cpu"]["share_of_cores"] = round(at_rate / (100 * meas["server_cores"]), 3)
    return out


def scaled(interval: list[float] | None, factor: float, places: int = 1) -> list[float] | None:
    """An interval in other units, rounded as its value is (an interval rounded coarser than its value can leave
    the value outside it)."""
    return [round(v * factor, places) for v in interval] if interval else None


def connections(meas: dict, pool: dict | None, w: Workload | None) -> dict:
    """maxConnections: the pool plus the queue the p99 target can absorb, never below Tomcat's default;
    acceptCount: BURST_S of arrivals as new connections, at least Tomcat's default, at most the kernel's
    somaxconn (the kernel cuts the backlog to it)."""
    out: dict = {"queueing": meas["queueing"], "queue_limits": meas["queue_limits"], "somaxconn": meas["somaxconn"]}
    if not (pool and w):
        return out
    queue = None
    if pool["wait_budget_ms"] is not None and pool["wait_budget_ms"] >= 0:
        queue = queue_within_target(pool["value"], w.hold_ms, pool["wait_budget_ms"])
    out["queue_within_target"] = queue
    out["max_connections"] = max(TOMCAT_MAX_CONNECTIONS, pool["value"] + (queue or 0))
    accept = max(TOMCAT_ACCEPT_COUNT, math.ceil(w.rate * BURST_S))
    out["accept_count_wanted"] = accept
    out["accept_count"] = min(accept, int(meas["somaxconn"])) if meas["somaxconn"] else accept
    return out


def virtual(meas: dict, w: Workload | None) -> dict:
    """The virtual-thread cells' knee (none found up to their highest C means no knee there)."""
    knees = [bend for bend in meas["knees"] if bend["max_threads"] is None]
    if not knees:
        return {"measured": False, "removes_knee": None}
    top = max(knees, key=lambda bend: bend["max_concurrency"] or 0)
    removes = None if not top["points"] else top["status"] == "not_reached"
    covers = None if not w or top["max_concurrency"] is None else w.busy <= top["max_concurrency"]
    return {
        "measured": True,
        "removes_knee": removes,
        "covers_workload": covers,
        "knees": knees,
        "max_ratio": max(top["ratios"].values(), default=None),
        "cpu": meas["cpu_per_request_virtual"],
    }


def could_not_tell(meas: dict, advice: dict, w: Workload | None) -> list[str]:
    """What the run could not say, in words (advice_text renders the rest)."""
    return advice_text.limits(meas, advice, w.to_dict() if w else None)


def write(advice: dict, out: Path | None, render=None) -> str:
    """advice.json and advice.md into `out` (made if missing; None: written nowhere); returns the text (as
    printed). `render` makes the text (advice_text.render by default; model.render for the model alone)."""
    text = (render or advice_text.render)(advice)
    if out is None:
        return text
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "advice.json").write_text(json.dumps(advice, indent=2, default=str) + "\n")
    (Path(out) / "advice.md").write_text(text)
    return text


def default_out(run_dir: Path, workload: Workload) -> Path:
    """advise.sh's folder for one workload's advice inside the run it reads, beside (never over) the run's own
    advice.md: advice-400rps-50ms, advice-400rps-50ms-p99-200ms."""
    name = f"advice-{workload.rate:g}rps-{workload.hold_ms:g}ms"
    if workload.p99_ms is not None:
        name += f"-p99-{workload.p99_ms:g}ms"
    return Path(run_dir) / name


def at_end(run_dir: Path, workload: Workload | None) -> str:
    """What run_all prints after a run that asks for advice: the advice, or why there is none."""
    try:
        text = write(advise(load_run(Path(run_dir)), workload), run_dir)
    except AdviceRefused as e:
        return f"no maxThreads advice: {e}"
    return text + f"advice: {Path(run_dir) / 'advice.md'}"

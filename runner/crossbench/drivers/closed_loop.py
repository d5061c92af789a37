"""The default cell: C connections, each with one request outstanding, for the window (seed 002).

Warm-up first with the same load (delays cut short), unrecorded; then the measured window. A delayed cell planned
on the generator that holds windows (held_windows in [run], loadgen/held.py) is one process instead: the cell's own
load for a held time before the window (until the queue has settled), the window, and a tail, the window cut
from its rows. The closed-loop figures (the seed's efficiency ratio, its latency twin, Little's-law throughput)
and flags belong here.
"""

from __future__ import annotations

from crossbench import loadgen, workload
from crossbench.record import metrics, record
from crossbench.servers.base import DB_ENDPOINTS

from ..loadgen.base import LoadResult, LoadSpec
from .base import DriverToolMissing, GeneratorDriver, Measurement

WARMUP_DELAY_MS = 10
# A held window's load before it, in the slowest answers the cell expects (rounds of the delay through the pool):
# the least it runs; the cut opens the window once the queue has settled, observed in the rows (held.settled),
# which may move it into the tail (up to a quarter of it). The cold burst settles after two to three and a half of
# them (measured: Tomcat's 1000 clients on 200 threads at 1 s, 11.3 s for 5 s; its 100 clients on 20 threads at
# 200 ms, 3.1-3.3 s for 1.0 s, its keep-alive threads serving some connections ahead of the queue; Tornado's 100
# clients at 200 ms, 0.45 s for 0.2 s), so the window opens where the queue has settled, not later than planned.
HELD_ROUNDS = 2.5
# ... and after it, so that the window's own requests are answered under the same load: a pool's slowest answers
# run up to about twice its rounds (Tomcat's keep-alive threads: 1.8 s where 5 rounds of 200 ms are 1.0 s), a
# server with no pool answers in one round
TAIL_ROUNDS = {"pooled": 2.0, "unpooled": 1.5}
# The least tail: it sets the tail only where the slowest answer is under a quarter second (2 rounds of it are
# then still answered inside it). At 1.0 s it cost every such cell half a second; cut at 0.5 s from the rows of
# held Tomcat cells (maxThreads 20 and 50 at 200 ms, C 10 and 50), their window's rate and latency read the same
# to the digit, and no request sent inside it outlived the load.
MIN_TAIL_S = 0.5
# The most load a held window runs before it and after it: a queue slower than this (C / parallel limit x delay
# past 150 s) is not waited out; the plan line says so before the run, and its window, opening on a queue that
# has not turned over or closing on answers that outlive the load, is flagged window_not_held
HELD_BUDGET_S = 300.0


def holds_window(plan) -> bool:
    """The cell runs as one held process (its plan's generator holds windows: experiment_expand.held_window)."""
    adapter = loadgen.ADAPTERS.get(plan.loadgen)  # a kind with a client of its own names that instead
    return adapter is not None and adapter.holds_window and plan.rate is None


def worst_latency_s(plan) -> float:
    """The slowest answer a healthy server can give in the cell at its own delay (metrics)."""
    limit = plan.parallel_limit
    return metrics.expected_worst_latency_s(
        delay_ms=plan.delay_ms, concurrency=plan.concurrency, blocking=limit is not None, workers=limit
    )


def pool_wait_s(plan) -> float:
    """How long a database request may wait for a pooled connection before the server answers 503 (db_wait_ms):
    a healthy server's answer can take that long, so the generator's timeout is above it (a wrk timeout at 10 s
    would count as an error what the server would have answered)."""
    if plan.endpoint not in DB_ENDPOINTS:
        return 0.0
    return (plan.settings.get("db_wait_ms") or 0) / 1000


def held_times(plan) -> tuple[float, float]:
    """A held window's load before it and after it, seconds (HELD_ROUNDS, TAIL_ROUNDS, HELD_BUDGET_S)."""
    worst = worst_latency_s(plan)
    tail_rounds = TAIL_ROUNDS["pooled" if plan.parallel_limit is not None else "unpooled"]
    return (
        min(HELD_BUDGET_S, max(plan.warmup_s, HELD_ROUNDS * worst)),
        min(HELD_BUDGET_S, max(MIN_TAIL_S, tail_rounds * worst)),
    )


def load_spec(plan, base_url: str, *, warmup: bool = False) -> LoadSpec:
    worst = worst_latency_s(plan)
    delay_ms = min(plan.delay_ms, WARMUP_DELAY_MS) if warmup else plan.delay_ms
    declared = tuple(workload.declared(plan.options))  # a workload file's: sent as declared
    urls = [base_url + r["path"] for r in declared] if declared else [base_url + p for p in plan.paths(delay_ms)]
    duration = plan.duration_s
    if warmup:
        # The same load with the delay cut short: the JIT warms up and the pool grows to what the cell
        # needs, and the requests still in flight when the warm-up stops are over in milliseconds.
        duration = plan.warmup_s
        worst = worst * WARMUP_DELAY_MS / plan.delay_ms if plan.delay_ms else worst
    held = dict(zip(("held_s", "tail_s"), held_times(plan))) if holds_window(plan) else {}
    return LoadSpec(
        urls=tuple(urls),
        concurrency=plan.concurrency,
        duration_s=duration,
        timeout_s=metrics.loadgen_timeout_s(max(worst, pool_wait_s(plan))),
        keepalive=plan.keepalive,
        pipeline=plan.pipeline,
        threads=plan.loadgen_threads,
        cpus=plan.loadgen_cpus,
        requests=declared,
        **held,
    )


FIELDS = record.common(
    "efficiency_ratio", "latency_ratio", "rps_steady", "rps_method", "rps_steady_method", "in_flight", "held_window"
)
HELD_RPS = "requests credited with the share of their life inside the held window, per second of it (loadgen/held.py)"
NOT_HELD = "window_not_held"  # the queue turned over late, or the window's requests outlived the load
SATURATED = "null: the load generator was saturated, so time between its requests is missing from the latency"


def closed_loop_figures(plan, result: LoadResult, loadgen_saturated: bool = False) -> tuple[dict, list[str]]:
    mean = result.latency_ms.get("mean")
    r = metrics.ratios(plan.concurrency, plan.delay_ms, result.rps, mean, loadgen_saturated)
    in_flight = metrics.in_flight(result.rps, mean)
    window = result.extra.get("held_window")
    figures = {
        "efficiency_ratio": r.efficiency_ratio,
        "latency_ratio": r.latency_ratio,
        "in_flight": in_flight,
        "rps_steady": r.rps_steady,
        "rps_method": HELD_RPS if window else "requests / measured window (the seed's definition)",
        "rps_steady_method": SATURATED if loadgen_saturated else "concurrency / mean latency (Little's law)",
        "held_window": window,
    }
    flags = metrics.flags(
        concurrency=plan.concurrency,
        requests=result.requests,
        errors=result.errors,
        ratios_=r,
        window_s=result.duration_s,
        mean_latency_ms=mean,
        in_flight_=in_flight,
        pipeline=plan.pipeline,
        rounding=result.rps * result.latency_resolution_ms / 2000,
        held=window is not None,
        rps=result.rps,
        ceiling=metrics.ceiling_rps(plan.parallel_limit, plan.delay_ms) if window else None,
    )
    if window and (window["short"] or window["finished_after_load"] > 0.01 * max(1, window["sent"])):
        flags.append(NOT_HELD)
    return figures, flags


class ClosedLoop(GeneratorDriver):
    FIELDS = FIELDS

    def preflight(self, plan) -> None:
        """The load generator refuses what it cannot do (http_load above 1000 clients, ab with several URLs)."""
        adapter = loadgen.get(plan.loadgen)
        if not adapter.available() and adapter.binary is None:  # a pinned build the run makes first
            raise DriverToolMissing(
                f"load generator {adapter.name} is not on PATH (run_all.sh installs wrk and ab on Debian)"
            )
        adapter.build_command(load_spec(plan, "http://127.0.0.1:1"), None)

    def load_spec(self, plan, base_url: str, warmup: bool = False) -> LoadSpec:
        return load_spec(plan, base_url, warmup=warmup)

    def holds(self, plan) -> bool:
        return holds_window(plan)

    def over_budget(self, plan) -> bool:
        """A held window whose queue the budget cannot wait out (HELD_BUDGET_S)."""
        worst = worst_latency_s(plan)
        return holds_window(plan) and HELD_ROUNDS * worst > HELD_BUDGET_S

    def planned_s(self, plan) -> float:
        """A held window's whole process (held time, window, tail), else the warm-up and the window."""
        if not holds_window(plan):
            return super().planned_s(plan)
        held_s, tail_s = held_times(plan)
        return held_s + plan.duration_s + tail_s

    def warmup(self, plan, ctx, server) -> None:
        """A held window warms up inside its own process, at the cell's own delay."""
        if not holds_window(plan):
            super().warmup(plan, ctx, server)

    def measure(self, plan, ctx, server, sampler) -> Measurement:
        result, host_flags, host_fields = self.run_window(plan, ctx, server)
        t0, t1 = result.extra.get("window_epoch") or (None, None)
        return Measurement(result, t0=t0, t1=t1, extra=host_fields, flags=host_flags)

    def figures(self, plan, measurement, *, loadgen_saturated: bool) -> tuple[dict, list[str]]:
        """The ratios once the cell knows whether the load generator (here, or a load host's) was saturated."""
        figures, flags = closed_loop_figures(plan, measurement.result, loadgen_saturated)
        return {**figures, **measurement.extra}, flags + measurement.flags


DRIVER = ClosedLoop()

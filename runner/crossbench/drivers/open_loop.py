"""Open-loop cells (kind "open_loop"): requests sent on a fixed schedule at `rate` per second, whatever the
server does, latency counted from each request's scheduled send time (no coordinated omission). The group's
`concurrency` is the most requests the generator may hold in flight (oha -c); a request that waits for one
still counts its wait. Warm-up: the same rate with the delay cut short.

On the generator that holds windows (oha) a cell is one process instead, at its own rate and delay: load before the
window, the window, a tail (loadgen/held.py), the window being the requests the schedule fired inside it. Its
connections are a keep-alive pool sized from Little's law at the latency it expects (POOL_TARGETS x rate x latency,
at most the group's concurrency): a capacity search's p99 target (CellPlan.target_ms), else the cell's delay; a cell
with no delay keeps the group's concurrency. Each is opened by its first tick in the load before the window, so the
window's requests reuse them, as a service's client pool would, and a request that waits for a free one counts the
wait. (Before: a separate warm-up process closed its connections as the window opened, and oha's rate mode opens a
connection per task on first use, so with -c 2000 every request of a 4 s window at 476 req/s came on a new
connection; and the window ended where oha stopped, its last requests answered together after it, dropped
connections and all: docs/results/capacity/stall.) The machine accepting connections inside such a window is
flagged connections_in_window.

Flags of its own: `unsustainable` (the server did not keep up: achieved below 95% of the offered rate, or
latency rising through the window) and `loadgen_saturated` (the generator fell behind its own schedule).
"""

from __future__ import annotations

import math
from dataclasses import replace

from crossbench import loadgen, workload
from crossbench.record import metrics, record

from ..loadgen.base import LoadSpec
from .base import DriverRefused, GeneratorDriver, Measurement
from .closed_loop import WARMUP_DELAY_MS

SUSTAINED_SHARE = 0.95  # achieved / offered below this: the server did not keep up
RISE_SHARE = 0.5  # latency rising over the window by more than this share of the median ...
RISE_FLOOR_MS = 10.0  # ... and by more than this: a queue that grows, not noise
# A held window's pool: this many times the requests in flight at the latency expected (Little's law: rate x target
# or delay), so that a server holding it rarely makes a request wait for a connection, and one past it makes them
# wait (counted)
POOL_TARGETS = 1.5
POOL_TURNS = 2.0  # load before the window: at least this many ticks per pool connection (each opens one)
TAIL_TARGETS = 2.0  # after it: the window's last requests answered under load, if the latency holds
MIN_TAIL_S = 1.0
MIN_WINDOW_REQUESTS = 300  # a held window long enough for its p99 to be the 3rd slowest of its requests ...
MAX_WINDOW_S = 30.0  # ... up to this long (at 10 req/s and under)


def holds_window(plan) -> bool:
    """A cell at a known rate on a generator that holds open-loop windows (module docstring; oha, not k6); a rates =
    "auto" cell once its peak has set its rate."""
    adapter = loadgen.ADAPTERS.get(plan.loadgen)
    return adapter is not None and adapter.holds_open_window and plan.rate is not None


def expected_latency_ms(plan) -> float | None:
    """The latency a held window's pool is sized for: a capacity search's target, else the cell's delay; None for a
    cell with no delay (its pool is the group's concurrency)."""
    if plan.target_ms is not None:
        return plan.target_ms
    return float(plan.delay_ms) if plan.delay_ms > 0 else None


def little_need(rate: float, target_ms: float) -> int:
    """Requests in flight at `rate` when each takes the target: the fewest connections that can carry it."""
    return math.ceil(rate * target_ms / 1000 - 1e-9)


def pool_size(plan) -> int:
    """The connections a cell may hold open at once (oha -c): a held window's pool, else the group's concurrency."""
    latency = expected_latency_ms(plan)
    if not holds_window(plan) or latency is None:
        return plan.concurrency
    return min(plan.concurrency, max(1, math.ceil(POOL_TARGETS * plan.rate * latency / 1000)))


def window_s(plan) -> float:
    """The measured window: a held window's long enough for a p99 of MIN_WINDOW_REQUESTS requests."""
    if not holds_window(plan):
        return plan.duration_s
    return max(plan.duration_s, min(MAX_WINDOW_S, MIN_WINDOW_REQUESTS / plan.rate))


def held_times(plan) -> tuple[float, float]:
    """A held window's load before it (the warm-up, and long enough to open the pool) and after it, seconds."""
    return (
        max(plan.warmup_s, POOL_TURNS * pool_size(plan) / plan.rate),
        max(MIN_TAIL_S, TAIL_TARGETS * (expected_latency_ms(plan) or 0.0) / 1000),
    )


def load_spec(plan, base_url: str, *, warmup: bool = False) -> LoadSpec:
    delay_ms = min(plan.delay_ms, WARMUP_DELAY_MS) if warmup else plan.delay_ms
    declared = tuple(workload.declared(plan.options))  # a workload file's: sent as declared
    urls = [base_url + r["path"] for r in declared] if declared else [base_url + p for p in plan.paths(delay_ms)]
    duration = plan.warmup_s if warmup else window_s(plan)
    held = dict(zip(("held_s", "tail_s"), held_times(plan))) if holds_window(plan) and not warmup else {}
    # A request may wait out the whole run in a queue: that wait is the figure, not a timeout.
    timeout = metrics.loadgen_timeout_s(sum(held.values()) + duration + delay_ms / 1000)
    return LoadSpec(
        urls=tuple(urls),
        concurrency=pool_size(plan),
        duration_s=duration,
        timeout_s=timeout,
        keepalive=plan.keepalive,
        threads=plan.loadgen_threads,
        cpus=plan.loadgen_cpus,
        rate=plan.rate,
        requests=declared,
        **held,
    )


def unsustainable(rate: float, achieved: float, rise_ms: float | None, p50_ms: float | None) -> str | None:
    if achieved < SUSTAINED_SHARE * rate:
        return f"achieved {achieved:.1f} of {rate:g} req/s offered (below {SUSTAINED_SHARE:.0%})"
    if rise_ms is not None and rise_ms > max(RISE_SHARE * (p50_ms or 0), RISE_FLOOR_MS):
        return f"latency rose by {rise_ms:.0f} ms through the window (median {p50_ms:.0f} ms): a growing queue"
    return None


def open_loop_figures(plan, result) -> tuple[dict, list[str]]:
    extra = result.extra
    slope = extra.get("latency_slope_ms_per_s")
    rise = slope * window_s(plan) if slope is not None else None
    achieved = extra.get("rate_achieved") or 0.0
    why = unsustainable(plan.rate, achieved, rise, result.latency_ms.get("p50"))
    behind = extra.get("behind_schedule")
    mean = result.latency_ms.get("mean")
    figures = {
        "rate_achieved": achieved,
        "latency_rise_ms": rise,
        "unsustainable_reason": why,
        "schedule_lag_ms": extra.get("schedule_lag_ms"),
        "loadgen_behind_schedule": behind,
        "never_sent": extra.get("never_sent"),
        # the efficiency ratio's open-loop twin: mean latency / delay at the offered rate
        "latency_ratio": metrics.latency_ratio(mean, plan.delay_ms),
        "rps_method": record.OPEN_LOOP_RPS_METHOD,
        "pool_connections": pool_size(plan),
        "held_window": extra.get("held_window"),
    }
    flags = ["unsustainable"] if why else []
    flags += ["loadgen_saturated"] if behind else []
    if result.errors.get("timeout"):
        flags.append("timeouts")
    if sum(n for kind, n in result.errors.items() if kind != "timeout"):
        flags.append("errors")
    return figures, flags


def open_loop_generators() -> list[str]:
    """The generators that send on a schedule (their LoadGenerator's open_loop)."""
    return [name for name, generator in loadgen.ADAPTERS.items() if generator.open_loop]


class OpenLoop(GeneratorDriver):
    FIELDS = {
        "rate_achieved": "answers per second the server gave inside the window (from its first answer to the "
        "window's end), at the offered rate",
        "latency_rise_ms": "the latency's rise through the window (least-squares slope x window)",
        "unsustainable_reason": "why the server did not keep up (flag unsustainable), else null",
        "schedule_lag_ms": "p50, p99, max of the generator's lag behind its own schedule, and the percentile judged "
        "(the highest with 5 lags above it, at most p99: loadgen/openloop.py lag_figures)",
        "loadgen_behind_schedule": "why the generator could not keep its schedule (flag loadgen_saturated)",
        "never_sent": "scheduled requests still waiting for a connection when the window ended",
        "pool_connections": "the most connections the generator held open (oha -c): a held window sizes it from "
        "Little's law at a capacity search's target or the cell's delay (drivers/open_loop.py), "
        "else the group's concurrency",
        **record.common("latency_ratio", "rps_method", "held_window"),
    }

    def keepalive(self, run_keepalive: bool, options: dict) -> bool:
        """The run's, unless the group states its clients' model: options = { keepalive = false } for clients that
        open a connection per request (each request then pays for its own connection, on purpose)."""
        return bool(options.get("keepalive", run_keepalive))

    def preflight(self, plan) -> None:
        adapter = loadgen.get(plan.loadgen)
        if not adapter.open_loop:
            raise DriverRefused(
                f"{plan.cell_id}: open-loop cells need an open-loop generator (--loadgen "
                f"{' or '.join(open_loop_generators())}), not {plan.loadgen}"
            )
        if not adapter.available():
            raise DriverRefused(f"{adapter.name} is not built: run ./runner/install-openloop.sh (needs cargo / go)")
        if plan.rate_share is not None:  # rates = "auto": the rate comes from the peak cell, at run time
            plan = replace(plan, rate=1.0)
        if not plan.rate or plan.rate <= 0:
            raise DriverRefused(f"{plan.cell_id}: open-loop cells need a positive rate (rates = [...] or --rates)")
        need = little_need(plan.rate, plan.target_ms) if plan.target_ms is not None else 0
        if plan.concurrency < need:
            raise DriverRefused(
                f"{plan.cell_id}: concurrency {plan.concurrency} cannot carry {plan.rate:g} req/s "
                f"within {plan.target_ms:g} ms: Little's law needs {need} connections (concurrency = "
                f"[{need}] or more)"
            )
        adapter.build_command(load_spec(plan, "http://127.0.0.1:1"), None)

    def load_spec(self, plan, base_url: str, warmup: bool = False) -> LoadSpec:
        return load_spec(plan, base_url, warmup=warmup)

    def holds(self, plan) -> bool:
        return holds_window(plan)

    def pool(self, plan) -> int:
        return pool_size(plan)

    def opens_before_window(self, plan) -> bool:
        return holds_window(plan) and plan.keepalive

    def planned_s(self, plan) -> float:
        """A held window's whole process (load before, window, tail), else the warm-up and the window."""
        if not holds_window(plan):
            return super().planned_s(plan)
        return sum(held_times(plan)) + window_s(plan)

    def warmup(self, plan, ctx, server) -> None:
        """A held window warms up inside its own process, at the cell's own rate and delay."""
        if not holds_window(plan):
            super().warmup(plan, ctx, server)

    def measure(self, plan, ctx, server, sampler) -> Measurement:
        result, host_flags, host_fields = self.run_window(plan, ctx, server)
        figures, flags = open_loop_figures(plan, result)
        t0, t1 = result.extra.get("window_epoch") or (None, None)
        return Measurement(
            result, t0=t0, t1=t1, extra={**figures, **host_fields}, flags=list(dict.fromkeys(flags + host_flags))
        )


DRIVER = OpenLoop()

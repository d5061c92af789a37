"""Open-loop cells (kind "open_loop"): requests sent on a fixed schedule at `rate` per second, whatever the
server does, latency counted from each request's scheduled send time (no coordinated omission). The group's
`concurrency` is the most requests the generator may hold in flight (oha -c); a request that waits for one
still counts its wait. Warm-up: the same rate with the delay cut short.

Flags of its own: `unsustainable` (the server did not keep up: achieved below 95% of the offered rate, or
latency rising through the window) and `loadgen_saturated` (the generator fell behind its own schedule).
"""
from __future__ import annotations

from dataclasses import replace

from crossbench import loadgen
from crossbench.record import metrics, record

from ..loadgen.base import LoadSpec
from .base import DriverRefused, GeneratorDriver, Measurement
from .closed_loop import WARMUP_DELAY_MS

SUSTAINED_SHARE = 0.95        # achieved / offered below this: the server did not keep up
RISE_SHARE = 0.5              # latency rising over the window by more than this share of the median ...
RISE_FLOOR_MS = 10.0          # ... and by more than this: a queue that grows, not noise


def load_spec(plan, base_url: str, *, warmup: bool = False) -> LoadSpec:
    delay_ms = min(plan.delay_ms, WARMUP_DELAY_MS) if warmup else plan.delay_ms
    urls = tuple(base_url + p for p in plan.paths(delay_ms))
    duration = plan.warmup_s if warmup else plan.duration_s
    # A request may wait out the whole window in a queue: that wait is the figure, not a timeout.
    timeout = metrics.loadgen_timeout_s(duration + delay_ms / 1000)
    return LoadSpec(urls=urls, concurrency=plan.concurrency, duration_s=duration, timeout_s=timeout,
                    keepalive=plan.keepalive, threads=plan.loadgen_threads, cpus=plan.loadgen_cpus, rate=plan.rate)


def unsustainable(rate: float, achieved: float, rise_ms: float | None, p50_ms: float | None) -> str | None:
    if achieved < SUSTAINED_SHARE * rate:
        return f"achieved {achieved:.1f} of {rate:g} req/s offered (below {SUSTAINED_SHARE:.0%})"
    if rise_ms is not None and rise_ms > max(RISE_SHARE * (p50_ms or 0), RISE_FLOOR_MS):
        return f"latency rose by {rise_ms:.0f} ms through the window (median {p50_ms:.0f} ms): a growing queue"
    return None


def open_loop_figures(plan, result) -> tuple[dict, list[str]]:
    extra = result.extra
    slope = extra.get("latency_slope_ms_per_s")
    rise = slope * plan.duration_s if slope is not None else None
    achieved = extra.get("rate_achieved") or 0.0
    why = unsustainable(plan.rate, achieved, rise, result.latency_ms.get("p50"))
    behind = extra.get("behind_schedule")
    mean = result.latency_ms.get("mean")
    figures = {
        "rate_achieved": achieved, "latency_rise_ms": rise, "unsustainable_reason": why,
        "schedule_lag_ms": extra.get("schedule_lag_ms"), "loadgen_behind_schedule": behind,
        "never_sent": extra.get("never_sent"),
        # the efficiency ratio's open-loop twin: mean latency / delay at the offered rate
        "latency_ratio": metrics.latency_ratio(mean, plan.delay_ms),
        "rps_method": record.OPEN_LOOP_RPS_METHOD,
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
    axis = "rate"                       # analysis draws its cells against the offered rate (openloop.py)
    FIELDS = {
        "rate_achieved": "answers per second the server gave inside the window (from its first answer to the "
                         "window's end), at the offered rate",
        "latency_rise_ms": "the latency's rise through the window (least-squares slope x window)",
        "unsustainable_reason": "why the server did not keep up (flag unsustainable), else null",
        "schedule_lag_ms": "p50, p99, max of the generator's lag behind its own schedule, and the percentile judged "
                           "(the highest with 5 lags above it, at most p99: loadgen/openloop.py lag_figures)",
        "loadgen_behind_schedule": "why the generator could not keep its schedule (flag loadgen_saturated)",
        "never_sent": "scheduled requests still waiting for a connection when the window ended",
        **record.common("latency_ratio", "rps_method"),
    }

    def headline(self, record: dict) -> str:
        return "latency_ms.p99"        # what an open-loop point is judged by: its tail at the offered rate

    def preflight(self, plan) -> None:
        adapter = loadgen.get(plan.loadgen)
        if not adapter.open_loop:
            raise DriverRefused(f"{plan.cell_id}: open-loop cells need an open-loop generator (--loadgen "
                                f"{' or '.join(open_loop_generators())}), not {plan.loadgen}")
        if not adapter.available():
            raise DriverRefused(f"{adapter.name} is not built: run ./runner/install-openloop.sh (needs cargo / go)")
        if plan.rate_share is not None:     # rates = "auto": the rate comes from the peak cell, at run time
            plan = replace(plan, rate=1.0)
        if not plan.rate or plan.rate <= 0:
            raise DriverRefused(f"{plan.cell_id}: open-loop cells need a positive rate (rates = [...] or --rates)")
        adapter.build_command(load_spec(plan, "http://127.0.0.1:1"), None)

    def load_spec(self, plan, base_url: str, warmup: bool = False) -> LoadSpec:
        return load_spec(plan, base_url, warmup=warmup)

    def measure(self, plan, ctx, server, sampler) -> Measurement:
        result, host_flags, host_fields = self.run_window(plan, ctx, server)
        figures, flags = open_loop_figures(plan, result)
        return Measurement(result, extra={**figures, **host_fields}, flags=list(dict.fromkeys(flags + host_flags)))


DRIVER = OpenLoop()

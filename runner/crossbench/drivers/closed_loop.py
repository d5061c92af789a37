"""The default cell: C connections, each with one request outstanding, for the window (seed 002).

Warm-up first with the same load (delays cut short), unrecorded; then the measured window. The closed-loop
figures (the seed's efficiency ratio, its latency twin, Little's-law throughput) and flags belong here.
"""
from __future__ import annotations

from crossbench import loadgen
from crossbench.record import metrics, record

from ..loadgen.base import LoadResult, LoadSpec
from .base import DriverRefused, GeneratorDriver, Measurement

WARMUP_DELAY_MS = 10


def load_spec(plan, base_url: str, *, warmup: bool = False) -> LoadSpec:
    limit = plan.parallel_limit
    worst = metrics.expected_worst_latency_s(delay_ms=plan.delay_ms, concurrency=plan.concurrency,
                                             blocking=limit is not None, workers=limit)
    delay_ms = min(plan.delay_ms, WARMUP_DELAY_MS) if warmup else plan.delay_ms
    urls = [base_url + path for path in plan.paths(delay_ms)]
    duration = plan.duration_s
    if warmup:
        # The same load with the delay cut short: the JIT warms up and the pool grows to what the cell
        # needs, and the requests still in flight when the warm-up stops are over in milliseconds.
        duration = plan.warmup_s
        worst = worst * WARMUP_DELAY_MS / plan.delay_ms if plan.delay_ms else worst
    return LoadSpec(urls=tuple(urls), concurrency=plan.concurrency, duration_s=duration,
                    timeout_s=metrics.loadgen_timeout_s(worst), keepalive=plan.keepalive, pipeline=plan.pipeline,
                    threads=plan.loadgen_threads, cpus=plan.loadgen_cpus)


FIELDS = record.common("efficiency_ratio", "latency_ratio", "rps_steady", "rps_method", "rps_steady_method",
                       "in_flight")
SATURATED = ("null: the load generator was saturated, so time between its requests is missing from the "
             "latency")


def closed_loop_figures(plan, result: LoadResult, loadgen_saturated: bool = False) -> tuple[dict, list[str]]:
    mean = result.latency_ms.get("mean")
    r = metrics.ratios(plan.concurrency, plan.delay_ms, result.rps, mean, loadgen_saturated)
    in_flight = metrics.in_flight(result.rps, mean)
    figures = {"efficiency_ratio": r.efficiency_ratio, "latency_ratio": r.latency_ratio, "in_flight": in_flight,
               "rps_steady": r.rps_steady, "rps_method": "requests / measured window (the seed's definition)",
               "rps_steady_method": SATURATED if loadgen_saturated else "concurrency / mean latency (Little's law)"}
    flags = metrics.flags(concurrency=plan.concurrency, requests=result.requests, errors=result.errors, ratios_=r,
                          window_s=result.duration_s, mean_latency_ms=mean, in_flight_=in_flight,
                          pipeline=plan.pipeline, rounding=result.rps * result.latency_resolution_ms / 2000)
    return figures, flags


class ClosedLoop(GeneratorDriver):
    FIELDS = FIELDS

    def preflight(self, plan) -> None:
        """The load generator refuses what it cannot do (http_load above 1000 clients, ab with several URLs)."""
        adapter = loadgen.get(plan.loadgen)
        if not adapter.available():
            raise DriverRefused(f"load generator {adapter.name} is not on PATH (run_all.sh installs wrk and ab "
                                "on Debian)")
        adapter.build_command(load_spec(plan, "http://127.0.0.1:1"), None)

    def load_spec(self, plan, base_url: str, warmup: bool = False) -> LoadSpec:
        return load_spec(plan, base_url, warmup=warmup)

    def measure(self, plan, ctx, server, sampler) -> Measurement:
        result, host_flags, host_fields = self.run_window(plan, ctx, server)
        return Measurement(result, extra=host_fields, flags=host_flags)

    def figures(self, plan, measurement, *, loadgen_saturated: bool) -> tuple[dict, list[str]]:
        """The ratios once the cell knows whether the load generator (here, or a load host's) was saturated."""
        figures, flags = closed_loop_figures(plan, measurement.result, loadgen_saturated)
        return {**figures, **measurement.extra}, flags + measurement.flags


DRIVER = ClosedLoop()

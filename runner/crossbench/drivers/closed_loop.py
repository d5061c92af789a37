"""The default cell: C connections, each with one request outstanding, for the window (seed 002).

Warm-up first with the same load (delays cut short), unrecorded; then the measured window.
"""
from __future__ import annotations

import time

from .. import loadgen, metrics
from ..loadgen.base import LoadSpec
from .base import Measurement

WARMUP_DELAY_MS = 10
TAIL_SAMPLES_S = 0.3          # let the sampler take the window's last samples


def load_spec(plan, base_url: str, *, warmup: bool = False) -> LoadSpec:
    worst = metrics.expected_worst_latency_s(delay_ms=plan.delay_ms, concurrency=plan.concurrency,
                                             blocking=plan.blocking, workers=plan.workers)
    urls = [base_url + path for path in plan.paths()]
    duration = plan.duration_s
    if warmup:
        # The same load with the delay cut short: the JIT warms up and the pool grows to what the cell
        # needs, and the requests still in flight when the warm-up stops are over in milliseconds.
        urls = [u.replace(f"ms={plan.delay_ms}", f"ms={min(plan.delay_ms, WARMUP_DELAY_MS)}") for u in urls]
        duration = plan.warmup_s
        worst = worst * WARMUP_DELAY_MS / plan.delay_ms if plan.delay_ms else worst
    return LoadSpec(urls=tuple(urls), concurrency=plan.concurrency, duration_s=duration,
                    timeout_s=metrics.loadgen_timeout_s(worst), keepalive=plan.keepalive, pipeline=plan.pipeline,
                    threads=plan.loadgen_threads, cpus=plan.loadgen_cpus)


def preflight(plan) -> None:
    """The load generator refuses what it cannot do (http_load above 1000 clients, ab with several URLs)."""
    loadgen.get(plan.loadgen).build_command(load_spec(plan, "http://127.0.0.1:1"), None)


def drive(plan, ctx, server, sampler) -> Measurement:
    adapter = loadgen.get(plan.loadgen)
    if plan.warmup_s > 0:
        ctx.report("warmup", sampler)
        adapter.run(load_spec(plan, server.url, warmup=True), ctx.cell_dir / "warmup")
    sampler.set_phase("measure")
    ctx.report("measure", sampler)
    t0 = time.time()
    result = adapter.run(load_spec(plan, server.url), ctx.cell_dir)
    t1 = time.time()
    sampler.set_phase("cooldown")
    time.sleep(TAIL_SAMPLES_S)
    return Measurement(result, t0, t1)

"""Seed 000's A/B/C experiment as a cell: how long does an instant request (/now) wait while background load
keeps a delay endpoint busy? Background: wrk, C connections on the cell's endpoint, for the whole cell.
Foreground: the sequential probe (crossbench.clients.probe) for the window, starting `lead_s` after the background.

The record's main figures are the probe's (latency_ms is the /now latency, requests the probes answered);
the background's own figures go under `background`. Options (all optional):
  probe_path = "/now", interval_ms = 50, lead_s = 1.0
"""

from __future__ import annotations

import time
from dataclasses import replace
from urllib.parse import urlsplit

from crossbench.record import metrics, record

from ..clients.probe import LATENCY_SOURCE, Probe, latency_stats
from ..loadgen import wrk
from ..loadgen.base import LoadResult, LoadSpec, empty_errors
from .base import Driver, DriverRefused, Measurement
from .closed_loop import WARMUP_DELAY_MS, load_spec

MIN_PROBES = 5
# A new connection on a blocked event loop needs two passes of the loop (accept, then read the request), each
# running every ready handler: up to twice the background's own worst latency, measured 10 s then 19 s.
PROBE_PASSES = 2


def worst_latency_s(plan) -> float:
    limit = plan.parallel_limit
    return metrics.expected_worst_latency_s(
        delay_ms=plan.delay_ms, concurrency=plan.concurrency, blocking=limit is not None, workers=limit
    )


def probe_timeout_s(plan) -> float:
    return metrics.loadgen_timeout_s((PROBE_PASSES + 1) * worst_latency_s(plan))


def background_spec(plan, base_url: str, lead_s: float, window_s: float, *, warmup: bool) -> LoadSpec:
    """The background outlasts the probe window by the slowest probe the cell can expect, so the probe sent
    last still meets the load; always wrk (a time-bound load), whatever the run's loadgen."""
    spec = load_spec(plan, base_url, warmup=warmup)
    scale = WARMUP_DELAY_MS / plan.delay_ms if warmup and plan.delay_ms else 1
    tail = PROBE_PASSES * worst_latency_s(plan) * scale
    return replace(spec, duration_s=lead_s + window_s + tail)


def run_phase(plan, server, out_dir, load, *, warmup: bool) -> tuple[Probe, LoadResult]:
    """The background from where the run's load comes from (`load`: loadgen/spread.py; from load hosts it starts
    at a set moment, which the probe's lead counts from), the probe always from here."""
    options = plan.options
    lead_s = float(options.get("lead_s", 1.0))
    window_s = plan.warmup_s if warmup else plan.duration_s
    spec = background_spec(plan, server.url, lead_s, window_s, warmup=warmup)
    start_at = load.start_at()
    host_port = urlsplit(server.url)
    probe = Probe(
        host_port.hostname,
        host_port.port,
        options.get("probe_path", "/now"),
        interval_s=options.get("interval_ms", 50) / 1000,
        lead_s=lead_s + (start_at - time.time() if start_at else 0),
        window_s=window_s,
        timeout_s=probe_timeout_s(plan),
    )
    probe.start()
    try:
        # wrk in this thread: Ctrl-C reaches run_bounded, which kills it
        background, _ = load.run(HolProbe.load_tool, spec, out_dir, start_at=start_at)
    except BaseException:
        probe.stop()
        raise
    finally:
        probe.join()
    return probe, background


def probe_result(probe: Probe) -> LoadResult:
    answered = [s for s in probe.samples if not s.error]
    errors = empty_errors()
    for s in probe.samples:
        if s.error:
            errors[s.error if s.error in errors else "other"] += 1
        elif not 200 <= s.status < 300:
            errors["non_2xx"] += 1
    return LoadResult(
        tool="crossbench-probe",
        tool_version="1",
        requests=len(answered),
        duration_s=max(probe.t1 - probe.t0, 1e-9),
        bytes=sum(s.nbytes for s in answered),
        errors=errors,
        latency_ms=latency_stats([s.latency_ms for s in answered]),
        latency_source=LATENCY_SOURCE,
        raw_files=("probe.csv",),
    )


def background_figures(plan, result: LoadResult) -> dict:
    return {
        "endpoint": plan.endpoint,
        "path": plan.paths()[0],
        "concurrency": plan.concurrency,
        "delay_ms": plan.delay_ms,
        "loadgen": HolProbe.load_tool,
        "loadgen_version": result.tool_version,
        "requests": result.requests,
        "duration_s": result.duration_s,
        "rps": result.rps,
        "rps_steady": metrics.ratios(
            plan.concurrency, plan.delay_ms, result.rps, result.latency_ms.get("mean")
        ).rps_steady,
        "latency_ms": result.latency_ms,
        "errors": result.errors,
        "error_total": result.error_count,
        "command": result.extra.get("command"),
    }


def cell_flags(probe: LoadResult, background: LoadResult) -> list[str]:
    """The closed-loop flags do not fit a probe (its count is not C round trips; there is no ratio)."""
    found = []
    if probe.errors["timeout"] or background.errors["timeout"]:
        found.append("timeouts")
    if any(n for k, n in {**probe.errors, "timeout": 0}.items()) or any(
        n for k, n in {**background.errors, "timeout": 0}.items()
    ):
        found.append("errors")
    if probe.requests < MIN_PROBES:
        found.append("few_completions")
    return found


class HolProbe(Driver):
    loadgen = "crossbench-probe"
    load_tool = wrk.name  # the background load is always wrk (the probe runs here)
    tools = ((load_tool, "apt-get install wrk"),)
    FIELDS = {
        "probe_path": "the path each probe asks for (options.probe_path, /now by default)",
        "probe_interval_ms": "the time between two probes' planned sends (options.interval_ms)",
        "probe_connection": "how each probe connects, in words (a new connection each)",
        "probes_planned": "ticks of the interval in the probe window (window / interval)",
        "probes_sent": "probes actually sent (fewer than planned when a stall swallowed ticks)",
        "probe_raw": "the probes' own latencies, relative to the cell directory (probe.csv)",
        "probe_timeout_s": "how long a probe waits for its answer",
        "background": "the background load's own figures (wrk: endpoint, path, C, delay, requests, rps, "
        "rps_steady, latency_ms, errors, command)",
        **record.common("rps_method"),
    }

    def reuses_connections(self, plan) -> bool:
        return False  # the record counts the probes, a new connection each (keepalive: wrk's)

    def preflight(self, plan) -> None:
        super().preflight(plan)
        if float(plan.options.get("interval_ms", 50)) <= 0 or float(plan.options.get("lead_s", 1.0)) < 0:
            raise DriverRefused(f"{plan.cell_id}: hol_probe needs interval_ms > 0 and lead_s >= 0")

    def warmup(self, plan, ctx, server) -> None:
        run_phase(plan, server, ctx.cell_dir / "warmup", ctx.placement.load, warmup=True)

    def measure(self, plan, ctx, server, sampler) -> Measurement:
        probe, background = run_phase(plan, server, ctx.cell_dir, ctx.placement.load, warmup=False)
        probe.write_csv(ctx.cell_dir / "probe.csv")
        result = probe_result(probe)
        extra = {
            "probe_path": probe.path,
            "probe_interval_ms": probe.interval_s * 1000,
            "probe_connection": "new connection per probe (Connection: close)",
            "probes_planned": probe.planned,
            "probes_sent": len(probe.samples),
            "probe_raw": "probe.csv",
            "probe_timeout_s": probe.timeout_s,
            "background": background_figures(plan, background),
            # no closed-loop ratio for a probe: the figures that would carry one are the background's
            "rps_method": "probes answered / probe window (sequential probes: not a throughput)",
            **ctx.placement.load.record_fields(background),  # the background's load hosts; the probe ran here
        }
        return Measurement(result, probe.t0, probe.t1 or time.time(), extra, cell_flags(result, background))


DRIVER = HolProbe()

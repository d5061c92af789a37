"""Seed 000's ab run as a cell: a fixed number of requests (`ab -n N -c C`, no keep-alive, as the seed), not a
time window. The record's figures are ab's; `ab` beside them holds ab's own headline figures, the figure
without ab's start-up artifact (drivers/ab_startup.py), and the seed's published figures when the experiment
gives them. Always ab, whatever the run's loadgen.

Options: requests = 200 (required), keepalive = false,
         reference = { tornado = { rps = 1.00, mean_ms = 40149, source = "..." } }  (per server, optional)
"""

from __future__ import annotations

from pathlib import Path

from crossbench.record import metrics

from ..loadgen import ab
from ..loadgen.base import LoadgenError, LoadSpec
from ..loadgen.spread import shares
from . import ab_startup
from .base import Driver, DriverRefused, Measurement
from .closed_loop import FIELDS as CLOSED_LOOP_FIELDS
from .closed_loop import WARMUP_DELAY_MS, closed_loop_figures

SERIAL_MARGIN = 1.5  # bound: the whole count served one after the other, with room to spare
BOUND_EXTRA_S = 30.0
# A request without a delay still takes time: the bound counts at least this much for each (a stack answering 200
# a second one by one); without it seed 004's ab -n 100000 on /db/kv had 30 s in all.
MIN_REQUEST_MS = 5
WARMUP_MAX_REQUESTS = 10_000  # the warm-up repeats the count (seed 000's 200), up to this many


def ab_spec(plan, base_url: str, delay_ms: int) -> LoadSpec:
    path = plan.paths(delay_ms)[0]
    # ab's -s is a poll timeout for the whole run: it must outlast the longest gap between two answers
    return LoadSpec(
        urls=(base_url + path,),
        concurrency=plan.concurrency,
        duration_s=0,
        timeout_s=metrics.loadgen_timeout_s(delay_ms / 1000),
        keepalive=plan.keepalive,
        cpus=plan.loadgen_cpus,
    )


def ab_options(plan, delay_ms: int, requests: int | None = None) -> ab.AbOptions:
    requests = requests or int(plan.options["requests"])
    return ab.AbOptions(
        requests=requests, wall_limit_s=SERIAL_MARGIN * requests * max(delay_ms, MIN_REQUEST_MS) / 1000 + BOUND_EXTRA_S
    )


def ab_run(plan, delay_ms: int, requests: int):
    """How one load host's share runs: its share of the connections (the spec) and of the request count."""
    return lambda spec, out_dir, share, hosts: ab.run(
        spec, out_dir, ab_options(plan, delay_ms, shares(requests, hosts)[share])
    )


def ab_rows(result) -> list[tuple[float, float]]:
    """Every request's (start second, total ms) from ab.tsv: one run's, or the union of the load hosts' runs."""
    dirs = sorted({Path(f).parent for f in result.raw_files if f.endswith(f"{ab.name}.tsv")})
    return sorted((row for d in dirs for row in ab.per_request(d)), key=lambda row: row[0])


def ab_figures(plan, result) -> dict:
    """ab's own report (one run; several load hosts' reports stay in their loadgen-N/), and the figures from
    every request's times."""
    reports = [Path(f) for f in result.raw_files if f.endswith(f"{ab.name}.stdout")]
    reported = ab_startup.ab_reported(reports[0].read_text(errors="replace")) if len(reports) == 1 else None
    rows = ab_rows(result)
    free = ab_startup.startup_free(rows, result.duration_s, plan.concurrency)
    blocking_workers = plan.parallel_limit
    return {
        "reported": reported,
        "startup_free": free,
        "starts_per_second": ab_startup.starts_per_second(rows),
        "rounds": ab_startup.expected_rounds(
            int(plan.options["requests"]), plan.concurrency, blocking_workers=blocking_workers
        ),
        "latency_mean_ms": result.latency_ms.get("mean"),
        "artifact": "Debian's ab 2.3 sends its first request alone and opens the other C-1 connections only "
        "when its answer is back: one extra round of the delay when the server could have "
        "answered all C at once (none when it serves them one by one anyway)",
        "reference": (plan.options.get("reference") or {}).get(plan.server),
    }


class FixedCount(Driver):
    ends_at_window = False  # ab runs to its -n: 30-100 s for seed004's 100,000, whatever the window
    loadgen = ab.name
    tools = ((ab.name, "apt-get install apache2-utils"),)
    FIELDS = {
        **CLOSED_LOOP_FIELDS,
        "requests_planned": "ab's -n: the requests the cell sends (options.requests)",
        ab.name: "ab's own view: its headline lines as printed (reported), the figure without its start-up artifact "
        "(startup_free), requests started per second (starts_per_second), the rounds of the delay expected "
        "with and without the lone first request (rounds), its mean latency, the artifact in words, and the "
        "seed's published figures for this server (reference, from options)",
        "rps_startup_free": "requests / time without ab's lone first request (drivers/ab_startup.py)",
        "efficiency_ratio_startup_free": "the efficiency ratio from rps_startup_free",
        "ratio_check": "why the ratio_disagreement flag is not applied to a fixed count",
    }

    def keepalive(self, run_keepalive: bool, options: dict) -> bool:
        return bool(options.get("keepalive", False))  # ab without -k unless the group asks (the seeds' way)

    def preflight(self, plan) -> None:
        """Refuses, before anything runs, what ab cannot do with this cell."""
        super().preflight(plan)
        if not isinstance(plan.options.get("requests"), int) or plan.options["requests"] < 1:
            raise DriverRefused(f"{plan.cell_id}: kind fixed_count needs options.requests, a positive integer")
        try:
            ab.build_command(ab_spec(plan, "http://127.0.0.1:1", plan.delay_ms), None, ab_options(plan, plan.delay_ms))
        except LoadgenError as e:
            raise DriverRefused(str(e)) from e

    def warmup(self, plan, ctx, server) -> None:
        warm = min(plan.delay_ms, WARMUP_DELAY_MS)
        requests = min(int(plan.options["requests"]), WARMUP_MAX_REQUESTS)
        ctx.placement.load.run(
            ab.name, ab_spec(plan, server.url, warm), ctx.cell_dir / "warmup", ab_run(plan, warm, requests)
        )

    def measure(self, plan, ctx, server, sampler) -> Measurement:
        load = ctx.placement.load
        result, host_flags = load.run(
            ab.name,
            ab_spec(plan, server.url, plan.delay_ms),
            ctx.cell_dir,
            ab_run(plan, plan.delay_ms, int(plan.options["requests"])),
        )
        figures = ab_figures(plan, result)
        free = figures["startup_free"] or {}
        extra = {
            "requests_planned": int(plan.options["requests"]),
            ab.name: figures,
            "rps_startup_free": free.get("rps"),
            "efficiency_ratio_startup_free": metrics.ratios(
                plan.concurrency, plan.delay_ms, free["rps"], None
            ).efficiency_ratio
            if free.get("rps")
            else None,
            "ratio_check": "not applied: a fixed-count run ramps up and drains, so mean latency and C / rps "
            "differ by design",
            **load.record_fields(result),
        }
        return Measurement(result, extra=extra, flags=host_flags)

    def figures(self, plan, measurement, *, loadgen_saturated: bool) -> tuple[dict, list[str]]:
        ratios, flags = closed_loop_figures(plan, measurement.result, loadgen_saturated)
        # Over a fixed count, ramp and drain make the mean latency and C / rps differ by design, not because
        # a window was too short: no ratio_disagreement here.
        flags = [f for f in flags if f != "ratio_disagreement"] + measurement.flags
        return {**ratios, **measurement.extra}, flags


DRIVER = FixedCount()

"""A cell's record built from what was measured: the planned fields every record has (failed ones too), the
fields every measured cell shares, its side processes' and this machine's noise figures, and the flags every
kind of cell can raise. The driver's own figures and the merge are the contract's (record.py)."""

from __future__ import annotations

import os

from crossbench.flags import LATENCY_UNRECOVERABLE
from crossbench.loadgen.base import LoadResult
from crossbench.plan.cellplan import CellPlan
from crossbench.record import metrics
from crossbench.record import record as contract
from crossbench.record.record import now_iso
from crossbench.sampling import noise
from crossbench.sampling.process_tree import ProcessTreeSampler, summarize
from crossbench.servers import RunningServer

from .cell_checks import ServerDied
from .cell_context import CellContext


def side_figures(prefix: str, sampler: ProcessTreeSampler | None, t0: float, t1: float) -> dict:
    window = summarize(sampler.samples(), t0, t1) if sampler else {}
    return {f"{prefix}_cpu_percent": window.get("cpu_percent"), f"{prefix}_rss_peak_mb": window.get("rss_peak_mb")}


def noise_figures(plan: CellPlan, ctx: CellContext, measurement, shared: dict) -> dict:
    """Steal and foreign CPU on the cell's cores, and connections accepted, in the window: this machine's
    counters, so only for what runs here (null for a server or load on hosts of their own)."""
    if not measurement.noise:
        return {
            k: None
            for k in (
                "steal_percent",
                "foreign_cpu_percent",
                "harness_cpu_percent",
                "noise_impact_percent",
                "tcp_passive_opens",
                "requests_per_connection",
            )
        }
    before, after = measurement.noise
    pinned = bool(plan.server_cpus and plan.loadgen_cpus)
    cores = tuple(sorted({*plan.server_cpus, *plan.loadgen_cpus})) if pinned else ()
    roles = {"server": tuple(plan.server_cpus), "loadgen": tuple(plan.loadgen_cpus)} if pinned else {}
    loadgen_percent = shared.get("loadgen_cpu_percent") or 0.0
    figures = {
        **noise.window(before, after, cores, loadgen_percent + unstarted_server_cpu(plan, shared)),
        "noise_impact_percent": noise.noise_impact(before, after, roles, loadgen_percent),
        **noise.connections(before, after, measurement.result.extra.get("run_requests") or shared.get("requests")),
    }
    if not plan.plugin.starts and shared.get("cpu_percent") is None:
        figures["foreign_cpu_percent"] = None  # its server's CPU is not ours and not read: foreign is unknown
    return figures


def unstarted_server_cpu(plan: CellPlan, shared: dict) -> float:
    """The CPU of a server the suite did not start (outside the runner's tree, so counted as foreign unless taken
    out), where its process was sampled; 0 for a server the suite started (the runner's tree has it)."""
    return 0.0 if plan.plugin.starts else shared.get("cpu_percent") or 0.0


def cell_flags(plan: CellPlan, window: dict, result: LoadResult) -> list[str]:
    """Flags every kind of cell can raise: the load generator at the end of its cores; no latency figure to trust
    (the tool's histogram could not be recovered: its reason in the driver's figures or the load result)."""
    cores = min(plan.loadgen_threads, len(plan.loadgen_cpus) or os.cpu_count())
    found = ["loadgen_saturated"] if metrics.loadgen_saturated(window.get("loadgen_cpu_percent"), cores) else []
    return found + ([LATENCY_UNRECOVERABLE] if result.latency_method == "none" else [])


def base_record(plan: CellPlan, started: str) -> dict:
    fields = plan.to_dict()
    settings = fields.pop("settings")
    fields["server_cpus"], fields["loadgen_cpus"] = list(plan.server_cpus), list(plan.loadgen_cpus)
    return {
        "schema_version": contract.SCHEMA_VERSION,
        **fields,
        **plan.plugin.record_fields(settings),
        "processes": plan.plugin.process_count(settings),
        "setting": plan.plugin.describe(settings),
        "parallel_limit": plan.parallel_limit,
        "started_at": started,
        "ended_at": now_iso(),
        "series": f"cells/{plan.cell_id}/samples.csv",
    }


def shared_record(plan: CellPlan, result: LoadResult, window: dict, server: RunningServer, started: str) -> dict:
    """The fields every cell kind has; the driver's figures and flags come from its `figures` (drivers/base.py)."""
    return {
        **base_record(plan, started),
        "status": "ok",
        "requests": result.requests,
        "errors": result.errors,
        "error_total": result.error_count,
        "rps": result.rps,
        "bytes_per_s": result.bytes / result.duration_s if result.duration_s else None,
        "measured_s": result.duration_s,
        "latency_ms": result.latency_ms,
        "latency_source": result.latency_source,
        "latency_method": result.latency_method,
        "loadgen_reported_latency_ms": result.reported_latency_ms,
        "loadgen_status_counts": result.extra.get("status_counts"),
        "latency_by_kind": result.extra.get("by_kind"),
        "threads_peak": window.get("threads_peak"),
        "threads_mean": window.get("threads_mean"),
        "rss_peak_mb": window.get("rss_peak_mb"),
        "cpu_percent": window.get("cpu_percent"),
        "cpu_per_core": window.get("cpu_per_core"),
        "loadgen_cpu_percent": window.get("loadgen_cpu_percent"),
        "pool_current_peak": window.get("pool_current_peak"),
        "pool_busy_peak": window.get("pool_busy_peak"),
        "samples": window.get("samples"),
        "tcp_opens_in_window": window.get("tcp_opens_in_window"),
        "server_settings": server.spec.describe,
        "loadgen_version": result.tool_version,
        "loadgen_command": result.extra.get("command"),
    }


def failed_record(plan: CellPlan, started: str, error: Exception) -> dict:
    shared = {
        **base_record(plan, started),
        **dict.fromkeys(contract.FAILED_MEASURED),
        "status": "failed",
        "valid": False,
        "flags": ["server_died" if isinstance(error, ServerDied) else "failed"],
        "error": f"{type(error).__name__}: {error}",
        "latency_ms": {k: None for k in contract.LATENCY_KEYS},
    }
    return contract.merge(shared, {}, plan.kind)

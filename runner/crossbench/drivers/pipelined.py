"""Seed 001's hello world: wrk with C connections x N pipelined requests (the run's `pipeline`), after
checking on one raw socket that the server answers all N of a pipelined batch (crossbench.clients.pipeline_check).
A server that drops pipelined requests fails the cell with the counts: its throughput would be a lie.

wrk 4.1.0's pipelined latency figures are wrong (loadgen/README.md), only its max is kept. Beside it, the
mean batch latency by Little's law: each connection always has one batch of N outstanding, so
batch latency = C x N / rps.
"""

from __future__ import annotations

import json
import threading
from urllib.parse import urlsplit

from ..clients import pipeline_check
from .base import Measurement
from .closed_loop import ClosedLoop

FLOWING_BATCHES = 2  # wrk writes a connection's next batch only once all N answers of the last are in


class PipelineNotAnswered(RuntimeError):
    pass


def verify(plan, ctx, server) -> pipeline_check.PipelineCheck:
    url = urlsplit(server.url)
    expected = plan.options.get("expected_body")
    result = pipeline_check.check(
        url.hostname, url.port, plan.paths()[0], plan.pipeline, expected.encode() if expected else None
    )
    (ctx.cell_dir / "pipeline-check.json").write_text(json.dumps(result.to_dict(), indent=1) + "\n")
    if not result.verified:
        raise PipelineNotAnswered(
            f"{plan.pipeline} pipelined GET {result.path} on one socket: {result.answered} "
            f"complete answers, statuses {result.statuses}, {result.bodies_as_expected} with "
            f"the expected body, server closed: {result.closed_by_server}"
        )
    return result


def pipeline_figures(plan, result) -> dict:
    depth, c = plan.pipeline, plan.concurrency
    batches = result.requests / (c * depth) if c and depth else None
    return {
        "pipeline_batches_per_connection": batches,
        "pipeline_flowing": bool(batches and batches >= FLOWING_BATCHES),
        "batch_latency_mean_ms": c * depth / result.rps * 1000 if result.rps else None,
        "batch_latency_method": "C x pipeline / rps (Little's law: one batch outstanding per connection)",
    }


def connections_by_process(server) -> dict[str, int]:
    """Established connections on the server's port, per server process: N workers share one listening
    socket, and which worker accepts a connection is the kernel's choice, not an even split."""
    import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

    counts = {}
    for proc in server.tree():
        try:
            conns = proc.net_connections(kind="tcp")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        n = sum(1 for c in conns if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == server.spec.port)
        if n:
            counts[str(proc.pid)] = n
    return counts


class Pipelined(ClosedLoop):
    """Checked before the warm-up and again right before the window (a few ms each); the connections' split
    between processes counted mid-window."""

    FIELDS = {
        **ClosedLoop.FIELDS,
        "pipeline_verified": "the check before the window got all `pipeline` answers of one batch on one socket",
        "pipeline_check": "that check's counts (pipeline-check.json): answers, statuses, bodies as expected, "
        "whether the server closed",
        "connections_by_process": "established connections per server process (pid) halfway through the window",
        "pipeline_batches_per_connection": "requests / (C x pipeline): batches each connection completed",
        "pipeline_flowing": "at least 2 batches per connection (wrk writes the next batch only after the last)",
        "batch_latency_mean_ms": "C x pipeline / rps (Little's law: one batch outstanding per connection)",
        "batch_latency_method": "how batch_latency_mean_ms was computed, in words",
        "latency_invalid": "why wrk's latency figures are null (its histogram could not be recovered, flag "
        "latency_unrecoverable: only its max is kept), else null",
    }

    def warmup(self, plan, ctx, server) -> None:
        verify(plan, ctx, server)
        super().warmup(plan, ctx, server)

    def measure(self, plan, ctx, server, sampler) -> Measurement:
        checked = verify(plan, ctx, server)
        # counted halfway through the window, when every connection is open and busy
        split: dict[str, int] = {}
        timer = threading.Timer(plan.duration_s / 2, lambda: split.update(connections_by_process(server)))
        timer.start()
        try:
            measurement = super().measure(plan, ctx, server, sampler)
        finally:
            timer.cancel()
        measurement.extra.update(
            {
                "pipeline_verified": checked.verified,
                "pipeline_check": checked.to_dict(),
                "connections_by_process": split,
                **pipeline_figures(plan, measurement.result),
                "latency_invalid": measurement.result.extra.get("latency_invalid"),
            }
        )
        return measurement


DRIVER = Pipelined()

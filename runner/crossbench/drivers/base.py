"""What a driver is, and what it hands back to the cell lifecycle.

The cell (cell.py) owns the phases: it starts and verifies the server and the samplers, calls `warmup` (when
the run has one), marks the measured window around `measure`, takes the tail samples, stops everything in
`finally`, and writes the shared part of the record (record.py). A driver supplies only its load and its own
figures and flags (each figure declared in its FIELDS; `figures` hands them over once the cell's own flags are
known). A group in an experiment file picks its driver with `kind = "..."` and passes it settings with
`options = { ... }` (plan.options).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

from crossbench.refusal import Missing, Refusal

from ..loadgen.base import LoadResult


class DriverRefused(Refusal, ValueError):
    """The driver cannot run this cell as planned (a clear reason, given before anything runs)."""


class DriverToolMissing(DriverRefused, Missing):
    """A tool the driver runs is not installed (the message names its package)."""


@dataclass
class Measurement:
    result: LoadResult  # the measured window's load result: requests, errors, latency
    t0: float | None = None  # the window, as epochs, when the driver's own is narrower than the cell's
    t1: float | None = None
    extra: dict = field(default_factory=dict)  # the driver's own record fields (never a shared one: record.py)
    flags: list[str] = field(default_factory=list)  # the driver's own flags (the cell adds loadgen_saturated)
    noise: tuple = ()  # the cell's (before, after) kernel snapshots around the window (sampling/noise.py)


class Driver:
    loadgen: str | None = None  # the tool this kind always uses; None: the run's --loadgen
    tools: tuple[tuple[str, str], ...] = ()  # (executable, what installs it) beyond the loadgen adapter's
    FIELDS: dict[str, str] = {}  # the record fields this driver adds, each with its line of documentation
    load_tool: str | None = None  # what its load hosts run (--hosts), when not the cell's loadgen
    on_hosts: bool = True  # its cells can run with --hosts (load hosts, a server on its own host)
    one_load_host: bool = False  # its own client, not a merged tool, runs on one load host
    ends_at_window: bool = True  # its measuring ends with the window; False: it runs to a request count

    def keepalive(self, run_keepalive: bool, options: dict) -> bool:
        """The cell's keepalive (its plan and record): the run's, unless this kind decides it from its options."""
        return run_keepalive

    def reuses_connections(self, plan) -> bool:
        """Whether the requests the record counts reuse their connections: the server_closed_connections check
        and the wait for closed ports after the window go by it."""
        return plan.keepalive

    def holds(self, plan) -> bool:
        """The cell's window is held (loadgen/held.py): one process spans its warm-up, window and tail."""
        return False

    def pool(self, plan) -> int:
        """The connections the load generator may hold open at once (its -c): the cell's concurrency."""
        return plan.concurrency

    def opens_before_window(self, plan) -> bool:
        """Every keep-alive connection the window uses was opened before it (an open-loop held window), so the
        machine accepting connections inside it is flagged (sampling/noise.py)."""
        return False

    def over_budget(self, plan) -> bool:
        """A held window whose queue is slower than its load budget can wait out (closed_loop.HELD_BUDGET_S)."""
        return False

    def planned_s(self, plan) -> float:
        """The seconds of load the cell is planned to take (the run's time estimate): its warm-up and window."""
        return plan.warmup_s + plan.duration_s

    def preflight(self, plan) -> None:
        """Refuses, before the run starts, what this driver could not do with the cell (DriverRefused)."""
        missing = [f"{tool} ({install})" for tool, install in self.tools if shutil.which(tool) is None]
        if missing:
            raise DriverToolMissing(f"{plan.kind} cells need {', '.join(missing)}")

    def warmup(self, plan, ctx, server) -> None:
        """Unrecorded load before the window (the cell calls it only when plan.warmup_s > 0)."""

    def measure(self, plan, ctx, server, sampler) -> Measurement:
        raise NotImplementedError

    def figures(self, plan, measurement: Measurement, *, loadgen_saturated: bool) -> tuple[dict, list[str]]:
        """The driver's record fields (its FIELDS) and flags, once the window is over and the cell knows whether
        the load generator was saturated (its CPU sampled to the window's end, or a load host's): by default what
        measure found."""
        return measurement.extra, measurement.flags


class GeneratorDriver(Driver):
    """A driver whose warm-up and window are each one run of the plan's load generator on the cell's load
    placement (here, or spread over load hosts); it supplies the spec (`load_spec`) and its own figures."""

    def load_spec(self, plan, base_url: str, warmup: bool = False):
        raise NotImplementedError

    def warmup(self, plan, ctx, server) -> None:
        ctx.placement.load.run(plan.loadgen, self.load_spec(plan, server.url, warmup=True), ctx.cell_dir / "warmup")

    def run_window(self, plan, ctx, server) -> tuple[LoadResult, list[str], dict]:
        """The window's run: its result, the load hosts' flags, and the load hosts' own record fields."""
        load = ctx.placement.load
        result, host_flags = load.run(plan.loadgen, self.load_spec(plan, server.url), ctx.cell_dir)
        return result, host_flags, load.record_fields(result)

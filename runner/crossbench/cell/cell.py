"""One lifecycle for a cell, in one place: start a fresh server, wait until ready, verify, warm up,
measure while sampling, stop in `finally`, and build the record. Nothing here decides what to run.
The checks that fail a cell are in cell_checks.py, the record's fields in cell_record.py; both re-exported."""

from __future__ import annotations

import sys
import time
import traceback
from contextlib import ExitStack
from typing import TYPE_CHECKING

from crossbench import loadgen, oskit
from crossbench.database import stack
from crossbench.drivers import DRIVERS, Measurement
from crossbench.plan.cellplan import CellPlan
from crossbench.record import record as contract
from crossbench.record.record import now_iso
from crossbench.sampling import db_pool, noise
from crossbench.sampling.process_tree import summarize
from crossbench.servers import RunningServer, ServerSpec
from crossbench.servers.probe import Probe

from . import faults
from .cell_checks import CellFailed, database_flags, died, verify, verify_after_load, verify_database
from .cell_context import CellContext
from .cell_record import cell_flags, failed_record, noise_figures, shared_record, side_figures
from .phases import Phases

SAMPLE_INTERVAL_S = 0.25
SAMPLED_LIMIT_S = 2.0  # at most this long for each sampler's first sample, and its first after the window
POOL_SETTLE_LIMIT_S = 5.0  # after the warm-up, at most this long for the database pool's queue to drain
POOL_SETTLE_POLL_S = 0.05
PROBE_ATTACH_LIMIT_S = 10.0  # at most this long for a server's probe (Tomcat's JVM probe) to attach before the window


def server_spec(plan: CellPlan, ctx: CellContext, port: int, db_url: str | None = None) -> ServerSpec:
    work = ctx.cell_dir / "server"
    work.mkdir(parents=True, exist_ok=True)
    return plan.plugin.spec(
        plan.settings,
        port,
        work,
        plan.server_cpus,
        ctx.cell_dir,
        db_url=db_url,
        address=ctx.placement.server_host.address,
    )


def database_url(plan: CellPlan, ctx: CellContext) -> str | None:
    if not stack.needs_database(plan):
        return None
    if ctx.database is None:
        raise CellFailed(f"{plan.endpoint} needs a database and the run has none")
    return ctx.database.url()


def start_server(plan: CellPlan, ctx: CellContext, db_url: str | None) -> RunningServer:
    """A fresh server for the cell on the server's host (or the user's own, running: its plug-in says); not yet
    started (a with-block starts it)."""
    host = ctx.placement.server_host
    return plan.plugin.running(server_spec(plan, ctx, host.free_port(), db_url), host, ctx.cell_dir)


if TYPE_CHECKING:
    import psutil

OWN_CLIENTS = "crossbench.clients."  # the project's own load clients run as `python -m crossbench.clients.X`


def is_load_client(process: psutil.Process, tools=frozenset(loadgen.ADAPTERS)) -> bool:
    """A load generator named after its tool (taskset execs into it), or one of the project's own clients (the
    holder): a python process, known by its module. Left out, the holder's CPU counted as another process's, and
    every seed003 cell of a quiet machine was flagged noisy_host (16-22 % of a core "foreign"). The command line
    is read only when the name is not a tool's: this runs for every child at every sample."""
    if process.name() in tools:
        return True
    cmdline = process.cmdline()
    return "-m" in cmdline and any(arg.startswith(OWN_CLIENTS) for arg in cmdline)


def loadgen_pid(tools=frozenset(loadgen.ADAPTERS)):
    """The load generator: the runner's own child that is a load client (is_load_client)."""
    import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

    me = psutil.Process()

    def find() -> int | None:
        for child in me.children(recursive=True):
            try:
                if is_load_client(child, tools):
                    return child.pid
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                continue
        return None

    return find


def run_cell(plan: CellPlan, ctx: CellContext) -> dict:
    """Measures one cell and returns its record; a failure becomes a failed record, never an exception,
    except KeyboardInterrupt, which stops everything this cell started and propagates."""
    ctx.cell_dir.mkdir(parents=True, exist_ok=True)
    started = now_iso()
    phases = Phases()
    try:
        return measure(plan, ctx, started, phases)
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001 - any failure is recorded and the run goes on
        fault = faults.cell_fault(plan, e, ctx.cell_dir)  # the disk or a tool: the run stops, nothing recorded
        if fault:
            raise fault from e
        (ctx.cell_dir / "failure.txt").write_text(traceback.format_exc())
        return failed_record(plan, started, e)
    finally:
        phases.mark("record")
        try:
            phases.write(ctx.cell_dir)
        except OSError:
            pass  # a full or read-only disk: the run's own fault handling says so, not this


def measure(plan: CellPlan, ctx: CellContext, started: str, phases: Phases) -> dict:
    db_url = database_url(plan, ctx)
    probe, hosts = None, ctx.placement
    with ExitStack() as running:
        bouncer = (
            running.enter_context(stack.pooler(plan, db_url, ctx.cell_dir, hosts.server_host)) if plan.pooler else None
        )
        made: list[Probe | None] = []
        running.callback(stop_probes, made)  # after the server: one that never answered stops its probe too
        server = probe_as_it_starts(plan, ctx, start_server(plan, ctx, bouncer.url if bouncer else db_url), made)
        server = running.enter_context(server)
        probe = probe_once_ready(plan, ctx, server, made)
        front = (
            running.enter_context(stack.proxy(plan, server, ctx.cell_dir, hosts.proxy_host)) if plan.proxy else server
        )
        phases.mark("server_start")
        verify(front, plan)
        figures = verify_database(plan, front, db_url) if db_url else {}
        phases.mark("verify")
        # the server's tree with the load generator's and the probe's pool; beside it, the other processes'
        sampler = server.sampler(
            ctx.cell_dir / "samples.csv", SAMPLE_INTERVAL_S, "warmup", pool_source=probe, loadgen_pid_fn=loadgen_pid()
        )
        sides = {
            "db": ctx.database.sampler(ctx.cell_dir / "db-samples.csv", SAMPLE_INTERVAL_S) if db_url else None,
            "proxy": front.sampler(ctx.cell_dir / "proxy-samples.csv", SAMPLE_INTERVAL_S) if plan.proxy else None,
            "pooler": bouncer.sampler(ctx.cell_dir / "pooler-samples.csv", SAMPLE_INTERVAL_S) if bouncer else None,
        }
        try:
            for side in sides.values():
                if side:
                    running.enter_context(side)
            with sampler:
                try:
                    wait_sampled([sampler, *sides.values()], after=0.0)
                    phases.mark("samplers_first")
                    measurement = run_phases(DRIVERS[plan.kind], plan, ctx, front, sampler, probe, phases)
                    wait_sampled([sampler, *sides.values()], after=measurement.t1)
                    phases.mark("samplers_last")
                    keep_up(plan, ctx, server)
                except Exception as e:
                    raise (died(plan, server) or e) from e
        finally:
            if probe:
                probe.stop()
            phases.mark("samplers_probe_stop")
        death = died(plan, server)
        if death:
            raise death
        verify_after_load(plan, front, db_url, ctx)
        phases.mark("verify_after")
    phases.mark("server_stop")
    drained_s = 0.0 if DRIVERS[plan.kind].reuses_connections(plan) else oskit.wait_for_ephemeral_ports()
    phases.mark("port_drain")
    window = summarize(sampler.samples(), measurement.t0, measurement.t1)
    shared = shared_record(plan, measurement.result, window, server, started)
    shared.update(probe.figures(measurement.t0, measurement.t1) if probe else db_pool.peaks([], 0, 0))
    for prefix, side in sides.items():
        shared.update(side_figures(prefix, side, measurement.t0, measurement.t1))
    stopped = plan.plugin.stopped_figures(
        plan.settings, ctx.cell_dir, server.spec.describe, measurement.t0, measurement.t1
    )
    shared.update(stopped)
    shared["server_settings"] = plan.plugin.stopped_settings(shared["server_settings"], ctx.cell_dir)
    shared.update(figures)
    shared.update(noise_figures(plan, ctx, measurement, shared))
    own = cell_flags(plan, window, measurement.result)
    driver = DRIVERS[plan.kind]
    saturated = "loadgen_saturated" in own + measurement.flags  # here, or on a load host
    extra, driver_flags = driver.figures(plan, measurement, loadgen_saturated=saturated)
    flags = list(
        dict.fromkeys(
            [
                *driver_flags,
                *own,
                *database_flags(ctx, db_url),
                *noise.flags(
                    shared,
                    driver.reuses_connections(plan),
                    driver.pool(plan),
                    pool_before_window=driver.opens_before_window(plan),
                ),
                *plan.plugin.stopped_flags(plan.settings, stopped),
            ]
        )
    )
    shared.update(flags=flags, valid=not flags, time_wait_drain_s=round(drained_s, 1))
    return contract.merge(shared, extra, plan.kind, driver.FIELDS)


def probe_as_it_starts(
    plan: CellPlan, ctx: CellContext, server: RunningServer, made: list[Probe | None]
) -> RunningServer:
    """The server, set to make its probe as its process starts where its host allows (hosts: probes_starting_servers):
    Tomcat's JVM probe then attaches while Tomcat starts, where attached once it answered, a held window waited
    for it about a second a cell."""
    host = ctx.placement.server_host
    if host.probes_starting_servers:
        server.on_spawn = lambda started: made.append(plan.plugin.probe(started.pid, ctx.cell_dir, host))
    return server


def probe_once_ready(plan: CellPlan, ctx: CellContext, server: RunningServer, made: list[Probe | None]) -> Probe | None:
    """The probe made as the server started, told that it answers now; else one made now."""
    if made:
        if made[0] is not None:
            made[0].server_ready()
        return made[0]
    made.append(plan.plugin.probe(server.pid, ctx.cell_dir, ctx.placement.server_host))
    return made[0]


def stop_probes(made: list[Probe | None]) -> None:
    for probe in made:
        if probe is not None:
            probe.stop()


def run_phases(
    driver, plan: CellPlan, ctx: CellContext, server: RunningServer, sampler, probe: Probe | None, phases: Phases
) -> Measurement:
    """Warm-up (unrecorded), then the measured window; the samples after it are labelled cooldown."""
    if plan.warmup_s > 0:
        ctx.report("warmup", sampler)
        driver.warmup(plan, ctx, server)
    phases.mark("warmup")
    wait_attached(probe)
    phases.mark("probe_attach")
    if plan.warmup_s > 0:
        settle_pool(probe)
    phases.mark("pool_settle")
    sampler.set_phase("measure")
    ctx.report("measure", sampler)
    t0 = time.time()
    before = ctx.placement.noise_snapshot()
    measurement = driver.measure(plan, ctx, server, sampler)
    measurement.noise = (before, ctx.placement.noise_snapshot()) if before else ()
    t1 = time.time()
    phases.mark("window")
    sampler.set_phase("cooldown")
    measurement.t0 = measurement.t0 or t0
    measurement.t1 = measurement.t1 or t1
    return measurement


def wait_sampled(samplers, after: float, limit_s: float = SAMPLED_LIMIT_S) -> None:
    """Until every sampler (the server's, the database's, the proxy's, the pooler's) has a sample taken after
    `after` (epoch), at most limit_s each. Before the warm-up (after=0): its first sample, which a host of its own
    sends a few tenths of a second after it starts (a 1 s window without warm-up once opened before the database
    host's first and closed before its second, so it had no CPU figure). After the window: its first sample past
    it, so the window's last ones are all in (a quarter second here at most)."""
    for sampler in samplers:
        if sampler is not None:
            sampler.wait_past(after, limit_s)


def keep_up(plan: CellPlan, ctx: CellContext, server: RunningServer) -> None:
    """--keep-up: the measured server stays up after its window (nothing more is measured), its pid printed."""
    if ctx.keep_up_s <= 0:
        return
    print(
        f"run_all: keeping {plan.cell_id}'s {plan.server} up for {ctx.keep_up_s:g} s: pid "
        f"{server.pid}{ctx.placement.server_host.on}, "
        f"{server.url}/",
        file=sys.stderr,
        flush=True,
    )
    time.sleep(ctx.keep_up_s)


def wait_attached(probe: Probe | None, limit_s: float = PROBE_ATTACH_LIMIT_S) -> None:
    """A probe that attaches in the background (Tomcat's JVM probe takes a second or more) has read once before
    the window opens, so the window's pool and connection figures are never empty for want of time."""
    if probe is not None:
        probe.wait_attached(limit_s)


def settle_pool(probe: Probe | None, limit_s: float = POOL_SETTLE_LIMIT_S) -> None:
    """The warm-up's client leaves with requests in flight; a server still serves them, and those waiting for a
    pooled connection would open the window with a queue the window's own clients did not make (a pool of 2 at
    C=64 showed 117 waiting). The window opens once the pool's count of waiting requests is 0, or after limit_s."""
    if probe is None:
        return
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and (probe.waiting_now() or 0) > 0:
        time.sleep(POOL_SETTLE_POLL_S)

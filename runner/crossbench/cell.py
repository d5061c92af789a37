"""One lifecycle for a cell, in one place: start a fresh server, wait until ready, verify, warm up,
measure while sampling, stop in `finally`, and build the record. Nothing here decides what to run."""
from __future__ import annotations

import threading
import time
import traceback
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psutil

from . import loadgen, metrics
from .drivers import DRIVERS
from .experiment import CellPlan
from .loadgen.base import LoadResult
from .metadata import now_iso
from .rundir import SCHEMA_VERSION
from .sampling.jvm_probe import JvmProbe, JvmProbeError, connection_counts
from .sampling.process_tree import ProcessTreeSampler, summarize
from .servers import RunningServer, ServerSpec, TornadoConfig, free_port, tomcat_spec, tornado_spec
from .tomcat import TomcatConfig

SAMPLE_INTERVAL_S = 0.25
TIME_WAIT_DRAIN_LIMIT_S = 60


class CellFailed(RuntimeError):
    """The cell could not be measured; the record says why and the run goes on."""


@dataclass
class CellContext:
    """What a cell needs from the run beyond its plan."""
    cell_dir: Path
    tomcat: dict               # the experiment's [tomcat] section (JDK, heap, JVM options)
    jfr: bool
    on_progress: callable = None   # called with (phase, sampler) while the cell runs

    def report(self, phase: str, sampler) -> None:
        if self.on_progress:
            self.on_progress(phase, sampler)


def server_spec(plan: CellPlan, ctx: CellContext, port: int) -> ServerSpec:
    work = ctx.cell_dir / "server"
    work.mkdir(parents=True, exist_ok=True)
    if plan.server == "tomcat":
        config = TomcatConfig(
            port=port, max_threads=plan.max_threads or 200, executor=plan.executor or "platform",
            accept_count=plan.accept_count, max_connections=plan.max_connections,
            jdk=ctx.tomcat.get("jdk"), heap=ctx.tomcat.get("heap"),
            jvm_options=tuple(ctx.tomcat.get("jvm_options", ())),
            jfr_file=(ctx.cell_dir / "tomcat.jfr").resolve() if ctx.jfr else None)
        return tomcat_spec(config, work, plan.server_cpus)
    return tornado_spec(TornadoConfig(port, plan.processes, plan.backlog), work, plan.server_cpus)


def verify(server: RunningServer, plan: CellPlan) -> None:
    """Every URL of the cell answers 200 before anything is measured (delay endpoints at ms=0)."""
    for path in plan.paths():
        path = path.replace(f"ms={plan.delay_ms}", "ms=0")
        try:
            with urllib.request.urlopen(server.url + path, timeout=10) as response:
                body = response.read()
                if response.status != 200 or not body:
                    raise CellFailed(f"verify: {path} answered {response.status} with {len(body)} bytes")
        except OSError as e:
            raise CellFailed(f"verify: {path} failed: {e}") from e


def loadgen_pid(tools=frozenset(loadgen.ADAPTERS)):
    """The load generator is the runner's own child named after its tool (taskset execs into it)."""
    me = psutil.Process()

    def find() -> int | None:
        for child in me.children(recursive=True):
            try:
                if child.name() in tools:
                    return child.pid
            except psutil.NoSuchProcess:
                continue
        return None
    return find


def run_cell(plan: CellPlan, ctx: CellContext) -> dict:
    """Measures one cell and returns its record; a failure becomes a failed record, never an exception,
    except KeyboardInterrupt, which stops everything this cell started and propagates."""
    ctx.cell_dir.mkdir(parents=True, exist_ok=True)
    started = now_iso()
    try:
        return measure(plan, ctx, started)
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001 - any failure is recorded and the run goes on
        (ctx.cell_dir / "failure.txt").write_text(traceback.format_exc())
        return failed_record(plan, started, e)


def measure(plan: CellPlan, ctx: CellContext, started: str) -> dict:
    server = RunningServer(server_spec(plan, ctx, free_port()))
    probe = None
    with server:
        verify(server, plan)
        probe = BackgroundProbe(server.pid, ctx.cell_dir) if plan.server == "tomcat" else None
        sampler = ProcessTreeSampler(server.pid, loadgen_pid_fn=loadgen_pid(),
                                     interval_s=SAMPLE_INTERVAL_S, out_csv=ctx.cell_dir / "samples.csv",
                                     pool_source=probe, phase="warmup")
        try:
            with sampler:
                measurement = DRIVERS[plan.kind].drive(plan, ctx, server, sampler)
        finally:
            if probe:
                probe.stop()
        if not server.alive():
            raise CellFailed(f"{plan.server} died during the cell:\n{server.log_tail()}")
    if not plan.keepalive:
        wait_time_wait_drained(server.spec.port)
    jvm = probe.jvm_info if probe else None
    window = summarize(sampler.samples(), measurement.t0, measurement.t1)
    record = build_record(plan, measurement.result, window, server, jvm, started)
    if probe:
        record["tomcat_connection_count_peak"] = connections_peak(ctx.cell_dir / "jvm-probe.jsonl",
                                                                  measurement.t0, measurement.t1)
    return {**record, **measurement.extra}


def connections_peak(probe_lines: Path, t0: float, t1: float) -> int | None:
    """The most connections Tomcat held at once in the window (the connector's connectionCount). Beyond
    maxConnections the others wait outside Tomcat (acceptCount + 1 in the kernel's accept queue, the rest
    half-open) and the client counts no error for them: this is the only place a record shows them."""
    return max((n for t, n in connection_counts(probe_lines) if t0 <= t <= t1), default=None)


class BackgroundProbe:
    """The JVM probe (connector pool, collector, processor count), attached in the background: attaching
    takes a second or two, which the warm-up need not wait for. Until it answers, pool figures are empty."""

    def __init__(self, pid: int, cell_dir: Path):
        self.cell_dir = cell_dir
        self.probe = JvmProbe(pid, interval_s=SAMPLE_INTERVAL_S, raw_out=cell_dir / "jvm-probe.jsonl")
        self.thread = threading.Thread(target=self._start, name="jvm-probe-start", daemon=True)
        self.thread.start()

    def _start(self) -> None:
        try:
            self.probe.start()
        except (JvmProbeError, OSError) as e:
            (self.cell_dir / "jvm-probe.error").write_text(str(e))

    def latest(self):
        return self.probe.latest()

    @property
    def jvm_info(self) -> dict | None:
        return self.probe.jvm_info

    def stop(self) -> None:
        self.thread.join(timeout=self.probe.start_timeout_s + 5)
        self.probe.stop()


def wait_time_wait_drained(port: int) -> float:
    """After Connection: close cells, waits until no TIME_WAIT socket of this port is left (bounded)."""
    start = time.monotonic()
    while time.monotonic() - start < TIME_WAIT_DRAIN_LIMIT_S:
        left = sum(1 for c in psutil.net_connections(kind="tcp")
                   if c.status == psutil.CONN_TIME_WAIT and port in (c.laddr.port, getattr(c.raddr, "port", None)))
        if not left:
            break
        time.sleep(1)
    return time.monotonic() - start


def base_record(plan: CellPlan, started: str) -> dict:
    fields = plan.to_dict()
    fields["server_cpus"], fields["loadgen_cpus"] = list(plan.server_cpus), list(plan.loadgen_cpus)
    return {"schema_version": SCHEMA_VERSION, **fields, "started_at": started, "ended_at": now_iso(),
            "series": f"cells/{plan.cell_id}/samples.csv"}


def build_record(plan: CellPlan, result: LoadResult, window: dict, server: RunningServer, jvm: dict | None,
                 started: str) -> dict:
    latency = result.latency_ms
    r = metrics.ratios(plan.concurrency, plan.delay_ms, result.rps, latency.get("mean"))
    loadgen_cores = min(plan.loadgen_threads, len(plan.loadgen_cpus) or psutil.cpu_count())
    flags = metrics.flags(concurrency=plan.concurrency, requests=result.requests, errors=result.errors,
                          ratios_=r, loadgen_cpu_percent=window.get("loadgen_cpu_percent"),
                          loadgen_cores=loadgen_cores)
    return {
        **base_record(plan, started),
        "status": "ok", "valid": not flags, "flags": flags,
        "requests": result.requests, "errors": result.errors, "error_total": result.error_count,
        "rps": result.rps, "rps_method": "requests / measured window (the seed's definition)",
        "rps_steady": r.rps_steady, "rps_steady_method": "concurrency / mean latency (Little's law)",
        "bytes_per_s": result.bytes / result.duration_s if result.duration_s else None,
        "measured_s": result.duration_s, "latency_ms": latency, "latency_source": result.latency_source,
        "efficiency_ratio": r.efficiency_ratio, "efficiency_ratio_steady": r.efficiency_ratio_steady,
        "latency_ratio": r.latency_ratio,
        "threads_peak": window.get("threads_peak"), "threads_mean": window.get("threads_mean"),
        "rss_peak_mb": window.get("rss_peak_mb"), "cpu_percent": window.get("cpu_percent"),
        "cpu_per_core": window.get("cpu_per_core"), "loadgen_cpu_percent": window.get("loadgen_cpu_percent"),
        "pool_current_peak": window.get("pool_current_peak"), "pool_busy_peak": window.get("pool_busy_peak"),
        "samples": window.get("samples"),
        "server_settings": server.spec.describe,
        "jvm": jvm, "loadgen_version": result.tool_version, "loadgen_command": result.extra.get("command"),
    }


def failed_record(plan: CellPlan, started: str, error: Exception) -> dict:
    died = "died" in str(error) or "exited" in str(error)
    return {**base_record(plan, started), "status": "failed", "valid": False,
            "flags": ["server_died" if died else "failed"], "error": f"{type(error).__name__}: {error}",
            "requests": None, "errors": None, "error_total": None, "rps": None, "rps_steady": None,
            "latency_ms": {k: None for k in ("mean", "p50", "p90", "p99", "max")}, "efficiency_ratio": None,
            "efficiency_ratio_steady": None, "latency_ratio": None, "threads_peak": None, "rss_peak_mb": None,
            "cpu_percent": None, "loadgen_cpu_percent": None}

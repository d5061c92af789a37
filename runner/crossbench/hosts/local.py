"""This machine as a host, with the surface a remote host has (hosts/remote.py): a free port, a server started in
its own process group, a bounded command, a sampler beside a process, the JVM probe, the socket census,
PgBouncer, a clock offset of 0 and the address the others reach it at. A role the hosts file leaves out runs on
a LocalHost; the roles themselves never ask where they run."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

from crossbench.database.stack import RunDatabase

from .. import oskit
from ..database.pgbouncer import PgBouncer
from ..loadgen.base import Finished
from ..loadgen.process import run_here
from ..oskit import HOST, check_port_free, free_port
from ..sampling.jvm_probe import JvmProbe
from ..sampling.process_tree import ProcessTreeSampler
from ..sampling.socket_census import SocketCensus
from ..servers.lifecycle import RunningServer, ServerSpec


class LocalHost:
    """This machine, listening on `address` (loopback, or the address that faces the hosts that reach it)."""

    label = "here"
    clock_offset_s = 0.0  # its clock minus ours
    on = ""  # how messages say where a process runs ("" here, " on <host>" elsewhere)
    probes_starting_servers = True  # its JVM probe waits until a starting JVM can be attached to (jvm_launch)

    def __init__(self, address: str = HOST):
        self.address = address
        self.last_start_s: float | None = None  # what a load host reports of its last run: nothing here, where
        self.last_argv: list[str] | None = None  # the cell sees the tool itself

    def free_port(self) -> int:
        return free_port(self.address)

    def server(self, spec: ServerSpec, cell_dir: Path) -> RunningServer:
        """A server to run here (a with-block starts it)."""
        return RunningServer(spec, self, cell_dir)

    def start_server(self, spec: ServerSpec, cell_dir: Path | None) -> subprocess.Popen:
        """spec's command in the foreground of a session of its own (its port checked first), on its cores (on
        every core when it is pinned once it answers: the runner itself runs pinned to the load generator's), its
        console in its log, with a parent-death signal (it dies with the runner)."""
        check_port_free(spec.port, spec.address)
        cores = oskit.every_core() if spec.pinned_once_ready else spec.cpus
        argv = [*oskit.pdeathsig_prefix(), *oskit.taskset_prefix(cores), *spec.argv]
        spec.log_path.parent.mkdir(parents=True, exist_ok=True)
        mark = f"{spec.name}-{spec.port}-{uuid.uuid4().hex}"
        since = time.time() - 1.0  # process start times are in clock ticks: a second's slack
        with open(spec.log_path, "ab") as log:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=spec.workdir,
                env={**os.environ, **spec.env, oskit.SERVER_MARK: mark},
            )
        process.server_mark, process.server_since = mark, since
        return process

    def pin(self, pid: int, cpus: tuple[int, ...]) -> None:
        """Every thread of pid's tree onto `cpus` (a server pinned once it answers)."""
        oskit.pin_tree(pid, cpus)

    def stop_server(self, process: subprocess.Popen, grace_s: float, first_signal: int = signal.SIGTERM) -> int | None:
        """first_signal (SIGTERM unless declared otherwise) to its process group, SIGKILL to whatever is left after
        the grace period; then whatever it left outside its group (a daemon it started) is killed."""
        returncode = oskit.stop_group(process, grace_s, first_signal)
        oskit.kill_marked(process.server_mark, process.server_since)
        return returncode

    def tree(self, pid: int) -> list:
        return oskit.descendants(pid)

    def cpu_percent(self) -> float | None:
        """A remote load host's tool CPU; here the cell's sampler measures the load generator itself."""
        return None

    def run_bounded(
        self,
        cmd: list[str],
        out_dir: Path,
        tool: str,
        limit_s: float,
        env: dict | None = None,
        start_at: float | None = None,
    ) -> Finished:
        """cmd to completion within limit_s seconds here (loadgen.process.run_here)."""
        return run_here(cmd, out_dir, tool, limit_s, env, start_at)

    def sampler(
        self, pid: int, out_csv: Path, interval_s: float, phase: str = "idle", pool_source=None, loadgen_pid_fn=None
    ) -> ProcessTreeSampler:
        """pid's process tree sampled into out_csv (not started: a with-block runs it); with `loadgen_pid_fn`, the
        load generator's too (it runs here, the runner's child)."""
        return ProcessTreeSampler(
            pid,
            loadgen_pid_fn=loadgen_pid_fn,
            interval_s=interval_s,
            out_csv=out_csv,
            pool_source=pool_source,
            phase=phase,
        )

    def jvm_probe(self, pid: int, **kwargs):
        return JvmProbe(pid, **kwargs)

    def socket_census(self, port: int, out_csv: Path):
        return SocketCensus(port, out_csv)

    def database(
        self,
        run_dir: Path,
        clients: tuple[str, ...],
        max_connections: int,
        existing_url: str | None,
        cpus: tuple[int, ...],
    ) -> RunDatabase:
        """The run's database: --db-url's server, else a cluster of its own in the run directory (on `cpus`)."""
        return RunDatabase(run_dir, existing_url=existing_url, cpus=cpus, max_connections=max_connections)

    def pgbouncer(self, db_url: str, work_dir: Path, pool_size: int, max_clients: int, cpus: tuple[int, ...]):
        return PgBouncer(db_url, work_dir, pool_size=pool_size, max_clients=max_clients, cpus=cpus)


HERE = LocalHost()

"""A host of its own (--hosts), with the surface of this machine (hosts/local.py): a free port, a server, a bounded
command, a sampler, the JVM probe, the socket census and PgBouncer beside its process, over its SSH master.

A server runs there in a scratch directory holding a copy of the cell's directory as it is at the start (Tomcat's
rendered CATALINA_BASE), its console streamed back into the local log; answers are checked from here, its process
tree is sampled beside it (remote_sampler.py) and what it wrote there (Tomcat's logs, a JFR recording)
comes back when it stops.

Every command runs under the tether (it dies with its SSH session: a Ctrl-C here, a lost connection), in a scratch
directory there that stands for the cell's directory here. A bounded command's paths into the cell's directory and
into this checkout are rewritten to the scratch directory and the host's checkout; stdout and stderr stream back
into the cell's raw files; the files the tool wrote (wrk.json, oha.sqlite...) are copied back when it ends, and the
scratch directory is removed. The tether reports the tool's own CPU time, from which the host's CPU percent over
the run is taken."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from crossbench.database.stack import DB_CONNECTION_MARGIN

from .. import oskit, paths
from ..loadgen.base import Finished, LoadgenError, raw_path
from ..sampling.jvm_probe import PROBE_JVM_OPTS, PROBE_SRC, JvmProbe, JvmProbeError, ShiftedLines
from ..sampling.socket_census import SocketCensus, parsed
from ..servers.lifecycle import RunningServer, ServerFailed, ServerSpec
from .remote_database import RemoteDatabase, remote_pgbouncer
from .remote_sampler import TetheredSampler
from .scratch import COPY_LIMIT_S, Scratch
from .ssh import SshError, SshHost, stop_tethered

FREE_PORT = "import socket,sys; s=socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])"
PID_FILE = ".server.pid"
PID_WAIT_S = 10.0


class RemoteHost:
    """One role's host: its SSH master (opened by the run), its clock offset (seconds to add to this machine's
    clock to read the host's), the address the other roles reach it at, and the CPU figures of its last run."""

    # its JVM probe attaches at once (no wait for a starting JVM to catch SIGQUIT there): made once the server answers
    probes_starting_servers = False

    def __init__(self, ssh: SshHost, clock_offset_s: float = 0.0, address: str | None = None):
        self.ssh = ssh
        self.clock_offset_s = clock_offset_s
        self.address = address or ssh.host.address
        self.last_cpu_s: float | None = None
        self.last_wall_s: float | None = None
        self.last_start_s: float | None = None  # when the tool started, this machine's clock
        self.last_argv: list[str] | None = None  # the command as the host ran it (its paths)

    @property
    def label(self) -> str:
        return self.ssh.host.label

    @property
    def on(self) -> str:
        return f" on {self.label}"

    def free_port(self) -> int:
        done = self.ssh.run(["python3", "-c", FREE_PORT, self.address], timeout_s=15)
        if done.returncode != 0:
            raise SshError(f"{self.label}: no free port on {self.address}: {done.stderr.strip()}")
        return int(done.stdout.strip())

    def server(self, spec: ServerSpec, cell_dir: Path) -> RunningServer:
        """A server to run on this host (a with-block starts it)."""
        return RunningServer(spec, self, cell_dir)

    def start_server(self, spec: ServerSpec, cell_dir: Path) -> TetheredServer:
        return TetheredServer(self, spec, cell_dir).start()

    def pin(self, pid: int, cpus: tuple[int, ...]) -> None:
        """Every thread of pid's tree there onto `cpus` (oskit.pin_tree, run by the host's checkout)."""
        argv = self.ssh.host.module_argv("crossbench.oskit", "pin", str(pid), ",".join(map(str, cpus)))
        done = self.ssh.run(argv, timeout_s=15)
        if done.returncode != 0:
            raise SshError(f"{self.label}: cannot pin process {pid} to cores {cpus}: {done.stderr.strip()}")

    def stop_server(self, process: TetheredServer, grace_s: float, first_signal: int = signal.SIGTERM) -> int | None:
        """Through the tether, which was given the server's stop signal and grace when it started it."""
        return process.stop(grace_s)

    def tree(self, pid: int) -> list:
        return []  # on another host: its sampler says what the tree holds

    def sampler(
        self, pid: int, out_csv: Path, interval_s: float, phase: str = "idle", pool_source=None, loadgen_pid_fn=None
    ) -> TetheredSampler:
        """pid's process tree sampled beside it on this host, streamed back (no load generator of the cell's runs
        there to sample)."""
        return TetheredSampler(self, pid, out_csv, interval_s, phase, pool_source)

    def jvm_probe(self, pid: int, **kwargs) -> JvmProbe:
        return JvmProbe(pid, launcher=self.launch_jvm_probe, **kwargs)

    def launch_jvm_probe(self, probe: JvmProbe) -> subprocess.Popen:
        """The probe beside a JVM here, under the tether: the java that runs the target (read there), the host's
        copy of JvmProbe.java; its lines come back with their times moved onto this machine's clock."""
        done = self.ssh.run(["readlink", f"/proc/{probe.pid}/exe"], timeout_s=15)
        if done.returncode != 0 or not done.stdout.strip().endswith("/java"):
            raise JvmProbeError(
                f"process {probe.pid} on {self.label} is not a java launcher: {(done.stdout + done.stderr).strip()}"
            )
        source = self.ssh.host.project_dir / PROBE_SRC.relative_to(paths.REPO)
        interval_ms = max(1, int(round(probe.interval_s * 1000)))
        # the tether gives its command /dev/null for stdin: the probe must not stop at its end; closing our
        # pipe (stop) ends the session, and the tether stops the probe
        proc = self.ssh.start_tethered(
            [done.stdout.strip(), *PROBE_JVM_OPTS, str(source), str(probe.pid), str(interval_ms), "--ignore-stdin"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        proc.stdout = ShiftedLines(io.TextIOWrapper(proc.stdout, encoding="utf-8"), self.clock_offset_s)
        proc.stderr = io.TextIOWrapper(proc.stderr, encoding="utf-8", errors="replace")
        return proc

    def socket_census(self, port: int, out_csv: Path) -> SocketCensus:
        return SocketCensus(port, out_csv, source=self.census_rows)

    def census_rows(self, sampling: SocketCensus):
        """The census taken beside the server here (`python -m crossbench.sampling.socket_census`, under the
        tether), its rows streamed back with their times on this machine's clock, until the census stops."""
        argv = self.ssh.host.module_argv(
            "crossbench.sampling.socket_census",
            "--port",
            str(sampling.port),
            "--interval-s",
            f"{sampling.interval_s:g}",
        )
        proc = self.ssh.start_tethered(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        threading.Thread(target=lambda: (sampling.stopping.wait(), stop_tethered(proc)), daemon=True).start()
        for line in proc.stdout:
            row = parsed(line.decode(errors="replace"), self.clock_offset_s)
            if row:
                yield row

    def database(
        self,
        run_dir: Path,
        clients: tuple[str, ...],
        max_connections: int,
        existing_url: str | None,
        cpus: tuple[int, ...],
    ) -> RemoteDatabase:
        """The run's database on this host, letting in `clients` (the db role's host wins over --db-url)."""
        return RemoteDatabase(self, clients, max_connections + DB_CONNECTION_MARGIN)

    def pgbouncer(self, db_url: str, work_dir: Path, pool_size: int, max_clients: int, cpus: tuple[int, ...]):
        """PgBouncer beside the server on this host's loopback (its config stays there, not in work_dir)."""
        return remote_pgbouncer(self, db_url, pool_size, max_clients)

    def cpu_percent(self) -> float | None:
        """The tool's CPU over its last run (100 = one core), from the tether's report."""
        if self.last_cpu_s is None or not self.last_wall_s:
            return None
        return 100 * self.last_cpu_s / self.last_wall_s

    def run_bounded(
        self,
        cmd: list[str],
        out_dir: Path,
        tool: str,
        limit_s: float,
        env: dict | None = None,
        start_at: float | None = None,
    ) -> Finished:
        """As LocalHost.run_bounded, on the host; `start_at` (this machine's epoch) starts the tool then."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        scratch = Scratch(self.ssh, out_dir, "load")
        try:
            scratch.create()
            self.upload_inputs(cmd, out_dir, scratch.remote)
            finished = self._run(cmd, out_dir, tool, limit_s, env or {}, scratch, start_at)
            scratch.copy_back()
        except SshError as e:
            scratch.remove()
            raise LoadgenError(str(e)) from e
        except BaseException:
            scratch.remove()
            raise
        self.read_report(out_dir / ".tether.json", raw_path(out_dir, tool, "tether.json"))
        return finished

    def _run(self, cmd, out_dir, tool, limit_s, env, scratch: Scratch, start_at) -> Finished:
        argv = ["env", *scratch.translated([f"{k}={v}" for k, v in env.items()]), *scratch.translated(cmd)]
        self.last_argv = argv
        remote_start = start_at + self.clock_offset_s if start_at else None
        stdout, stderr = raw_path(out_dir, tool, "stdout"), raw_path(out_dir, tool, "stderr")
        started = time.monotonic()
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            proc = self.ssh.start_tethered(
                argv, start_at=remote_start, report=f"{scratch.remote}/.tether.json", stdout=out, stderr=err
            )
            try:
                returncode = proc.wait(timeout=limit_s + (max(0.0, start_at - time.time()) if start_at else 0))
            except subprocess.TimeoutExpired:
                stop_tethered(proc)
                raise LoadgenError(
                    f"{tool} still running after its {limit_s:.0f} s bound; "
                    f"stopped through its tether (raw output in {out_dir})"
                ) from None
            except BaseException:
                stop_tethered(proc)
                raise
        if returncode == 255 and not self.ssh.master_answers():
            raise LoadgenError(f"{tool}: the SSH connection was lost during the run")
        return Finished(returncode, stdout, stderr, time.monotonic() - started)

    def upload_inputs(self, cmd: list[str], out_dir: Path, remote_dir: str) -> None:
        """Files of the cell's directory the command names (oha's list of URLs), copied to the scratch directory."""
        for word in cmd:
            local = Path(word.split("=", 1)[-1])
            if local.parent == out_dir and local.is_file():
                done = self.ssh.run(
                    ["sh", "-c", 'cat > "$1"', "sh", f"{remote_dir}/{local.name}"],
                    timeout_s=COPY_LIMIT_S,
                    input=local.read_text(),
                )
                if done.returncode != 0:
                    raise LoadgenError(f"cannot copy {local.name} there: {done.stderr.strip()}")

    def read_report(self, copied: Path, keep_as: Path) -> None:
        self.last_cpu_s = self.last_wall_s = self.last_start_s = None
        if not copied.exists():
            return
        os.replace(copied, keep_as)
        try:
            report = json.loads(keep_as.read_text())
            self.last_cpu_s, self.last_wall_s = float(report["cpu_s"]), float(report["wall_s"])
            self.last_start_s = float(report["started_epoch"]) - self.clock_offset_s
        except (ValueError, KeyError, TypeError):
            pass


class TetheredServer:
    """A server's process on its host under the tether, its console streamed into the local log: `pid` is the
    host's, `poll()` and `returncode` those of the local ssh client (alive while the server is)."""

    def __init__(self, host: RemoteHost, spec: ServerSpec, cell_dir: Path):
        self.host, self.spec = host, spec
        self.scratch = Scratch(host.ssh, cell_dir, "server")
        self.client: subprocess.Popen | None = None
        self.pid: int | None = None
        self.log = None

    def start(self) -> TetheredServer:
        try:
            self.scratch.create(upload=True)
            env = [f"{k}={v}" for k, v in self.spec.env.items()]
            cores = () if self.spec.pinned_once_ready else self.spec.cpus  # () there: its session's, every core
            argv = [
                "env",
                *self.scratch.translated(env),
                *oskit.taskset_prefix(cores),
                *self.scratch.translated(self.spec.argv),
            ]
            self.spec.log_path.parent.mkdir(parents=True, exist_ok=True)
            self.log = open(self.spec.log_path, "ab")
            self.client = self.host.ssh.start_tethered(
                argv,
                grace_s=self.spec.stop_grace_s,
                pid_file=f"{self.scratch.remote}/{PID_FILE}",
                cwd=self.scratch.translated([str(self.spec.workdir)])[0] if self.spec.workdir else None,
                stop_signal=self.spec.stop_signal,
                stdout=self.log,
                stderr=subprocess.STDOUT,
            )
            self.pid = self.wait_for_pid()
        except BaseException:
            self.stop()
            raise
        return self

    def wait_for_pid(self) -> int:
        deadline = time.monotonic() + PID_WAIT_S
        while time.monotonic() < deadline and self.client.poll() is None:
            done = self.scratch.call(["cat", f"{self.scratch.remote}/{PID_FILE}"], check=False)
            if done.returncode == 0 and done.stdout.strip():
                return int(done.stdout)
            time.sleep(0.1)
        tail = self.spec.log_path.read_text(errors="replace").splitlines()[-25:] if self.spec.log_path.exists() else []
        raise ServerFailed(f"{self.spec.name} on {self.host.label} did not start:\n" + "\n".join(tail))

    def poll(self) -> int | None:
        return self.client.poll()

    @property
    def returncode(self) -> int | None:
        return self.client.returncode

    def stop(self, grace_s: float = 15.0) -> int | None:
        """Through the tether (its stop signal, grace, SIGKILL there), then what it wrote comes back into the cell."""
        if self.client is None:
            return None
        returncode = stop_tethered(self.client, grace_s)
        if self.log:
            self.log.close()
        try:
            self.scratch.copy_back(keep_newer=True)
        except SshError as e:
            self.spec.log_path.with_suffix(".copy-back.error").write_text(str(e))
        return returncode

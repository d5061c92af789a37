"""The run's database on a host of its own (--hosts, role db): `db.sh start` run there under the tether (initdb
into that host's cache, the tables loaded once, postgres in the foreground), listening on the host's address and
letting in only the run's own hosts; its URL read from what it prints. Started on first need and again if it
died, as the local one; its process tree is sampled beside it."""
from __future__ import annotations

import subprocess
import time
import uuid

from ..hosts.ssh import stop_tethered
from ..sampling.stream import TetheredSampler
from .cluster import DatabaseError

START_LIMIT_S = 600.0         # a first start makes the cluster and loads a million rows
PID_FILE = "/tmp/crossbench-db-{token}.pid"


class RemoteDatabase:
    """RunDatabase's interface for a database on its host (`host`: ssh, clock_offset_s, address)."""

    def __init__(self, host, allowed: tuple[str, ...], max_connections: int):
        self.host, self.allowed, self.max_connections = host, allowed, max_connections
        self.process: subprocess.Popen | None = None
        self.remote_pid: int | None = None
        self.started_url: str | None = None
        self.starts = 0

    def check_existing(self) -> None:
        """Nothing to check before the run: the tables are loaded on the host when it starts."""

    def url(self) -> str:
        if not self.alive():
            self.stop()
            self.start()
        return self.started_url

    def start(self) -> None:
        ssh = self.host.ssh
        pid_file = PID_FILE.format(token=uuid.uuid4().hex[:12])
        argv = [str(ssh.host.python), "-m", "crossbench.database", "start", "--listen", self.host.address,
                "--max-connections", str(self.max_connections), *(f"--allow={a}" for a in self.allowed)]
        self.process = ssh.start_tethered(["env", f"PYTHONPATH={ssh.host.project_dir / 'runner'}", *argv],
                                          pid_file=pid_file, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.started_url = self.read_url()
        self.remote_pid = int(ssh.run(["cat", pid_file], timeout_s=15).stdout)
        self.starts += 1

    def read_url(self) -> str:
        """The first line db.sh start prints is its URL (after the tables are there)."""
        deadline = time.monotonic() + START_LIMIT_S
        while time.monotonic() < deadline:
            line = self.process.stdout.readline().decode(errors="replace")
            if line.startswith("postgresql://"):
                return line.split()[0]
            if not line and self.process.poll() is not None:
                break
        said = self.process.stderr.read().decode(errors="replace") if self.process.poll() is not None else ""
        self.stop()
        raise DatabaseError(f"the database on {self.host.ssh.host.label} did not start: {said.strip()[-1500:]}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        return self.remote_pid if self.alive() else None

    def sampler(self, out_csv, interval_s: float):
        return TetheredSampler(self.host, self.remote_pid, out_csv, interval_s, "warmup") if self.alive() else None

    def stop(self) -> None:
        if self.process is not None:
            stop_tethered(self.process, grace_s=15)
            self.process = None

"""The run's database, or a cell's PgBouncer, on a host of its own over SSH (RemoteHost): `db.sh start` or
`db.sh pgbouncer` run there under the tether, their URL read from what they print, their process tree sampled
beside them.

The database (role db) listens on its host's address and lets in only the run's hosts; it is started on first
need and again if it died, as the local one. PgBouncer runs on the server's own host, on that host's loopback,
for the cells of a server there (it is the server's neighbour, as PgBouncer usually is)."""

from __future__ import annotations

import subprocess
import time
import uuid

from ..database import DatabaseError
from .ssh import stop_tethered

START_LIMIT_S = 600.0  # a first start makes the cluster and loads a million rows
STOP_GRACE_S = 15.0


class RemoteCommand:
    """`python -m crossbench.database ...` on a host (`host`: ssh, clock_offset_s, address), in the foreground."""

    def __init__(self, host, argv: list[str], what: str):
        self.host, self.argv, self.what = host, argv, what
        self.process: subprocess.Popen | None = None
        self.remote_pid: int | None = None
        self.url: str | None = None

    def start(self) -> RemoteCommand:
        ssh = self.host.ssh
        pid_file = f"/tmp/crossbench-{uuid.uuid4().hex[:12]}.pid"
        self.process = ssh.start_tethered(
            ssh.host.module_argv("crossbench.database", *self.argv),
            pid_file=pid_file,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.url = self.read_url()
        self.remote_pid = int(ssh.run(["sh", "-c", 'cat "$1" && rm -f "$1"', "sh", pid_file], timeout_s=15).stdout)
        return self

    def read_url(self) -> str:
        """The first line it prints is its URL (once it answers)."""
        deadline = time.monotonic() + START_LIMIT_S
        while time.monotonic() < deadline:
            line = self.process.stdout.readline().decode(errors="replace")
            if line.startswith("postgresql://"):
                return line.split()[0]
            if not line and self.process.poll() is not None:
                break
        said = self.process.stderr.read().decode(errors="replace") if self.process.poll() is not None else ""
        self.stop()
        raise DatabaseError(f"{self.what} on {self.host.ssh.host.label} did not start: {said.strip()[-1500:]}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        """Its process id on its host (its tree holds postgres or pgbouncer)."""
        return self.remote_pid if self.alive() else None

    def sampler(self, out_csv, interval_s: float):
        return self.host.sampler(self.remote_pid, out_csv, interval_s, "warmup") if self.alive() else None

    def stop(self) -> None:
        if self.process is not None:
            stop_tethered(self.process, grace_s=STOP_GRACE_S)
            self.process = None

    def __enter__(self) -> RemoteCommand:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class RemoteDatabase:
    """RunDatabase's interface for the database on its own host."""

    def __init__(self, host, allowed: tuple[str, ...], max_connections: int):
        self.host, self.allowed, self.max_connections = host, allowed, max_connections
        self.command: RemoteCommand | None = None
        self.starts = 0

    def check_existing(self) -> None:
        """Nothing to check before the run: the tables are loaded on the host when it starts."""

    def url(self) -> str:
        if not self.alive():
            self.stop()
            argv = [
                "start",
                "--listen",
                self.host.address,
                "--max-connections",
                str(self.max_connections),
                *(f"--allow={address}" for address in self.allowed),
            ]
            self.command = RemoteCommand(self.host, argv, "the database").start()
            self.starts += 1
        return self.command.url

    def alive(self) -> bool:
        return self.command is not None and self.command.alive()

    @property
    def pid(self) -> int | None:
        return self.command.pid if self.command else None

    def sampler(self, out_csv, interval_s: float):
        return self.command.sampler(out_csv, interval_s) if self.command else None

    def stop(self) -> None:
        if self.command is not None:
            self.command.stop()
            self.command = None


def remote_pgbouncer(host, db_url: str, pool_size: int, max_clients: int) -> RemoteCommand:
    """PgBouncer on the server's host (started by the with-block): its URL is on that host's loopback."""
    return RemoteCommand(
        host, ["pgbouncer", db_url, "--pool-size", str(pool_size), "--max-clients", str(max_clients)], "PgBouncer"
    )

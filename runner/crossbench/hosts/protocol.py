"""The Host protocol: the surface LocalHost (local.py) and RemoteHost (remote.py) share and the roles call. Not the
hosts file's Host (hostsfile.py), which names a machine; this is a machine a process runs on. A leaf module: it
imports nothing from crossbench (the package's types are named in the docstrings, typed Any)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Host(Protocol):
    """Where a role's processes run: a free port, a server, a bounded command, samplers and probes beside a
    process, the database and PgBouncer, the clock offset and the address the other roles reach it at."""

    address: str  # the address the other roles reach it at
    clock_offset_s: float  # its clock minus this machine's, in seconds
    last_start_s: float | None  # when its last bounded command started (this machine's clock); None here
    last_argv: list[str] | None  # that command as the host ran it (its paths); None here
    probes_starting_servers: bool  # a server's probe may be made as it starts (else once it answers)

    @property
    def label(self) -> str:
        """How messages and records name it ("here", or the hosts file's user@address)."""

    @property
    def on(self) -> str:
        """Where a process runs, for messages: "" here, " on <label>" elsewhere."""

    def free_port(self) -> int:
        """A port free on `address`."""

    def server(self, spec: Any, cell_dir: Path) -> Any:
        """A RunningServer (servers/lifecycle.py) for `spec` on this host; a with-block starts it."""

    def start_server(self, spec: Any, cell_dir: Path) -> Any:
        """The started server's process (a Popen here, a TetheredServer there)."""

    def pin(self, pid: int, cpus: tuple[int, ...]) -> None:
        """Every thread of the process `pid` and its descendants onto `cpus` (a server pinned once it answers)."""

    def stop_server(self, process: Any, grace_s: float, first_signal: int = 15) -> int | None:
        """Stops what start_server returned: its first signal (15, SIGTERM, unless the server declares another), the
        grace, SIGKILL; its exit status."""

    def tree(self, pid: int) -> list:
        """pid's process and its descendants (psutil.Process); [] where its sampler reads the tree itself."""

    def cpu_percent(self) -> float | None:
        """Its last bounded command's CPU (100 = one core); None where the cell's sampler measures it."""

    def run_bounded(
        self,
        cmd: list[str],
        out_dir: Path,
        tool: str,
        limit_s: float,
        env: dict | None = None,
        start_at: float | None = None,
    ) -> Any:
        """cmd run to its end within limit_s, its stdout and stderr in out_dir: a Finished (loadgen/base.py)."""

    def sampler(
        self,
        pid: int,
        out_csv: Path,
        interval_s: float,
        phase: str = "idle",
        pool_source: Any = None,
        loadgen_pid_fn: Any = None,
    ) -> Any:
        """pid's process tree sampled into out_csv (not started: a with-block runs it)."""

    def jvm_probe(self, pid: int, **kwargs: Any) -> Any:
        """A JvmProbe (sampling/jvm_probe.py) beside the JVM `pid` on this host."""

    def socket_census(self, port: int, out_csv: Path) -> Any:
        """A SocketCensus (sampling/socket_census.py) of `port`'s sockets on this host."""

    def database(
        self,
        run_dir: Path,
        clients: tuple[str, ...],
        max_connections: int,
        existing_url: str | None,
        cpus: tuple[int, ...],
    ) -> Any:
        """The run's database on this host, letting in `clients`."""

    def pgbouncer(self, db_url: str, work_dir: Path, pool_size: int, max_clients: int, cpus: tuple[int, ...]) -> Any:
        """PgBouncer beside the server on this host, in front of `db_url`."""

"""The running server of `--target` as a cell sees a server (RunningServer's surface: its URL, a with-block, a
sampler, alive, stop): entering it checks that something listens at its URL, leaving it stops nothing. Its
sampler reads the process tree of --target-pid when given, else only what this machine shows beside a server
(the cores, the load generator, connections accepted), with the server's own figures empty."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlsplit

from ..sampling.process_tree import ProcessTreeSampler
from .lifecycle import ServerFailed, ServerSpec

ALIVE_TIMEOUT_S = 5.0  # one connection after the window that says it still listens


class ExternalServer:
    """A server the suite did not start; `pid` its process on the server's host when the user named it."""

    def __init__(self, spec: ServerSpec, host, url: str, pid: int | None = None):
        self.spec = spec
        self.host = host
        self.url = url
        self.pid = pid
        self.on_spawn = None  # a cell's probe hook: nothing spawns here, and no probe attaches to it

    def listens(self) -> bool:
        parts = urlsplit(self.url)
        try:
            with socket.create_connection((parts.hostname, self.spec.port), timeout=ALIVE_TIMEOUT_S):
                return True
        except OSError:
            return False

    def __enter__(self) -> ExternalServer:
        if not self.listens():
            raise ServerFailed(f"nothing is listening at {self.url} (connection refused or no answer)")
        return self

    def __exit__(self, *exc) -> None:
        """Nothing to stop: the server is the user's, and stays as it was."""

    def start(self) -> ExternalServer:
        return self

    def stop(self, grace_s: float | None = None) -> None:
        """The suite stops nothing it did not start."""
        return None

    def alive(self) -> bool:
        """Its process still there (when named), and something still listening at its URL."""
        if self.pid is not None and not Path(f"/proc/{self.pid}").is_dir():
            return False
        return self.listens()

    def exit_note(self) -> str:
        return f"at {self.url} stopped answering"

    def log_tail(self, lines: int = 25) -> str:
        return "(its log is the user's: the suite did not start it)"

    def sampler(self, out_csv: Path, interval_s: float, phase: str = "idle", pool_source=None, loadgen_pid_fn=None):
        """Its process tree's sampler when its pid is known; else one of this machine with no server figures."""
        if self.pid is not None:
            return self.host.sampler(self.pid, out_csv, interval_s, phase, pool_source, loadgen_pid_fn)
        return ProcessTreeSampler(
            None, loadgen_pid_fn=loadgen_pid_fn, interval_s=interval_s, out_csv=out_csv, pool_source=None, phase=phase
        )

    def tree(self) -> list:
        return self.host.tree(self.pid) if self.pid is not None else []

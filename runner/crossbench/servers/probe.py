"""The Probe protocol: what a server's probe offers (ServerPlugin.probe returns one, or None) and what the cell and
its sampler call. A leaf module: it imports nothing from crossbench."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Probe(Protocol):
    """Looks inside a server while its cell runs: Tomcat's JVM probe (servers/tomcat_probe.py), the Python
    servers' pool files (sampling/db_pool.py). Made as the server starts (on a host whose probes can attach to a
    starting server; else once it answers), stopped before its figures are read."""

    def latest(self) -> Any:
        """The last pool reading the sampler puts in its pool columns (sampling: PoolReading), None without one."""

    def server_ready(self) -> None:
        """The server answers now (called once, on a probe made as it started)."""

    def wait_attached(self, timeout_s: float) -> None:
        """Until the probe has read the server once, or timeout_s: returns at once for one with nothing to attach."""

    def waiting_now(self) -> int | None:
        """Requests waiting for a pooled database connection now; None when it cannot tell."""

    def stop(self) -> None:
        """Stops it, its raw output kept in the cell's directory."""

    def figures(self, t0: float, t1: float) -> dict:
        """The record's figures for the window [t0, t1] (this machine's clock)."""

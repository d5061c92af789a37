"""The one interface every load generator adapter implements.

An adapter turns a LoadSpec (what to send, how hard, for how long) into a command line,
runs it bounded in time, keeps the tool's raw output, and parses it into a LoadResult.
Adapters are registered by name in crossbench.loadgen.ADAPTERS.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ERROR_KINDS = ("connect", "read", "write", "timeout", "non_2xx", "other")


class LoadgenError(RuntimeError):
    """The tool could not run, or its output cannot be trusted (never reported as a result)."""


@dataclass(frozen=True)
class LoadSpec:
    urls: tuple[str, ...]          # one URL, or several picked at random per request (static mix)
    concurrency: int               # closed loop: connections each with one request outstanding
    duration_s: float              # measured window
    timeout_s: float               # per-request timeout: above the slowest answer the cell can expect
    keepalive: bool = True         # False: one connection per fetch (Connection: close, as http_load)
    pipeline: int = 1              # requests in flight per connection (seed 001)
    threads: int = 1               # load generator threads (wrk -t); never above concurrency
    cpus: tuple[int, ...] = ()     # cores the tool is pinned to (taskset); empty = not pinned
    rate: float | None = None      # open loop: requests offered per second, sent on schedule whatever the
                                   # server does (concurrency is then the most requests in flight: oha -c,
                                   # k6 maxVUs); None = closed loop. Only oha and k6 read it
    host: object = None            # the host it runs on (crossbench.hosts); None = this machine
    start_at: float | None = None  # with a host: this machine's epoch at which the tool starts (several hosts)


@dataclass(frozen=True)
class LoadResult:
    tool: str
    tool_version: str
    requests: int                  # completed responses, any status
    duration_s: float              # the window as the tool measured it
    bytes: int
    errors: dict[str, int]         # every kind in ERROR_KINDS, 0 when none
    latency_ms: dict[str, float | None]   # mean, p50, p90, p99, max (open loop: also p999); None where unknown
    latency_source: str            # where the latency figures come from, in words
    raw_files: tuple[str, ...] = ()       # the tool's own output, kept beside the record
    extra: dict = field(default_factory=dict)
    # Open loop: answers per second inside the window (openloop.completion_rate). The generator waits for late
    # answers after the window, so requests / window would credit a server that fell behind with them.
    window_rate: float | None = None

    @property
    def rps(self) -> float:
        if self.window_rate is not None:
            return self.window_rate
        return self.requests / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


@dataclass(frozen=True)
class Finished:
    """A bounded run of a tool that ended (on whichever host ran it): its status, raw files and time taken."""
    returncode: int
    stdout: Path
    stderr: Path
    elapsed_s: float


def empty_errors() -> dict[str, int]:
    return {kind: 0 for kind in ERROR_KINDS}


def raw_path(out_dir: Path, tool: str, suffix: str) -> Path:
    return out_dir / f"{tool}.{suffix}"

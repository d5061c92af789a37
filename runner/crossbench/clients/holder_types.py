"""The holder's vocabulary: what it is asked (HoldConfig, checked by validate), its failure kinds and how an
exception is classified, its timeline's columns, its counters and its result."""

from __future__ import annotations

import asyncio
import errno
from dataclasses import asdict, dataclass, field

FAILURE_KINDS = (
    "connect_refused",
    "connect_timeout",
    "reset",
    "read_timeout",
    "non_2xx",
    "closed_by_server",
    "no_local_port",
    "too_many_open_files",
    "other",
)
TIMELINE_COLUMNS = (
    "t_epoch",
    "phase",
    "connections_open",
    "connections_held",
    "connect_attempts",
    "requests_sent",
    "requests_answered",
    "failures",
    *FAILURE_KINDS,
    "client_cpu_s",
    "client_rss_mb",
)
FD_MARGIN = 256
SLOT_STEP_S = 0.010  # the seed: 10 connections every 10 ms


class Non2xx(Exception):
    def __init__(self, status: int):
        super().__init__(f"HTTP {status}")
        self.status = status


class HolderRefused(RuntimeError):
    """The holder cannot run as asked (e.g. not enough open files); said before any connection."""


@dataclass(frozen=True)
class HoldConfig:
    host: str = "127.0.0.1"
    port: int = 8080
    path: str = "/hello"
    connections: int = 10_000
    rate_per_10ms: int = 10
    head_interval_s: float = 10.0
    hold_s: float = 30.0
    timeout_s: float = 5.0  # connect, and each HEAD's answer
    retry_s: float = 1.0  # a failed slot reconnects after this; 0 = it gives up
    sample_s: float = 0.25
    seed: int = 0

    @property
    def ramp_s(self) -> float:
        return -(-self.connections // self.rate_per_10ms) * SLOT_STEP_S

    def bound_s(self) -> float:
        """The longest a healthy run can take: ramp, hold, one timeout, and closing."""
        return self.ramp_s + self.hold_s + 2 * self.timeout_s + 10


def classify(phase: str, exc: BaseException) -> str:
    """A failure's kind, from where it happened ("connect" or "request") and the exception."""
    if isinstance(exc, Non2xx):
        return "non_2xx"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "connect_timeout" if phase == "connect" else "read_timeout"
    if isinstance(exc, ConnectionRefusedError):
        return "connect_refused"
    if isinstance(exc, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)):
        return "reset"
    if isinstance(exc, asyncio.IncompleteReadError) or isinstance(exc, EOFError):
        return "closed_by_server"
    if isinstance(exc, OSError):
        if exc.errno == errno.EADDRNOTAVAIL:
            return "no_local_port"
        if exc.errno in (errno.EMFILE, errno.ENFILE):
            return "too_many_open_files"
        if exc.errno == errno.ECONNREFUSED:
            return "connect_refused"
        if exc.errno in (errno.ECONNRESET, errno.EPIPE):
            return "reset"
        if exc.errno == errno.ETIMEDOUT:
            return "connect_timeout" if phase == "connect" else "read_timeout"
    return "other"


def status_of(head: bytes) -> int:
    """The status code of a response head (b"HTTP/1.1 200 OK\\r\\n...")."""
    parts = head.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise ValueError(f"not an HTTP response: {head[:40]!r}")
    return int(parts[1])


def validate(config: HoldConfig) -> None:
    for name in ("connections", "rate_per_10ms"):
        if getattr(config, name) < 1:
            raise HolderRefused(f"{name} must be at least 1")
    for name in ("head_interval_s", "timeout_s", "sample_s"):
        if getattr(config, name) <= 0:
            raise HolderRefused(f"{name} must be positive")
    if config.hold_s < 0 or config.retry_s < 0:
        raise HolderRefused("hold_s and retry_s must not be negative")


@dataclass
class Counters:
    connections_open: int = 0  # TCP connected, not closed yet
    connections_held: int = 0  # open and answered at least one HEAD
    connect_attempts: int = 0
    requests_sent: int = 0
    requests_answered: int = 0
    failures: dict = field(default_factory=lambda: dict.fromkeys(FAILURE_KINDS, 0))


@dataclass
class HoldResult:
    config: dict
    event_loop: str
    started_epoch: float = 0.0
    ramp_end_epoch: float = 0.0  # every slot has started connecting
    hold_end_epoch: float = 0.0
    closed_epoch: float = 0.0
    interrupted: bool = False
    connections_held_peak: int = 0
    connections_open_peak: int = 0
    connections_held_at_end: int = 0
    connections_open_at_end: int = 0
    all_held_after_s: float | None = None  # from the start until every connection was held (None: never)
    connect_attempts: int = 0
    requests_sent: int = 0
    requests_answered: int = 0
    failures: dict = field(default_factory=dict)
    first_failure: dict = field(default_factory=dict)  # kind -> the first exception's text
    latency_ms: dict = field(default_factory=dict)
    client_cpu_s: float = 0.0
    client_rss_mb_start: float = 0.0
    client_rss_mb_peak: float = 0.0

    @property
    def failure_total(self) -> int:
        return sum(self.failures.values())

    def to_dict(self) -> dict:
        return {**asdict(self), "failure_total": self.failure_total}

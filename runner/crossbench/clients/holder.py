"""Seed 003's client: hold N keep-alive connections to one server and keep each one alive with HEADs.

Opens `rate_per_10ms` connections every 10 ms up to N, sends a HEAD on each as soon as it is connected
(the first answer is what makes a connection "held": the server really serves it), then one HEAD every
`head_interval_s`, each connection at its own random phase so they do not all fire at once. After the
ramp it holds for `hold_s` seconds, then closes everything (also on Ctrl-C / SIGTERM). Every failure is
counted by kind; a slot whose connection failed tries again after `retry_s` (0: it gives up), as a real
client would. Every `sample_s` one row of the timeline goes to a CSV.

asyncio with uvloop when it is installed (the record says which loop ran).

    python -m crossbench.clients.holder --port 8080 --connections 10000 --hold 30 --csv holder.csv --json holder.json
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import errno
import importlib.util
import json
import random
import signal
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

from crossbench import oskit
from crossbench.stats import latency_summary

FAILURE_KINDS = ("connect_refused", "connect_timeout", "reset", "read_timeout", "non_2xx", "closed_by_server",
                 "no_local_port", "too_many_open_files", "other")
TIMELINE_COLUMNS = ("t_epoch", "phase", "connections_open", "connections_held", "connect_attempts",
                    "requests_sent", "requests_answered", "failures", *FAILURE_KINDS,
                    "client_cpu_s", "client_rss_mb")
FD_MARGIN = 256
SLOT_STEP_S = 0.010            # the seed: 10 connections every 10 ms
CLOSE_RETRY_S = 0.5
MB = 1024 * 1024


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
    timeout_s: float = 5.0         # connect, and each HEAD's answer
    retry_s: float = 1.0           # a failed slot reconnects after this; 0 = it gives up
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


def percentiles(values: list[float]) -> dict[str, float | None]:
    return latency_summary(values)


def event_loop_name() -> str:
    return "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"


def ensure_open_files(connections: int) -> int:
    """Raises this process's soft limit to what N sockets need; refuses clearly when the hard limit is short."""
    try:
        return oskit.raise_open_files(connections)
    except oskit.LimitTooLow as e:
        raise HolderRefused(f"client: {e}") from None


@dataclass
class Counters:
    connections_open: int = 0      # TCP connected, not closed yet
    connections_held: int = 0      # open and answered at least one HEAD
    connect_attempts: int = 0
    requests_sent: int = 0
    requests_answered: int = 0
    failures: dict = field(default_factory=lambda: dict.fromkeys(FAILURE_KINDS, 0))


@dataclass
class HoldResult:
    config: dict
    event_loop: str
    started_epoch: float = 0.0
    ramp_end_epoch: float = 0.0    # every slot has started connecting
    hold_end_epoch: float = 0.0
    closed_epoch: float = 0.0
    interrupted: bool = False
    connections_held_peak: int = 0
    connections_open_peak: int = 0
    connections_held_at_end: int = 0
    connections_open_at_end: int = 0
    all_held_after_s: float | None = None   # from the start until every connection was held (None: never)
    connect_attempts: int = 0
    requests_sent: int = 0
    requests_answered: int = 0
    failures: dict = field(default_factory=dict)
    first_failure: dict = field(default_factory=dict)   # kind -> the first exception's text
    latency_ms: dict = field(default_factory=dict)
    client_cpu_s: float = 0.0
    client_rss_mb_start: float = 0.0
    client_rss_mb_peak: float = 0.0

    @property
    def failure_total(self) -> int:
        return sum(self.failures.values())

    def to_dict(self) -> dict:
        return {**asdict(self), "failure_total": self.failure_total}


class Holder:
    def __init__(self, config: HoldConfig, csv_path: Path | None = None):
        self.config = config
        self.csv_path = csv_path
        self.counters = Counters()
        self.result = HoldResult(config=asdict(config), event_loop=event_loop_name())
        self.request = (f"HEAD {config.path} HTTP/1.1\r\nHost: {config.host}:{config.port}\r\n\r\n").encode()
        self.rng = random.Random(config.seed)
        self.latencies: list[float] = []
        self.writers: set[asyncio.StreamWriter] = set()
        self.phase = "ramp"
        self.closing = False
        self.process = psutil.Process()
        self.cpu0 = 0.0

    def fail(self, phase: str, exc: BaseException) -> None:
        kind = classify(phase, exc)
        self.counters.failures[kind] += 1
        self.result.first_failure.setdefault(kind, f"{type(exc).__name__}: {exc}")

    async def slot(self) -> None:
        c = self.config
        while not self.closing:
            self.counters.connect_attempts += 1
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(c.host, c.port), c.timeout_s)
            except (OSError, asyncio.TimeoutError) as e:
                self.fail("connect", e)
            else:
                await self.keep_alive(reader, writer)
            if c.retry_s <= 0 or self.closing:
                return
            await asyncio.sleep(c.retry_s)

    async def keep_alive(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """HEAD now, then every head_interval_s at a random phase, until a failure or cancellation."""
        c, counters = self.config, self.counters
        counters.connections_open += 1
        self.writers.add(writer)
        held = False
        try:
            delay = 0.0
            while not self.closing:
                await asyncio.sleep(delay)
                started = time.perf_counter()
                writer.write(self.request)
                counters.requests_sent += 1
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), c.timeout_s)
                status = status_of(head)
                if not 200 <= status < 300:
                    raise Non2xx(status)
                self.latencies.append((time.perf_counter() - started) * 1000)
                counters.requests_answered += 1
                if not held:
                    held = True
                    counters.connections_held += 1
                    delay = self.rng.uniform(0, c.head_interval_s)
                else:
                    delay = c.head_interval_s
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, Non2xx, ValueError) as e:
            self.fail("request", e)
        finally:
            counters.connections_open -= 1
            if held:
                counters.connections_held -= 1
            self.writers.discard(writer)
            writer.close()

    async def ramp(self, slots: set[asyncio.Task]) -> None:
        """rate_per_10ms new slots every 10 ms, on an absolute schedule (no drift when the loop is late)."""
        c = self.config
        loop = asyncio.get_running_loop()
        start = loop.time()
        for i in range(c.connections):
            if i and i % c.rate_per_10ms == 0:
                await asyncio.sleep(max(0.0, start + (i // c.rate_per_10ms) * SLOT_STEP_S - loop.time()))
            slots.add(asyncio.create_task(self.slot()))

    def row(self) -> list:
        counters = self.counters
        cpu = sum(self.process.cpu_times()[:2]) - self.cpu0
        rss = self.process.memory_info().rss / MB
        self.result.client_rss_mb_peak = max(self.result.client_rss_mb_peak, rss)
        self.result.connections_held_peak = max(self.result.connections_held_peak, counters.connections_held)
        self.result.connections_open_peak = max(self.result.connections_open_peak, counters.connections_open)
        if (self.result.all_held_after_s is None and counters.connections_held == self.config.connections):
            self.result.all_held_after_s = time.time() - self.result.started_epoch
        failures = counters.failures
        return [f"{time.time():.3f}", self.phase, counters.connections_open, counters.connections_held,
                counters.connect_attempts, counters.requests_sent, counters.requests_answered,
                sum(failures.values()), *(failures[k] for k in FAILURE_KINDS), f"{cpu:.3f}", f"{rss:.1f}"]

    async def sample(self, writer) -> None:
        while True:
            writer.writerow(self.row())
            await asyncio.sleep(self.config.sample_s)

    async def run(self) -> HoldResult:
        ensure_open_files(self.config.connections)
        result = self.result
        self.cpu0 = sum(self.process.cpu_times()[:2])
        result.client_rss_mb_start = self.process.memory_info().rss / MB
        result.started_epoch = time.time()
        slots: set[asyncio.Task] = set()
        out = open(self.csv_path, "w", newline="", buffering=1) if self.csv_path else open("/dev/null", "w")
        with out:
            table = csv.writer(out)
            table.writerow(TIMELINE_COLUMNS)
            sampler = asyncio.create_task(self.sample(table))
            try:
                await self.ramp(slots)
                result.ramp_end_epoch = time.time()
                self.phase = "hold"
                await asyncio.sleep(self.config.hold_s)
                result.hold_end_epoch = time.time()
            except asyncio.CancelledError:
                result.interrupted = True
                result.hold_end_epoch = time.time()
                result.ramp_end_epoch = result.ramp_end_epoch or result.hold_end_epoch
            finally:
                self.phase = "close"
                table.writerow(self.row())
                self.snapshot_end()
                await self.close(slots)
                sampler.cancel()
                table.writerow(self.row())
        result.closed_epoch = time.time()
        return result

    def snapshot_end(self) -> None:
        r, counters = self.result, self.counters
        r.connections_held_at_end = counters.connections_held
        r.connections_open_at_end = counters.connections_open
        r.connect_attempts, r.requests_sent = counters.connect_attempts, counters.requests_sent
        r.requests_answered = counters.requests_answered
        r.failures = dict(counters.failures)
        r.latency_ms = percentiles(self.latencies)
        r.client_cpu_s = sum(self.process.cpu_times()[:2]) - self.cpu0

    async def close(self, slots: set[asyncio.Task]) -> None:
        """Cancels every slot (each closes its own connection in `finally`). A cancellation can be lost
        (wait_for returns the answer that arrived with it, Python < 3.12), so the loops also check
        `closing`, and stragglers are cancelled again and their sockets closed under them."""
        self.closing = True
        pending = set(slots)
        while pending:
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=CLOSE_RETRY_S)
            for writer in list(self.writers):
                writer.close()


def hold(config: HoldConfig, csv_path: Path | None = None) -> HoldResult:
    """Runs the holder to the end (or Ctrl-C) on a fresh event loop; every connection is closed on return."""
    holder = Holder(config, csv_path)
    try:
        import uvloop
        runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
    except ImportError:
        runner = asyncio.Runner()
    with runner:
        try:
            return runner.run(holder.run())
        except KeyboardInterrupt:
            # The main task has already closed everything in its `finally`; the result says how far it got.
            holder.result.interrupted = True
            return holder.result


def parse_args(argv):
    d = HoldConfig()
    p = argparse.ArgumentParser(prog="python -m crossbench.clients.holder", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default=d.host)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--path", default=d.path)
    p.add_argument("--connections", type=int, default=d.connections)
    p.add_argument("--rate-per-10ms", type=int, default=d.rate_per_10ms)
    p.add_argument("--head-interval", type=float, default=d.head_interval_s, help="seconds between HEADs")
    p.add_argument("--hold", type=float, default=d.hold_s, help="seconds to hold after the ramp")
    p.add_argument("--timeout", type=float, default=d.timeout_s)
    p.add_argument("--retry", type=float, default=d.retry_s, help="seconds before a failed slot retries; 0: never")
    p.add_argument("--sample", type=float, default=d.sample_s)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--csv", type=Path, help="the timeline")
    p.add_argument("--json", type=Path, help="the result")
    args = p.parse_args(argv)
    config = HoldConfig(args.host, args.port, args.path, args.connections, args.rate_per_10ms, args.head_interval,
                        args.hold, args.timeout, args.retry, args.sample, args.seed)
    validate(config)
    return config, args


def validate(config: HoldConfig) -> None:
    for name in ("connections", "rate_per_10ms"):
        if getattr(config, name) < 1:
            raise HolderRefused(f"{name} must be at least 1")
    for name in ("head_interval_s", "timeout_s", "sample_s"):
        if getattr(config, name) <= 0:
            raise HolderRefused(f"{name} must be positive")
    if config.hold_s < 0 or config.retry_s < 0:
        raise HolderRefused("hold_s and retry_s must not be negative")


def main(argv=None) -> int:
    # SIGTERM (the runner stopping us) closes everything like Ctrl-C does: asyncio.Runner cancels the main task.
    signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    try:
        config, args = parse_args(argv)
        result = hold(config, args.csv)
    except HolderRefused as e:
        print(f"holder: {e}", file=sys.stderr)
        return 2
    if args.json:
        args.json.write_text(json.dumps(result.to_dict(), indent=1))
    print(f"holder ({result.event_loop}): held peak {result.connections_held_peak} of {config.connections}, "
          f"at end {result.connections_held_at_end}; {result.requests_answered} HEADs answered; failures "
          f"{ {k: v for k, v in result.failures.items() if v} or 0}")
    return 130 if result.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())

"""The holder's client: N keep-alive connections opened at the seed's rate and each kept alive with HEADs, its
timeline sampled, everything closed at the end (the behaviour is in holder.py's docstring)."""

from __future__ import annotations

import asyncio
import csv
import importlib.util
import random
import time
from dataclasses import asdict
from pathlib import Path

from crossbench import oskit
from crossbench.stats import latency_summary

from .holder_types import (
    FAILURE_KINDS,
    SLOT_STEP_S,
    TIMELINE_COLUMNS,
    Counters,
    HoldConfig,
    HolderRefused,
    HoldResult,
    Non2xx,
    classify,
    status_of,
)

CLOSE_RETRY_S = 0.5
MB = 1024 * 1024


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
        import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

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
            except (TimeoutError, OSError) as e:
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
        except (TimeoutError, OSError, asyncio.IncompleteReadError, Non2xx, ValueError) as e:
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
        if self.result.all_held_after_s is None and counters.connections_held == self.config.connections:
            self.result.all_held_after_s = time.time() - self.result.started_epoch
        failures = counters.failures
        return [
            f"{time.time():.3f}",
            self.phase,
            counters.connections_open,
            counters.connections_held,
            counters.connect_attempts,
            counters.requests_sent,
            counters.requests_answered,
            sum(failures.values()),
            *(failures[k] for k in FAILURE_KINDS),
            f"{cpu:.3f}",
            f"{rss:.1f}",
        ]

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

"""The head-of-line probe (seed 000's handler C): sequential GETs of an instant endpoint, one new connection
each, one every `interval` (or right after the previous answer when that came later), each latency kept.

Why a new connection per probe: each probe is then a new client arriving, as in the seed's A-then-C browser
experiment, and its latency includes being accepted, which on an event loop is itself a loop callback that
waits behind a blocking handler (a kept-alive connection would hide that part). Probes never overlap, so the
probe adds at most one connection to the background load.
"""

from __future__ import annotations

import csv
import http.client
import math
import threading
import time
from dataclasses import astuple, dataclass, fields
from pathlib import Path

from ..stats import latency_summary

LATENCY_SOURCE = (
    "crossbench's probe: sequential GETs, one new connection each (Connection: close), from connect() to "
    "the last body byte (time.perf_counter in the runner, on the load generator's core); percentiles by "
    "nearest rank over the probes. Sequential: a probe that waits N seconds holds back the next one, so a "
    "long stall yields one slow sample, not N / interval of them (probes_planned says how many were due)."
)


# A tick this share of an interval before the window's end is at its end: 0.01 added 1,200 times is 11.99999...,
# which is not a 1,201st probe of a 12 s window (seed000 read "1,201 of 1,200 probes")
TICK_SLACK = 1e-6


@dataclass(frozen=True)
class ProbeSample:
    sent_s: float  # seconds since the probe started
    latency_ms: float
    status: int  # 0 when no answer
    nbytes: int
    error: str  # "" when answered; else connect / read / timeout / other


def latency_stats(latencies_ms: list[float]) -> dict[str, float | None]:
    """mean, p50, p90, p99, max of the answered probes (None each when there are none)."""
    return latency_summary(latencies_ms)


def probe_once(host: str, port: int, path: str, timeout_s: float, started: float) -> ProbeSample:
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection(host, port, timeout=timeout_s)
    stage = "connect"
    try:
        conn.connect()
        stage = "read"
        conn.request("GET", path, headers={"Connection": "close"})
        response = conn.getresponse()
        body = response.read()
        return ProbeSample(t0 - started, (time.perf_counter() - t0) * 1000, response.status, len(body), "")
    except TimeoutError:
        return ProbeSample(t0 - started, (time.perf_counter() - t0) * 1000, 0, 0, "timeout")
    except (OSError, http.client.HTTPException) as e:
        kind = stage if isinstance(e, OSError) else "other"
        return ProbeSample(t0 - started, (time.perf_counter() - t0) * 1000, 0, 0, kind)
    finally:
        conn.close()


class Probe:
    """Runs in its own thread: waits `lead_s`, then probes for `window_s`; the last probe may end later."""

    def __init__(
        self, host: str, port: int, path: str, *, interval_s: float, lead_s: float, window_s: float, timeout_s: float
    ):
        self.host, self.port, self.path = host, port, path
        self.interval_s, self.lead_s, self.window_s, self.timeout_s = interval_s, lead_s, window_s, timeout_s
        self.samples: list[ProbeSample] = []
        self.t0 = self.t1 = 0.0  # epochs of the first send and the last answer
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hol-probe", daemon=True)

    @property
    def planned(self) -> int:
        """The ticks due inside the window, 0, i, 2i, ... before its end (the send loop's own rule, TICK_SLACK)."""
        return math.ceil(self.window_s / self.interval_s - TICK_SLACK)

    def start(self) -> Probe:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def join(self) -> None:
        self._thread.join(timeout=self.lead_s + self.window_s + self.timeout_s + 5)

    def _run(self) -> None:
        if self._stop.wait(self.lead_s):
            return
        started = time.perf_counter()
        self.t0 = time.time()
        due = 0.0
        while not self._stop.is_set() and due < self.window_s - TICK_SLACK * self.interval_s:
            wait = due - (time.perf_counter() - started)
            if wait > 0 and self._stop.wait(wait):
                break
            sample = probe_once(self.host, self.port, self.path, self.timeout_s, started)
            self.samples.append(sample)
            # the next probe is due one interval after this one was; at once if that is past
            due = max(due + self.interval_s, sample.sent_s + sample.latency_ms / 1000)
        self.t1 = time.time()

    def write_csv(self, path: Path) -> None:
        with open(path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow([f.name for f in fields(ProbeSample)])
            for sample in self.samples:
                writer.writerow(astuple(sample))

"""The load a user asks maxThreads advice for: an arrival rate, the time a request holds a thread, optionally a p99
target, each checked. run_all.sh checks its --advise-* options with it before a run starts, and the analysis sizes a
pool for it (crossbench_analysis.judge.workload, crossbench_analysis.advice)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


class WorkloadRefused(ValueError):
    """A workload that makes no sense; the message is the one-line reason."""


@dataclass(frozen=True)
class Workload:
    rate: float  # arrivals per second
    hold_ms: float  # how long one request holds a thread
    p99_ms: float | None = None  # the latency 99 % of requests must stay under

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def busy(self) -> float:
        """Little's law: threads busy at once on average (rate x holding time)."""
        return self.rate * self.hold_ms / 1000


def checked(rate, hold_ms, p99_ms=None, *, names=("--rate", "--hold-ms", "--p99-ms")) -> Workload:
    """The workload, or WorkloadRefused with the reason. `names` are the options as the user typed them."""
    rate_name, hold_name, p99_name = names
    for name, value in ((rate_name, rate), (hold_name, hold_ms), (p99_name, p99_ms)):
        if value is not None and not math.isfinite(value):
            raise WorkloadRefused(f"{name} must be a finite number, not {value}")
    if rate is None or hold_ms is None:
        missing = rate_name if rate is None else hold_name
        raise WorkloadRefused(f"advice needs both {rate_name} and {hold_name}; {missing} is missing")
    if rate <= 0:
        raise WorkloadRefused(f"{rate_name} {rate:g}: an arrival rate must be above 0 requests per second")
    if hold_ms <= 0:
        raise WorkloadRefused(
            f"{hold_name} {hold_ms:g}: a request holds its thread for some time; it must be above 0 ms"
        )
    if p99_ms is not None and p99_ms < hold_ms:
        raise WorkloadRefused(
            f"{p99_name} {p99_ms:g} is below {hold_name} {hold_ms:g}: no request can be "
            f"answered faster than it holds its thread"
        )
    return Workload(float(rate), float(hold_ms), None if p99_ms is None else float(p99_ms))

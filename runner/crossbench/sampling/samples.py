"""A sampler's record: the Sample, its CSV row (written and read back) and the summary of a window.

Empty CSV cells are None figures (the first sample has no CPU value; no pool source, no pool).
"""

from __future__ import annotations

import csv
import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sample:
    t_epoch: float  # wall time (time.time()) the sample was taken
    phase: str  # label set by the caller (warmup, measure, cooldown...)
    procs: int | None  # processes in the server tree (0 once it is gone; None: a process the suite cannot see)
    threads: int | None  # sum of num_threads over the tree
    rss_mb: float | None  # sum of RSS over the tree, MiB (shared pages counted per process)
    cpu_percent: float | None  # tree CPU since the previous sample, 100 = one core
    cpu_cores: tuple[float | None, ...]  # system-wide busy percent per logical core
    loadgen_cpu_percent: float | None  # load generator tree CPU, None when none runs
    pool_current: int | None  # connector pool threads (from the pool source)
    pool_busy: int | None  # connector pool busy threads
    passive_opens: int | None = None  # TCP connections the machine had accepted since boot (/proc/net/snmp)


class PhasedSampler:
    """What every process-tree sampler shares, here (process_tree.py) or read back from a host
    (hosts/remote_sampler.py): the phase its samples are labelled with, the samples so far, and a with-block that
    starts and stops it (start and stop are its own)."""

    def __init__(self, phase: str = "idle"):
        self._phase = phase
        self._samples: list[Sample] = []
        self._lock = threading.Lock()

    def set_phase(self, phase: str) -> None:
        if not phase or not isinstance(phase, str):
            raise ValueError("phase must be a non-empty string")
        with self._lock:
            self._phase = phase

    @property
    def phase(self) -> str:
        with self._lock:
            return self._phase

    def samples(self) -> list[Sample]:
        with self._lock:
            return list(self._samples)

    def wait_past(self, t_epoch: float, limit_s: float, poll_s: float = 0.01) -> bool:
        """Waits, at most limit_s, for a sample taken after t_epoch: every sample up to it is then here too (samples
        arrive in the order they were taken, a host of its own's included). Returns whether one came."""
        deadline = time.monotonic() + limit_s
        while True:
            with self._lock:
                if self._samples and self._samples[-1].t_epoch > t_epoch:
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll_s)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def csv_header(n_cores: int) -> list[str]:
    return (
        ["t_epoch", "phase", "procs", "threads", "rss_mb", "cpu_percent"]
        + [f"cpu_core{i}" for i in range(n_cores)]
        + ["loadgen_cpu_percent", "pool_current", "pool_busy", "tcp_passive_opens"]
    )


def _fmt(value, digits: int = 1) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def sample_to_row(s: Sample) -> list[str]:
    return (
        [_fmt(s.t_epoch, 3), s.phase, _fmt(s.procs), _fmt(s.threads), _fmt(s.rss_mb), _fmt(s.cpu_percent)]
        + [_fmt(c) for c in s.cpu_cores]
        + [_fmt(s.loadgen_cpu_percent), _fmt(s.pool_current), _fmt(s.pool_busy), _fmt(s.passive_opens)]
    )


def _opt_float(text: str) -> float | None:
    return float(text) if text != "" else None


def _opt_int(text: str) -> int | None:
    return int(text) if text != "" else None


def read_samples_csv(path: Path) -> list[Sample]:
    """Read a sampler CSV back into Sample objects (empty cells become None)."""
    with open(path, newline="") as f:
        return read_samples(f, str(path))


def read_samples(lines, source: str = "samples") -> list[Sample]:
    """Sample objects from a sampler CSV's lines (a file, or a header and rows that came over a stream)."""
    samples: list[Sample] = []
    reader = csv.reader(lines)
    header = next(reader, None)
    if header is None:
        return samples
    core_cols = [i for i, name in enumerate(header) if name.startswith("cpu_core")]
    idx = {name: i for i, name in enumerate(header)}
    for row in reader:
        if not row:
            continue
        if len(row) != len(header):  # a row cut by a crash mid-write
            log.warning("%s: skipping malformed row %r", source, row)
            continue
        samples.append(
            Sample(
                t_epoch=float(row[idx["t_epoch"]]),
                phase=row[idx["phase"]],
                procs=_opt_int(row[idx["procs"]]),
                threads=_opt_int(row[idx["threads"]]),
                rss_mb=_opt_float(row[idx["rss_mb"]]),
                cpu_percent=_opt_float(row[idx["cpu_percent"]]),
                cpu_cores=tuple(_opt_float(row[i]) for i in core_cols),
                loadgen_cpu_percent=_opt_float(row[idx["loadgen_cpu_percent"]]),
                pool_current=_opt_int(row[idx["pool_current"]]),
                pool_busy=_opt_int(row[idx["pool_busy"]]),
                passive_opens=_opt_int(row[idx["tcp_passive_opens"]]) if "tcp_passive_opens" in idx else None,
            )
        )
    return samples


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def _peak(values: Iterable[float | int | None]):
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


def summarize(samples: Iterable[Sample], t0: float, t1: float) -> dict:
    """Summarize the samples taken within [t0, t1] (epochs, both ends included).

    A sample's CPU figures cover the interval that ends at its t_epoch, so the first
    sample inside the window also covers up to one interval before t0.
    Means ignore empty values; a figure with no value at all is None.
    """
    win = [s for s in samples if t0 <= s.t_epoch <= t1]
    n_cores = max((len(s.cpu_cores) for s in win), default=0)
    return {
        "samples": len(win),
        "procs_peak": _peak(s.procs for s in win),
        "threads_peak": _peak(s.threads for s in win),
        "threads_mean": _mean(s.threads for s in win),
        "rss_peak_mb": _peak(s.rss_mb for s in win),
        "cpu_percent": _mean(s.cpu_percent for s in win),
        "cpu_per_core": {
            str(i): _mean(s.cpu_cores[i] if i < len(s.cpu_cores) else None for s in win) for i in range(n_cores)
        },
        "loadgen_cpu_percent": _mean(s.loadgen_cpu_percent for s in win),
        "pool_current_peak": _peak(s.pool_current for s in win),
        "pool_busy_peak": _peak(s.pool_busy for s in win),
        "tcp_opens_in_window": opens_inside(win),
    }


def opens_inside(win: list[Sample]) -> int | None:
    """Connections the machine accepted between the window's first and last sample (its edges, up to a sample
    interval each, left out: a lower bound); None without two samples that read the counter."""
    counts = [s.passive_opens for s in win if s.passive_opens is not None]
    return counts[-1] - counts[0] if len(counts) >= 2 else None

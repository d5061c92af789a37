"""Sample a server's whole process tree (and the load generator's) over time.

ProcessTreeSampler runs a background thread that, every interval, re-discovers the
process tree rooted at the server pid (Tornado forks workers, so the tree changes) and
records one Sample: processes, threads, RSS, tree CPU, per-core system CPU, load
generator CPU and, when a pool source is plugged in, the server's connector pool.
Each sample is appended to a CSV file and flushed at once, so a crash keeps them.

CPU figures are deltas between two consecutive samples:
  * tree CPU: sum over processes of (user+system) cpu_times delta / wall delta * 100
    (100 = one full core). A process contributes only when it was also seen in the
    previous sample (same pid and create_time): a new process counts from its second
    sample on, and the CPU a process burns in the interval it exits in is lost.
  * per-core: psutil.cpu_times(percpu=True) deltas, computed like psutil.cpu_percent
    (busy = total - idle - iowait) but without touching psutil's shared state.
The first sample of the tree (and of every new load generator pid) has no CPU value.
"""
from __future__ import annotations

import csv
import logging
import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Protocol

import psutil

log = logging.getLogger(__name__)

MB = 1024 * 1024
_SKIP = (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied)


@dataclass(frozen=True)
class Sample:
    t_epoch: float                      # wall time (time.time()) the sample was taken
    phase: str                          # label set by the caller (warmup, measure, cooldown...)
    procs: int                          # processes in the server tree (0 once it is gone)
    threads: int                        # sum of num_threads over the tree
    rss_mb: float                       # sum of RSS over the tree, MiB (shared pages counted per process)
    cpu_percent: float | None           # tree CPU since the previous sample, 100 = one core
    cpu_cores: tuple[float | None, ...]  # system-wide busy percent per logical core
    loadgen_cpu_percent: float | None   # load generator tree CPU, None when none runs
    pool_current: int | None            # connector pool threads (from the pool source)
    pool_busy: int | None               # connector pool busy threads


class PoolReading(Protocol):
    t_epoch: float
    current: int | None
    busy: int | None


class PoolSource(Protocol):
    def latest(self) -> PoolReading | None: ...


def csv_header(n_cores: int) -> list[str]:
    return (["t_epoch", "phase", "procs", "threads", "rss_mb", "cpu_percent"]
            + [f"cpu_core{i}" for i in range(n_cores)]
            + ["loadgen_cpu_percent", "pool_current", "pool_busy"])


def _fmt(value, digits: int = 1) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def sample_to_row(s: Sample) -> list[str]:
    return ([_fmt(s.t_epoch, 3), s.phase, str(s.procs), str(s.threads), _fmt(s.rss_mb),
             _fmt(s.cpu_percent)]
            + [_fmt(c) for c in s.cpu_cores]
            + [_fmt(s.loadgen_cpu_percent), _fmt(s.pool_current), _fmt(s.pool_busy)])


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
        if len(row) != len(header):      # a row cut by a crash mid-write
            log.warning("%s: skipping malformed row %r", source, row)
            continue
        samples.append(Sample(
            t_epoch=float(row[idx["t_epoch"]]),
            phase=row[idx["phase"]],
            procs=int(row[idx["procs"]]),
            threads=int(row[idx["threads"]]),
            rss_mb=float(row[idx["rss_mb"]]),
            cpu_percent=_opt_float(row[idx["cpu_percent"]]),
            cpu_cores=tuple(_opt_float(row[i]) for i in core_cols),
            loadgen_cpu_percent=_opt_float(row[idx["loadgen_cpu_percent"]]),
            pool_current=_opt_int(row[idx["pool_current"]]),
            pool_busy=_opt_int(row[idx["pool_busy"]]),
        ))
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
        "cpu_per_core": {str(i): _mean(s.cpu_cores[i] if i < len(s.cpu_cores) else None
                                       for s in win)
                         for i in range(n_cores)},
        "loadgen_cpu_percent": _mean(s.loadgen_cpu_percent for s in win),
        "pool_current_peak": _peak(s.pool_current for s in win),
        "pool_busy_peak": _peak(s.pool_busy for s in win),
    }


def _read_stat(pid: int) -> tuple[int, int, bytes] | None:
    """(ppid, starttime in clock ticks, state) from /proc/<pid>/stat; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid ... starttime(22) ..."; comm may hold spaces and ')'
    fields = data[data.rfind(b")") + 2:].split(b" ", 20)
    try:
        return int(fields[1]), int(fields[19]), fields[0]
    except (IndexError, ValueError):
        return None


def scan_proc() -> dict[int, tuple[int, int, bytes]]:
    """pid -> (ppid, starttime, state) for every process: a full /proc/*/stat scan."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _read_stat(int(name))
            if st is not None:
                out[int(name)] = st
    return out


class _ProcTable:
    """pid -> (ppid, starttime, state) for every process, refreshed cheaply.

    A full /proc/*/stat scan costs ~1.5 ms per 100 processes at 4 Hz (cold caches), so each
    refresh lists /proc (one getdents) and reads stat only for pids it has not seen before
    and for the pids it is told to watch (the members of the sampled trees: that catches
    their zombies, reparenting and pid reuse). Another process's ppid only changes when it
    is reparented, which cannot make it a descendant of the trees we sample, except under a
    child subreaper. Not caught: an unwatched pid reused by a new process between two
    refreshes (a pid wrap-around within one interval).
    """

    def __init__(self):
        self.table: dict[int, tuple[int, int, bytes]] = {}

    def refresh(self, watch: Iterable[int] = ()) -> dict[int, tuple[int, int, bytes]]:
        old = self.table
        new: dict[int, tuple[int, int, bytes]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            st = old.get(pid)
            if st is None:
                st = _read_stat(pid)
                if st is None:
                    continue
            new[pid] = st
        for pid in watch:
            if pid in new:
                st = _read_stat(pid)
                if st is None:
                    del new[pid]
                else:
                    new[pid] = st
        self.table = new
        return new


class _TreeReader:
    """Reads one process tree; keeps the previous cpu_times per (pid, starttime).

    The tree is re-discovered at every read from the shared _ProcTable; the per-process
    figures come from psutil (one oneshot() per process). Zombies are not counted. A pid
    is identified with its start time, so a reused pid is a new process and the root's pid
    being reused by another process ends the tree.
    """

    def __init__(self, root_pid: int):
        self.root_pid = root_pid
        self._root_start: int | None = None
        self._procs: dict[tuple[int, int], psutil.Process] = {}
        self._prev_cpu: dict[tuple[int, int], float] = {}
        self._prev_mono: float | None = None

    @property
    def pids(self) -> list[int]:
        """Members seen at the last read (to be watched by the next table refresh)."""
        return [pid for pid, _ in self._procs] or [self.root_pid]

    def _tree(self, table: dict[int, tuple[int, int, bytes]]
              ) -> list[tuple[tuple[int, int], psutil.Process]]:
        root = table.get(self.root_pid)
        if root is None:
            self._procs = {}
            return []
        if self._root_start is None:
            self._root_start = root[1]
        elif root[1] != self._root_start:   # the root pid now belongs to another process
            self._procs = {}
            return []
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        pids, stack = [], [self.root_pid]
        while stack:
            pid = stack.pop()
            pids.append(pid)
            stack.extend(children.get(pid, ()))
        procs = {}
        for pid in pids:
            _, start, state = table[pid]
            if state == b"Z":
                continue
            key = (pid, start)
            proc = self._procs.get(key)
            if proc is None:
                try:
                    proc = psutil.Process(pid)
                except _SKIP:
                    continue
            procs[key] = proc
        self._procs = procs
        return list(procs.items())

    def read(self, table: dict[int, tuple[int, int, bytes]] | None = None
             ) -> tuple[int, int, int, float | None]:
        """Returns (procs, threads, rss_bytes, cpu_percent or None)."""
        if table is None:
            table = scan_proc()
        now = time.monotonic()
        n_procs = threads = rss = 0
        cpu_sum = 0.0
        cpu: dict[tuple[int, int], float] = {}
        for key, p in self._tree(table):
            try:
                with p.oneshot():
                    ct = p.cpu_times()
                    n_threads = p.num_threads()
                    p_rss = p.memory_info().rss
            except _SKIP:
                continue                     # vanished between listing and reading
            n_procs += 1
            threads += n_threads
            rss += p_rss
            used = ct.user + ct.system
            cpu[key] = used
            prev = self._prev_cpu.get(key)
            if prev is not None:
                cpu_sum += max(0.0, used - prev)
        percent = None
        if self._prev_mono is not None and now > self._prev_mono:
            percent = cpu_sum / (now - self._prev_mono) * 100.0
        self._prev_cpu = cpu
        self._prev_mono = now
        return n_procs, threads, rss, percent


class _CoreReader:
    """Per-core busy percent from psutil.cpu_times(percpu=True) deltas."""

    def __init__(self):
        self._prev = self._read()

    @staticmethod
    def _read() -> list[tuple[float, float]]:
        out = []
        for t in psutil.cpu_times(percpu=True):
            total = sum(t)
            # on Linux guest time is already counted in user/nice (as psutil does)
            total -= getattr(t, "guest", 0.0) + getattr(t, "guest_nice", 0.0)
            idle = t.idle + getattr(t, "iowait", 0.0)
            out.append((total, total - idle))
        return out

    @property
    def n_cores(self) -> int:
        return len(self._prev)

    def read(self) -> tuple[float | None, ...]:
        cur = self._read()
        result = []
        for (tot0, busy0), (tot1, busy1) in zip(self._prev, cur):
            d_tot = tot1 - tot0
            if d_tot <= 0:
                result.append(None)
            else:
                result.append(min(100.0, max(0.0, (busy1 - busy0) / d_tot * 100.0)))
        self._prev = cur
        return tuple(result)


class ProcessTreeSampler:
    """Background sampler of a server process tree; see the module docstring.

    Usage:
        with ProcessTreeSampler(pid, out_csv=path, loadgen_pid_fn=lambda: wrk_pid) as s:
            s.set_phase("warmup"); ...; s.set_phase("measure"); ...
        summary = summarize(s.samples(), t0, t1)
    """

    def __init__(self, server_pid: int, loadgen_pid_fn: Callable[[], int | None] | None = None,
                 interval_s: float = 0.25, out_csv: Path | None = None,
                 pool_source: PoolSource | None = None, phase: str = "idle",
                 pool_max_age_s: float = 3.0):
        if out_csv is None:
            raise ValueError("out_csv is required")
        if interval_s <= 0:
            raise ValueError("interval_s must be > 0")
        self.server_pid = server_pid
        self.loadgen_pid_fn = loadgen_pid_fn
        self.interval_s = interval_s
        self.out_csv = Path(out_csv)
        self.pool_max_age_s = pool_max_age_s
        self._pool_source = pool_source
        self._phase = phase
        self._lock = threading.Lock()
        self._samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._table = _ProcTable()
        self._tree = _TreeReader(server_pid)
        self._cores = _CoreReader()
        self._loadgen: _TreeReader | None = None
        self.n_cores = self._cores.n_cores
        self.errors = 0                  # samples that failed (logged; the thread goes on)
        self.last_error: str | None = None
        self.self_cpu_s = 0.0            # CPU seconds used by the sampler thread itself
        self.sample_time_s = 0.0         # wall seconds spent taking samples

    # -- control ---------------------------------------------------------------------
    def set_phase(self, phase: str) -> None:
        if not phase or not isinstance(phase, str):
            raise ValueError("phase must be a non-empty string")
        with self._lock:
            self._phase = phase

    @property
    def phase(self) -> str:
        with self._lock:
            return self._phase

    def set_pool_source(self, source: PoolSource | None) -> None:
        with self._lock:
            self._pool_source = source

    def samples(self) -> list[Sample]:
        with self._lock:
            return list(self._samples)

    def start(self) -> "ProcessTreeSampler":
        if self._thread is not None:
            raise RuntimeError("sampler already started")
        self.out_csv.parent.mkdir(parents=True, exist_ok=True)
        new_file = not self.out_csv.exists() or self.out_csv.stat().st_size == 0
        self._file = open(self.out_csv, "a", newline="")
        self._writer = csv.writer(self._file)
        if new_file:
            self._writer.writerow(csv_header(self.n_cores))
            self._file.flush()
        self._thread = threading.Thread(target=self._run, name="crossbench-sampler",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._file.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> "ProcessTreeSampler":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- sampling --------------------------------------------------------------------
    def _loadgen_reader(self) -> _TreeReader | None:
        if self.loadgen_pid_fn is None:
            return None
        try:
            pid = self.loadgen_pid_fn()
        except Exception as e:  # the caller's function must not kill the sampler
            log.warning("loadgen_pid_fn failed: %s", e)
            pid = None
        if pid is None:
            self._loadgen = None
        elif self._loadgen is None or self._loadgen.root_pid != pid:
            self._loadgen = _TreeReader(pid)
        return self._loadgen

    def _pool(self) -> tuple[int | None, int | None]:
        with self._lock:
            source = self._pool_source
        if source is None:
            return None, None
        try:
            reading = source.latest()
        except Exception as e:
            log.warning("pool source failed: %s", e)
            return None, None
        if reading is None or time.time() - reading.t_epoch > self.pool_max_age_s:
            return None, None
        return reading.current, reading.busy

    def sample_once(self) -> Sample:
        """Take one sample now (also used by the thread); appends it and writes it."""
        lg = self._loadgen_reader()
        watch = self._tree.pids + (lg.pids if lg is not None else [])
        table = self._table.refresh(watch)
        procs, threads, rss, cpu = self._tree.read(table)
        cores = self._cores.read()
        loadgen = None
        if lg is not None:
            lg_procs, _, _, lg_cpu = lg.read(table)
            loadgen = lg_cpu if lg_procs else None
        pool_current, pool_busy = self._pool()
        s = Sample(t_epoch=time.time(), phase=self.phase, procs=procs, threads=threads,
                   rss_mb=rss / MB, cpu_percent=cpu, cpu_cores=cores,
                   loadgen_cpu_percent=loadgen, pool_current=pool_current,
                   pool_busy=pool_busy)
        with self._lock:
            self._samples.append(s)
        if self._thread is not None:
            self._writer.writerow(sample_to_row(s))
            self._file.flush()
        return s

    def _run(self) -> None:
        cpu0 = time.thread_time()
        next_t = time.monotonic()
        try:
            while not self._stop.is_set():
                t_start = time.monotonic()
                try:
                    self.sample_once()
                except Exception as e:
                    self.errors += 1
                    self.last_error = f"{type(e).__name__}: {e}"
                    log.exception("sampler: sample failed")
                self.sample_time_s += time.monotonic() - t_start
                self.self_cpu_s = time.thread_time() - cpu0
                next_t += self.interval_s
                now = time.monotonic()
                if next_t < now:             # overran: skip the missed ticks, keep the cadence
                    next_t += math.ceil((now - next_t) / self.interval_s) * self.interval_s
                self._stop.wait(next_t - now)
        finally:
            self.self_cpu_s = time.thread_time() - cpu0

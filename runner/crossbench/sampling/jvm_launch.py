"""The JVM probe's process: the target's java, the probe program (from source, or compiled once into the cache),
the checks before attaching, and the launch on this machine."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .. import paths
from ..jdk import installed_jdks, read_jdk

PROBE_SRC = Path(__file__).resolve().parents[2] / "probes" / "JvmProbe.java"
ATTACHABLE_LIMIT_S = 10.0  # how long a probe launched beside a starting JVM waits for it to catch SIGQUIT
LAUNCHERS = frozenset({"setpriv", "taskset"})  # what a server's command line starts with (oskit), exec'ing java
PROBE_JVM_OPTS = ("-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:+UseSerialGC", "-Xmx32m")


class JvmProbeError(RuntimeError):
    """The probe cannot attach to the target JVM or died before reporting."""


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
    """What follows the JVM options on the probe's command line: the class compiled once into the cache (by any
    installed JDK's javac, for release 17 so every JDK here runs it). Run from source, the launcher compiles it on
    every start: about 2 s before its first line against 0.3 s compiled (on one core), and a Tomcat cell's
    window waits for that first line. From source only when no javac is here but the target's JDK compiles."""
    compilers = [j for j in installed_jdks() if j.has_compiler]
    if not compilers:
        jdk = read_jdk(Path(java).resolve().parents[1])
        if jdk is not None and jdk.has_compiler:
            return [str(PROBE_SRC)]
        raise JvmProbeError(
            f"{java} has no compiler to run the probe from source, and no JDK here has javac to "
            "build it (apt-get install openjdk-17-jdk-headless)"
        )
    return ["-cp", str(compiled_probe(compilers[0].home / "bin" / "javac")), "JvmProbe"]


def compiled_probe(javac: Path) -> Path:
    """The cache folder holding JvmProbe.class for the probe's current source, built by `javac` if missing."""
    source = PROBE_SRC.read_bytes()
    classes = paths.CACHE / "jvm-probe" / hashlib.sha256(source).hexdigest()[:16]
    if (classes / "JvmProbe.class").is_file():
        return classes
    building = classes.with_name(f"{classes.name}.{os.getpid()}.tmp")
    done = subprocess.run(
        [str(javac), "--release", "17", "-d", str(building), str(PROBE_SRC)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise JvmProbeError(f"javac could not build the probe: {done.stderr.strip()[-500:]}")
    try:
        os.replace(building, classes)
    except OSError:  # another process built it first
        shutil.rmtree(building, ignore_errors=True)
    return classes


def _status_field(pid: int, name: str) -> str | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def handles_sigquit(pid: int) -> bool:
    """The JVM has its attach socket, or catches SIGQUIT (which starts the attach listener): attaching now is
    safe. A JVM still starting catches it a few tens of milliseconds in."""
    if Path(f"/proc/{pid}/root/tmp/.java_pid{pid}").exists():
        return True
    sigcgt = _status_field(pid, "SigCgt")
    return sigcgt is None or bool((int(sigcgt, 16) >> (signal.SIGQUIT - 1)) & 1)


def still_starting(pid: int) -> bool:
    """The process `pid` is one of the launchers a server's command starts with (they exec into java), or a java
    that does not catch SIGQUIT yet."""
    try:
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return False
    return exe in LAUNCHERS or (exe == "java" and not handles_sigquit(pid))


def wait_attachable(pid: int, limit_s: float = ATTACHABLE_LIMIT_S) -> None:
    """Until the process `pid`, perhaps just launched, is no longer starting (still_starting), or limit_s has
    passed: java_of and check_attachable then say what it is."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and still_starting(pid):
        time.sleep(0.02)


def check_attachable(pid: int) -> None:
    """Refuse, with a clear message, the cases where attaching fails or hurts the target."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except FileNotFoundError:
        raise JvmProbeError(f"process {pid} does not exist") from None
    if "-XX:+DisableAttachMechanism" in argv:
        raise JvmProbeError(
            f"JVM {pid} runs with -XX:+DisableAttachMechanism: the pool probe "
            "cannot attach; start the server without it"
        )
    uid = _status_field(pid, "Uid")
    if uid is not None:
        euid = int(uid.split()[1])
        if euid != os.geteuid() and os.geteuid() != 0:
            raise JvmProbeError(
                f"JVM {pid} runs as uid {euid}, the probe would run as uid {os.geteuid()}: attach needs the same user"
            )
    # HotSpot's attach listener is started on demand by SIGQUIT. A JVM that does not catch
    # SIGQUIT yet (still starting) or at all (-Xrs) would be killed by it instead.
    if not handles_sigquit(pid):
        raise JvmProbeError(f"JVM {pid} does not handle SIGQUIT (still starting, or -Xrs): attaching now would kill it")


def launch_here(probe) -> subprocess.Popen:
    """The probe process on this machine for a jvm_probe.JvmProbe (its pid, interval_s and java), its stdin a pipe
    (closing it stops the probe), stdout and stderr text lines."""
    wait_attachable(probe.pid)
    java = probe.java or java_of(probe.pid)
    check_attachable(probe.pid)
    interval_ms = max(1, int(round(probe.interval_s * 1000)))
    cmd = [java, *PROBE_JVM_OPTS, *probe_program(java), str(probe.pid), str(interval_ms)]
    return subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
        bufsize=1,
        close_fds=True,
    )

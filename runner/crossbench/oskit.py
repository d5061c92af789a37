"""Operating-system plumbing every part of the runner shares: pinning (at exec, or a running tree's every thread),
parent-death signals, stopping a process group without ever signalling a stranger, the open-file limit, and ports
(a free one, or one checked free). `python -m crossbench.oskit pin PID CPUS` pins a tree on a host of its own."""

from __future__ import annotations

import errno
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from crossbench.refusal import Refusal

if TYPE_CHECKING:
    import psutil

FD_MARGIN = 1024  # descriptors a process needs beyond its sockets (libraries, logs, pipes)
HOST = "127.0.0.1"  # loopback: where servers and their helpers listen unless other hosts must reach them


class PortInUse(Refusal, RuntimeError):
    pass


class LimitTooLow(Refusal, RuntimeError):
    """The hard open-file limit is below what the connections need."""


def taskset_prefix(cpus: tuple[int, ...] | list[int]) -> list[str]:
    return ["taskset", "-c", ",".join(str(c) for c in cpus)] if cpus else []


def every_core() -> tuple[int, ...]:
    """Every core this machine has, whatever this process is pinned to (the kernel leaves out any its cgroup does
    not allow)."""
    return tuple(range(os.cpu_count() or 1))


class PinFailed(RuntimeError):
    """A process tree's threads kept appearing off the cores they were pinned to."""


PIN_PASSES = 20


def pin_tree(pid: int, cpus: tuple[int, ...] | list[int]) -> int:
    """Every thread of `pid` and of its descendants onto `cpus`, pass after pass until one moves none; returns
    how many were moved. A thread inherits its creator's cores, so once a pass finds every thread there, none
    created later can be elsewhere. Threads and processes that end meanwhile are skipped."""
    want, moved = set(cpus), 0
    for _ in range(PIN_PASSES):
        changed = 0
        for process in descendants(pid):
            for tid in thread_ids(process.pid):
                try:
                    if os.sched_getaffinity(tid) != want:
                        os.sched_setaffinity(tid, want)
                        changed += 1
                except ProcessLookupError:
                    continue
        moved += changed
        if not changed:
            return moved
    raise PinFailed(f"process {pid}: threads still off cores {sorted(want)} after {PIN_PASSES} passes")


def thread_ids(pid: int) -> list[int]:
    try:
        return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except FileNotFoundError:
        return []


def pdeathsig_prefix() -> list[str]:
    """Even when the runner is killed outright, the child gets SIGTERM: no orphan (util-linux setpriv)."""
    return ["setpriv", "--pdeathsig", "TERM", "--"] if shutil.which("setpriv") else []


def descendants(pid: int) -> list[psutil.Process]:
    import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def stop_group(proc: subprocess.Popen, grace_s: float, first_signal: int = signal.SIGTERM) -> int | None:
    """Stops a child started with start_new_session=True and everything it started.

    The group is signalled only while its leader is not yet reaped (until then its pid, hence the group id,
    cannot belong to anyone else); members that outlive the leader, or left its group, are killed through
    psutil handles taken before the first signal (psutil checks creation time, so a reused pid is safe)."""
    import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

    members = descendants(proc.pid) if proc.returncode is None else []
    signal_unreaped_group(proc, first_signal)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        signal_unreaped_group(proc, signal.SIGKILL)
        proc.wait()
    for member in members[1:]:
        try:
            member.kill()
        except psutil.NoSuchProcess:
            pass
    return proc.returncode


SERVER_MARK = "CROSSBENCH_SERVER_MARK"  # in a started server's environment: what it left behind is found by it


def kill_marked(mark: str, since: float) -> int:
    """Kills this user's processes started since `since` (epoch seconds) whose environment carries
    SERVER_MARK=mark: what a server started and left outside its process group (a command that daemonised
    itself). How many were killed."""
    import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

    killed = 0
    for proc in psutil.process_iter(["create_time", "uids"]):
        try:
            if (
                proc.info["create_time"] >= since
                and proc.info["uids"].real == os.getuid()
                and proc.environ().get(SERVER_MARK) == mark
            ):
                proc.kill()
                killed += 1
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return killed


def signal_unreaped_group(proc: subprocess.Popen, sig: int) -> None:
    """Signals the child's process group, unless the child is already reaped (its pid may be reused)."""
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def raise_open_files(connections: int) -> int:
    """Raises this process's soft limit (its children inherit it) to what `connections` sockets need."""
    need = connections + FD_MARGIN
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= need:
        return soft
    if hard != resource.RLIM_INFINITY and hard < need:
        raise LimitTooLow(
            f"{connections} connections need about {need} open files, but the hard limit is "
            f"{hard}: raise it (ulimit -Hn, /etc/security/limits.conf) or use fewer connections"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    return need


def check_port_free(port: int, address: str = HOST) -> None:
    """Binds like a server would (SO_REUSEADDR, so TIME_WAIT leftovers do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise PortInUse(
                    f"port {port} on {address} is already in use: stop what listens there "
                    f"(`ss -ltnp 'sport = :{port}'`) or pick another with --port"
                ) from e
            raise


def free_port(address: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        return sock.getsockname()[1]


def ephemeral_port_count() -> int:
    low, high = (int(v) for v in open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
    return high - low + 1


def time_wait_count() -> int:
    """TCP sockets in TIME_WAIT on this machine (every port), from the kernel's own counter."""
    for line in open("/proc/net/sockstat"):
        if line.startswith("TCP:"):
            fields = line.split()
            return int(fields[fields.index("tw") + 1])
    return 0


def wait_for_ephemeral_ports(share: float = 0.5, limit_s: float = 60.0) -> float:
    """After cells that open a connection per request: wait (bounded) while TIME_WAIT sockets hold more than
    `share` of the ephemeral port range. Loopback reuses TIME_WAIT ports (tcp_tw_reuse = 2), so nothing fails
    without the wait (measured: three Tomcat Connection: close cells back to back, 39.7k connections, 28,252
    sockets left in TIME_WAIT, 0 connect errors); the wait only spares the next cell's client from searching a
    full port range. Returns the seconds waited."""
    start = time.monotonic()
    while time_wait_count() > share * ephemeral_port_count() and time.monotonic() - start < limit_s:
        time.sleep(1)
    return time.monotonic() - start


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def interrupt_on_signals() -> None:
    """The first SIGINT, SIGTERM or SIGHUP raises KeyboardInterrupt, so `finally` stops the server; later
    ones are ignored, so that a second Ctrl-C cannot cut the clean-up short and leave an orphan."""

    def handler(signum, frame):
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)


if __name__ == "__main__":  # python -m crossbench.oskit pin PID 1,2: what RemoteHost.pin runs there
    if len(sys.argv) != 4 or sys.argv[1] != "pin":
        sys.exit("usage: python -m crossbench.oskit pin PID CPU[,CPU...]")
    try:
        print(pin_tree(int(sys.argv[2]), [int(c) for c in sys.argv[3].split(",")]))
    except (PinFailed, ValueError, OSError) as e:
        sys.exit(f"crossbench.oskit pin: {e}")

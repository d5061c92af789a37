"""Operating-system plumbing every part of the runner shares: pinning, parent-death signals, stopping a process
group without ever signalling a stranger, and the open-file limit."""
from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess

import psutil

FD_MARGIN = 1024    # descriptors a process needs beyond its sockets (libraries, logs, pipes)


class LimitTooLow(RuntimeError):
    """The hard open-file limit is below what the connections need."""


def taskset_prefix(cpus: tuple[int, ...] | list[int]) -> list[str]:
    return ["taskset", "-c", ",".join(str(c) for c in cpus)] if cpus else []


def pdeathsig_prefix() -> list[str]:
    """Even when the runner is killed outright, the child gets SIGTERM: no orphan (util-linux setpriv)."""
    return ["setpriv", "--pdeathsig", "TERM", "--"] if shutil.which("setpriv") else []


def descendants(pid: int) -> list[psutil.Process]:
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
        raise LimitTooLow(f"{connections} connections need about {need} open files, but the hard limit is "
                          f"{hard}: raise it (ulimit -Hn, /etc/security/limits.conf) or use fewer connections")
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    return need

"""The remote side of every role process: runs a command and makes it die with the SSH session that started it.

    python3 runner/crossbench/hosts/tether.py [--grace-s 5] [--heartbeat-s 5] [--cwd DIR] [--stop-signal INT] \
        -- command args...
    (stdin: a pipe the caller holds open; from /dev/null the command is stopped at once)

The command runs in a process group of its own, stdin from /dev/null, stdout and stderr ours. The tether returns
when the command exits (with its status), or when the session is gone: our stdin reaches EOF (the local ssh
closed its pipe, was killed, or the connection was closed), SIGTERM / SIGHUP / SIGINT arrives, our parent (sshd's
connection process) dies (PR_SET_PDEATHSIG), or, with --heartbeat-s, stdin stays silent that long. The heartbeat
is for a connection that is lost without being closed (a network partition, the runner's machine gone): sshd
notices nothing then (no ClientAliveInterval by default) and our stdin never ends; the local side writes a byte
every second (`SshHost.start_tethered`). Then: SIGTERM (or the --stop-signal a declared server asks for) to the
command's group, up to --grace-s for it to exit, SIGKILL to the group, reap. A process that leaves the group
(setsid, a daemon) is beyond the tether's reach.

Runs with any python3 3.9+ on Linux 5.3+ (pidfd), standard library only: a host needs no virtual environment."""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_GRACE_S = 5.0
HEARTBEAT_INTERVAL_S = 1.0  # how often the local side writes to our stdin
DEFAULT_HEARTBEAT_S = 5.0  # the silence after which a tether started by the runner gives up
PR_SET_PDEATHSIG = 1
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
STDIN = 0


def tether_argv(
    project_dir: Path,
    argv: list[str],
    grace_s: float = DEFAULT_GRACE_S,
    heartbeat_s: float = 0.0,
    python: str = "python3",
    start_at: float | None = None,
    report: str | None = None,
    pid_file: str | None = None,
    cwd: str | None = None,
    stop_signal: int = signal.SIGTERM,
) -> list[str]:
    """The remote command line that runs `argv` under the tether of the checkout at `project_dir`."""
    script = Path(project_dir) / "runner" / "crossbench" / "hosts" / "tether.py"
    heartbeat = ["--heartbeat-s", f"{heartbeat_s:g}"] if heartbeat_s else []
    start = ["--start-at", f"{start_at:.6f}"] if start_at else []
    reporting = ["--report", report] if report else []
    pid = ["--pid-file", pid_file] if pid_file else []
    where = ["--cwd", cwd] if cwd else []
    stop = ["--stop-signal", str(int(stop_signal))] if stop_signal != signal.SIGTERM else []
    options = [*heartbeat, *start, *reporting, *pid, *where, *stop]
    return [python, str(script), "--grace-s", f"{grace_s:g}", *options, "--", *argv]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tether", usage="tether [--grace-s S] [--heartbeat-s S] -- command ...")
    parser.add_argument(
        "--grace-s",
        type=float,
        default=DEFAULT_GRACE_S,
        help="seconds between SIGTERM and SIGKILL when the session ends (default %(default)s)",
    )
    parser.add_argument(
        "--heartbeat-s",
        type=float,
        default=0.0,
        help="end the session when stdin is silent this long (default: only at EOF)",
    )
    parser.add_argument("--start-at", type=float, help="start the command at this epoch (this host's clock)")
    parser.add_argument("--report", help="write {status, cpu_s, wall_s} of the command here as JSON when it ends")
    parser.add_argument("--pid-file", help="write the command's process id here once it runs")
    parser.add_argument("--cwd", help="the command's working directory (default: ours)")
    parser.add_argument(
        "--stop-signal",
        type=int,
        default=int(signal.SIGTERM),
        help="the signal that asks the command's group to stop (default %(default)s, SIGTERM)",
    )
    if "--" not in argv:
        parser.error("the command goes after --")
    split = argv.index("--")
    options = parser.parse_args(argv[:split])
    options.command = argv[split + 1 :]
    if not options.command:
        parser.error("no command after --")
    return options


def die_with_parent() -> None:
    """SIGTERM when our parent dies; if it already has, stop at once (the prctl came too late)."""
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def signal_pipe() -> int:
    """A descriptor that becomes readable when a stop signal arrives (the signals no longer kill us)."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end)
    for sig in STOP_SIGNALS:
        signal.signal(sig, lambda *_: None)
    return read_end


def wait_for_end(child_fd: int, signal_fd: int, heartbeat_s: float) -> str:
    """Blocks until the command exits, stdin ends or falls silent, or a stop signal arrives; says which."""
    watched = [child_fd, signal_fd, STDIN]
    while True:
        ready, _, _ = select.select(watched, [], [], heartbeat_s or None)
        if not ready:
            return "stdin silent"
        if child_fd in ready:
            return "command exited"
        if signal_fd in ready:
            return "signal"
        if STDIN in ready and not os.read(STDIN, 4096):
            return "stdin closed"


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop(child: subprocess.Popen, child_fd: int, grace_s: float, stop_signal: int = signal.SIGTERM) -> int:
    """stop_signal, grace, SIGKILL to the command's group. The leader is reaped last: until then the group id is
    ours and cannot name a stranger's group. Also run when the command exited by itself, for what it left behind."""
    if not select.select([child_fd], [], [], 0)[0]:
        signal_group(child.pid, stop_signal)
        select.select([child_fd], [], [], grace_s)
    signal_group(child.pid, signal.SIGKILL)
    return child.wait()


def exit_status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def wait_until(start_at: float, signal_fd: int) -> bool:
    """Sleeps until start_at (this host's epoch); False when a stop signal or the end of stdin came first."""
    while (left := start_at - time.time()) > 0:
        ready, _, _ = select.select([signal_fd, STDIN], [], [], left)
        if signal_fd in ready or (STDIN in ready and not os.read(STDIN, 4096)):
            return False
    return True


def write_report(path: str, status: int, started_epoch: float, wall_s: float) -> None:
    """What the command cost: its CPU time (and its reaped children's), when it started (this host's clock) and
    how long it ran."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(path, "w") as out:
        json.dump(
            {
                "status": status,
                "cpu_s": used.ru_utime + used.ru_stime,
                "started_epoch": started_epoch,
                "wall_s": wall_s,
            },
            out,
        )


def main(argv: list[str]) -> int:
    options = parse(argv)
    signal_fd = signal_pipe()
    die_with_parent()
    if options.start_at and not wait_until(options.start_at, signal_fd):
        return 128 + signal.SIGTERM
    started, started_epoch = time.monotonic(), time.time()
    try:
        child = subprocess.Popen(options.command, stdin=subprocess.DEVNULL, start_new_session=True, cwd=options.cwd)
    except OSError as e:
        print(f"tether: cannot start {options.command[0]}: {e}", file=sys.stderr)
        return 127
    child_fd = os.pidfd_open(child.pid)
    if options.pid_file:
        Path(options.pid_file).write_text(f"{child.pid}\n")
    wait_for_end(child_fd, signal_fd, options.heartbeat_s)
    status = exit_status(stop(child, child_fd, options.grace_s, options.stop_signal))
    if options.report:
        write_report(options.report, status, started_epoch, time.monotonic() - started)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""One OpenSSH master connection per host; every command for that host goes through it (no new handshake).

The master is our child, in a session of its own (a Ctrl-C reaches the runner, which closes it in `finally`)
and with a parent-death signal (it dies with the runner even on SIGKILL). Commands that must not outlive the
connection run under the tether (`start_tethered`): they die when their SSH session does."""

from __future__ import annotations

import contextlib
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from .. import oskit
from . import tether
from .hostsfile import DEFAULT_PORT, Host, Hosts, HostsError

CONNECT_TIMEOUT_S = 5
OPEN_LIMIT_S = 20.0  # the handshake, authentication and the first check, all bounded by this
CONTROL_TIMEOUT_S = 5.0  # `ssh -O check|exit`: local socket talk only
SOCKET_PATH_MAX = 104  # sun_path is 108 bytes on Linux, 104 on the BSDs; %C adds 40 characters


class SshError(HostsError):
    """A host cannot be reached, refused us, or a command through its master failed to run."""


class SshHost:
    def __init__(self, host: Host, ssh_config: Path | None = None, control_dir: Path | None = None):
        self.host = host
        self.ssh_config = ssh_config
        self.own_control_dir = control_dir is None  # then open() makes one and close() removes it
        self.control_dir = control_dir
        if control_dir is not None and len(str(control_dir)) + 41 > SOCKET_PATH_MAX:
            raise SshError(f"control directory {control_dir} is too long for a socket path: use a shorter one")
        self.master: subprocess.Popen | None = None
        self.closed = False  # closed on purpose (close()), not lost
        self.master_log = None
        self.open_s: float | None = None  # how long the last open() took: handshake and authentication

    def __enter__(self) -> SshHost:
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def options(self) -> list[str]:
        """What every ssh call for this host shares: its config, the master's socket, no prompts, the port (only
        when the hosts file gives another than 22: otherwise the SSH config's Port, if any, applies)."""
        config = ["-F", str(self.ssh_config)] if self.ssh_config else []
        port = ["-p", str(self.host.port)] if self.host.port != DEFAULT_PORT else []
        return [
            *config,
            "-o",
            f"ControlPath={self.control_dir}/%C",
            "-o",
            "BatchMode=yes",
            "-o",
            f"ConnectTimeout={CONNECT_TIMEOUT_S}",
            *port,
        ]

    def open(self) -> float:
        """Starts the master and waits until it answers `-O check`; returns the seconds that took."""
        start = time.monotonic()
        if self.own_control_dir:
            self.control_dir = Path(tempfile.mkdtemp(prefix="cbssh-"))
        elif self.master_answers():
            raise SshError(f"{self.host.label}: a master already listens on {self.control_dir}: one SshHost per host")
        argv = [
            "ssh",
            *self.options(),
            "-M",
            "-N",
            "-o",
            "ControlPersist=no",
            "-o",
            "ServerAliveInterval=2",
            "-o",
            "ServerAliveCountMax=3",
            self.host.destination,
        ]
        self.master_log = tempfile.TemporaryFile()
        self.closed = False
        self.master = subprocess.Popen(
            [*oskit.pdeathsig_prefix(), *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.master_log,
            start_new_session=True,
        )
        try:
            self.wait_for_master(start)
        except BaseException:
            self.close()
            raise
        self.open_s = time.monotonic() - start
        return self.open_s

    def wait_for_master(self, start: float) -> None:
        while not self.master_answers():
            if self.master.poll() is not None:
                raise SshError(f"{self.host.label}: ssh could not connect: {self.master_output() or 'no message'}")
            if time.monotonic() - start > OPEN_LIMIT_S:
                raise SshError(
                    f"{self.host.label}: no SSH connection after {OPEN_LIMIT_S:.0f} s: "
                    f"{self.master_output() or 'ssh said nothing'}"
                )
            time.sleep(0.05)

    def master_answers(self) -> bool:
        return self.control("check").returncode == 0

    def control(self, command: str) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(
                ["ssh", *self.options(), "-O", command, self.host.destination],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=CONTROL_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(e.cmd, 255, "", f"ssh -O {command} timed out")

    def master_output(self) -> str:
        self.master_log.seek(0)
        return self.master_log.read().decode(errors="replace").strip()

    def command_argv(self, argv: list[str]) -> list[str]:
        """ssh joins its arguments with spaces for the remote shell: one shlex-quoted string keeps argv intact.
        ControlMaster=no: a session never becomes a master of its own."""
        if not argv:
            raise ValueError("no command")
        return ["ssh", *self.options(), "-o", "ControlMaster=no", "-T", self.host.destination, "--", shlex.join(argv)]

    def run(self, argv: list[str], timeout_s: float, input: str | None = None) -> subprocess.CompletedProcess:
        """One command through the master, its output captured as text. Exit status 255 is ssh's own failure.
        On timeout the local client is killed, which ends the session; only a tethered command is sure to die
        with it."""
        self.require_open()
        stdin = None if input is not None else subprocess.DEVNULL
        return subprocess.run(
            self.command_argv(argv), input=input, stdin=stdin, capture_output=True, text=True, timeout=timeout_s
        )

    def popen(self, argv: list[str], **popen_kwargs) -> subprocess.Popen:
        """A long-running command through the master (see `start_tethered`). The local ssh client gets its own
        session and a parent-death signal, like the master: start it from the thread that outlives it."""
        self.require_open()
        popen_kwargs.setdefault("start_new_session", True)
        return subprocess.Popen([*oskit.pdeathsig_prefix(), *self.command_argv(argv)], **popen_kwargs)

    def start_tethered(
        self,
        argv: list[str],
        grace_s: float = tether.DEFAULT_GRACE_S,
        heartbeat_s: float = tether.DEFAULT_HEARTBEAT_S,
        start_at: float | None = None,
        report: str | None = None,
        pid_file: str | None = None,
        cwd: str | None = None,
        stop_signal: int = signal.SIGTERM,
        **popen_kwargs,
    ) -> subprocess.Popen:
        """`argv` on the host under the tether, its stdin a pipe we hold: closing it (`stop_tethered`) stops the
        command gracefully; killing the local ssh, or losing the connection, stops it too (after `heartbeat_s` of
        silence: a thread writes a byte every second; 0 = no heartbeat). `start_at` (the host's epoch) delays
        the command's start; `report` names a file on the host for its status, CPU seconds and run time;
        `pid_file` one for the command's process id; `cwd` its working directory there, `stop_signal` what asks
        it to stop."""
        remote = tether.tether_argv(
            self.host.project_dir,
            argv,
            grace_s,
            heartbeat_s,
            start_at=start_at,
            report=report,
            pid_file=pid_file,
            cwd=cwd,
            stop_signal=stop_signal,
        )
        proc = self.popen(remote, stdin=subprocess.PIPE, **popen_kwargs)
        if heartbeat_s:
            threading.Thread(target=beat, args=(proc,), name=f"heartbeat {self.host.label}", daemon=True).start()
        return proc

    def resolved_address(self) -> tuple[str, int]:
        """The address and port ssh really connects to once the SSH config is applied (HostName, Port)."""
        done = subprocess.run(
            ["ssh", *self.options(), "-G", self.host.destination],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CONTROL_TIMEOUT_S,
        )
        settings = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
        return settings.get("hostname", self.host.address), int(settings.get("port", self.host.port))

    def require_open(self) -> None:
        if self.master is None or self.closed:
            raise SshError(f"{self.host.label}: the SSH master connection is not open")
        if self.master.poll() is not None:
            raise SshError(
                f"{self.host.label}: the SSH connection was lost (its master exited with {self.master.returncode})"
            )

    def close(self) -> None:
        """Asks the master to exit, then makes sure: terminate, kill, reap. Safe to call twice."""
        self.closed = True
        if self.master is not None:
            if self.master.poll() is None:
                self.control("exit")
            try:
                self.master.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.master.terminate()
                try:
                    self.master.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    self.master.kill()
                    self.master.wait()
        if self.master_log is not None:
            self.master_log.close()
            self.master_log = None
        if self.own_control_dir and self.control_dir is not None:
            shutil.rmtree(self.control_dir, ignore_errors=True)
            self.control_dir = None


def open_masters(hosts: Hosts, stack: contextlib.ExitStack) -> dict[Host, SshHost]:
    """A master for every remote host, closed when `stack` closes; refuses with every unreachable host at once.
    Opened from this thread: their parent-death signal follows the thread that started them."""
    control_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cbssh-")))
    connections, failures = {}, []
    for host in hosts.all():
        ssh = SshHost(host, hosts.ssh_config, control_dir)
        try:
            ssh.open()
        except SshError as e:
            failures.append(str(e))
            continue
        stack.callback(ssh.close)
        connections[host] = ssh
    if failures:
        raise SshError("cannot reach every host over SSH:\n  " + "\n  ".join(failures))
    return connections


def beat(proc: subprocess.Popen) -> None:
    """Writes to the tether's stdin every second until the pipe is closed (stop_tethered) or broken."""
    while proc.poll() is None:
        try:
            proc.stdin.write(b"\n")
            proc.stdin.flush()
        except (OSError, ValueError):  # closed by stop_tethered, or the ssh is gone
            return
        time.sleep(tether.HEARTBEAT_INTERVAL_S)


def stop_tethered(proc: subprocess.Popen, grace_s: float = tether.DEFAULT_GRACE_S) -> int:
    """Closes the tether's stdin (it stops its command: SIGTERM, grace, SIGKILL) and waits for the local ssh;
    kills the local ssh if the remote side does not finish in time, which ends the session all the same."""
    if proc.stdin and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
    try:
        return proc.wait(timeout=grace_s + CONNECT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()

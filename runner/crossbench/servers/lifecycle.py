"""One lifecycle for every server, on whichever host runs it (crossbench.hosts): start it there in its own process
group (its port checked first), wait until it answers, stop the whole tree. Servers differ only in what their
plug-in puts in the ServerSpec."""

from __future__ import annotations

import signal
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..oskit import HOST

HEALTH_PATH = "/hello"
READY_LOG_LINES = 20  # what a server that never answered shows of its log


class ServerFailed(RuntimeError):
    """The server exited or never answered; the message carries the end of its log."""


@dataclass
class ServerSpec:
    """What to run: the name, the argv, where its log goes, and what describes it in records."""

    name: str
    port: int
    argv: list[str]
    log_path: Path
    describe: dict = field(default_factory=dict)
    cpus: tuple[int, ...] = ()
    ready_timeout_s: float = 60.0
    env: dict = field(default_factory=dict)  # added to the runner's environment
    address: str = HOST  # where it listens: loopback, or an address other hosts reach
    after_stop: Callable[[], None] | None = None  # called once the server has exited (e.g. keep an archive)
    # Starts on every core its host lets it use and is pinned to `cpus` once it answers (nothing is measured
    # before): a JVM's compiler then works beside its main thread, not in turn with it (Tomcat on one core of the
    # 2-core test machine, JFR on: 3.56 s to 2.12 s on JDK 17, 3.58 s to 1.96 s on 25, medians of 6 and 4 starts).
    # A plug-in asks for it only with `cpus` to pin to, and sizes the process for them itself
    # (-XX:ActiveProcessorCount).
    pinned_once_ready: bool = False
    workdir: Path | None = None  # where it starts (None: wherever the runner runs)
    ready_path: str = HEALTH_PATH  # the URL path whose 200 says it is ready
    stop_signal: int = signal.SIGTERM  # what asks it to stop; SIGKILL after stop_grace_s
    stop_grace_s: float = 15.0
    # How long the started process must still run once it answers: a command that waits for the daemon it forked
    # to answer and then exits is told from a server in the foreground only by outliving its readiness.
    foreground_check_s: float = 0.0
    # Ready once it answers ready_path at all, whatever the status: a server whose own answer to any path is the
    # user's to decide (a user's WAR), and whose readiness is that its listener answers.
    ready_any_answer: bool = False


class RunningServer:
    """A started server on its host (crossbench.hosts: this machine's HERE, or a host of its own; `cell_dir` is
    what a host of its own copies there). `process` is the host's handle: poll(), returncode, pid (the host's).
    Use as a context manager so it is always stopped, whatever happens."""

    def __init__(self, spec: ServerSpec, host, cell_dir: Path | None = None):
        self.spec = spec
        self.host = host
        self.cell_dir = cell_dir
        self.process = None
        # called with the server once its process is started, before it answers (a cell attaches its probe)
        self.on_spawn: Callable[[RunningServer], None] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.spec.address}:{self.spec.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def start(self) -> RunningServer:
        self.process = self.host.start_server(self.spec, self.cell_dir)
        return self

    def wait_ready(self) -> None:
        deadline = time.monotonic() + self.spec.ready_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.refuse_exited()
            if self.answers():
                self.check_foreground()
                return
            time.sleep(0.1)
        raise ServerFailed(
            f"{self.spec.name} did not answer {self.spec.ready_path} within "
            f"{self.spec.ready_timeout_s:g} s; the last {READY_LOG_LINES} lines of its log "
            f"({self.spec.log_path}):\n{self.log_tail(READY_LOG_LINES)}"
        )

    def check_foreground(self) -> None:
        """It answers: the process the suite started must still run foreground_check_s later."""
        if self.spec.foreground_check_s:
            time.sleep(self.spec.foreground_check_s)
            if self.process.poll() is not None:
                self.refuse_exited()

    def refuse_exited(self) -> None:
        """The process the suite started has exited before it was ready. If its port answers all the same, the
        command put the server in the background (a daemon): the suite could neither sample nor stop what it
        measures, so that is refused with the reason."""
        if self.answers():
            raise ServerFailed(
                f"{self.spec.name}: the process the suite started ({self.spec.argv[0]}) exited with "
                f"status {self.process.returncode} while port {self.spec.port} answers: the command "
                "puts the server in the background (daemonises); declare a command that stays in "
                "the foreground (no --daemon, no trailing &), so the suite can sample and stop it"
            )
        raise ServerFailed(
            f"{self.spec.name} exited with status {self.process.returncode} before answering:\n{self.log_tail()}"
        )

    def answers(self, timeout_s: float = 2.0) -> bool:
        try:
            with urllib.request.urlopen(self.url + self.spec.ready_path, timeout=timeout_s) as response:
                return response.status == 200
        except urllib.error.HTTPError as e:
            e.close()
            return self.spec.ready_any_answer
        except (urllib.error.URLError, OSError):
            return False

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def exit_note(self) -> str:
        """How it ended, for a cell it died in."""
        return f"exited with status {self.process.returncode}"

    def sampler(self, out_csv: Path, interval_s: float, phase: str = "idle", pool_source=None, loadgen_pid_fn=None):
        """Its process tree sampled into out_csv beside it (not started: a with-block runs it)."""
        return self.host.sampler(self.pid, out_csv, interval_s, phase, pool_source, loadgen_pid_fn)

    def tree(self) -> list:
        """Its processes (psutil), where this machine can see them (none on a host of its own)."""
        return self.host.tree(self.pid)

    def stop(self, grace_s: float | None = None) -> int | None:
        """Its host stops its whole process group (its stop signal, SIGTERM unless declared otherwise, then
        SIGKILL after the grace period: the spec's unless given)."""
        if self.process is None:
            return None
        grace_s = self.spec.stop_grace_s if grace_s is None else grace_s
        returncode = self.host.stop_server(self.process, grace_s, self.spec.stop_signal)
        if self.spec.after_stop:
            after, self.spec.after_stop = self.spec.after_stop, None
            after()
        return returncode

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.spec.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"

    def __enter__(self) -> RunningServer:
        self.start()
        try:
            if self.on_spawn:
                self.on_spawn(self)
            self.wait_ready()
            if self.spec.pinned_once_ready:
                self.host.pin(self.pid, self.spec.cpus)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

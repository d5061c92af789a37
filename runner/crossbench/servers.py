"""One lifecycle for either server: check the port, start in its own process group, wait until it answers,
stop the whole tree. Tomcat and Tornado differ only in the command line (ServerSpec)."""
from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from . import paths
from .tomcat import TomcatConfig, command as tomcat_command, prepare_base

HOST = "127.0.0.1"
SERVERS = ("tomcat", "tornado")
HEALTH_PATH = "/hello"


class PortInUse(RuntimeError):
    pass


class ServerFailed(RuntimeError):
    """The server exited or never answered; the message carries the end of its log."""


@dataclass(frozen=True)
class TornadoConfig:
    port: int
    processes: int = 1
    backlog: int = 128


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


def check_port_free(port: int) -> None:
    """Binds like a server would (SO_REUSEADDR, so TIME_WAIT leftovers do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise PortInUse(f"port {port} on {HOST} is already in use: stop what listens there "
                                f"(`ss -ltnp 'sport = :{port}'`) or pick another with --port") from e
            raise


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def tomcat_spec(config: TomcatConfig, work_dir: Path, cpus: tuple[int, ...] = ()) -> ServerSpec:
    home = paths.tomcat_home()
    jdk = config.resolve_jdk()
    base = prepare_base(config, Path(tempfile.mkdtemp(prefix="catalina-base-", dir=work_dir)), home)
    describe = {"tomcat": paths.tomcat_version(home), "jdk": jdk.version, "jdk_home": str(jdk.home),
                "max_threads": config.max_threads if config.executor == "platform" else None,
                "executor": config.executor, "accept_count": config.accept_count,
                "max_connections": config.max_connections, "catalina_base": str(base)}
    return ServerSpec("tomcat", config.port, tomcat_command(config, jdk, home, base),
                      base / "logs" / "console.log", describe, cpus)


def tornado_spec(config: TornadoConfig, work_dir: Path, cpus: tuple[int, ...] = ()) -> ServerSpec:
    argv = [sys.executable, str(paths.TORNADO_APP), "--port", str(config.port),
            "--processes", str(config.processes), "--backlog", str(config.backlog)]
    describe = {"processes": config.processes, "backlog": config.backlog}
    return ServerSpec("tornado", config.port, argv, work_dir / f"tornado-{config.port}.log", describe, cpus,
                      ready_timeout_s=20.0)


class RunningServer:
    """A started server. Use as a context manager so it is always stopped, whatever happens."""

    def __init__(self, spec: ServerSpec):
        self.spec = spec
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.spec.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def start(self) -> "RunningServer":
        check_port_free(self.spec.port)
        argv = self.spec.argv
        if self.spec.cpus:
            argv = ["taskset", "-c", ",".join(map(str, self.spec.cpus)), *argv]
        if shutil.which("setpriv"):
            # Even if the runner itself is killed outright, the server gets SIGTERM: no orphan.
            argv = ["setpriv", "--pdeathsig", "TERM", "--", *argv]
        self.spec.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.spec.log_path, "ab") as log:
            self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        return self

    def wait_ready(self) -> None:
        deadline = time.monotonic() + self.spec.ready_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerFailed(f"{self.spec.name} exited with status {self.process.returncode} "
                                   f"before answering:\n{self.log_tail()}")
            if self.answers():
                return
            time.sleep(0.1)
        raise ServerFailed(f"{self.spec.name} did not answer {HEALTH_PATH} within "
                           f"{self.spec.ready_timeout_s:.0f} s:\n{self.log_tail()}")

    def answers(self, timeout_s: float = 2.0) -> bool:
        try:
            with urllib.request.urlopen(self.url + HEALTH_PATH, timeout=timeout_s) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def tree(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def stop(self, grace_s: float = 15.0) -> int | None:
        """SIGTERM to the process group, SIGKILL to whatever is left after the grace period."""
        if self.process is None:
            return None
        leftovers = self.tree()
        signal_group(self.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            signal_group(self.pid, signal.SIGKILL)
            self.process.wait(timeout=5)
        for proc in leftovers:  # a worker that left the group still dies
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        return self.process.returncode

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.spec.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"

    def __enter__(self) -> "RunningServer":
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass

"""./runner/serve.sh as a user runs it: prints the URL when ready, stops cleanly on Ctrl-C / SIGTERM with no
child left, and says clearly when the port is taken or the build is missing."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import psutil
import pytest
from live_servers import build_missing_reason

from crossbench import paths
from crossbench.oskit import free_port
from crossbench.servers import tomcat

# Each test checks what serve.sh or a killed runner did (an answer, exit statuses, a clear error, no process left,
# found by its pid), on a free port, with deadlines far past a server's start: it shares the cores.
pytestmark = [pytest.mark.live, pytest.mark.shares_cores]
SERVE = str(paths.RUNNER / "serve.sh")


def start(*args) -> subprocess.Popen:
    return subprocess.Popen(
        [SERVE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def wait_for_url(proc: subprocess.Popen, timeout_s: float = 60) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if " ready at " in line:
            return line.split(" ready at ")[1].split()[0]
        if proc.poll() is not None:
            raise AssertionError(f"serve.sh exited {proc.returncode}: {proc.stderr.read()}")
    raise AssertionError("serve.sh never said ready")


@pytest.mark.parametrize(
    "server, args, sig",
    [
        ("tornado", ["--processes", "2"], signal.SIGINT),
        ("tornado", [], signal.SIGTERM),
        pytest.param(
            "tomcat",
            [],
            signal.SIGINT,
            marks=pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason())),
        ),
    ],
)
def test_starts_answers_and_stops_with_no_child_left(server, args, sig):
    proc = start(server, "--port", str(free_port()), *args)
    try:
        url = wait_for_url(proc)
        with urllib.request.urlopen(url + "hello", timeout=10) as response:
            assert response.read() == b"Hello, world"
        tree = psutil.Process(proc.pid).children(recursive=True)
        assert len(tree) >= (3 if "--processes" in args else 1)
        os.killpg(proc.pid, sig) if sig == signal.SIGINT else proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    gone, alive = psutil.wait_procs(tree, timeout=5)
    assert alive == []
    assert proc.returncode == 0


def test_a_taken_port_is_a_clear_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([SERVE, "tornado", "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr


def test_bad_options_are_clear_errors():
    for args, message in [
        (["bogus"], "unknown server 'bogus'"),
        (["tomcat", "--max-threads", "0"], "at least 1"),
        (["tomcat", "--executor", "green"], "invalid choice"),
    ]:
        done = subprocess.run([SERVE, *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)


def test_a_missing_build_says_run_mvn_package(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "SERVLET_TARGET", tmp_path / "target")
    with pytest.raises(paths.BuildMissing, match="run `mvn package`"):
        tomcat.tomcat_home()


KILLED_PARENT = """
import os, sys
from pathlib import Path
from crossbench.hosts.local import HERE
from crossbench.oskit import free_port
from crossbench.servers import PLUGINS, RunningServer
tornado = PLUGINS["tornado"]
server = RunningServer(tornado.spec(tornado.settings({"processes": 2}), free_port(), Path(sys.argv[1])), HERE)
server.start()
server.wait_ready()
print(" ".join(str(p.pid) for p in server.tree()), flush=True)
os.kill(os.getpid(), 9)
"""


def test_servers_die_with_a_runner_killed_outright(tmp_path):
    """SIGKILL leaves no `finally` to run: the servers' parent-death signal still stops them."""
    done = subprocess.run(
        [sys.executable, "-c", KILLED_PARENT, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 3
    procs = []
    for pid in pids:
        try:
            procs.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            pass
    gone, alive = psutil.wait_procs(procs, timeout=10)
    assert alive == []

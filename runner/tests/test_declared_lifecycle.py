"""A declared server's start and stop on this machine, with real processes (small Python commands, no load): a
ready URL that never answers is refused with the last 20 lines of the server's log, a command that daemonises is
refused with that explanation, a port in use is refused before anything starts, the declared stop signal is the
one sent; nothing is left running after any of them."""

from __future__ import annotations

import socket
import textwrap
from pathlib import Path

import psutil
import pytest
from testkit import wait_until

from crossbench import oskit, servers
from crossbench.declared_schema import check
from crossbench.hosts.local import HERE
from crossbench.oskit import PortInUse
from crossbench.servers import RunningServer, ServerFailed
from crossbench.servers.declared import DeclaredPlugin

pytestmark = pytest.mark.spawns

# Prints 30 numbered lines, then waits without listening anywhere.
SILENT = """
import sys, time
for number in range(30):
    print("line", number, flush=True)
time.sleep(60)
"""
# Starts an HTTP server in a session of its own (a daemon), waits until it answers, and exits.
DAEMON = """
import subprocess, sys, socket, time
port = sys.argv[1]
subprocess.Popen([sys.executable, "-m", "http.server", port, "--bind", "127.0.0.1"], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(200):
    try:
        socket.create_connection(("127.0.0.1", int(port)), timeout=0.1).close()
        break
    except OSError:
        time.sleep(0.05)
"""
# Serves in the foreground; SIGTERM is ignored, SIGINT ends it with a line in its log.
INT_ONLY = """
import http.server, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def stop(*_):
    print("stopped by SIGINT", flush=True)
    sys.exit(0)
signal.signal(signal.SIGINT, stop)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), http.server.SimpleHTTPRequestHandler).serve_forever()
"""


def declared(tmp_path: Path, script: str, **table) -> DeclaredPlugin:
    (tmp_path / "server.py").write_text(textwrap.dedent(script))
    declaration = {
        "command": ["{python}", "server.py", "{port}"],
        "workdir": str(tmp_path),
        "ready": {"path": "/", "timeout_s": 10},
        **table,
    }
    return DeclaredPlugin("mine", check("mine", declaration, "test", None))


def started(plugin: DeclaredPlugin, tmp_path: Path, port: int | None = None) -> RunningServer:
    return RunningServer(plugin.spec(plugin.settings({}), port or oskit.free_port(), tmp_path), HERE)


def ours(tmp_path: Path) -> list[psutil.Process]:
    """Processes still running a script of this test's folder."""
    found = []
    for proc in psutil.process_iter():
        try:
            if any(str(tmp_path) in part for part in [*proc.cmdline(), proc.cwd()]):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def test_a_ready_url_that_never_answers_is_refused_with_the_last_20_lines_of_its_log(tmp_path):
    plugin = declared(tmp_path, SILENT, ready={"path": "/ready", "timeout_s": 1.5})
    with pytest.raises(ServerFailed) as caught:
        with started(plugin, tmp_path):
            pass
    first, *tail = str(caught.value).splitlines()
    assert first.startswith("mine did not answer /ready within 1.5 s; the last 20 lines of its log"), first
    assert tail == [f"line {number}" for number in range(10, 30)]
    assert ours(tmp_path) == []


def test_a_command_that_daemonises_is_refused_and_its_daemon_stopped(tmp_path):
    plugin = declared(tmp_path, DAEMON)
    server = started(plugin, tmp_path)
    with pytest.raises(ServerFailed) as caught:
        with server:
            pass
    message = str(caught.value)
    assert "\n" not in message and f"exited with status 0 while port {server.spec.port} answers" in message
    assert "puts the server in the background (daemonises)" in message
    assert wait_until(lambda: ours(tmp_path) == [], 5, lambda: f"the daemon gone: {ours(tmp_path)}")
    oskit.check_port_free(server.spec.port)


def test_a_port_in_use_is_refused_before_anything_starts(tmp_path):
    plugin = declared(tmp_path, INT_ONLY)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(PortInUse, match=rf"^port {port} on 127.0.0.1 is already in use"):
            with started(plugin, tmp_path, port):
                pass
    assert ours(tmp_path) == [] and not (tmp_path / f"mine-{port}.log").exists()


def test_the_declared_stop_signal_is_the_one_sent(tmp_path):
    plugin = declared(tmp_path, INT_ONLY, stop={"signal": "INT", "grace_s": 10})
    server = started(plugin, tmp_path)
    with server:
        assert server.answers()
    assert server.process.returncode == 0 and "stopped by SIGINT" in server.log_tail()
    assert ours(tmp_path) == []


def test_a_declared_server_in_the_registry_starts_like_a_built_in_one(tmp_path):
    """Looked up by name (servers.get), its spec starts where its declaration says, and stops."""
    config = {"server": {"mine": declared(tmp_path, INT_ONLY, stop={"signal": "INT", "grace_s": 10}).declaration}}
    try:
        servers.declare(config, "test")
        with started(servers.get("mine"), tmp_path) as server:
            assert server.answers() and Path(server.tree()[0].cwd()) == tmp_path
    finally:
        servers.forget_declared()
    assert ours(tmp_path) == []


def test_the_unmeasured_first_start_says_what_is_wrong_before_the_first_cell(tmp_path):
    """run_checks.prime_servers calls it once per setting; it says a failure's first line and leaves the cells."""
    assert declared(tmp_path, INT_ONLY, stop={"signal": "INT", "grace_s": 10}).prime({}, tmp_path, (), HERE) is None
    with pytest.raises(ServerFailed, match="puts the server in the background"):
        declared(tmp_path, DAEMON).prime({}, tmp_path, (), HERE)
    assert wait_until(lambda: ours(tmp_path) == [], 5, lambda: f"nothing left: {ours(tmp_path)}")

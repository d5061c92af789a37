"""crossbench.hosts without a network: the hosts file and its messages, the tether run here, the preflight's
clock rule and links, the round-trip measurement and the facts of this machine."""

from __future__ import annotations

import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from netns_hosts import gone_within
from testkit import wait_until

from crossbench import paths
from crossbench.hosts import Host, Hosts, HostsError, load_hosts
from crossbench.hosts.preflight import ClockReading, check_clocks, clock_limit_s, connect_times, links
from crossbench.hosts.tether import tether_argv

HOSTS_PACKAGE = paths.RUNNER / "crossbench" / "hosts"
TETHER = HOSTS_PACKAGE / "tether.py"
FACTS = HOSTS_PACKAGE / "facts.py"

EXAMPLE = """\
# roles: server, db, proxy, loadgen (a list); absent role = this machine
ssh_config = "ssh_config"
[roles]
server = "root@10.77.0.2"
db = "root@10.77.0.3:22"
loadgen = ["root@10.77.0.4", "bench@10.77.0.5:2222"]
[project_dir]
"root@10.77.0.2" = "/srv/crossbench"
"""


def write(tmp_path: Path, text: str, config: bool = True) -> Path:
    if config:
        (tmp_path / "ssh_config").write_text("Host *\n  User root\n")
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    return path


def test_the_example_maps_each_role_to_its_host(tmp_path):
    hosts = load_hosts(write(tmp_path, EXAMPLE))
    assert (hosts.server, hosts.db) == (
        Host("root", "10.77.0.2", 22, Path("/srv/crossbench")),
        Host("root", "10.77.0.3", 22, paths.REPO),
    )
    assert hosts.proxy is None
    assert hosts.loadgen == (Host("root", "10.77.0.4", 22, paths.REPO), Host("bench", "10.77.0.5", 2222, paths.REPO))
    assert hosts.ssh_config == (tmp_path / "ssh_config").resolve()
    assert [h.label for h in hosts.all()] == [
        "root@10.77.0.2",
        "root@10.77.0.3",
        "root@10.77.0.4",
        "bench@10.77.0.5:2222",
    ]
    assert hosts.loadgen[1].destination == "bench@10.77.0.5"


def test_absent_roles_are_this_machine(tmp_path):
    hosts = load_hosts(write(tmp_path, "[roles]\nloadgen = []\n", config=False))
    assert hosts == Hosts()
    assert hosts.all() == [] and hosts.ssh_config is None
    assert load_hosts(write(tmp_path, "", config=False)).all() == []


def test_a_host_with_two_roles_is_one_host(tmp_path):
    hosts = load_hosts(
        write(tmp_path, '[roles]\nserver = "root@h1"\ndb = "root@h1:22"\nloadgen = ["root@h2"]\n', config=False)
    )
    assert hosts.all() == [Host("root", "h1"), Host("root", "h2")]
    assert hosts.roles_of(Host("root", "h1")) == ["server", "db"]


def test_the_user_may_be_left_to_the_ssh_config_and_ipv6_goes_in_brackets(tmp_path):
    hosts = load_hosts(write(tmp_path, '[roles]\nserver = "bench-server"\ndb = "root@[fd00::3]:2200"\n', config=False))
    assert hosts.server.destination == "bench-server" and hosts.server.user is None
    assert (hosts.db.address, hosts.db.port, hosts.db.destination) == ("fd00::3", 2200, "root@fd00::3")
    assert hosts.db.label == "root@[fd00::3]:2200"


def test_a_project_dir_key_matches_its_host_however_the_port_is_written(tmp_path):
    text = '[roles]\ndb = "root@h3"\n[project_dir]\n"root@h3:22" = "/opt/cb"\n'
    assert load_hosts(write(tmp_path, text, config=False)).db.project_dir == Path("/opt/cb")


def test_the_tether_runs_from_the_hosts_checkout():
    argv = tether_argv(Path("/srv/crossbench"), ["sleep", "1"], grace_s=2.5, heartbeat_s=5)
    assert argv == [
        "python3",
        "/srv/crossbench/runner/crossbench/hosts/tether.py",
        "--grace-s",
        "2.5",
        "--heartbeat-s",
        "5",
        "--",
        "sleep",
        "1",
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("server = ", "not valid TOML"),
        ('[roles]\nwebserver = "root@h"\n', "unknown role webserver"),
        ('[roles]\nserver = "root@h@x"\n', "'root@h@x' is not a destination of the form user@host[:port]"),
        ('[roles]\nserver = "root@"\n', "is not a destination"),
        ('[roles]\nserver = "root@h:"\n', "is not a destination"),
        ("[roles]\nserver = 22\n", "roles.server: expected a string"),
        ('[roles]\nloadgen = "root@h"\n', "roles.loadgen must be a list"),
        ('[roles]\nloadgen = ["root@h", 5]\n', "roles.loadgen[1]: expected a string"),
        ('[roles]\nserver = "root@h:70000"\n', "port 70000 in 'root@h:70000' is out of range"),
        ('[roles]\nserver = "root@h:0"\n', "port 0 in 'root@h:0' is out of range"),
        ('roles = "root@h"\n', "roles must be a table"),
        ('hosts = 1\n', "unknown key hosts"),
        ('ssh_config = "nowhere"\n', "ssh_config"),
        ('[roles]\nserver = "root@h"\n[project_dir]\n"root@g" = "/srv"\n', "names root@g, which plays no role"),
        ('[roles]\nserver = "root@h"\n[project_dir]\n"root@h" = "srv"\n', "must be an absolute path"),
    ],
)
def test_a_wrong_file_is_refused_with_a_message_saying_what(tmp_path, text, message):
    with pytest.raises(HostsError) as refused:
        load_hosts(write(tmp_path, text, config=False))
    assert message in str(refused.value)
    assert str(tmp_path / "hosts.toml") in str(refused.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(HostsError, match="nowhere.toml does not exist"):
        load_hosts(tmp_path / "nowhere.toml")


def start_tether(*command: str, grace_s: float = 1.0, **popen_kwargs) -> subprocess.Popen:
    popen_kwargs.setdefault("stdin", subprocess.PIPE)
    return subprocess.Popen([sys.executable, str(TETHER), "--grace-s", str(grace_s), "--", *command], **popen_kwargs)


def only_child(proc: subprocess.Popen | psutil.Process) -> psutil.Process:
    return wait_until(psutil.Process(proc.pid).children, 5, f"a child of {proc.pid}")[0]


@pytest.mark.spawns  # tether.py
def test_the_tether_passes_the_commands_exit_status_on():
    tether = start_tether("sh", "-c", "exit 3")
    assert tether.wait(timeout=10) == 3


@pytest.mark.spawns  # tether.py
def test_the_tether_stops_its_command_when_stdin_closes():
    tether = start_tether("sleep", "300")
    sleeper = only_child(tether)
    tether.stdin.close()
    assert tether.wait(timeout=5) == 128 + signal.SIGTERM
    assert gone_within(sleeper, 0)  # the tether reaped it before exiting


@pytest.mark.spawns  # tether.py
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_the_tether_stops_its_command_on_a_stop_signal(sig):
    tether = start_tether("sleep", "300")
    sleeper = only_child(tether)
    tether.send_signal(sig)
    assert tether.wait(timeout=5) == 128 + signal.SIGTERM
    assert gone_within(sleeper, 0)  # the tether reaped it before exiting
    tether.stdin.close()


@pytest.mark.spawns  # tether.py
def test_the_tether_starts_its_command_in_the_folder_given_and_stops_it_with_the_signal_given(tmp_path):
    """A declared server's working directory and stop signal (SIGINT here): the command writes where it runs,
    ignores SIGTERM and exits on SIGINT, so a tether that sent SIGTERM would have to kill it (status 128 + 9)."""
    script = 'pwd > started; trap "exit 7" INT; trap "" TERM; while :; do sleep 0.1; done'
    argv = tether_argv(
        HOSTS_PACKAGE.parents[2], ["sh", "-c", script], grace_s=5, cwd=str(tmp_path), stop_signal=signal.SIGINT
    )
    tether = subprocess.Popen([sys.executable, *argv[1:]], stdin=subprocess.PIPE)
    wait_until(lambda: (tmp_path / "started").is_file(), 5, "the command to start in its folder")
    tether.stdin.close()
    assert tether.wait(timeout=4) == 7
    assert (tmp_path / "started").read_text().strip() == str(tmp_path)


@pytest.mark.spawns  # tether.py
def test_the_tether_stops_its_command_when_stdin_falls_silent():
    tether = subprocess.Popen(
        [sys.executable, str(TETHER), "--heartbeat-s", "0.5", "--", "sleep", "300"], stdin=subprocess.PIPE
    )
    sleeper = only_child(tether)
    for _ in range(10):  # a beat every 0.1 s for a second keeps it running
        tether.stdin.write(b"\n")
        tether.stdin.flush()
        time.sleep(0.1)
    assert tether.poll() is None
    silent_since = time.monotonic()
    assert tether.wait(timeout=5) == 128 + signal.SIGTERM
    assert 0.4 <= time.monotonic() - silent_since < 2
    assert gone_within(sleeper, 0)
    tether.stdin.close()


@pytest.mark.spawns  # tether.py
def test_the_tether_kills_the_whole_group_when_sigterm_is_ignored():
    tether = start_tether("sh", "-c", 'trap "" TERM; sleep 300 & wait', grace_s=0.5)
    shell = only_child(tether)
    wait_until(shell.children, 5, "the shell's sleep")
    members = [shell, *shell.children()]
    started = time.monotonic()
    tether.stdin.close()
    assert tether.wait(timeout=5) == 128 + signal.SIGKILL
    assert time.monotonic() - started >= 0.5
    assert all(gone_within(member) for member in members)


@pytest.mark.spawns  # a Python child
def test_the_tether_dies_with_its_parent_even_while_its_stdin_stays_open():
    read_end, write_end = os.pipe()  # we hold the write end: no EOF, only the death signal can act
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; "
            f"subprocess.Popen([sys.executable, {str(TETHER)!r}, '--', 'sleep', '300']); "
            "time.sleep(300)",
        ],
        stdin=read_end,
    )
    os.close(read_end)
    tether = only_child(parent)
    sleeper = only_child(tether)
    parent.kill()
    parent.wait()
    assert gone_within(tether) and gone_within(sleeper)
    os.close(write_end)


@pytest.mark.spawns  # tether.py
def test_the_tether_needs_a_command():
    assert start_tether(stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL).wait(timeout=10) == 2
    assert start_tether("cb-no-such-command", stderr=subprocess.DEVNULL).wait(timeout=10) == 127


def test_clocks_further_apart_than_the_window_allows_are_refused():
    host = Host("root", "h1")
    with pytest.raises(HostsError, match=r"(?s)more than 200 ms .*\n  root@h1: \+250\.0 ms .*chrony"):
        check_clocks({host: ClockReading(0.25, 0.001, 0.002)}, window_s=20)
    check_clocks({host: ClockReading(0.25, 0.001, 0.002)}, window_s=30)  # 300 ms allowed
    assert clock_limit_s(1) == 0.05


def test_the_links_are_those_requests_take_between_the_roles_in_use():
    server, db, load1, load2 = Host("root", "s"), Host("root", "d"), Host("root", "l1"), Host("root", "l2")
    hosts = Hosts(server=server, db=db, loadgen=(load1, load2))
    assert links(hosts, {"server": [], "loadgen": [], "db": []}) == [
        ("loadgen", load1, "server", server),
        ("loadgen", load2, "server", server),
        ("server", server, "db", db),
    ]
    assert links(hosts, {"server": [], "loadgen": []}) == [
        ("loadgen", load1, "server", server),
        ("loadgen", load2, "server", server),
    ]
    assert links(Hosts(db=db), {"server": [], "loadgen": [], "db": []}) == [("server", None, "db", db)]


@pytest.mark.spawns  # a Python child
def test_the_round_trip_measurement_times_connects_from_this_machine():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        samples = connect_times(None, "127.0.0.1", listener.getsockname()[1])
    assert len(samples) == 5 and all(0 < s < 100 for s in samples)


@pytest.mark.spawns  # facts.py
def test_the_facts_of_this_machine():
    done = subprocess.run(
        [sys.executable, str(FACTS), "--tool", "python3", "--tool", "cb-no-such-tool"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    found = json.loads(done.stdout)
    assert found["cores"] == os.cpu_count() and found["kernel"] == platform.release()
    assert found["tools"]["python3"].startswith("Python 3.") and found["tools"]["cb-no-such-tool"] is None
    assert found["memory_gb"] > 0 and found["cpu_model"]

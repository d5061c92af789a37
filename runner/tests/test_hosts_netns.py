"""crossbench.hosts against real hosts: network namespaces running Debian's sshd (tests/netns_hosts.py).
The namespaces share this machine's process table, so what runs "remotely" is visible here through psutil."""

from __future__ import annotations

import contextlib
import os
import platform
import random
import signal
import statistics
import subprocess
import time

import psutil
import pytest
from netns_hosts import gone_within, lab_or_skip, netns_lab  # noqa: F401  (netns_lab is a fixture)
from testkit import wait_until

from crossbench.hosts import HostsError, SshError, SshHost, check_hosts, load_hosts, stop_tethered
from crossbench.hosts.preflight import measure_link, remote_facts

pytestmark = pytest.mark.live
# What a command, a tether or the preflight did shares the cores; a round trip, a clock offset, a netem delay and
# a heartbeat's few seconds are timed, and run alone.
shares_cores = pytest.mark.shares_cores

GONE_WITHIN_S = 5.0


def hosts_of(lab, roles, project_dirs=None):
    return load_hosts(lab.hosts_file(roles, project_dirs))


def marker() -> str:
    """A sleep duration no other process has: it finds the remote process in the process table."""
    return f"{300 + random.randrange(10**6) / 10**6:.6f}"


def find_process(*argv: str, within_s: float = GONE_WITHIN_S) -> psutil.Process:
    return wait_until(
        lambda: next((p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == list(argv)), None),
        within_s,
        f"a process {' '.join(argv)}",
    )


@pytest.fixture(scope="module")
def server(netns_lab):
    hosts = hosts_of(netns_lab, {"server": "server"})
    with SshHost(hosts.server, hosts.ssh_config) as ssh:
        yield ssh


def test_a_command_runs_in_the_host_through_the_master(netns_lab, server, report_figure):
    done = server.run(["ip", "-4", "-o", "addr"], timeout_s=10)
    assert done.returncode == 0, done.stderr
    assert f"inet {netns_lab.hosts['server'].address}/24" in done.stdout
    assert f"10.{netns_lab.subnet}.0.1/" not in done.stdout  # the bridge's address: this machine's side
    round_trips = []
    for _ in range(5):
        started = time.monotonic()
        assert server.run(["true"], timeout_s=10).returncode == 0
        round_trips.append(time.monotonic() - started)
    report_figure(
        f"ssh master open {server.open_s * 1000:.0f} ms; a command through it (`true`) median "
        f"{statistics.median(round_trips) * 1000:.0f} ms, min {min(round_trips) * 1000:.0f} ms"
    )


@shares_cores
def test_arguments_reach_the_host_exactly_as_given(server):
    done = server.run(["printf", "%s|", "a b", "it's", "$HOME", "*", ""], timeout_s=10)
    assert done.stdout == "a b|it's|$HOME|*||"
    assert server.run(["cat"], timeout_s=10, input="through stdin\n").stdout == "through stdin\n"


@shares_cores
def test_a_host_without_sshd_is_refused_naming_it(netns_lab):
    down = hosts_of(netns_lab, {"server": "down"}).server
    ssh = SshHost(down, netns_lab.ssh_config)
    with pytest.raises(SshError, match=rf"{down.label}: ssh could not connect: .*Connection refused"):
        ssh.open()
    assert ssh.master.returncode is not None  # reaped, nothing left


@shares_cores
def test_close_ends_the_master(netns_lab):
    hosts = hosts_of(netns_lab, {"db": "db"})
    with SshHost(hosts.db, hosts.ssh_config) as ssh:
        master = psutil.Process(ssh.master.pid)
        control_dir = ssh.control_dir
        assert list(control_dir.iterdir())  # the master's socket
    assert ssh.master.returncode is not None and not master.is_running()
    assert not control_dir.exists()
    with pytest.raises(SshError, match="not open"):
        ssh.run(["true"], timeout_s=5)


@shares_cores
def test_the_tethered_command_dies_when_the_local_ssh_is_killed(server):
    duration = marker()
    local_ssh = server.start_tethered(["sleep", duration])
    sleeper = find_process("sleep", duration)
    tether = sleeper.parent()
    assert "tether.py" in " ".join(tether.cmdline())
    assert tether.parent().name() == "sshd"  # sshd's session process: PR_SET_PDEATHSIG's parent
    local_ssh.kill()
    local_ssh.wait(timeout=5)
    assert gone_within(sleeper) and gone_within(tether)


@shares_cores
def test_the_tethered_command_dies_when_the_connection_dies_on_the_host(netns_lab):
    hosts = hosts_of(netns_lab, {"db": "db"})
    with SshHost(hosts.db, hosts.ssh_config) as ssh:
        duration = marker()
        local_ssh = ssh.start_tethered(["sleep", duration])
        sleeper = find_process("sleep", duration)
        connection = sleeper.parent().parent()  # one sshd process per connection serves all its sessions
        connection.kill()
        assert gone_within(sleeper)
        local_ssh.wait(timeout=GONE_WITHIN_S)
        ssh.master.wait(timeout=GONE_WITHIN_S)  # the whole connection is gone


def test_the_tethered_command_dies_when_the_network_is_lost():
    """A cut link closes nothing: sshd would wait for the client forever. The heartbeat's silence ends it."""
    with lab_or_skip(["cut"]) as lab:
        hosts = hosts_of(lab, {"server": "cut"})
        with SshHost(hosts.server, hosts.ssh_config) as ssh:
            duration = marker()
            local_ssh = ssh.start_tethered(["sleep", duration], grace_s=1, heartbeat_s=2)
            sleeper = find_process("sleep", duration)
            subprocess.run(["ip", "link", "set", lab.hosts["cut"].veth_outside, "down"], check=True, timeout=10)
            assert gone_within(sleeper, 2 + 2)
            local_ssh.kill()  # it would wait for the master's keep-alives to give up (6 s)
            local_ssh.wait()


@shares_cores
def test_closing_stdin_stops_the_command_gracefully_and_returns_its_status(server):
    duration = marker()
    local_ssh = server.start_tethered(["sleep", duration], grace_s=2)
    sleeper = find_process("sleep", duration)
    assert stop_tethered(local_ssh, grace_s=2) == 128 + signal.SIGTERM
    assert gone_within(sleeper, 0.5)
    exits = server.start_tethered(["sh", "-c", "exit 7"])
    assert exits.wait(timeout=10) == 7
    stop_tethered(exits)


def test_preflight_passes_and_measures_clocks_and_round_trips(netns_lab, report_figure):
    hosts = hosts_of(netns_lab, {"server": "server", "db": "db", "loadgen": ["load"]})
    found = check_hosts(hosts, {"server": ["ip"], "db": ["sh"], "loadgen": ["python3"]}, window_s=20)
    assert found["clock_limit_s"] == 0.2
    assert set(found["hosts"]) == {h.label for h in hosts.all()}
    for label, host in found["hosts"].items():
        assert abs(host["clock_offset_s"]) < 0.05, label  # one kernel clock: only the measurement's error
        assert 0 < host["clock_uncertainty_s"] < 0.05 and 0 < host["ssh_open_s"] < 5
        assert host["facts"]["cores"] == os.cpu_count() and host["facts"]["kernel"] == platform.release()
    assert found["hosts"][hosts.loadgen[0].label]["roles"] == ["loadgen"]
    links = {(link["from"], link["to"]): link for link in found["network"]}
    assert set(links) == {
        (f"loadgen {hosts.loadgen[0].label}", f"server {hosts.server.label}"),
        (f"server {hosts.server.label}", f"db {hosts.db.label}"),
    }
    for link in links.values():
        assert 0 < link["rtt_ms"] < 4 and len(link["samples_ms"]) == 5
    report_figure(
        "preflight, 3 namespace hosts: clock offsets "
        + ", ".join(
            f"{h['clock_offset_s'] * 1e3:+.2f} ms (+/- {h['clock_uncertainty_s'] * 1e3:.2f})"
            for h in found["hosts"].values()
        )
        + "; RTT "
        + ", ".join(
            f"{link['from'].split()[0]}->{link['to'].split()[0]} {link['rtt_ms']:.3f} ms" for link in links.values()
        )
    )


@shares_cores
def test_preflight_refuses_a_host_without_sshd(netns_lab):
    hosts = hosts_of(netns_lab, {"server": "server", "db": "down"})
    with pytest.raises(HostsError, match=rf"cannot reach every host over SSH:\n  {hosts.db.label}: .*refused"):
        check_hosts(hosts, {"server": [], "db": []}, window_s=20)


@shares_cores
def test_preflight_refuses_a_missing_tool_and_a_missing_checkout(netns_lab):
    hosts = hosts_of(netns_lab, {"server": "server", "loadgen": ["load"]}, project_dirs={"load": "/nowhere"})
    with pytest.raises(HostsError) as refused:
        check_hosts(hosts, {"server": ["sh", "cb-no-such-tool"], "loadgen": ["python3"]}, window_s=20)
    message = str(refused.value)
    assert f"{hosts.server.label} (server): missing cb-no-such-tool" in message
    assert f"{hosts.loadgen[0].label}: no project checkout at /nowhere" in message


@shares_cores
def test_the_hosts_facts(server):
    facts = remote_facts(server, ["python3", "cb-no-such-tool"])
    assert facts["cores"] == os.cpu_count() and facts["kernel"] == platform.release()
    assert facts["tools"]["python3"].startswith("Python 3.") and facts["tools"]["cb-no-such-tool"] is None


def test_a_netem_delay_shows_in_the_round_trip(report_figure):
    with lab_or_skip(["server", "load"]) as lab:
        hosts = hosts_of(lab, {"server": "server", "loadgen": ["load"]})
        with SshHost(hosts.server, hosts.ssh_config) as server, SshHost(hosts.loadgen[0], hosts.ssh_config) as load:
            connections = {hosts.server: server, hosts.loadgen[0]: load}
            before = measure_link("loadgen", hosts.loadgen[0], "server", hosts.server, connections)["rtt_ms"]
            try:
                lab.add_delay("load", 5)
            except RuntimeError as e:
                pytest.skip(f"no netem on this kernel (sch_netem): {e}")
            after = measure_link("loadgen", hosts.loadgen[0], "server", hosts.server, connections)["rtt_ms"]
    report_figure(f"RTT load->server: {before:.3f} ms, with netem delay 5 ms {after:.3f} ms")
    assert after >= before + 4


@shares_cores
def test_everything_is_removed_also_when_the_test_fails():
    lab = lab_or_skip(["solo"])
    with contextlib.ExitStack() as ours:  # the master and the local ssh, closed only after the lab
        with pytest.raises(RuntimeError, match="the test failed"), lab:
            hosts = hosts_of(lab, {"server": "solo"})
            ssh = ours.enter_context(SshHost(hosts.server, hosts.ssh_config))
            duration = marker()
            local_ssh = ssh.start_tethered(["sleep", duration])
            ours.callback(stop_tethered, local_ssh, 0)
            sleeper = find_process("sleep", duration)
            raise RuntimeError("the test failed")
        assert gone_within(sleeper)
        assert lab.leftovers() == []

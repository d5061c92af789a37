"""The declared seams between the runner's parts: both hosts satisfy the Host protocol (hosts/protocol.py) and every
registered server's probe satisfies the Probe protocol (servers/probe.py), member by member with the same
parameters (names, kinds, defaults), not only by name as isinstance on a runtime_checkable Protocol does."""

from __future__ import annotations

import ast
import inspect
from types import SimpleNamespace

import pytest

from crossbench import paths, servers
from crossbench.hosts import Host as HostsFileEntry
from crossbench.hosts import SshHost
from crossbench.hosts.local import HERE, LocalHost
from crossbench.hosts.protocol import Host
from crossbench.hosts.remote import RemoteHost
from crossbench.sampling.db_pool import ProcessLogProbe
from crossbench.servers.probe import Probe
from crossbench.servers.tomcat_probe import BackgroundJvmProbe


def members(protocol) -> dict[str, object]:
    """What a Protocol declares: its annotated attributes (None), properties and methods, by name."""
    found = {name: None for name in vars(protocol).get("__annotations__", {})}
    found.update(
        {
            name: value
            for name, value in vars(protocol).items()
            if not name.startswith("_") and isinstance(value, (property, type(members)))
        }
    )
    return found


def parameters(function) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def unmet(thing, protocol) -> list[str]:
    """How `thing` (an instance) falls short of `protocol`: a member missing, a method that is not one, or one
    whose parameters differ in name, kind or default from the declared ones."""
    problems = []
    for name, declared in members(protocol).items():
        if not hasattr(thing, name):
            problems.append(f"{name}: missing")
        elif inspect.isfunction(declared):
            own = inspect.getattr_static(type(thing), name, None)
            if not inspect.isfunction(own):
                problems.append(f"{name}: not a method")
            elif parameters(own) != parameters(declared):
                problems.append(f"{name}{inspect.signature(own)} is not {name}{inspect.signature(declared)}")
        elif callable(getattr(thing, name)):
            problems.append(f"{name}: a method, declared an attribute")
    return problems


def remote() -> RemoteHost:
    return RemoteHost(SshHost(HostsFileEntry("root", "10.77.0.4")), 0.25, "10.77.0.4")


def test_the_protocols_declare_the_surface():
    assert {
        "label",
        "on",
        "address",
        "clock_offset_s",
        "last_start_s",
        "last_argv",
        "probes_starting_servers",
        "free_port",
        "server",
        "start_server",
        "pin",
        "stop_server",
        "tree",
        "cpu_percent",
        "run_bounded",
        "sampler",
        "jvm_probe",
        "socket_census",
        "database",
        "pgbouncer",
    } == set(members(Host))
    assert {"latest", "server_ready", "wait_attached", "waiting_now", "stop", "figures"} == set(members(Probe))


@pytest.mark.parametrize("host", [HERE, LocalHost("10.77.0.1"), remote()], ids=["HERE", "LocalHost", "RemoteHost"])
def test_both_hosts_satisfy_the_host_protocol(host):
    assert unmet(host, Host) == []
    assert isinstance(host, Host)


def test_a_host_missing_a_member_or_with_other_parameters_is_told():
    class Lacking(LocalHost):
        def run_bounded(self, cmd, out_dir, tool, limit_s, env=None):  # no start_at
            return None

    problems = unmet(Lacking(), Host)
    assert len(problems) == 1 and problems[0].startswith("run_bounded(")
    assert unmet(SimpleNamespace(), Probe) == [f"{name}: missing" for name in members(Probe)]


@pytest.mark.parametrize("module", ["hosts/protocol.py", "servers/probe.py"])
def test_a_protocol_module_imports_nothing_from_the_package(module):
    tree = ast.parse((paths.RUNNER / "crossbench" / module).read_text())
    imported = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    standard = ("__future__", "pathlib", "typing")
    assert all(isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in standard for node in imported), (
        module
    )


class StubJvm:
    """The JVM probe's surface as BackgroundJvmProbe uses it, attaching to nothing."""

    returncode, start_timeout_s, stderr_tail, jvm_info = None, 1.0, "", None

    def start(self):
        pass

    def stop(self):
        pass

    def latest(self):
        return None

    def latest_line(self):
        return None


def server_host() -> SimpleNamespace:
    return SimpleNamespace(clock_offset_s=0.0, jvm_probe=lambda pid, **kwargs: StubJvm())


@pytest.mark.parametrize("server", sorted(servers.PLUGINS))
def test_every_registered_server_s_probe_when_present_satisfies_the_probe_protocol(server, tmp_path):
    probe = servers.PLUGINS[server].probe(4242, tmp_path, server_host())
    if probe is None:
        return
    try:
        assert unmet(probe, Probe) == []
        assert isinstance(probe, Probe)
    finally:
        probe.stop()


def test_the_servers_make_both_kinds_of_probe(tmp_path):
    """The check above is not vacuous: the registered servers make Tomcat's JVM probe and the pool files' one."""
    made = set()
    for plugin in servers.PLUGINS.values():
        probe = plugin.probe(4242, tmp_path, server_host())
        if probe is not None:
            made.add(type(probe))
            probe.stop()
    assert {BackgroundJvmProbe, ProcessLogProbe} <= made

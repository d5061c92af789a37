"""What --hosts places and what it refuses before anything starts (no network needed)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from crossbench import paths, servers
from crossbench.database.stack import needs_database
from crossbench.drivers import DRIVERS
from crossbench.hosts import HostsError, load_hosts
from crossbench.hosts.hostsfile import ROLES
from crossbench.loadgen.spread import MERGERS, shares
from crossbench.plan.experiment import apply_overrides, expand, load
from crossbench.run import open_placement as placement
from crossbench.servers import python_app
from crossbench.servers.gunicorn import PLUGIN as GUNICORN
from crossbench.servers.tomcat import PLUGIN as TOMCAT


def hosts(tmp_path, roles: str):
    path = tmp_path / "hosts.toml"
    path.write_text("[roles]\n" + roles)
    return load_hosts(path)


def quick(**overrides):
    return expand(apply_overrides(load("quick"), overrides))


def test_load_hosts_run_the_cells_of_every_seed(tmp_path):
    two = hosts(tmp_path, 'loadgen = ["root@10.0.0.2", "root@10.0.0.3"]\n')
    assert len(two.loadgen) == 2
    kinds = set()
    for name in ("quick", "seed000-quick", "seed001-quick", "seed004-quick", "openloop-quick"):
        cells = expand(apply_overrides(load(name), {}))
        assert cells, name
        placement.refuse_unbuilt(two, cells)  # refuses none of them
        # what lets two load hosts run a cell: the tool they run has results that merge exactly
        assert {placement.load_tool(c) for c in cells} <= set(MERGERS), name
        kinds |= {c.kind for c in cells}
    # the seeds checked hold a cell of every kind that spreads over load hosts (hold_connections does not: seed 003)
    assert kinds == {kind for kind, driver in DRIVERS.items() if driver.on_hosts and not driver.one_load_host}
    assert {placement.load_tool(c) for c in expand(apply_overrides(load("seed000-quick"), {}))} == {"ab", "wrk"}


def test_every_role_may_have_a_host_of_its_own(tmp_path):
    every = hosts(
        tmp_path,
        'server = "root@10.0.0.2"\ndb = "root@10.0.0.3"\nproxy = "root@10.0.0.4"\nloadgen = ["root@10.0.0.5"]\n',
    )
    assert set(ROLES) == {"server", "db", "proxy", "loadgen"}  # a new role: give it a host here too
    assert [h.address for h in every.all()] == ["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"]  # in role order
    seed004 = expand(apply_overrides(load("seed004-quick"), {}))
    # its cells need every role: a database, PgBouncer beside the server, nginx in front of it
    assert all(needs_database(c) for c in seed004)
    assert any(c.pooler for c in seed004) and any(c.proxy for c in seed004)
    placement.refuse_unbuilt(every, seed004)
    assert placement.server_tools(every, seed004)[1:] == ["pgbouncer", "psql"]  # what the server's host must have


def test_a_load_generator_whose_results_do_not_merge_is_refused(tmp_path):
    with pytest.raises(HostsError, match="measured with http_load; load hosts run .* cells with wrk, ab, oha, k6"):
        placement.refuse_unbuilt(hosts(tmp_path, 'loadgen = ["root@10.0.0.2"]\n'), quick(loadgen="http_load"))
    seed003 = expand(apply_overrides(load("seed003-quick"), {}))
    placement.refuse_unbuilt(hosts(tmp_path, 'loadgen = ["root@10.0.0.2"]\n'), seed003)
    with pytest.raises(HostsError, match="runs from one load host"):
        placement.refuse_unbuilt(hosts(tmp_path, 'loadgen = ["root@10.0.0.2", "root@10.0.0.3"]\n'), seed003)


def test_connections_split_as_evenly_as_whole_numbers_allow():
    assert shares(100, 2) == [50, 50] and shares(7, 3) == [3, 2, 2] and shares(1, 1) == [1]
    assert sum(shares(1001, 4)) == 1001


def test_a_server_on_its_own_host_needs_its_database_on_a_host_too(tmp_path):
    server = hosts(tmp_path, 'server = "root@10.0.0.2"\n')
    placement.refuse_unbuilt(server, quick())
    seed004 = expand(apply_overrides(load("seed004-quick"), {}))
    plain = [c for c in seed004 if c.group in ("db", "pools")]
    with pytest.raises(HostsError, match="cannot reach a database on this machine's loopback"):
        placement.refuse_unbuilt(server, plain)
    both = hosts(tmp_path, 'server = "root@10.0.0.2"\ndb = "root@10.0.0.3"\n')
    placement.refuse_unbuilt(both, seed004)  # PgBouncer's cells too: it runs beside the server
    placement.refuse_unbuilt(server, expand(apply_overrides(load("seed003-quick"), {})))


class FakeLoadHost:
    """What run_spread reads of a load host after its run (the real one is tested in test_hosts_run_live.py)."""

    def __init__(self, label: str, cpu: float):
        self.label, self.cpu, self.last_start_s, self.last_argv = label, cpu, None, ["wrk", label]

    def cpu_percent(self) -> float:
        return self.cpu


def test_a_load_host_at_the_end_of_its_core_flags_the_cell():
    from crossbench.loadgen.base import LoadResult, LoadSpec, empty_errors
    from crossbench.loadgen.spread import run_spread

    def run(spec, out_dir, share, shares_):
        return LoadResult(
            "wrk",
            "x",
            100,
            10.0,
            1000,
            empty_errors(),
            {},
            "wrk.",
            (),
            {"histogram_us": [[1000, 100]], "command": ["wrk"]},
        )

    spec = LoadSpec(urls=("http://10.0.0.1:80/hello",), concurrency=10, duration_s=10, timeout_s=5, threads=1)
    merged, flags = run_spread(
        "wrk", spec, Path("/nonexistent"), [FakeLoadHost("a", 40.0), FakeLoadHost("b", 95.0)], run=run
    )
    assert flags == ["loadgen_saturated"] and merged.requests == 200
    assert [h["cpu_percent"] for h in merged.extra["per_host"]] == [40.0, 95.0]
    assert [h["command"] for h in merged.extra["per_host"]] == [["wrk", "a"], ["wrk", "b"]]
    _, calm = run_spread("wrk", spec, Path("/nonexistent"), [FakeLoadHost("a", 40.0), FakeLoadHost("b", 50.0)], run=run)
    assert calm == []


def test_nginx_is_given_absolute_paths_from_a_relative_run_directory(tmp_path, monkeypatch):
    """--out results/x: nginx reads -e and its configuration's paths against its prefix, so a relative prefix would
    be named twice (every nginx cell of such a run failed to start)."""
    from crossbench import servers

    monkeypatch.chdir(tmp_path)
    plugin = servers.get("nginx")
    spec = plugin.spec(plugin.variants({})[0], 8081, "results/x/cells/c1/server")
    prefix, error_log = spec.argv[spec.argv.index("-p") + 1], spec.argv[spec.argv.index("-e") + 1]
    assert prefix == str(tmp_path / "results/x/cells/c1/server/nginx-8081")
    assert error_log.startswith(prefix + "/") and spec.argv[spec.argv.index("-c") + 1].startswith(prefix + "/")


class HereAsHost:
    """A server host whose files are this machine's: what it is asked to run runs here."""

    def __init__(self, host):
        self.host = host

    def run(self, argv, timeout_s):
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)


def server_host(tmp_path, project_dir: Path):
    path = tmp_path / "hosts.toml"
    path.write_text(f'[roles]\nserver = "root@10.0.0.2"\n[project_dir]\n"root@10.0.0.2" = "{project_dir}"\n')
    found = load_hosts(path)
    return found, {found.server: HereAsHost(found.server)}


def reading(*files: Path) -> SimpleNamespace:
    """A cell whose server reads `files` here."""
    return SimpleNamespace(server="mine", settings={}, plugin=SimpleNamespace(reads=lambda settings: files))


@pytest.mark.spawns  # sh, standing for the host's
def test_what_the_server_reads_must_be_on_its_host_at_the_same_path_or_in_its_copy_of_the_checkout(tmp_path):
    theirs = tmp_path / "theirs.war"
    theirs.write_bytes(b"PK")
    copy = tmp_path / "copy"
    (copy / "examples").mkdir(parents=True)
    found, connections = server_host(tmp_path, copy)
    placement.refuse_missing_reads(found, connections, [reading(theirs, paths.REPO / "examples")])  # both there
    gone = tmp_path / "gone.war"
    with pytest.raises(HostsError) as refused:
        placement.refuse_missing_reads(found, connections, [reading(theirs, gone, paths.REPO / "tornado-app")])
    said = str(refused.value)
    assert said.startswith("--hosts: the server's host root@10.0.0.2 lacks what the server reads here: ")
    named = said.split(" lacks what the server reads here: ")[1].split(". ./runner/hosts.sh")[0]
    assert sorted(named.split(", ")) == sorted(
        [str(gone), f"{copy / 'tornado-app'} (this checkout's {paths.REPO / 'tornado-app'})"]
    )
    assert "./runner/hosts.sh setup copies this checkout there" in said and "rsync -aR PATH root@10.0.0.2:/" in said
    assert str(theirs) not in said


def test_a_server_s_plugin_says_what_it_reads_here(tmp_path):
    war = tmp_path / "shop.war"
    war.write_bytes(b"PK")
    assert TOMCAT.reads(TOMCAT.settings({"war": str(war)}))[-1] == war
    assert TOMCAT.reads(TOMCAT.settings({}))[0].is_dir()  # its JDK
    assert GUNICORN.reads(GUNICORN.settings({})) == ()  # the project's own environment: in this checkout
    app = GUNICORN.settings({"app": "wsgi_app:app", "app_dir": str(tmp_path)})
    assert GUNICORN.reads(app) == (tmp_path, python_app.environment(app).path)
    (declared,) = servers.declared.plugins(
        {"mine": {"command": ["/bin/sh", "-c", "{port}"], "workdir": str(tmp_path), "endpoints": ["/hello"]}},
        "test",
    ).values()
    assert declared.reads({}) == (tmp_path, Path("/bin/sh"))

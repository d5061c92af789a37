"""What --hosts places and what it refuses before anything starts (no network needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crossbench.database.stack import needs_database
from crossbench.drivers import DRIVERS
from crossbench.hosts import HostsError, load_hosts
from crossbench.hosts.hostsfile import ROLES
from crossbench.loadgen.spread import MERGERS, shares
from crossbench.plan.experiment import apply_overrides, expand, load
from crossbench.run import open_placement as placement


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

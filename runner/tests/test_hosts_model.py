"""One host model: this machine and a host of its own offer one surface, the run's placement puts every role on a
host, and nothing outside crossbench/hosts/ asks where a process runs."""

from __future__ import annotations

import re
from pathlib import Path

from crossbench import paths
from crossbench.cell.cell_context import CellContext
from crossbench.hosts import Host, SshHost
from crossbench.hosts.local import HERE, LocalHost
from crossbench.hosts.placement import Placement
from crossbench.hosts.remote import RemoteHost
from crossbench.loadgen.base import LoadSpec
from crossbench.loadgen.spread import Here, Spread

SURFACE = (
    "label",
    "on",
    "address",
    "clock_offset_s",
    "free_port",
    "server",
    "start_server",
    "stop_server",
    "tree",
    "run_bounded",
    "cpu_percent",
    "sampler",
    "jvm_probe",
    "socket_census",
    "pgbouncer",
    "database",
)
# where a process runs, asked outside hosts/: a role's host tested for None or truth, a host's class tested
WHERE_BRANCH = re.compile(
    r"\bif\s+(not\s+)?[\w.]*(host|hosts|_host|load_hosts)\b(?!\.)|\bhost\s+(is|is not)\s+None"
    r"|\bhost\s+else\b|isinstance\([^)]*(LocalHost|RemoteHost)"
)


def remote() -> RemoteHost:
    return RemoteHost(SshHost(Host("root", "10.77.0.4")), 0.25, "10.77.0.4")


def test_this_machine_and_a_host_of_its_own_offer_one_surface():
    for host in (LocalHost("10.77.0.1"), remote()):
        missing = [name for name in SURFACE if not hasattr(host, name)]
        assert not missing, f"{type(host).__name__} lacks {missing}"
    assert (HERE.clock_offset_s, HERE.on, HERE.address) == (0.0, "", "127.0.0.1")
    assert remote().on == " on root@10.77.0.4" and remote().clock_offset_s == 0.25


def test_without_a_hosts_file_every_role_is_on_this_machine():
    placement = CellContext(cell_dir=Path("/nonexistent")).placement
    assert isinstance(placement, Placement) and isinstance(placement.load, Here)
    assert all(
        isinstance(h, LocalHost)
        for h in (placement.server_host, placement.proxy_host, placement.db_host, *placement.load.hosts)
    )
    snapshot = placement.noise_snapshot()  # this machine's counters are the cell's
    assert snapshot is not None and snapshot.passive_opens is not None
    assert Placement(load=Spread([remote()])).noise_snapshot() is None
    assert Placement(server_host=remote()).noise_snapshot() is None


def test_a_load_from_here_is_one_run_in_the_cells_own_directory(tmp_path):
    """As before hosts existed: one run, no loadgen-<n>/ directory, no share of anything, no per-host fields."""
    calls = []
    spec = LoadSpec(urls=("http://127.0.0.1:1/hello",), concurrency=8, duration_s=1, timeout_s=2, cpus=(1,))
    result, flags = Here(HERE).run("wrk", spec, tmp_path, run=lambda *args: calls.append(args) or "result")
    assert (result, flags) == ("result", [])
    ((ran, out_dir, share, shares),) = calls
    assert out_dir == tmp_path and (share, shares) == (0, 1)
    assert ran.host is HERE and ran.concurrency == 8 and ran.cpus == (1,) and ran.start_at is None
    assert Here(HERE).start_at() is None and Here(HERE).record_fields(result) == {}


def test_nothing_outside_hosts_asks_where_a_process_runs():
    found = []
    for source in (paths.RUNNER / "crossbench").rglob("*.py"):
        if source.parent.name == "hosts" or source.name == "open_placement.py":
            continue  # the host model, and what --hosts refuses before a run (the hosts file's roles)
        for number, line in enumerate(source.read_text().splitlines(), 1):
            if WHERE_BRANCH.search(line):
                found.append(f"{source.relative_to(paths.REPO)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)

"""Where a run's roles run (`--hosts FILE`): every role on this machine without it; with it, the hosts file's
roles on hosts of their own, reached over one SSH master each (crossbench.hosts), checked before the first cell
(reachable, tools there, clock offset, RTT) and recorded in the run's metadata.

Every role can have a host of its own: load generators (wrk, oha, k6 and ab, on one or several load hosts, merged
exactly), the server (with PgBouncer beside it on its host), nginx in front of it, and the database, each sampled
beside itself. What runs here listens on this machine's address that faces the hosts that must reach it. A server
on a host of its own reads there what it reads here (a user's WAR, app folder or working directory, a Python
environment of its own): at the same path, or in the host's copy of this checkout, checked before the first cell.
Not placed yet (refused before the run starts): seed 003's held connections from several load hosts (one client
holds them)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from crossbench import servers
from crossbench.database.stack import needs_database
from crossbench.drivers import DRIVERS
from crossbench.hosts import HostsError, check_hosts, load_hosts, open_masters
from crossbench.hosts.placement import Placement, place
from crossbench.loadgen import get as get_adapter
from crossbench.loadgen.spread import MERGERS
from crossbench.plan.cellplan import one_per_variant

# prints each of its arguments that does not exist, one a line
MISSING = 'for p in "$@"; do [ -e "$p" ] || printf "%s\\n" "$p"; done'
LOOKUP_LIMIT_S = 15.0


def refuse_unbuilt(hosts, cells) -> None:
    """What --hosts cannot place yet, said before anything starts."""
    remote_kinds = [kind for kind, driver in DRIVERS.items() if driver.on_hosts]
    for cell in cells:
        if hosts.loadgen and DRIVERS[cell.kind].one_load_host:
            if len(hosts.loadgen) > 1:
                raise HostsError(
                    f"--hosts: {cell.cell_id}: a {cell.kind} cell runs from one load host (its "
                    "connections are held by one client process): give it one"
                )
        elif hosts.loadgen and (cell.kind not in remote_kinds or load_tool(cell) not in MERGERS):
            raise HostsError(
                f"--hosts: {cell.cell_id} is a {cell.kind} cell measured with {load_tool(cell)}; load "
                f"hosts run {', '.join(remote_kinds)} cells with {', '.join(MERGERS)} so far"
            )
        if hosts.server and cell.kind not in remote_kinds:
            raise HostsError(
                f"--hosts: {cell.cell_id}: a server on its own host runs {', '.join(remote_kinds)} cells so far"
            )
        if hosts.server and needs_database(cell) and not hosts.db:
            raise HostsError(
                f"--hosts: {cell.cell_id}: a server on its own host cannot reach a database on this "
                "machine's loopback: give the db role a host too"
            )


def refuse_missing_reads(hosts, connections, cells) -> None:
    """What the server reads here (ServerPlugin.reads) that its host does not have, named before anything
    starts, with the way to give it: this checkout's by ./runner/hosts.sh setup, the rest at the same paths."""
    if not hosts.server:
        return
    here = {path for cell in one_per_variant(cells) for path in cell.plugin.reads(cell.settings)}
    there = {str(hosts.server.there(path)): path for path in sorted(here)}
    if not there:
        return
    ssh = connections[hosts.server]
    done = ssh.run(["sh", "-c", MISSING, "sh", *there], timeout_s=LOOKUP_LIMIT_S)
    if done.returncode != 0:
        raise HostsError(f"--hosts: cannot look for the server's files on {ssh.host.label}: {done.stderr.strip()}")
    missing = done.stdout.splitlines()
    if missing:
        named = [path if str(there[path]) == path else f"{path} (this checkout's {there[path]})" for path in missing]
        raise HostsError(
            f"--hosts: the server's host {ssh.host.label} lacks what the server reads here: {', '.join(named)}. "
            "./runner/hosts.sh setup copies this checkout there; put the rest at the same paths "
            f"(rsync -aR PATH {ssh.host.destination}:/)"
        )


def server_tools(hosts, cells) -> list[str]:
    """The server's host needs the project's Python; with PgBouncer cells, pgbouncer and psql beside it."""
    if not hosts.server:
        return []
    return [str(hosts.server.python), *(("pgbouncer", "psql") if any(c.pooler for c in cells) else ())]


def load_tool(cell) -> str:
    """The tool a cell's load hosts run: its driver's background tool (seed 000's probe cells: wrk) or its loadgen."""
    return DRIVERS[cell.kind].load_tool or cell.loadgen


def loadgen_binary(tool: str) -> str:
    """What a load host must have for `tool`: the pinned build's path where the adapter has one (oha), its name
    on PATH otherwise; the same path on every host (hosts.sh setup gives them this checkout's layout)."""
    binary = get_adapter(tool).binary
    return (binary() if binary else None) or tool


def open_placement(hosts_file: Path | None, cells, window_s: float, stack: ExitStack) -> Placement:
    """The run's placement; the SSH masters it opens are closed by `stack` (in the run's finally)."""
    if hosts_file is None:
        return Placement()
    hosts = load_hosts(hosts_file)
    refuse_unbuilt(hosts, cells)
    connections = open_masters(hosts, stack)
    refuse_missing_reads(hosts, connections, cells)
    tools = {
        "loadgen": sorted({loadgen_binary(load_tool(c)) for c in cells if not DRIVERS[c.kind].one_load_host}),
        "server": server_tools(hosts, cells),
        **({"db": [str(hosts.db.python)]} if hosts.db else {}),
        **({"proxy": [t.what for t in servers.proxy().tools]} if hosts.proxy or any(c.proxy for c in cells) else {}),
    }
    return place(hosts, connections, check_hosts(hosts, tools, window_s, connections))

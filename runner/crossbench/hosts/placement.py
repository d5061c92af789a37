"""Which host plays each role of a run: a RemoteHost for a role the hosts file names, this machine (a LocalHost,
listening where the hosts that reach it can) for every other. Decided once, before the first cell; the cell and
its roles use the hosts they are given and never ask where they run."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

from ..loadgen.spread import Here, Spread
from ..oskit import HOST
from ..sampling.noise import Snapshot
from .local import HERE, LocalHost
from .remote import RemoteHost


@dataclass
class Placement:
    load: Here | Spread = field(default_factory=lambda: Here(HERE))  # where the load generators run
    server_host: LocalHost | RemoteHost = field(default_factory=LocalHost)
    proxy_host: LocalHost | RemoteHost = field(default_factory=LocalHost)  # nginx's, for proxied cells
    db_host: LocalHost | RemoteHost = field(default_factory=LocalHost)  # the run's database's
    db_clients: tuple[str, ...] = ()  # the addresses the database on its host lets in (this machine, the server)
    checks: dict | None = None  # the preflight's findings, for the run's metadata

    def server_is_here(self) -> bool:
        """The server runs on this machine, so what it keeps between starts (a cache) is kept here."""
        return isinstance(self.server_host, LocalHost)

    def noise_snapshot(self) -> Snapshot | None:
        """This machine's kernel counters (steal, CPU per core, connections accepted) when the server and its
        load both run here, so that they are the cell's; None when either runs on a host of its own."""
        here = all(isinstance(host, LocalHost) for host in (self.server_host, *self.load.hosts))
        return Snapshot.take() if here else None


def facing_address(address: str, port: int) -> str:
    """This machine's own address on the route to a host (no packet is sent: a UDP socket only picks a route)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((address, port))
        return probe.getsockname()[0]


def place(hosts, connections: dict, checks: dict) -> Placement:
    """The placement of a hosts file's roles (`connections`: each host's open SSH master; `checks`: the preflight's
    findings, with each host's clock offset). What runs here listens where the hosts that reach it can: nginx's
    clients are the load hosts, the server's are nginx's host (proxied cells) or the load hosts."""
    offset = {h.label: checks["hosts"][h.label]["clock_offset_s"] for h in hosts.all()}

    def remote(host) -> RemoteHost:
        return RemoteHost(connections[host], offset[host.label], connections[host].resolved_address()[0])

    def facing(host) -> str:
        return facing_address(*connections[host].resolved_address())

    load = Spread([remote(h) for h in hosts.loadgen]) if hosts.loadgen else Here(HERE)
    load_side = facing(hosts.loadgen[0]) if hosts.loadgen else HOST
    proxy_host = remote(hosts.proxy) if hosts.proxy else LocalHost(load_side)
    server_host = remote(hosts.server) if hosts.server else LocalHost(facing(hosts.proxy) if hosts.proxy else load_side)
    db_host = remote(hosts.db) if hosts.db else LocalHost()
    clients = (facing(hosts.db), *((server_host.address,) if hosts.server else ())) if hosts.db else ()
    return Placement(load, server_host, proxy_host, db_host, clients, checks)

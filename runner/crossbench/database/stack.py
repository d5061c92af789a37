"""What stands around the server in a cell: the database its database endpoints read (one per run, started on
first need and started again before a cell if it died), PgBouncer between them when the cell's group asks for a
pooler, and nginx in front when it asks for a proxy. The cell samples each beside the server."""

from __future__ import annotations

import shutil
from pathlib import Path

from crossbench import servers
from crossbench.database import Cluster, DatabaseError, ensure_tables, psql, tables_missing
from crossbench.database.cluster import DatabaseMissing, bin_dir
from crossbench.database.pgbouncer import INSTALL_HINT as PGBOUNCER_HINT
from crossbench.sampling.process_tree import ProcessTreeSampler
from crossbench.servers import DB_ENDPOINTS, RunningServer

DB_CONNECTION_MARGIN = 20  # postgres connections beyond the largest pool total: psql, checks, a spare


def needs_database(plan) -> bool:
    return plan.endpoint in DB_ENDPOINTS


def preflight(cells, existing_url: str | None) -> None:
    """Database cells need PostgreSQL's binaries (unless --db-url names a server), pooled cells PgBouncer: said
    before the first cell, with the package to install."""
    if not existing_url and any(needs_database(c) for c in cells):
        bin_dir()
    if any(c.pooler for c in cells) and not shutil.which("pgbouncer"):
        raise DatabaseMissing(f"pgbouncer not found: {PGBOUNCER_HINT}")


class RunDatabase:
    """The run's database: a cluster of its own in the run directory, or an existing server (--db-url)."""

    def __init__(
        self, run_dir: Path, *, existing_url: str | None = None, cpus: tuple[int, ...] = (), max_connections: int = 200
    ):
        self.run_dir = Path(run_dir)
        self.existing_url = existing_url
        self.cpus = cpus
        self.max_connections = max_connections + DB_CONNECTION_MARGIN
        self.cluster: Cluster | None = None
        self.starts = 0

    def check_existing(self) -> None:
        """--db-url: refused before anything runs when the tables are not there (with the load command)."""
        if self.existing_url:
            missing = tables_missing(self.existing_url)
            if missing:
                raise DatabaseError(missing)

    def url(self) -> str:
        """The database's URL, with a running database behind it (started, or started again if it died)."""
        if self.existing_url:
            return self.existing_url
        if self.cluster is None or not self.cluster.alive():
            self.stop()
            self.cluster = Cluster(
                self.run_dir / "database", max_connections=self.max_connections, cpus=self.cpus
            ).start()
            self.starts += 1
            ensure_tables(self.cluster.url)
        return self.cluster.url

    def alive(self) -> bool:
        """The database still answers (the run's own cluster: its postmaster is running)."""
        if self.existing_url:
            return psql(self.existing_url, "SELECT 1", check=False, timeout_s=10).returncode == 0
        return self.cluster is not None and self.cluster.alive()

    @property
    def pid(self) -> int | None:
        """The postmaster, whose tree the cell samples (None for a database the run does not own)."""
        return self.cluster.pid if self.cluster and self.cluster.alive() else None

    def sampler(self, out_csv: Path, interval_s: float) -> ProcessTreeSampler | None:
        """The database's process tree beside the server's (its own CSV); None for a database not the run's."""
        return self.cluster.sampler(out_csv, interval_s) if self.cluster else None

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None


def proxy(plan, server: RunningServer, cell_dir: Path, host) -> RunningServer:
    """The proxy plug-in in front of the cell's server, with the plan's proxy settings, config rendered in the
    cell, on its host (crossbench.hosts), listening on the address the load reaches it at."""
    plugin = servers.proxy()
    work = cell_dir / "proxy"
    work.mkdir(parents=True, exist_ok=True)
    spec = plugin.proxy_spec(
        plan.proxy,
        host.free_port(),
        server.spec.port,
        work,
        plan.server_cpus,
        address=host.address,
        upstream_address=server.spec.address,
    )
    return host.server(spec, cell_dir)


POOLER_CLIENT_MARGIN = 10  # pooler client slots beyond the server's pools: verify's and a spare


def app_connections(plan) -> int | None:
    """The database connections the server's own pools may hold, over all its processes."""
    pool = plan.settings.get("db_pool")
    return pool * plan.plugin.process_count(plan.settings) if pool else None


def pooler_connections(plan) -> int | None:
    """The server connections PgBouncer holds: the group's pooler_pool, or as many as the server's pools."""
    return (plan.pooler.get("pool_size") or app_connections(plan) or 1) if plan.pooler else None


def pooler(plan, db_url: str, cell_dir: Path, host):
    """PgBouncer between the cell's server and the database, beside the server on its host (`host`); here its
    config is kept in the cell's `pgbouncer/`."""
    clients = app_connections(plan) or 1
    return host.pgbouncer(
        db_url, cell_dir / "pgbouncer", pooler_connections(plan), clients + POOLER_CLIENT_MARGIN, plan.server_cpus
    )


def database_figures(plan, count) -> dict:
    """The record's database fields for a database cell (count: verify's query count)."""
    return {
        "db_connections_total": app_connections(plan),
        "pooler_connections": pooler_connections(plan),
        "queries_expected": count.expected,
        "queries_counted": count.counted,
    }


__all__ = ["RunDatabase", "app_connections", "database_figures", "needs_database", "pooler", "proxy"]

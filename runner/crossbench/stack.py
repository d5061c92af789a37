"""What stands around the server in a cell: the database its database endpoints read (one per run, started on
first need and started again before a cell if it died), and nginx in front when the cell's group asks for a
proxy. The cell samples both beside the server."""
from __future__ import annotations

from pathlib import Path

from . import servers
from .database import Cluster, DatabaseError, ensure_tables, tables_missing
from .servers import DB_ENDPOINTS, RunningServer, free_port

DB_CONNECTION_MARGIN = 20     # postgres connections beyond the largest pool total: psql, checks, a spare


def needs_database(plan) -> bool:
    return plan.endpoint in DB_ENDPOINTS


class RunDatabase:
    """The run's database: a cluster of its own in the run directory, or an existing server (--db-url)."""

    def __init__(self, run_dir: Path, *, existing_url: str | None = None, cpus: tuple[int, ...] = (),
                 max_connections: int = 200):
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
            self.cluster = Cluster(self.run_dir / "database", max_connections=self.max_connections,
                                   cpus=self.cpus).start()
            self.starts += 1
            ensure_tables(self.cluster.url)
        return self.cluster.url

    @property
    def pid(self) -> int | None:
        """The postmaster, whose tree the cell samples (None for a database the run does not own)."""
        return self.cluster.pid if self.cluster and self.cluster.alive() else None

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None


def proxy(plan, server: RunningServer, cell_dir: Path) -> RunningServer:
    """nginx in front of the cell's server, with the plan's proxy settings, config rendered in the cell."""
    nginx = servers.get("nginx")
    work = cell_dir / "proxy"
    work.mkdir(parents=True, exist_ok=True)
    return RunningServer(nginx.proxy_spec(plan.proxy, free_port(), server.spec.port, work, plan.server_cpus))


def database_figures(plan, count) -> dict:
    """The record's database fields for a database cell (count: verify's query count)."""
    pool = plan.settings.get("db_pool")
    return {"db_connections_total": pool * plan.plugin.process_count(plan.settings) if pool else None,
            "queries_expected": count.expected, "queries_counted": count.counted}


__all__ = ["RunDatabase", "database_figures", "needs_database", "proxy"]

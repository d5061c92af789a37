"""PgBouncer (Debian's) between a cell's server and the run's PostgreSQL, in transaction mode, owned by the cell:
its config rendered per start, started in the foreground as the runner's child, stopped in `finally`.

In transaction mode a server connection belongs to a client only for one transaction, so PgBouncer 1.18 cannot
keep a named prepared statement for it (1.21 can): servers behind it run with `db_prepared = false`. PgBouncer
refuses to run as root, so under root it runs as `nobody` (as postgres does, cluster.py), with its config in the
database cache where nobody can read it; the run keeps a copy beside the cell.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

from .. import oskit
from ..oskit import check_port_free, free_port
from .cluster import DATABASE, ROLE, DatabaseError, as_owner, cache_root, owned_dir, owner_ids, psql
from .owned import OwnedProcess

# What the servers behind it run with: 1.18's transaction mode keeps no named prepared statement. The planner
# puts it into a pooled cell's settings (experiment_expand.py), so the plan and the record say it.
SERVER_SETTINGS = {"db_prepared": False}
READY_TIMEOUT_S = 20.0
STOP_GRACE_S = 10.0
INSTALL_HINT = "apt-get install pgbouncer"


def settings(port: int, db_url: str, pool_size: int, max_clients: int, userlist: Path) -> dict[str, dict]:
    """pgbouncer.ini for one start: the run's database under its own name, a fixed pool of server connections."""
    target = urlsplit(db_url)
    return {
        "databases": {
            DATABASE: f"host={target.hostname} port={target.port} dbname={target.path.lstrip('/')} "
            f"user={target.username or ROLE}"
        },
        "pgbouncer": {
            "listen_addr": "127.0.0.1",
            "listen_port": str(port),
            "unix_socket_dir": "",
            "auth_type": "trust",
            "auth_file": str(userlist),
            "pool_mode": "transaction",
            "default_pool_size": str(pool_size),
            "min_pool_size": "0",
            "reserve_pool_size": "0",
            "max_client_conn": str(max_clients),
            # JDBC and asyncpg send these at connect; PgBouncer refuses unknown startup parameters otherwise
            "ignore_startup_parameters": "extra_float_digits,options",
            "server_reset_query": "",
            "logfile": "",
            "pidfile": "",
            "syslog": "0",
            "log_connections": "0",
            "log_disconnections": "0",
            "stats_period": "60",
        },
    }


def render_ini(values: dict[str, dict]) -> str:
    lines = ["; written by crossbench for one start: see runner/crossbench/database/pgbouncer.py"]
    for section, entries in values.items():
        lines += [f"[{section}]", *(f"{key} = {value}" for key, value in entries.items())]
    return "\n".join(lines) + "\n"


class PgBouncer(OwnedProcess):
    """`with PgBouncer(db_url, work_dir, pool_size=N, max_clients=M) as bouncer:` servers get `bouncer.url`."""

    def __init__(
        self,
        db_url: str,
        work_dir: Path,
        *,
        pool_size: int,
        max_clients: int,
        cpus: tuple[int, ...] = (),
        port: int | None = None,
    ):
        self.db_url, self.work_dir = db_url, Path(work_dir)
        self.pool_size, self.max_clients, self.cpus = pool_size, max_clients, cpus
        self.port = port
        self.process: subprocess.Popen | None = None
        self.config_dir: Path | None = None
        self.log_path = self.work_dir / "pgbouncer.log"

    @property
    def url(self) -> str:
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{DATABASE}"

    def start(self) -> PgBouncer:
        binary = shutil.which("pgbouncer")
        if not binary:
            raise DatabaseError(f"pgbouncer not found: {INSTALL_HINT}")
        self.port = self.port or free_port()
        check_port_free(self.port)
        self.config_dir = cache_root() / "pgbouncer" / f"{os.getpid()}-{self.port}"
        config = self.write_config()
        argv = [*oskit.taskset_prefix(self.cpus), *as_owner(), *oskit.pdeathsig_prefix(), binary, str(config)]
        self.work_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        self.wait_ready()
        return self

    def write_config(self) -> Path:
        owned_dir(self.config_dir)
        userlist = self.config_dir / "userlist.txt"
        userlist.write_text(f'"{ROLE}" ""\n')
        config = self.config_dir / "pgbouncer.ini"
        config.write_text(render_ini(settings(self.port, self.db_url, self.pool_size, self.max_clients, userlist)))
        ids = owner_ids()
        if ids:
            for path in (userlist, config):
                shutil.chown(path, *ids)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(config, self.work_dir / "pgbouncer.ini")  # what this cell used, kept with it
        return config

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise DatabaseError(f"pgbouncer exited with status {self.process.returncode}:\n{self.log_tail()}")
            if psql(self.url, "SELECT 1", check=False, timeout_s=5).returncode == 0:
                return
            time.sleep(0.1)
        self.stop()
        raise DatabaseError(f"pgbouncer did not accept connections within {READY_TIMEOUT_S:.0f} s:\n{self.log_tail()}")

    def stop(self) -> int | None:
        """SIGTERM is PgBouncer's immediate shutdown (SIGINT would wait for its clients)."""
        if self.process is None:
            return None
        code = oskit.stop_group(self.process, STOP_GRACE_S, first_signal=signal.SIGTERM)
        if self.config_dir:
            shutil.rmtree(self.config_dir, ignore_errors=True)
        return code


__all__ = ["PgBouncer", "render_ini", "settings"]

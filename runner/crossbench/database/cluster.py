"""A throwaway PostgreSQL cluster owned by the run: Debian's postgres binaries, our own data directory and
config, started in the foreground as the runner's child, stopped in `finally`; never the system service.

The data directory is made once (initdb) and kept in a cache, tables included, while the data generator's
version is the same (datagen.py); each start renders its settings again, so a cached cluster gets today's.
postgres refuses to run as root, so under root it runs as `nobody`, and its directories live where nobody
can reach them (not under /root, which is mode 700): /var/tmp/crossbench-postgres/ unless
CROSSBENCH_DB_CACHE says otherwise.

`postgres -D DATA` runs in the foreground, not `pg_ctl start`: pg_ctl daemonizes, and a daemon is not our
child, so neither the parent-death signal nor stopping the process group would reach it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from crossbench.refusal import Missing, Refusal

from .. import oskit
from ..oskit import check_port_free, free_port
from .owned import OwnedProcess

DATABASE = ROLE = "crossbench"
READY_TIMEOUT_S = 60.0
STOP_GRACE_S = 30.0
INSTALL_HINT = "apt-get install postgresql postgresql-contrib"


class DatabaseError(Refusal, RuntimeError):
    """The database could not be made, started or reached (the message says what to do)."""


class DatabaseMissing(DatabaseError, Missing):
    """PostgreSQL's or PgBouncer's binaries are not installed (the message names the packages)."""


def bin_dir() -> Path:
    """The newest installed PostgreSQL's binaries (Debian keeps each major version apart)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: int(p.parent.parent.name))
    if not found:
        raise DatabaseMissing(f"PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres): {INSTALL_HINT}")
    return found[-1].parent


def major_version() -> str:
    return bin_dir().parent.name


def cache_root() -> Path:
    return Path(os.environ.get("CROSSBENCH_DB_CACHE") or "/var/tmp/crossbench-postgres")


def as_owner() -> list[str]:
    """The prefix that runs a command as the cluster's owner: nobody under root, else ourselves."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]


def owner_ids() -> tuple[int, int] | None:
    if os.geteuid() != 0:
        return None
    import grp
    import pwd

    return pwd.getpwnam("nobody").pw_uid, grp.getgrnam("nogroup").gr_gid


def owned_dir(path: Path) -> Path:
    """A directory the cluster's owner can write, with every parent traversable."""
    path.mkdir(parents=True, exist_ok=True)
    ids = owner_ids()
    if ids:
        os.chown(path, *ids)
        path.chmod(0o700)
    return path


LOOPBACK = "127.0.0.1"


def settings(
    port: int, socket_dir: Path, log_dir: Path, max_connections: int, listen: str = LOOPBACK
) -> dict[str, str]:
    """postgresql.conf for one start. TechEmpower's config sets shared_buffers to a fixed large value for its
    big machines; here it is sized to this one (an eighth of memory, at most 2 GB)."""
    import psutil  # at its use: the command lines load without the Python environment (runner/README.md)

    shared_mb = min(2048, psutil.virtual_memory().total // (8 * 1024 * 1024))
    addresses = LOOPBACK if listen == LOOPBACK else f"{LOOPBACK},{listen}"
    return {
        "listen_addresses": f"'{addresses}'",
        "port": str(port),
        "unix_socket_directories": f"'{socket_dir}'",
        "max_connections": str(max_connections),
        "shared_buffers": f"{shared_mb}MB",
        "synchronous_commit": "off",  # as TechEmpower: the benchmark reads, commits need not wait
        "shared_preload_libraries": "'pg_stat_statements'",
        "pg_stat_statements.track": "all",
        "logging_collector": "off",
        "log_destination": "'stderr'",
        "log_min_messages": "warning",
        "log_checkpoints": "off",
        "datestyle": "'iso, mdy'",
        "timezone": "'UTC'",
    }


def render_conf(values: dict[str, str]) -> str:
    return "# written by crossbench for one start: see runner/crossbench/database/cluster.py\n" + "".join(
        f"{key} = {value}\n" for key, value in values.items()
    )


HBA = (
    "# written by crossbench: the run's own role, from this machine (and the run's other hosts, listed below)\n"
    "local all all trust\n"
    "host all all 127.0.0.1/32 trust\n"
)


def hba(allowed: tuple[str, ...]) -> str:
    """pg_hba.conf: this machine, and each address of the run's other hosts (a database on a host of its own)."""
    return HBA + "".join(f"host all all {address}/32 trust\n" for address in allowed)


class Cluster(OwnedProcess):
    """`with Cluster(run_dir) as db:` starts postgres on a free loopback port; `db.url` is what servers get."""

    def __init__(
        self,
        run_dir: Path,
        *,
        max_connections: int = 200,
        port: int | None = None,
        cpus: tuple[int, ...] = (),
        listen: str = LOOPBACK,
        allowed: tuple[str, ...] = (),
    ):
        self.listen, self.allowed = listen, tuple(allowed)  # another address to listen on, who may connect there
        self.run_dir = Path(run_dir)
        self.max_connections = max_connections
        self.port = port
        self.cpus = cpus
        self.process: subprocess.Popen | None = None
        self.data_dir = cache_root() / f"pg{major_version()}" / "data"
        self.socket_dir = cache_root() / "sockets" / f"{os.getpid()}"
        self.log_path = self.run_dir / "postgres.log"

    @property
    def url(self) -> str:
        return f"postgresql://{ROLE}@{self.listen}:{self.port}/{DATABASE}"

    @property
    def local_url(self) -> str:
        """The same database over loopback, for what runs beside it (loading the tables)."""
        return f"postgresql://{ROLE}@{LOOPBACK}:{self.port}/{DATABASE}"

    def initialised(self) -> bool:
        return (self.data_dir / "PG_VERSION").is_file()

    def initdb(self) -> None:
        """A new, empty cluster (superuser `crossbench`, trust on loopback) in the cache."""
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)
        owned_dir(self.data_dir.parent)
        owned_dir(self.data_dir)
        done = subprocess.run(
            [
                *as_owner(),
                str(bin_dir() / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                ROLE,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
        if done.returncode != 0:
            raise DatabaseError(f"initdb failed: {done.stderr.strip()[-1500:]}")

    def start(self) -> Cluster:
        if not self.initialised():
            self.initdb()
        self.port = self.port or free_port(self.listen)
        for address in {LOOPBACK, self.listen}:
            check_port_free(self.port, address)
        owned_dir(self.socket_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.write_config()
        # the parent-death signal after the change of user: a change of credentials clears it
        argv = [
            *oskit.taskset_prefix(self.cpus),
            *as_owner(),
            *oskit.pdeathsig_prefix(),
            str(bin_dir() / "postgres"),
            "-D",
            str(self.data_dir),
        ]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        self.wait_ready()
        self.create_database()
        return self

    def write_config(self) -> None:
        conf = self.data_dir / "crossbench.conf"
        conf.write_text(
            render_conf(settings(self.port, self.socket_dir, self.run_dir, self.max_connections, self.listen))
        )
        main = self.data_dir / "postgresql.conf"
        if "include = 'crossbench.conf'" not in main.read_text():
            with open(main, "a") as out:
                out.write("\ninclude = 'crossbench.conf'\n")
        (self.data_dir / "pg_hba.conf").write_text(hba(self.allowed))
        (self.run_dir / "postgresql.conf").write_text(conf.read_text())  # what this run used, kept with it
        ids = owner_ids()
        if ids:
            for path in (conf, self.data_dir / "pg_hba.conf"):
                os.chown(path, *ids)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise DatabaseError(f"postgres exited with status {self.process.returncode}:\n{self.log_tail()}")
            if self.psql("SELECT 1", database="postgres", check=False).returncode == 0:
                return
            time.sleep(0.2)
        self.stop()
        raise DatabaseError(f"postgres did not accept connections within {READY_TIMEOUT_S:.0f} s:\n{self.log_tail()}")

    def create_database(self) -> None:
        exists = self.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'", database="postgres").stdout
        if not exists.strip():
            self.psql(f"CREATE DATABASE {DATABASE}", database="postgres")

    def psql(
        self,
        sql: str,
        *,
        database: str = DATABASE,
        check: bool = True,
        stdin: str | None = None,
        timeout_s: float = 600,
    ) -> subprocess.CompletedProcess:
        """One psql call on this cluster (unaligned, tuples only); `check` raises DatabaseError on failure."""
        return psql(
            f"postgresql://{ROLE}@127.0.0.1:{self.port}/{database}", sql, check=check, stdin=stdin, timeout_s=timeout_s
        )

    def stop(self) -> int | None:
        """Fast shutdown (SIGINT: roll back, disconnect, checkpoint), then the group is killed if it lingers."""
        if self.process is None:
            return None
        code = oskit.stop_group(self.process, STOP_GRACE_S, first_signal=signal.SIGINT)
        shutil.rmtree(self.socket_dir, ignore_errors=True)
        return code


def psql(
    url: str, sql: str, *, check: bool = True, stdin: str | None = None, timeout_s: float = 600
) -> subprocess.CompletedProcess:
    """Runs `sql` (unaligned, tuples only), or, when `stdin` is given, the script it holds (sql is then a name
    for messages): a script may carry COPY data inline."""
    if not shutil.which("psql"):
        raise DatabaseError(f"psql not found: {INSTALL_HINT}")
    source = ["-f", "-"] if stdin is not None else ["-c", sql]
    done = subprocess.run(
        ["psql", url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", *source],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    if check and done.returncode != 0:
        raise DatabaseError(f"psql on {url} ({sql[:60]}) failed: {done.stderr.strip()[-1500:]}")
    return done


__all__ = ["Cluster", "DatabaseError", "bin_dir", "psql", "settings"]

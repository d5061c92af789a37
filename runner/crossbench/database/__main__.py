"""`./runner/db.sh start [--port P]`: a cluster with the tables, in the foreground until Ctrl-C (for serve.sh
--db-url, curl, psql). `./runner/db.sh load URL`: the tables into an existing database.
`./runner/db.sh pgbouncer URL --pool-size N --max-clients M`: PgBouncer in front of URL, in the foreground until
Ctrl-C (the runner starts it this way on a server's own host)."""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
from pathlib import Path

from .. import version
from ..oskit import PortInUse
from . import Cluster, DatabaseError, ensure_tables
from .pgbouncer import PgBouncer


def parse_args(argv):
    p = argparse.ArgumentParser(prog="db.sh", description=__doc__)
    version.add_option(p)
    sub = p.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", help="a throwaway cluster with the tables, until Ctrl-C")
    start.add_argument("--port", type=int, help="default: a free port")
    start.add_argument("--max-connections", type=int, default=200, help="PostgreSQL's max_connections (default 200)")
    start.add_argument("--listen", default="127.0.0.1", help="also listen on this address (for other hosts)")
    start.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="a client address allowed in over --listen (repeat it; default: this machine only)",
    )
    load = sub.add_parser("load", help="load (or reload) the tables into an existing database")
    load.add_argument("url", help="postgresql://USER@HOST:PORT/DB")
    bouncer = sub.add_parser("pgbouncer", help="PgBouncer in transaction mode in front of URL, until Ctrl-C")
    bouncer.add_argument("url", help="postgresql://USER@HOST:PORT/DB")
    bouncer.add_argument("--pool-size", type=int, required=True, help="server connections per database and user")
    bouncer.add_argument("--max-clients", type=int, required=True, help="client connections PgBouncer accepts")
    bouncer.add_argument("--work-dir", type=Path, help="where its log and config copy go (default: a temp dir)")
    return p.parse_args(argv)


def until_stopped(running) -> None:
    """Blocks until Ctrl-C or SIGTERM, or until `running` dies."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    while not stop.wait(0.5) and running.alive():
        pass


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        if args.command == "load":
            print(f"loaded in {ensure_tables(args.url):.1f} s (0: already there)")
            return 0
        if args.command == "pgbouncer":
            work = args.work_dir or Path(tempfile.mkdtemp(prefix="crossbench-pgbouncer-"))
            with PgBouncer(args.url, work, pool_size=args.pool_size, max_clients=args.max_clients) as bouncer:
                print(f"{bouncer.url}  (log: {bouncer.log_path}; Ctrl-C stops it)", flush=True)
                until_stopped(bouncer)
            return 0
        with Cluster(
            Path(tempfile.mkdtemp(prefix="crossbench-db-")),
            port=args.port,
            max_connections=args.max_connections,
            listen=args.listen,
            allowed=tuple(args.allow),
        ) as db:
            print(f"tables loaded in {ensure_tables(db.local_url):.1f} s (0: already there)", file=sys.stderr)
            print(f"{db.url}  (log: {db.log_path}; Ctrl-C stops it)", flush=True)
            until_stopped(db)
        return 0
    except (DatabaseError, PortInUse) as e:
        print(f"db.sh: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

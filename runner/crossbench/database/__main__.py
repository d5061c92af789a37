"""`./runner/db.sh start [--port P]`: a cluster with the tables, in the foreground until Ctrl-C (for serve.sh
--db-url, curl, psql). `./runner/db.sh load URL`: the tables into an existing database."""
from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
from pathlib import Path

from . import Cluster, DatabaseError, ensure_tables
from ..servers import PortInUse


def parse_args(argv):
    p = argparse.ArgumentParser(prog="db.sh", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", help="a throwaway cluster with the tables, until Ctrl-C")
    start.add_argument("--port", type=int, help="default: a free port")
    start.add_argument("--max-connections", type=int, default=200)
    start.add_argument("--listen", default="127.0.0.1", help="also listen on this address (for other hosts)")
    start.add_argument("--allow", action="append", default=[], metavar="ADDRESS",
                       help="a client address allowed in over --listen (repeat it; default: this machine only)")
    load = sub.add_parser("load", help="load (or reload) the tables into an existing database")
    load.add_argument("url", help="postgresql://USER@HOST:PORT/DB")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        if args.command == "load":
            print(f"loaded in {ensure_tables(args.url):.1f} s (0: already there)")
            return 0
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        with Cluster(Path(tempfile.mkdtemp(prefix="crossbench-db-")), port=args.port,
                     max_connections=args.max_connections, listen=args.listen, allowed=tuple(args.allow)) as db:
            print(f"tables loaded in {ensure_tables(db.local_url):.1f} s (0: already there)", file=sys.stderr)
            print(f"{db.url}  (log: {db.log_path}; Ctrl-C stops it)", flush=True)
            while not stop.wait(0.5) and db.alive():
                pass
        return 0
    except (DatabaseError, PortInUse) as e:
        print(f"db.sh: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""crossbench's Tornado server: `python tornado-app/server.py --port 8888 [--processes N] [--backlog N]`.

With `--app MODULE:CALLABLE` it serves a user's Tornado Application (or what a function of no arguments,
MODULE:CALLABLE(), makes: once in each process) the same way instead of the suite's, imported from the path
(the Tornado plug-in puts the app's folder first on PYTHONPATH and starts it there)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

# Run as a script: Python puts the script's folder first on the path, so crossbench_tornado (beside it) imports.
from crossbench_tornado import prefork

from crossbench_contract import runtime

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE.parent / "static-fixtures"
DEFAULT_BACKLOG = 128  # Tornado's own default (tornado.netutil._DEFAULT_BACKLOG)


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--address", default="127.0.0.1", help="where to listen (default: loopback only)")
    parser.add_argument("--port", type=positive, default=8888)
    parser.add_argument(
        "--processes",
        type=positive,
        default=1,
        help="forked workers sharing one listening socket (default 1: one event loop)",
    )
    parser.add_argument(
        "--backlog",
        type=positive,
        default=DEFAULT_BACKLOG,
        help="listen backlog (Tomcat's acceptCount counterpart; default %(default)s)",
    )
    parser.add_argument(
        "--app", help="a user's app, MODULE:CALLABLE or MODULE:FACTORY(), served instead of the suite's"
    )
    parser.add_argument("--static-dir", type=Path, default=STATIC_DIR)
    parser.add_argument("--db-url", help="PostgreSQL for the database endpoints (postgresql://USER@HOST:PORT/DB)")
    parser.add_argument("--db-pool", type=positive, default=10, help="asyncpg pool size per process")
    parser.add_argument(
        "--db-wait-ms",
        type=positive,
        default=5000,
        help="how long a request waits for a pooled connection before its 503",
    )
    parser.add_argument(
        "--db-prepared",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="named prepared statements (--no-db-prepared behind PgBouncer in transaction mode)",
    )
    parser.add_argument(
        "--db-pool-log", metavar="DIR", help="each process appends its pool's lent and waiting counts to DIR/<pid>.csv"
    )
    return parser.parse_args(argv)


def database(args):
    """Made in each worker process after the fork: a pool is per process (and each reports its interpreter).
    Imported here: a user's app runs in an environment that need not hold the suite's database packages."""
    from crossbench_tornado import db

    runtime.report()
    return db.Database(args.db_url, args.db_pool, args.db_wait_ms / 1000, args.db_prepared, args.db_pool_log)


def suite_app(args):
    """The suite's app (imported here, as `database`)."""
    from crossbench_tornado import app

    return app.make_app(args.static_dir, database(args))


def user_app(args):
    """The user's Application; a factory (MODULE:NAME()) called in each process (each reports its interpreter)."""
    runtime.report()
    module, _, name = args.app.partition(":")
    found = importlib.import_module(module)
    for part in name.removesuffix("()").split("."):
        found = getattr(found, part)
    return found() if name.endswith("()") else found


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        return prefork.run(
            (lambda: user_app(args)) if args.app else (lambda: suite_app(args)),
            args.port,
            args.backlog,
            args.processes,
            args.address,
        )
    except OSError as e:
        print(f"tornado: cannot listen on {args.address}:{args.port}: {e.strerror}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

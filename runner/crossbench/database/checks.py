"""What the runner asks of a database: is it loaded, and how many queries ran (pg_stat_statements), for the
TechEmpower-style check that N requests ran exactly N queries (N x queries for /queries)."""

from __future__ import annotations

import time

from .cluster import psql
from .datagen import DATAGEN_VERSION, KV_ROWS, WORLD_ROWS, load_command, loaded

# The statements each endpoint runs, as pg_stat_statements normalises them (parameters become $1, $2).
STATEMENTS = {
    "world": "FROM world WHERE id",
    "kv": "FROM kv WHERE a",
    "slow": "pg_sleep",
    "fortune": "FROM fortune",
    "update": "UPDATE world SET randomnumber",
}


def tables_missing(url: str) -> str | None:
    """Why the database at url cannot serve the endpoints (with the command that fixes it), or None."""
    found = loaded(url)
    if found == (DATAGEN_VERSION, WORLD_ROWS, KV_ROWS):
        return None
    what = "no crossbench tables" if found is None else f"tables of datagen {found[0]} ({found[1]}, {found[2]} rows)"
    return f"{url} has {what}; load them with: {load_command(url)}"


def reset_statements(url: str) -> None:
    psql(url, "SELECT pg_stat_statements_reset()")


def statement_calls(url: str, statement: str) -> int:
    """Times statements containing `statement` ran since the last reset (all databases, all roles)."""
    done = psql(
        url,
        "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements "
        f"WHERE query LIKE '%{statement.replace(chr(39), chr(39) * 2)}%' "
        "AND query NOT LIKE '%pg_stat_statements%'",
    )
    return int(done.stdout.strip() or 0)


IDLE_POLLS = 3  # consecutive polls with no other statement running or transaction open
IDLE_POLL_S = 0.05


def others_busy(url: str) -> int:
    """Client sessions of this database other than ours running a statement or holding a transaction open
    (autovacuum, which the load's updates may wake, is not a request)."""
    done = psql(
        url,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND backend_type = 'client backend' AND pid <> pg_backend_pid() "
        "AND state IN ('active', 'idle in transaction')",
    )
    return int(done.stdout.strip() or 0)


def wait_idle(url: str, limit_s: float) -> bool:
    """Waits until no other session of the database has worked for IDLE_POLLS polls in a row (requests still
    queued in the server when the load stopped run statements of their own), at most limit_s; True if idle."""
    deadline, quiet = time.monotonic() + limit_s, 0
    while quiet < IDLE_POLLS:
        quiet = quiet + 1 if others_busy(url) == 0 else 0
        if quiet < IDLE_POLLS:
            if time.monotonic() >= deadline:
                return False
            time.sleep(IDLE_POLL_S)
    return True

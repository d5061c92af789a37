"""The database endpoints' shared rules: tables, queries, the queries=N clamp, the JSON shapes."""

from __future__ import annotations

import random

WORLD_ROWS = 10_000
KV_KEYS = 999_999  # a random a in 1..999999, as the seed-004 article's app
MAX_QUERIES = 500
NO_DATABASE = "no database configured: start the server with --db-url"
POOL_TIMEOUT = "no database connection within the pool's wait limit"


def query_count(values: list[str]) -> int:
    """queries=N clamped to 1..500; missing or not an integer is 1 (TechEmpower's rule)."""
    try:
        return max(1, min(MAX_QUERIES, int(values[0].strip())))
    except (IndexError, ValueError):
        return 1


def random_world_id() -> int:
    return random.randint(1, WORLD_ROWS)


def random_kv_key() -> int:
    return random.randint(1, KV_KEYS)


def world(row) -> dict:
    return {"id": row[0], "randomNumber": row[1]}


def kv(row) -> dict:
    return {"a": f"{row[0]:010d}", "b": row[1]}


def unavailable(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return f"database unavailable: {text}"

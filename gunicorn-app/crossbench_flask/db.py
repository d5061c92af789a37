"""The database endpoints on psycopg 3 with a psycopg_pool.ConnectionPool per worker process: a request waits for
a connection up to the wait limit, then gets 503 (psycopg2's pool raised at once instead: seed 004's critics'
point). The pool is made in the worker, after gunicorn's fork, on first use, once: a gthread worker's threads
meet that first use together (unlocked, each made a pool of its own, and tfb's 20-query cells of 3 workers x 8
threads ran PostgreSQL out of connections, 2026-11-28)."""

from __future__ import annotations

import json
import os
import threading
from contextlib import contextmanager

import psycopg
from flask import Response, render_template, request
from psycopg_pool import ConnectionPool, PoolTimeout

from crossbench_contract import JSON_TYPE, tfb
from crossbench_contract.db import (
    NO_DATABASE,
    POOL_TIMEOUT,
    kv,
    query_count,
    random_kv_key,
    random_world_id,
    unavailable,
    world,
)
from crossbench_contract.pool_gauge import from_environment

WORLD = "SELECT id, randomnumber FROM world WHERE id = %s"
KV = "SELECT a, b FROM kv WHERE a = %s"
FORTUNES = "SELECT id, message FROM fortune"
UPDATE = "UPDATE world SET randomnumber = %s WHERE id = %s"
SLOW = "SELECT w.id, w.randomnumber FROM world w, pg_sleep(%s / 1000.0) WHERE w.id = %s"

URL = os.environ.get("CROSSBENCH_DB_URL")
POOL_SIZE = int(os.environ.get("CROSSBENCH_DB_POOL", "4"))
WAIT_S = int(os.environ.get("CROSSBENCH_DB_WAIT_MS", "5000")) / 1000
# psycopg prepares a statement on its first run (threshold 0), or never: PgBouncer 1.18 in transaction mode
# cannot keep prepared statements (the next transaction may meet another backend).
PREPARE_THRESHOLD = 0 if os.environ.get("CROSSBENCH_DB_PREPARED", "1") == "1" else None
_pool: tuple[int, ConnectionPool] | None = None
_pool_lock = threading.Lock()
_gauge = from_environment(POOL_SIZE)


def pool() -> ConnectionPool:
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (
                os.getpid(),
                ConnectionPool(
                    URL,
                    min_size=POOL_SIZE,
                    max_size=POOL_SIZE,
                    timeout=WAIT_S,
                    open=True,
                    kwargs={"prepare_threshold": PREPARE_THRESHOLD},
                ),
            )
        return _pool[1]


@contextmanager
def lend():
    """A connection as pool().connection() lends it (PoolTimeout after WAIT_S), counted by the gauge while waited
    for and while lent."""
    _gauge.start_log()
    lender = pool()
    with _gauge.waiting():
        connection = lender.getconn()
    try:
        with _gauge.lent(), connection:  # commits or rolls back; a pool's connection stays open
            yield connection
    finally:
        lender.putconn(connection)


def fetch(query: str, *params):
    with lend() as connection:
        return connection.execute(query, params).fetchone()


def as_json(body) -> Response:
    return Response(json.dumps(body, separators=(",", ":")), content_type=JSON_TYPE)


def from_database(work, text, answer=as_json) -> Response:
    if not URL:
        return text(f"{NO_DATABASE}\n".encode(), 503)
    try:
        body = work()
    except PoolTimeout:
        return text(f"{POOL_TIMEOUT}\n".encode(), 503)
    except psycopg.Error as e:
        return text(f"{unavailable(e)}\n".encode(), 503)
    return answer(body)


def many_worlds(count: int) -> list[dict]:
    with lend() as connection:
        return [world(connection.execute(WORLD, (random_world_id(),)).fetchone()) for _ in range(count)]


def update_worlds(count: int) -> list[dict]:
    """N rows read one query each, then written back in one transaction, one UPDATE per row (executemany)."""
    with lend() as connection:
        rows = [world(connection.execute(WORLD, (random_world_id(),)).fetchone()) for _ in range(count)]
        connection.cursor().executemany(UPDATE, tfb.new_numbers(rows, random_world_id))
    return rows


def fortunes() -> list:
    with lend() as connection:
        return connection.execute(FORTUNES).fetchall()


def counted(work, text) -> Response:
    """/queries and /updates: `work` on the request's query count, clamped as the contract says."""
    count = query_count(request.args.getlist("queries"))
    return from_database(lambda: work(count), text)


def register(app, delay_ms, text) -> None:
    @app.get("/db")
    def single() -> Response:
        return from_database(lambda: world(fetch(WORLD, random_world_id())), text)

    @app.get("/queries")
    def queries() -> Response:
        return counted(many_worlds, text)

    @app.get("/db/kv")
    def key_value() -> Response:
        return from_database(lambda: kv(fetch(KV, random_kv_key())), text)

    @app.get("/fortunes")
    def fortunes_page() -> Response:
        return from_database(
            fortunes,
            text,
            lambda rows: Response(
                render_template(tfb.FORTUNE_TEMPLATE, fortunes=tfb.with_added(rows)), content_type=tfb.HTML_TYPE
            ),
        )

    @app.get("/updates")
    def updates() -> Response:
        return counted(update_worlds, text)

    @app.get("/db/slow")
    def slow() -> Response:
        ms = delay_ms()
        return from_database(lambda: world(fetch(SLOW, ms, random_world_id())), text)

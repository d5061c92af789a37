"""The database endpoints' statements as the asyncpg stacks (Tornado, uvicorn) run them."""

from __future__ import annotations

from contextlib import asynccontextmanager

from .db import random_world_id, world
from .pool_gauge import PoolGauge
from .tfb import new_numbers

WORLD = "SELECT id, randomnumber FROM world WHERE id = $1"
KV = "SELECT a, b FROM kv WHERE a = $1"
FORTUNES = "SELECT id, message FROM fortune"
UPDATE = "UPDATE world SET randomnumber = $1 WHERE id = $2"
# One statement that holds its connection for the delay inside the database, then reads the row.
SLOW = "SELECT w.id, w.randomnumber FROM world w, pg_sleep($1 / 1000.0) WHERE w.id = $2"


def statement_cache(prepared: bool) -> dict:
    """create_pool arguments: asyncpg's statement cache at its default, or off, so that no named statement goes
    on the wire (PgBouncer 1.18 in transaction mode cannot keep them: the next one may meet another backend)."""
    return {} if prepared else {"statement_cache_size": 0}


async def many_worlds(connection, count: int, prepared: bool) -> list[dict]:
    """/queries: one prepared statement run N times, or N unnamed statements (prepared off)."""
    if not prepared:
        return [world(await connection.fetchrow(WORLD, random_world_id())) for _ in range(count)]
    statement = await connection.prepare(WORLD)
    return [world(await statement.fetchrow(random_world_id())) for _ in range(count)]


async def update_worlds(connection, count: int, prepared: bool) -> list[dict]:
    """/updates: N rows read one query each, then written back, one UPDATE per row in one executemany (asyncpg
    runs it as one transaction)."""
    rows = await many_worlds(connection, count, prepared)
    await connection.executemany(UPDATE, new_numbers(rows, random_world_id))
    return rows


@asynccontextmanager
async def lend(pool, gauge: PoolGauge, wait_s: float):
    """A connection from the pool (asyncio.TimeoutError after wait_s), counted by the gauge while waited for
    and while lent."""
    gauge.start_log()
    with gauge.waiting():
        connection = await pool.acquire(timeout=wait_s)
    try:
        with gauge.lent():
            yield connection
    finally:
        await pool.release(connection)

"""The database endpoints (SPEC "Round 2"): /db, /queries, /db/kv, /db/slow, on an asyncpg pool per process.

The pool is made in the process that serves (after the prefork fork), on the first request, so a server started
before its database still comes up; while the database is down, or no connection frees up within the wait
limit, the answer is 503 with a plain reason. asyncpg prepares and caches every statement it runs.
"""
from __future__ import annotations

import asyncio
import json
import random

import asyncpg

from .handlers import TextHandler

WORLD_ROWS = 10_000
KV_KEYS = 999_999             # a random a in 1..999999, as the article's app
MAX_QUERIES = 500
WORLD = "SELECT id, randomnumber FROM world WHERE id = $1"
KV = "SELECT a, b FROM kv WHERE a = $1"
# One statement that holds its connection for the delay inside the database, then reads the row.
SLOW = "SELECT w.id, w.randomnumber FROM world w, pg_sleep($1 / 1000.0) WHERE w.id = $2"
JSON_TYPE = "application/json"


def query_count(values: list[str]) -> int:
    """queries=N clamped to 1..500; missing or not an integer is 1 (TechEmpower's rule)."""
    try:
        return max(1, min(MAX_QUERIES, int(values[0].strip())))
    except (IndexError, ValueError):
        return 1


def world(row) -> dict:
    return {"id": row[0], "randomNumber": row[1]}


class Database:
    """One asyncpg pool per server process, made on first use."""

    def __init__(self, url: str | None, size: int, wait_s: float):
        self.url, self.size, self.wait_s = url, size, wait_s
        self.pool: asyncpg.Pool | None = None
        self.lock = asyncio.Lock()

    async def get_pool(self) -> asyncpg.Pool:
        async with self.lock:
            if self.pool is None:
                self.pool = await asyncpg.create_pool(self.url, min_size=self.size, max_size=self.size,
                                                      timeout=self.wait_s)
        return self.pool


class DbHandler(TextHandler):
    def initialize(self, database: Database) -> None:
        self.database = database

    async def work(self, connection):
        raise NotImplementedError

    async def answer_from_database(self) -> None:
        if not self.database.url:
            return self.unavailable("no database configured: start the server with --db-url")
        try:
            pool = await self.database.get_pool()
            async with pool.acquire(timeout=self.database.wait_s) as connection:
                body = await self.work(connection)
        except asyncio.TimeoutError:
            return self.unavailable("no database connection within the pool's wait limit")
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
            return self.unavailable(f"database unavailable: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
        self.set_header("Content-Type", JSON_TYPE)
        self.finish(json.dumps(body, separators=(",", ":")).encode())

    def unavailable(self, reason: str) -> None:
        self.set_status(503)
        self.answer(f"{reason}\n".encode())


class SingleQueryHandler(DbHandler):
    async def work(self, connection):
        return world(await connection.fetchrow(WORLD, random.randint(1, WORLD_ROWS)))

    async def get(self):
        await self.answer_from_database()


class MultipleQueriesHandler(DbHandler):
    async def work(self, connection):
        count = query_count(self.get_query_arguments("queries"))
        statement = await connection.prepare(WORLD)
        return [world(await statement.fetchrow(random.randint(1, WORLD_ROWS))) for _ in range(count)]

    async def get(self):
        await self.answer_from_database()


class KeyValueHandler(DbHandler):
    async def work(self, connection):
        a, b = await connection.fetchrow(KV, random.randint(1, KV_KEYS))
        return {"a": f"{a:010d}", "b": b}

    async def get(self):
        await self.answer_from_database()


class SlowQueryHandler(DbHandler):
    async def work(self, connection):
        return world(await connection.fetchrow(SLOW, self.ms, random.randint(1, WORLD_ROWS)))

    async def get(self):
        self.ms = self.delay_ms()
        if self.ms is not None:
            await self.answer_from_database()


def routes(database: Database) -> list[tuple]:
    options = {"database": database}
    return [(r"/db", SingleQueryHandler, options), (r"/queries", MultipleQueriesHandler, options),
            (r"/db/kv", KeyValueHandler, options), (r"/db/slow", SlowQueryHandler, options)]

"""The database endpoints (SPEC "Round 2"): /db, /queries, /db/kv, /db/slow, and TechEmpower's /fortunes (a Jinja2
template, autoescape on) and /updates, on an asyncpg pool per process.

The pool is made in the process that serves (after the prefork fork), on the first request, so a server started
before its database still comes up; while the database is down, or no connection frees up within the wait
limit, the answer is 503 with a plain reason. asyncpg prepares and caches every statement it runs, unless
`prepared` is off (PgBouncer in transaction mode): then it keeps no statement cache and /queries prepares nothing,
so each statement travels unnamed and any backend can run it.
"""

from __future__ import annotations

import asyncio
import json

import asyncpg
import jinja2

from crossbench_contract import JSON_TYPE, tfb
from crossbench_contract.asyncpg_queries import (
    FORTUNES,
    KV,
    SLOW,
    WORLD,
    lend,
    many_worlds,
    statement_cache,
    update_worlds,
)
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
from crossbench_contract.pool_gauge import PoolGauge

from .handlers import TextHandler

TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(tfb.TEMPLATES), autoescape=True)


class Database:
    """One asyncpg pool per server process, made on first use."""

    def __init__(self, url: str | None, size: int, wait_s: float, prepared: bool = True, pool_log: str | None = None):
        self.url, self.size, self.wait_s, self.prepared = url, size, wait_s, prepared
        self.gauge = PoolGauge(size, pool_log)
        self.pool: asyncpg.Pool | None = None
        self.lock = asyncio.Lock()

    async def get_pool(self) -> asyncpg.Pool:
        async with self.lock:
            if self.pool is None:
                self.pool = await asyncpg.create_pool(
                    self.url,
                    min_size=self.size,
                    max_size=self.size,
                    timeout=self.wait_s,
                    **statement_cache(self.prepared),
                )
        return self.pool


class DbHandler(TextHandler):
    def initialize(self, database: Database) -> None:
        self.database = database

    async def work(self, connection):
        raise NotImplementedError

    async def get(self):
        await self.answer_from_database()

    async def answer_from_database(self, content_type: str = JSON_TYPE) -> None:
        if not self.database.url:
            return self.unavailable(NO_DATABASE)
        try:
            pool = await self.database.get_pool()
            async with lend(pool, self.database.gauge, self.database.wait_s) as connection:
                body = await self.work(connection)
        except TimeoutError:
            return self.unavailable(POOL_TIMEOUT)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
            return self.unavailable(unavailable(e))
        self.set_header("Content-Type", content_type)
        self.finish(body.encode() if isinstance(body, str) else json.dumps(body, separators=(",", ":")).encode())

    def unavailable(self, reason: str) -> None:
        self.set_status(503)
        self.answer(f"{reason}\n".encode())


class SingleQueryHandler(DbHandler):
    async def work(self, connection):
        return world(await connection.fetchrow(WORLD, random_world_id()))


class MultipleQueriesHandler(DbHandler):
    async def work(self, connection):
        return await many_worlds(connection, query_count(self.get_query_arguments("queries")), self.database.prepared)


class KeyValueHandler(DbHandler):
    async def work(self, connection):
        return kv(await connection.fetchrow(KV, random_kv_key()))


class SlowQueryHandler(DbHandler):
    async def work(self, connection):
        return world(await connection.fetchrow(SLOW, self.ms, random_world_id()))

    async def get(self):
        self.ms = self.delay_ms()
        if self.ms is not None:
            await self.answer_from_database()


class FortunesHandler(DbHandler):
    async def work(self, connection):
        rows = await connection.fetch(FORTUNES)
        return TEMPLATES.get_template(tfb.FORTUNE_TEMPLATE).render(fortunes=tfb.with_added(rows))

    async def get(self):
        await self.answer_from_database(tfb.HTML_TYPE)


class UpdatesHandler(DbHandler):
    async def work(self, connection):
        count = query_count(self.get_query_arguments("queries"))
        return await update_worlds(connection, count, self.database.prepared)


def routes(database: Database) -> list[tuple]:
    options = {"database": database}
    return [
        (r"/db", SingleQueryHandler, options),
        (r"/queries", MultipleQueriesHandler, options),
        (r"/db/kv", KeyValueHandler, options),
        (r"/db/slow", SlowQueryHandler, options),
        (r"/fortunes", FortunesHandler, options),
        (r"/updates", UpdatesHandler, options),
    ]

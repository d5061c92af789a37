"""The database endpoints on an asyncpg pool per worker process (made on first use, in the worker's loop);
TechEmpower's /fortunes renders with Starlette's Jinja2Templates (autoescape on for .html)."""

from __future__ import annotations

import asyncio
import json
import os

import asyncpg
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

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
from crossbench_contract.pool_gauge import from_environment

URL = os.environ.get("CROSSBENCH_DB_URL")
POOL_SIZE = int(os.environ.get("CROSSBENCH_DB_POOL", "10"))
WAIT_S = int(os.environ.get("CROSSBENCH_DB_WAIT_MS", "5000")) / 1000
PREPARED = os.environ.get("CROSSBENCH_DB_PREPARED", "1") == "1"  # "0" behind PgBouncer in transaction mode
_pool: asyncpg.Pool | None = None
_gauge = from_environment(POOL_SIZE)
_lock = asyncio.Lock()
TEMPLATES = Jinja2Templates(directory=tfb.TEMPLATES)


async def pool() -> asyncpg.Pool:
    global _pool
    async with _lock:
        if _pool is None:
            _pool = await asyncpg.create_pool(
                URL, min_size=POOL_SIZE, max_size=POOL_SIZE, timeout=WAIT_S, **statement_cache(PREPARED)
            )
    return _pool


def as_json(body) -> Response:
    return Response(json.dumps(body, separators=(",", ":")), media_type=JSON_TYPE)


async def from_database(work, text, answer=as_json) -> Response:
    if not URL:
        return text(f"{NO_DATABASE}\n".encode(), 503)
    try:
        async with lend(await pool(), _gauge, WAIT_S) as connection:
            body = await work(connection)
    except TimeoutError:
        return text(f"{POOL_TIMEOUT}\n".encode(), 503)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
        return text(f"{unavailable(e)}\n".encode(), 503)
    return answer(body)


def routes(delay_ms, text) -> list[tuple]:
    async def single(request: Request) -> Response:
        return await from_database(lambda c: _world(c, WORLD, random_world_id()), text)

    async def queries(request: Request) -> Response:
        count = query_count(request.query_params.getlist("queries"))

        return await from_database(lambda c: many_worlds(c, count, PREPARED), text)

    async def key_value(request: Request) -> Response:
        async def one(connection):
            return kv(await connection.fetchrow(KV, random_kv_key()))

        return await from_database(one, text)

    async def slow(request: Request) -> Response:
        ms = delay_ms(request)
        return await from_database(lambda c: _world(c, SLOW, ms, random_world_id()), text)

    async def fortunes(request: Request) -> Response:
        async def rows(connection):
            return await connection.fetch(FORTUNES)

        return await from_database(
            rows,
            text,
            lambda found: TEMPLATES.TemplateResponse(
                request, tfb.FORTUNE_TEMPLATE, {"fortunes": tfb.with_added(found)}, media_type=tfb.HTML_TYPE
            ),
        )

    async def updates(request: Request) -> Response:
        count = query_count(request.query_params.getlist("queries"))
        return await from_database(lambda c: update_worlds(c, count, PREPARED), text)

    return [
        ("/db", single),
        ("/queries", queries),
        ("/db/kv", key_value),
        ("/db/slow", slow),
        ("/fortunes", fortunes),
        ("/updates", updates),
    ]


async def _world(connection, query: str, *params) -> dict:
    return world(await connection.fetchrow(query, *params))

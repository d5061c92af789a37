"""The Starlette (ASGI) app of the contract, run by uvicorn with uvloop and httptools (seed 004's async stack).

Every path is first normalised from the raw request path as Tomcat's connector does (crossbench_contract, from
python-contract/). /delay/sync blocks the event loop with time.sleep, as Tornado's does; /delay/async awaits.
TechEmpower's /json and /plaintext here; /fortunes (Jinja2Templates) and /updates with the database endpoints.
"""

from __future__ import annotations

import os
import time

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.staticfiles import NotModifiedResponse, StaticFiles

from crossbench_contract import HELLO, OK, TEXT_TYPE, paths, runtime, tfb
from crossbench_contract.delay import parse_delay, sleep_at_least
from crossbench_contract.static import STATIC_DIR, served_files

from . import db

SERVED = served_files(STATIC_DIR)
FILES = StaticFiles(directory=STATIC_DIR)  # only for its conditional-GET rule; routing stays ours
REASONS = {400: "bad request", 404: "not found", 405: "method not allowed"}


def text(body: bytes, status: int = 200, headers: dict | None = None) -> Response:
    return Response(body, status_code=status, media_type=TEXT_TYPE, headers=headers)


def delay_ms(request: Request) -> int:
    try:
        return parse_delay(request.query_params.getlist("ms"))
    except ValueError as e:
        raise HTTPException(400, detail=str(e)) from e


async def hello(request: Request) -> Response:
    return text(HELLO)


async def now(request: Request) -> Response:
    return text(OK)


async def json_message(request: Request) -> Response:
    return JSONResponse(tfb.message())


async def plaintext(request: Request) -> Response:
    return text(tfb.PLAINTEXT)


async def delay_sync(request: Request) -> Response:
    time.sleep(delay_ms(request) / 1000)  # blocks the whole loop, on purpose (seed 000's handler A)
    return text(OK)


async def delay_async(request: Request) -> Response:
    await sleep_at_least(delay_ms(request) / 1000)
    return text(OK)


async def static_file(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in SERVED:
        raise HTTPException(404)
    path = STATIC_DIR / name  # stat given, so ETag and Last-Modified are set before it is sent
    response = FileResponse(path, stat_result=os.stat(path))  # byte ranges it answers itself
    if FILES.is_not_modified(response.headers, request.headers):
        return NotModifiedResponse(response.headers)
    return response


async def plain_error(request: Request, error: HTTPException) -> Response:
    detail = error.detail if error.status_code == 400 and error.detail != "Bad Request" else None
    body = f"{detail or REASONS.get(error.status_code, 'error')}\n".encode()
    return text(body, error.status_code, error.headers)


GET = ["GET", "HEAD"]
routes = [
    Route("/hello", hello, methods=GET),
    Route("/now", now, methods=GET),
    Route("/json", json_message, methods=GET),
    Route("/plaintext", plaintext, methods=GET),
    Route("/delay/sync", delay_sync, methods=GET),
    Route("/delay/async", delay_async, methods=GET),
    Route("/static/{name}", static_file, methods=GET),
    *(Route(path, endpoint, methods=GET) for path, endpoint in db.routes(delay_ms, text)),
]
starlette_app = Starlette(routes=routes, exception_handlers={HTTPException: plain_error})
starlette_app.router.redirect_slashes = False  # /hello/ is 404, as on Tomcat, not a redirect
runtime.report()  # imported in each worker: each says which interpreter and GIL it runs with


async def app(scope, receive, send):
    """Routes on the raw path, normalised as Tomcat's connector does; ASGI hands apps a decoded one."""
    if scope["type"] == "http":
        try:
            path = paths.normalize(scope.get("raw_path", b"").decode("latin-1") or scope["path"])
        except paths.InvalidPath:
            return await text(b"bad request\n", 400)(scope, receive, send)
        scope = {**scope, "path": path, "raw_path": paths.reencode(path).encode()}
    await starlette_app(scope, receive, send)

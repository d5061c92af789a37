"""The Starlette app without a server, called as ASGI with raw paths (the live checks against uvicorn are
runner/tests/test_conformance.py)."""

from __future__ import annotations

import asyncio

import pytest
from crossbench_starlette.app import app  # uvicorn-app/ is on the path: pythonpath in runner/pyproject.toml


def call(raw_path: str, method: str = "GET") -> tuple[int, dict, bytes]:
    path, _, query = raw_path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "headers": [],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
        "root_path": "",
    }
    sent = []

    async def run():
        done, requests = asyncio.Event(), [{"type": "http.request", "body": b"", "more_body": False}]

        async def receive():  # the request once, then a disconnect when the answer is complete
            if requests:
                return requests.pop()
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                done.set()

        await app(scope, receive, send)

    asyncio.run(asyncio.wait_for(run(), 10))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


@pytest.mark.parametrize(
    "raw, status",
    [
        ("/hello", 200),
        ("/static/%73mall.png", 200),
        ("/static/README.md", 404),
        ("/static/%2E%2E/%2E%2E/etc/passwd", 400),
        ("/static/..%2f..%2fetc", 400),
        ("/hello/", 404),
        ("/delay/async?ms=0", 200),
        ("/delay/sync?ms=x", 400),
    ],
)
def test_paths_answer_as_on_tomcat(raw, status):
    assert call(raw)[0] == status


def test_text_answers_are_exact_and_errors_plain():
    status, headers, body = call("/now")
    assert (status, body, headers["content-length"]) == (200, b"OK", "2")
    status, headers, body = call("/now", method="DELETE")
    assert status == 405 and body == b"method not allowed\n"


def test_database_endpoints_without_a_database_say_so():
    status, _, body = call("/queries?queries=3")
    assert status == 503 and b"no database configured" in body

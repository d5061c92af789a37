"""The Flask app without a server: the raw-path middleware and the answers (the live checks against gunicorn are
runner/tests/test_conformance.py)."""

from __future__ import annotations

import pytest
from crossbench_flask.app import app  # gunicorn-app/ is on the path: pythonpath in runner/pyproject.toml


def get(raw_path: str, method: str = "GET"):
    """A request as gunicorn hands it over: PATH_INFO decoded, RAW_URI as sent."""
    return app.test_client().open(
        raw_path.split("?")[0],
        method=method,
        environ_overrides={"RAW_URI": raw_path},
        query_string=raw_path.partition("?")[2],
    )


@pytest.mark.parametrize(
    "raw, status",
    [
        ("/hello", 200),
        ("/static/%73mall.png", 200),
        ("/static/README.md", 404),
        ("/static/%2E%2E/%2E%2E/etc/passwd", 400),
        ("/static/..%2f..%2fetc", 400),
        ("/static/..;/..;/etc/passwd", 400),
        ("/delay/async?ms=1", 404),
        ("/hello/", 404),
        ("/delay/sync?ms=-1", 400),
        ("/delay/sync?ms=0", 200),
    ],
)
def test_paths_answer_as_on_tomcat(raw, status):
    assert get(raw).status_code == status


def test_text_answers_are_exact_and_errors_plain():
    answer = get("/hello")
    assert answer.data == b"Hello, world" and answer.headers["Content-Type"] == "text/plain; charset=UTF-8"
    assert answer.headers["Content-Length"] == "12"
    refused = get("/hello", method="POST")
    assert refused.status_code == 405 and refused.data == b"method not allowed\n"


def test_database_endpoints_without_a_database_say_so():
    answer = get("/db")
    assert answer.status_code == 503 and b"no database configured" in answer.data

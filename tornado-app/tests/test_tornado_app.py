"""The Tornado application itself (crossbench_tornado.app, what tornado-app/server.py serves), in process: the
endpoint contract of SPEC.md (paths, statuses, bodies, headers) through tornado.testing, on the one loopback port
it binds. The database endpoints need PostgreSQL and are tested live elsewhere; here only their answer without a
database (503, plain reason, at once)."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import time
from pathlib import Path

import pytest
from crossbench_tornado import app  # tornado-app is on the tests' path (pythonpath in runner/pyproject.toml)
from tornado import gen
from tornado.testing import AsyncHTTPTestCase, gen_test

from crossbench_contract import TEXT_TYPE
from crossbench_contract.db import NO_DATABASE
from crossbench_contract.delay import DELAY_RULE


def load_server():
    """tornado-app/server.py, the script itself, under a name of its own (the other apps' folders are on the path
    too): what it serves, from where, with which options."""
    spec = importlib.util.spec_from_file_location("tornado_server", Path(__file__).resolve().parents[1] / "server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


server = load_server()
STATIC = server.STATIC_DIR
SIZES = {"index.html": 692_224, "big.jpg": 1_677_722, "small.png": 12_288}  # SPEC.md's table


class TornadoApp(AsyncHTTPTestCase):
    def get_app(self):
        return app.make_app(STATIC, server.database(server.parse_args([])))

    def get(self, path: str, method: str = "GET", **kwargs):
        return self.fetch(path, method=method, raise_error=False, **kwargs)

    def assert_text(self, response, status: int, body: bytes):
        """A text answer: the status, exactly these bytes, text/plain UTF-8, an exact Content-Length, and the
        headers every answer carries (SPEC.md: Server, Date, Content-Type, Content-Length)."""
        assert (response.code, response.body) == (status, body), (response.code, response.body)
        assert response.headers["Content-Type"] == TEXT_TYPE
        assert response.headers["Content-Length"] == str(len(body))
        assert response.headers.get("Server") and response.headers.get("Date")


class TestTextEndpoints(TornadoApp):
    def test_hello_now_plaintext_answer_their_exact_bytes(self):
        for path, body in (("/hello", b"Hello, world"), ("/now", b"OK"), ("/plaintext", b"Hello, World!")):
            response = self.get(path)
            self.assert_text(response, 200, body)
            assert "ETag" not in response.headers and "Last-Modified" not in response.headers, path  # as Tomcat

    def test_json_is_techempowers_message(self):
        response = self.get("/json")
        assert response.code == 200 and response.body == b'{"message":"Hello, World!"}'
        assert response.headers["Content-Type"] == "application/json"
        assert response.headers["Content-Length"] == str(len(response.body))
        assert response.headers.get("Server") and response.headers.get("Date")

    def test_head_answers_the_headers_without_the_body(self):
        for path in ("/hello", "/now", "/plaintext", "/json", "/delay/async?ms=0", "/delay/sync?ms=0"):
            response = self.get(path, "HEAD")
            assert response.code == 200 and response.body == b"", path
            assert response.headers["Content-Type"] == ("application/json" if path == "/json" else TEXT_TYPE), path

    def test_an_unknown_path_is_404_in_plain_text(self):
        for path in ("/nothing", "/hello/", "/delay", "/Hello", "/static"):
            self.assert_text(self.get(path), 404, b"not found\n")

    def test_a_method_an_endpoint_does_not_take_is_405(self):
        for path in (
            "/hello",
            "/now",
            "/json",
            "/plaintext",
            "/delay/sync?ms=0",
            "/delay/async?ms=0",
            "/static/index.html",
            "/static/small.png",
        ):
            for method in ("POST", "PUT", "DELETE"):
                response = self.get(
                    path, method, body=b"x" if method != "DELETE" else None, allow_nonstandard_methods=True
                )
                assert response.code == 405, (method, path, response.code)
                assert response.body == b"method not allowed\n", (method, path, response.body)


class TestDelay(TornadoApp):
    def test_each_delay_answers_ok_after_at_least_its_delay(self):
        for style in ("sync", "async"):
            started = time.monotonic()
            response = self.get(f"/delay/{style}?ms=40")
            elapsed = time.monotonic() - started
            self.assert_text(response, 200, b"OK")
            assert elapsed >= 0.040, (style, elapsed)

    def test_zero_and_leading_zeros_are_a_delay(self):
        for path in ("/delay/sync?ms=0", "/delay/async?ms=0", "/delay/async?ms=0005", "/delay/sync?ms=000"):
            self.assert_text(self.get(path), 200, b"OK")

    def test_a_bad_delay_is_400_at_once_with_the_rule_in_its_body(self):
        integer = "ms is not a non-negative integer"
        bad = {
            "": "missing ms",
            "?delay=10": "missing ms",
            "?ms=": integer,
            "?ms=abc": integer,
            "?ms=-1": integer,
            "?ms=1.5": integer,
            "?ms=1e3": integer,
            "?ms=%2B5": integer,
            "?ms=%205": integer,
            "?ms=99999999999999999999": integer,
            "?ms=60001": "ms above the cap",
            "?ms=10&ms=20": "ms given 2 times",
        }
        for style in ("sync", "async"):
            for query, why in bad.items():
                started = time.monotonic()
                response = self.get(f"/delay/{style}{query}")
                assert time.monotonic() - started < 1.0, (style, query)  # nothing slept
                assert response.code == 400, (style, query, response.code)
                body = response.body.decode()
                assert body.startswith(why) and body == f"{body.split(';')[0]}; {DELAY_RULE}\n", (style, query, body)
                self.assert_text(response, 400, response.body)

    @gen_test(timeout=5)
    async def test_async_delay_leaves_the_loop_free_and_sync_delay_holds_it(self):
        """Seed 000's two handlers: /now answers while /delay/async waits, and only after /delay/sync has."""

        async def timed(path):
            response = await self.http_client.fetch(self.get_url(path), raise_error=False)
            return response.code, time.monotonic()

        for style, now_first in (("async", True), ("sync", False)):
            waiting = asyncio.ensure_future(timed(f"/delay/{style}?ms=300"))  # sent now
            await gen.sleep(0.05)  # the delayed request is in the server first
            (now_code, now_done), (delay_code, delay_done) = await timed("/now"), await waiting
            assert (delay_code, now_code) == (200, 200)
            assert (now_done < delay_done) == now_first, (style, now_done - delay_done)


class TestStatic(TornadoApp):
    def test_every_file_of_the_table_is_served_whole_with_its_type_and_validator(self):
        types = {"index.html": "text/html", "big.jpg": "image/jpeg", "small.png": "image/png"}
        for name, size in SIZES.items():
            response = self.get(f"/static/{name}")
            assert response.code == 200, name
            assert len(response.body) == size and response.headers["Content-Length"] == str(size), name
            assert response.body == (STATIC / name).read_bytes(), name
            assert response.headers["Content-Type"].split(";")[0] == types[name], name
            assert response.headers.get("ETag") or response.headers.get("Last-Modified"), name
            assert response.headers.get("Server") and response.headers.get("Date"), name

    def test_the_files_are_the_manifests(self):
        sums = dict(reversed(line.split()) for line in (STATIC / "SHA256SUMS").read_text().splitlines() if line)
        assert set(sums) == set(SIZES)
        for name, digest in sums.items():
            assert hashlib.sha256(self.get(f"/static/{name}").body).hexdigest() == digest, name

    def test_head_gives_the_length_without_the_body(self):
        response = self.get("/static/small.png", "HEAD")
        assert response.code == 200 and response.body == b""
        assert response.headers["Content-Length"] == str(SIZES["small.png"])

    def test_conditional_get_is_304(self):
        first = self.get("/static/small.png")
        etag, modified = first.headers.get("ETag"), first.headers.get("Last-Modified")
        if etag:
            again = self.get("/static/small.png", headers={"If-None-Match": etag})
            assert again.code == 304 and again.body == b""
        if modified:
            again = self.get("/static/small.png", headers={"If-Modified-Since": modified})
            assert again.code == 304 and again.body == b""

    def test_a_single_byte_range_is_206(self):
        response = self.get("/static/index.html", headers={"Range": "bytes=100-199"})
        assert response.code == 206 and response.body == (STATIC / "index.html").read_bytes()[100:200]
        assert response.headers["Content-Range"] == f"bytes 100-199/{SIZES['index.html']}"
        assert response.headers["Content-Length"] == "100"

    def test_a_directory_or_a_file_outside_the_manifest_is_404_never_its_content(self):
        for path in (
            "/static/",
            "/static/index.html/",
            "/static/README.md",
            "/static/generate.py",
            "/static/SHA256SUMS",
            "/static/missing.png",
            "/static/WEB-INF/web.xml",
            "/static/WEB-INF",
        ):
            response = self.get(path)
            assert response.code == 404, (path, response.code)
            assert response.body == b"not found\n", (path, response.body[:80])

    def test_a_path_that_leaves_the_fixtures_is_404_under_the_root_and_400_above_it(self):
        for path in (
            "/static/%2e%2e/tornado-app/server.py",
            "/static/%2E%2E/README.md",
            "/static/./%2e%2e/static/../hello/../static-fixtures/README.md",
        ):
            response = self.get(path)
            assert response.code == 404 and b"crossbench" not in response.body, (path, response.code)
        for path in (
            "/static/%2E%2E/%2E%2E/etc/passwd",
            "/%2e%2e/%2e%2e/etc/passwd",
            "/static/../../../etc/passwd",
            "/static/..%2Fserver.py",
        ):  # an encoded slash: Tomcat's connector refuses it (400) too
            response = self.get(path)
            assert response.code == 400, (path, response.code)
            assert b"root:" not in response.body and response.headers["Content-Type"] == TEXT_TYPE, path

    def test_a_normalised_path_reaches_its_file(self):
        """Tomcat's connector normalises `.` and `x/..` inside the root before routing: so does the app."""
        for path in ("/static/./small.png", "/static/x/../small.png", "/hello/../static/small.png"):
            response = self.get(path)
            assert response.code == 200 and len(response.body) == SIZES["small.png"], (path, response.code)


class TestDatabaseEndpointsWithoutADatabase(TornadoApp):
    """Started without --db-url: every database endpoint says so with a 503 at once (never a hang or a trace)."""

    def test_every_database_endpoint_is_503_with_a_plain_reason(self):
        for path in ("/db", "/queries?queries=3", "/db/kv", "/db/slow?ms=5", "/fortunes", "/updates?queries=2"):
            self.assert_text(self.get(path), 503, f"{NO_DATABASE}\n".encode())

    def test_db_slow_checks_its_delay_first(self):
        response = self.get("/db/slow?ms=abc")
        assert response.code == 400 and DELAY_RULE in response.body.decode()


def test_the_server_script_refuses_a_bad_option_before_serving(capsys):
    """server.py's own command line (parsed here, nothing started)."""
    args = server.parse_args(["--port", "9000", "--processes", "2"])
    assert (args.port, args.processes, args.address, args.backlog) == (9000, 2, "127.0.0.1", server.DEFAULT_BACKLOG)
    for bad in (["--processes", "0"], ["--port", "-1"], ["--db-pool", "x"]):
        with pytest.raises(SystemExit):
            server.parse_args(bad)
    assert "must be at least 1" in capsys.readouterr().err

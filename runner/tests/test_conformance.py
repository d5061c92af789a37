"""The endpoint contract (runner/CONTRACT.md), checked against every server plug-in, each real, on free ports on
127.0.0.1: the same answers from all of them for the endpoints each serves, and 404 for the ones it does not.
A server's few documented deviations (KNOWN_DEVIATIONS) are checked too, so they cannot drift unnoticed.
Every answer any test here gets, whatever its status, is also checked for the headers every server sends
(`answer`: Server, Date, Content-Type, Content-Length, as far as HTTP allows them on that status)."""

from __future__ import annotations

import contextlib
import email.utils
import hashlib

import pytest
from live_servers import build_missing_reason, request, running

from crossbench import paths
from crossbench.servers import PLUGINS, STATIC_ENDPOINT, tomcat

pytestmark = [
    pytest.mark.live,
    pytest.mark.shares_cores,  # answers only; the timings are test_conformance_timing.py's
    pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason())),
]

SERVERS = tuple(name for name, plugin in PLUGINS.items() if plugin.starts)  # the servers the suite starts
STATIC = {
    "index.html": ("text/html", 692_224),
    "big.jpg": ("image/jpeg", 1_677_722),
    "small.png": ("image/png", 12_288),
}
TEXT = {"/hello": b"Hello, world", "/now": b"OK", "/delay/sync?ms=0": b"OK", "/delay/async?ms=0": b"OK"}


# (server, path) -> (status it answers, why it differs from the contract's)
NGINX_SEGMENTS = (
    "nginx has no path parameters and takes a backslash as a plain character: the segment is a "
    "name, not '..', so the path stays under the root and matches no file"
)
KNOWN_DEVIATIONS: dict[tuple[str, str], tuple[int, str]] = {
    ("nginx", "/static/..;/..;/etc/passwd"): (404, NGINX_SEGMENTS),
    ("nginx", "/static/..\\..\\etc/passwd"): (404, NGINX_SEGMENTS),
    ("nginx", "/static/small.png;jsessionid=x"): (404, NGINX_SEGMENTS),
}


@pytest.fixture(scope="module")
def servers():
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(running(name)) for name in SERVERS}


def endpoint_of(path: str) -> str:
    bare = path.split("?", 1)[0]
    return STATIC_ENDPOINT if bare.startswith("/static/") else bare


def serving(path: str) -> list[str]:
    return [name for name in SERVERS if endpoint_of(path) in PLUGINS[name].endpoints]


NO_CONTENT_STATUSES = frozenset({204, 304})  # RFC 9110 15.3.5 and 15.4.5: no content, so no Content-Type


def check_headers(where, status: int, headers: dict, body: bytes) -> None:
    """The headers every server sends on every answer, by RFC 9110's rules for its status: a Server header
    (10.2.4, a product token); a Date (6.6.1: an origin server with a clock MUST send one on 2xx, 3xx and
    4xx); Content-Type on anything that has content (8.3); Content-Length, not chunking, on every answer
    that may have content, a HEAD's included (8.6: the length a GET would have had). A 304 has no content:
    Content-Length is optional there (8.6: MAY, and then the 200's length, checked by the 304 test) and no
    Content-Type is required."""
    assert headers.get("server", "").strip(), (where, status, "no Server header")
    assert email.utils.parsedate_to_datetime(headers["date"]).tzinfo is not None, (where, status, "Date")
    if status in NO_CONTENT_STATUSES:
        assert body == b"", (where, status)
        return
    assert "transfer-encoding" not in headers, (where, status, "chunked instead of Content-Length")
    assert headers.get("content-length", "").isdigit(), (where, status, "no Content-Length")
    if int(headers["content-length"]) > 0:
        assert headers.get("content-type", "").strip(), (where, status, "content without Content-Type")


def answer(name: str, port: int, method: str, path: str, headers: dict | None = None):
    """One request (live_servers.request) whose answer's headers are checked before it is returned."""
    status, got, body = request(port, method, path, headers)
    check_headers((name, method, path), status, got, body)
    return status, got, body


def served(servers, method, path, headers=None):
    """Every server that serves the path's endpoint, its answer."""
    return {name: answer(name, servers[name].spec.port, method, path, headers) for name in serving(path)}


def everyone(servers, method, path, headers=None):
    return {name: answer(name, servers[name].spec.port, method, path, headers) for name in SERVERS}


def expected(name: str, path: str, status: int) -> int:
    return KNOWN_DEVIATIONS.get((name, path), (status,))[0]


def media_type(value: str) -> tuple[str, dict]:
    """'text/plain;charset=UTF-8' and 'text/plain; charset=utf-8' are the same media type."""
    kind, *params = [part.strip() for part in value.split(";")]
    return kind.lower(), {k.strip().lower(): v.strip().lower() for k, v in (p.split("=", 1) for p in params)}


def fixture_bytes(name: str) -> bytes:
    return (paths.STATIC_DIR / name).read_bytes()


# --- answers ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(TEXT))
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_text_endpoints(servers, path, method):
    for name, (status, headers, body) in served(servers, method, path).items():
        assert status == 200, name
        assert media_type(headers["content-type"]) == ("text/plain", {"charset": "utf-8"}), name
        assert headers["content-length"] == str(len(TEXT[path])), name
        assert body == (TEXT[path] if method == "GET" else b""), name


def test_every_server_names_itself(servers):
    """Tomcat sends no Server header unless its connector is given one: ours names Tomcat and its version."""
    names = {name: a[1]["server"] for name, a in everyone(servers, "GET", "/hello").items()}
    assert names["tomcat"] == f"Apache-Tomcat/{tomcat.tomcat_version(tomcat.tomcat_home())}"
    assert all(names.values()), names


@pytest.mark.parametrize("file", sorted(STATIC))
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_static_files(servers, file, method):
    expected = fixture_bytes(file)
    content_type, size = STATIC[file]
    assert len(expected) == size
    for name, (status, headers, body) in served(servers, method, f"/static/{file}").items():
        assert status == 200, name
        assert media_type(headers["content-type"])[0] == content_type, name
        assert headers["content-length"] == str(size), name
        assert "etag" in headers and "last-modified" in headers, name
        if method == "GET":
            assert hashlib.sha256(body).digest() == hashlib.sha256(expected).digest(), name
        else:
            assert body == b"", name


@pytest.mark.parametrize("validator", ["etag", "last-modified"])
def test_conditional_get_answers_304(servers, validator):
    header = {"etag": "If-None-Match", "last-modified": "If-Modified-Since"}[validator]
    for name in serving("/static/small.png"):
        port = servers[name].spec.port
        _, headers, _ = answer(name, port, "GET", "/static/small.png")
        status, not_modified, body = answer(name, port, "GET", "/static/small.png", {header: headers[validator]})
        assert (status, body) == (304, b""), name
        # RFC 9110 8.6: a 304 may carry Content-Length, and then only the length the 200 would have had
        assert not_modified.get("content-length", headers["content-length"]) == headers["content-length"], name
        # a validator that does not match gets the whole file
        stale = '"stale"' if validator == "etag" else email.utils.formatdate(0, usegmt=True)
        status, _, body = answer(name, port, "GET", "/static/small.png", {header: stale})
        assert (status, len(body)) == (200, STATIC["small.png"][1]), name


@pytest.mark.parametrize(
    "range_header, start, end",
    [("bytes=0-99", 0, 99), ("bytes=1000-1999", 1000, 1999), ("bytes=-100", 692_124, 692_223)],
)
def test_single_byte_range_answers_206(servers, range_header, start, end):
    expected = fixture_bytes("index.html")
    for name, (status, headers, body) in served(servers, "GET", "/static/index.html", {"Range": range_header}).items():
        assert status == 206, name
        assert headers["content-range"] == f"bytes {start}-{end}/{len(expected)}", name
        assert headers["content-length"] == str(end - start + 1), name
        assert body == expected[start : end + 1], name


def test_unsatisfiable_range_is_416_everywhere(servers):
    answers = served(servers, "GET", "/static/small.png", {"Range": "bytes=999999-"})
    assert {name: a[0] for name, a in answers.items()} == {name: 416 for name in serving("/static/small.png")}


@pytest.mark.parametrize("path", ["/hello", "/now", "/delay/sync?ms=0", "/delay/async?ms=0", "/static/small.png"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_an_endpoint_a_server_does_not_serve_is_404(servers, path, method):
    others = [name for name in SERVERS if name not in serving(path)]
    for name in others:
        status, _, body = answer(name, servers[name].spec.port, method, path, {"Content-Length": "0"})
        assert status == 404, (name, method, path)


# --- bad input: the same 4xx on both, and never a file's content -------------------------------------------

BAD_DELAYS = [
    "",
    "?ms=",
    "?ms=abc",
    "?ms=-1",
    "?ms=1.5",
    "?ms=60001",
    "?ms=99999999999999999999",
    "?ms=%2B5",
    "?ms=%205",
    "?ms=1e3",
    "?ms=1&ms=2",
    "?other=5",
]


@pytest.mark.parametrize("endpoint", ["/delay/sync", "/delay/async"])
@pytest.mark.parametrize("query", BAD_DELAYS)
def test_bad_delay_parameters_are_400(servers, endpoint, query):
    for name, (status, headers, body) in served(servers, "GET", endpoint + query).items():
        assert status == 400, name
        assert b"ms must be one integer from 0 to 60000" in body, name


NOT_FOUND = [
    "/nothing",
    "/static/",
    "/static",
    "/static/nothing.png",
    "/static/README.md",
    "/static/SHA256SUMS",
    "/static/generate.py",
    "/static/index.html/",
    "/hello/",
    "/WEB-INF/web.xml",
    "/WEB-INF/",
    "/META-INF/MANIFEST.MF",
    "/static/../WEB-INF/web.xml",
    "/static/%2e%2e/WEB-INF/web.xml",
    "/static/%2E%2E/static-fixtures/README.md",
    "/static/%252e%252e/%252e%252e/etc/passwd",
    "/static/..%252f..%252fetc/passwd",
    "/static/WEB-INF/web.xml",
    "/static/sub/../README.md",
]
BAD_REQUEST = [
    "/static/../../etc/passwd",
    "/static/%2E%2E/%2E%2E/etc/passwd",
    "/static/%2e%2e/%2e%2e/etc/passwd",
    "/%2e%2e/etc/passwd",
    "/static/..%2f..%2fetc/passwd",
    "/static/%2e%2e%2f%2e%2e%2fetc/passwd",
    "/static/..;/..;/etc/passwd",
    "/static/index.html%00",
    "/static/%zz",
    "/static/..\\..\\etc/passwd",
]


@pytest.mark.parametrize("path", NOT_FOUND)
def test_not_found(servers, path):
    for name, (status, _, body) in everyone(servers, "GET", path).items():
        assert status == expected(name, path, 404), (name, path)
        assert b"root:" not in body and b"<web-app" not in body, name


@pytest.mark.parametrize("path", BAD_REQUEST)
def test_climbing_above_the_root_is_400(servers, path):
    for name, (status, _, body) in everyone(servers, "GET", path).items():
        assert status == expected(name, path, 400), (name, path)
        assert b"root:" not in body, name


@pytest.mark.parametrize(
    "path", ["/hello", "/now", "/delay/sync?ms=1", "/delay/async?ms=1", "/static/index.html", "/static/small.png"]
)
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_other_methods_are_405(servers, method, path):
    for name, (status, _, _) in served(servers, method, path, {"Content-Length": "0"}).items():
        assert status == 405, (name, method, path)


def test_path_normalisation_still_serves_files(servers):
    """The normalisation that blocks traversal must not break legal spellings of a path."""
    for path in [
        "/static//small.png",
        "/static/./small.png",
        "/static/sub/../small.png",
        "/static/%73mall.png",
        "/static/small.png;jsessionid=x",
    ]:
        for name, (status, _, body) in served(servers, "GET", path).items():
            if (name, path) in KNOWN_DEVIATIONS:
                assert status == expected(name, path, 200), (name, path)
                continue
            assert (status, len(body)) == (200, STATIC["small.png"][1]), (name, path)

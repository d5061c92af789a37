"""k6 sending a workload file's requests (loadgen/k6_requests.py): the script's requests and their pick by weight,
each request's kind read back from its tagged sample (openloop.by_kind), and live runs, open loop and held, against
a server that counts what arrives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_loadgen_support import counting_server, open_loop_spec  # noqa: F401 (a fixture)

from crossbench.loadgen import held, k6, k6_held, k6_requests, openloop
from crossbench.loadgen.base import LoadgenError

DECLARED = (
    {"name": "a", "method": "GET", "path": "/a", "headers": {"X-Kind": "a"}, "body": None, "weight": 1},
    {"name": "b & c=d", "method": "POST", "path": "/b", "headers": {"X-Kind": "b"}, "body": '{"n":"é %"}', "weight": 3},
    {"name": "missing", "method": "DELETE", "path": "/missing", "headers": {}, "body": None, "weight": 1},
)


def declared_spec(base: str, **changes):
    urls = tuple(base + r["path"] for r in DECLARED)
    return open_loop_spec(**{"urls": urls, "requests": DECLARED, **changes})


def test_the_script_holds_the_declared_requests_and_tags_each_sample_with_its_index():
    text = k6.script(declared_spec("http://127.0.0.1:8080"))
    sent = json.loads(text.split("const requests = ", 1)[1].split(";\n", 1)[0])
    assert [(r["method"], r["url"], r["body"], r["weight"]) for r in sent] == [
        ("GET", "http://127.0.0.1:8080/a", None, 1),
        ("POST", "http://127.0.0.1:8080/b", '{"n":"é %"}', 3),
        ("DELETE", "http://127.0.0.1:8080/missing", None, 1),
    ]
    assert "const declared = true;" in text and "const res = send(k, '5000ms');" in text
    assert "tagged(k, { code: String(res.status)" in text


def test_plain_urls_are_gets_of_equal_weight_and_untagged():
    for script in (k6.script, k6_held.script):
        text = script(open_loop_spec(urls=("http://h/x", "http://h/y"), rate=None if script is k6_held.script else 9))
        assert "const declared = false;" in text
        sent = json.loads(text.split("const requests = ", 1)[1].split(";\n", 1)[0])
        assert [(r["method"], r["url"], r["weight"]) for r in sent] == [
            ("GET", "http://h/x", 1),
            ("GET", "http://h/y", 1),
        ]


def test_requests_and_urls_must_pair():
    with pytest.raises(LoadgenError, match="3 declared requests and 1 URL"):
        k6_requests.code(open_loop_spec(urls=("http://h/a",), requests=DECLARED))


def test_each_kind_is_counted_with_its_own_latency_by_name():
    rows = [
        openloop.Request(0, 0, 0.1, latency, status, 0, kind=kind)
        for latency, status, kind in ((1.0, 200, "0"), (3.0, 200, "0"), (50.0, 404, "1"), (7.0, 200, ""))
    ]
    found = openloop.by_kind(rows, ["get", "post", "never"])
    assert {name: (k["requests"], k["non_2xx"]) for name, k in found.items()} == {
        "get": (2, 0),
        "post": (1, 1),
        "never": (0, 0),
    }
    assert found["get"]["latency_ms"]["mean"] == 2.0 and found["get"]["latency_ms"]["p99"] == 3.0
    assert found["never"]["latency_ms"]["p50"] is None
    assert openloop.by_kind(rows, None) is None


def need_k6():
    if not k6.available():
        pytest.fail(f"k6 {k6.VERSION} is not built: run runner/install-openloop.sh (runner/test.sh does)")


def assert_sent_as_declared(server, result, out_dir: Path):
    """Each kind arrived as declared, about as often as its weight says, and the record's kinds add up to what
    k6 counted, each kind's statuses its own."""
    sent = server.seen.sent
    assert set(sent) == {
        ("GET", "/a", "", "a"),
        ("POST", "/b", '{"n":"é %"}'.encode().decode("latin-1"), "b"),
        ("DELETE", "/missing", "", None),
    }
    total = sum(sent.values())
    tolerance = 5 * (0.6 * 0.4 / total) ** 0.5  # five binomial standard deviations
    assert abs(sent[("POST", "/b", '{"n":"é %"}'.encode().decode("latin-1"), "b")] / total - 0.6) < tolerance, sent
    kinds = result.extra["by_kind"]
    assert list(kinds) == ["a", "b & c=d", "missing"] and k6_requests.names(out_dir) == list(kinds)
    assert kinds["missing"]["non_2xx"] == kinds["missing"]["requests"] > 0
    assert kinds["a"]["non_2xx"] == 0 and kinds["a"]["latency_ms"]["p50"] is not None
    return kinds


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_open_loop_sends_the_mix_and_reads_each_kinds_latency(counting_server, tmp_path):  # noqa: F811
    """200 req/s for 2 s: about 400 requests, enough for the weights' shares within five deviations."""
    need_k6()
    result = k6.run(declared_spec(counting_server.url("")), tmp_path)
    kinds = assert_sent_as_declared(counting_server, result, tmp_path)
    assert sum(k["requests"] for k in kinds.values()) == result.requests
    assert sum(k["non_2xx"] for k in kinds.values()) == result.errors["non_2xx"]


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_held_closed_loop_reads_each_kind_over_the_window(counting_server, tmp_path):  # noqa: F811
    """Four VUs for 1.5 s, the window the last second: each kind over the requests sent inside it."""
    need_k6()
    spec = declared_spec(counting_server.url(""), rate=None, concurrency=4, duration_s=1, held_s=0.5, tail_s=0)
    result = k6.run(spec, tmp_path)
    kinds = assert_sent_as_declared(counting_server, result, tmp_path)
    window = held.window_of(k6_held.requests(tmp_path), 4, json.loads((tmp_path / "k6.spec.json").read_text()))
    assert sum(k["requests"] for k in kinds.values()) == len(window[0].sent)

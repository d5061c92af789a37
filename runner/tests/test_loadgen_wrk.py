"""wrk adapter: command line, parser on captured wrk.json files, and live runs against a counting server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_loadgen_support import counting_server, need  # noqa: F401  (pytest fixture)

from crossbench import loadgen
from crossbench.loadgen import wrk
from crossbench.loadgen.base import ERROR_KINDS, LoadgenError, LoadSpec

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen" / "wrk"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "wrk.json").exists())


def spec(**overrides) -> LoadSpec:
    values = dict(urls=("http://127.0.0.1:8080/hello",), concurrency=10, duration_s=2, timeout_s=2)
    return LoadSpec(**{**values, **overrides})


def raw(case: str) -> dict:
    return json.loads((FIXTURES / case / "wrk.json").read_text())


# --- command line -----------------------------------------------------------------------------


def test_threads_capped_to_connections():
    cmd = wrk.build_command(spec(concurrency=4, threads=8))
    assert cmd[cmd.index("-t") + 1] == "4"
    assert cmd[cmd.index("-c") + 1] == "4"


def test_threads_divide_connections_because_wrk_floors_per_thread():
    cmd = wrk.build_command(spec(concurrency=10, threads=3))
    assert cmd[cmd.index("-t") + 1] == "2"
    assert wrk.threads_for(spec(concurrency=7, threads=2)) == 1
    assert wrk.threads_for(spec(concurrency=1000, threads=0)) == 1


def test_taskset_prefix_only_when_pinned():
    assert wrk.build_command(spec(cpus=(2, 3)))[:4] == ["taskset", "-c", "2,3", "wrk"]
    assert wrk.build_command(spec())[0] == "wrk"


def test_duration_and_timeout_in_whole_seconds():
    cmd = wrk.build_command(spec(duration_s=60, timeout_s=2.5))
    assert cmd[cmd.index("-d") + 1] == "60s"
    assert cmd[cmd.index("--timeout") + 1] == "3s"
    assert "--latency" in cmd and cmd[cmd.index("-s") + 1] == str(wrk.LUA_SCRIPT)
    assert wrk.LUA_SCRIPT.is_file()


def test_connection_close_header_only_without_keepalive():
    closing = wrk.build_command(spec(keepalive=False))
    assert closing[closing.index("-H") + 1] == "Connection: close"
    assert "-H" not in wrk.build_command(spec(keepalive=True))


def test_script_args_carry_depth_and_every_path():
    urls = ("http://127.0.0.1:8080/static/a.png", "http://127.0.0.1:8080/delay/async?ms=10")
    cmd = wrk.build_command(spec(urls=urls, pipeline=24))
    sep = cmd.index("--")
    assert cmd[sep - 1] == urls[0]
    assert cmd[sep + 1 :] == ["24", "/static/a.png", "/delay/async?ms=10"]


@pytest.mark.parametrize(
    "bad",
    [
        dict(pipeline=4, keepalive=False),
        dict(urls=("http://127.0.0.1:8080/a", "http://127.0.0.1:9090/b")),
        dict(urls=()),
        dict(concurrency=0),
    ],
)
def test_refused_specs(bad):
    with pytest.raises(LoadgenError):
        wrk.build_command(spec(**bad))


def test_registry():
    assert set(loadgen.ADAPTERS) == {"wrk", "ab", "http_load", "oha", "k6", "vegeta"}
    for tool, adapter in loadgen.ADAPTERS.items():
        assert adapter.name == tool and loadgen.get(tool) is adapter
        for function in (adapter.available, adapter.version, adapter.build_command, adapter.run, adapter.parse):
            assert callable(function)
        assert adapter.open_loop == (tool in ("oha", "k6"))
    with pytest.raises(LoadgenError):
        loadgen.get("siege")


@pytest.mark.parametrize("tool", ["wrk", "ab", "http_load"])
def test_every_adapter_builds_a_command_without_out_dir(tool):
    # the runner checks a spec against the tool before any cell directory exists
    cmd = loadgen.get(tool).build_command(spec(keepalive=False, duration_s=1), None)
    assert tool in cmd


# --- parser on real wrk output ----------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_parse_matches_the_json_wrk_wrote(case):
    data, result = raw(case), wrk.parse(FIXTURES / case, tool_version="x")
    assert result.tool == "wrk" and result.tool_version == "x"
    assert result.requests == data["requests"]
    assert result.bytes == data["bytes"]
    assert result.duration_s == data["duration_us"] / 1e6
    assert set(result.errors) == set(ERROR_KINDS)
    for kind in ("connect", "read", "write", "timeout"):
        assert result.errors[kind] == data["errors"][kind]
    assert result.errors["non_2xx"] == data["errors"]["status"]
    assert result.errors["other"] == 0
    assert str(FIXTURES / case / "wrk.json") in result.raw_files
    assert "coordinated-omission" in result.latency_source


def test_parse_two_urls_keeps_wrks_figures_but_without_a_histogram_states_none():
    """A wrk.json written before report.lua handed over wrk's buckets: wrk's own figures (its synthetic samples in
    them) are kept for audit, and no latency figure is stated, since the correction cannot be undone."""
    latency = raw("two_urls")["latency_us"]
    result = wrk.parse(FIXTURES / "two_urls")
    assert result.reported_latency_ms == {
        "mean": latency["mean"] / 1000,
        "p50": latency["percentiles"]["50"] / 1000,
        "p90": latency["percentiles"]["90"] / 1000,
        "p99": latency["percentiles"]["99"] / 1000,
        "max": latency["max"] / 1000,
    }
    assert result.reported_latency_ms["p50"] == 1.737  # wrk.stdout of that run: "50%    1.74ms"
    assert result.latency_method == "none" and result.latency_ms["mean"] is None
    assert result.latency_ms["max"] == latency["max"] / 1000 and "no histogram" in result.extra["latency_invalid"]
    assert result.requests == 4566 and result.error_count == 0


def test_parse_states_the_recovered_figures_by_wrks_rank_rule():
    result = wrk.parse(FIXTURES / "recovered_c32_static")
    histogram = wrk.histogram_of(result)
    assert result.latency_ms == wrk.latency_ms_of(histogram) and result.latency_method == "recovered"
    assert result.latency_ms["p99"] <= result.reported_latency_ms["p99"]  # synthetic samples only lift the tail


def test_parse_accepts_file_and_text():
    by_dir = wrk.parse(FIXTURES / "status_404")
    assert wrk.parse(FIXTURES / "status_404" / "wrk.json") == by_dir
    assert wrk.parse((FIXTURES / "status_404" / "wrk.json").read_text()).requests == by_dir.requests


def test_status_errors_are_4xx_5xx_only():
    assert wrk.parse(FIXTURES / "status_404").errors["non_2xx"] == 3964  # "Non-2xx or 3xx responses: 3964"
    redirects = wrk.parse(FIXTURES / "status_301")  # every response was a 301
    assert redirects.requests == 3309 and redirects.errors["non_2xx"] == 0


def test_refused_connections_show_as_write_errors():
    # the server closed its listener half-way through a Connection: close run
    result = wrk.parse(FIXTURES / "server_gone")
    assert result.errors["connect"] == 0 and result.errors["write"] == 8212 and result.errors["read"] == 1


def test_connect_errors_are_connections_never_opened():
    # ulimit -n 32 with -c 40: socket() failed 13 times, those connections were simply missing
    assert wrk.parse(FIXTURES / "connect_emfile").errors["connect"] == 13


def test_resets_are_read_errors():
    assert wrk.parse(FIXTURES / "reset").errors["read"] == 12799


def test_slow_responses_count_as_requests_and_timeouts_but_not_latency():
    result = wrk.parse(FIXTURES / "timeout")
    assert result.requests == 2 and result.errors["timeout"] == 2
    assert result.latency_ms == dict.fromkeys(("mean", "p50", "p90", "p99", "max"))


def test_unanswered_requests_are_not_counted_anywhere():
    result = wrk.parse(FIXTURES / "never_answers")
    assert result.requests == 0 and result.error_count == 0 and result.latency_ms["max"] is None


def test_a_pipelined_histogram_is_recovered_where_wrks_own_figures_were_wrong():
    """Pipelined, wrk's correction (its interval per request, the samples per batch) puts synthetic samples below
    the histogram's min, which its own statistics never visit: its p99 reads 0. Undone, the batches' own samples
    give ordered figures."""
    data = raw("recovered_pipeline4")["latency_us"]
    assert data["percentiles"]["99"] == 0  # wrk's own figure
    result = wrk.parse(FIXTURES / "recovered_pipeline4")
    figures = [result.latency_ms[k] for k in ("p50", "p90", "p99", "max")]
    assert result.latency_method == "recovered" and figures == sorted(figures) and figures[0] > 0
    assert data["min"] / 1000 <= result.latency_ms["mean"] <= data["max"] / 1000
    assert "latency_invalid" not in result.extra


def test_unreadable_json_is_an_error(tmp_path):
    with pytest.raises(LoadgenError):
        wrk.parse(tmp_path)
    (tmp_path / "wrk.json").write_text('{"requests": 1}')
    with pytest.raises(LoadgenError):
        wrk.parse(tmp_path)


# --- live: the real wrk against a counting server ---------------------------------------------
# Those marked shares_cores check what wrk sent and the server saw (counts, shares, statuses; a floor of answers
# a 1 s run must reach to say anything, far under what a shared core gives), never a rate or a time: they share
# the cores. The histogram of latencies spread over seconds reads latencies, and runs alone.


@pytest.mark.spawns  # wrk
def test_version_probe():
    need("wrk")
    version = wrk.version()
    assert version != "unknown" and "4." in version


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_random_choice_among_urls(counting_server, tmp_path):
    need("wrk")
    urls = tuple(counting_server.url(p) for p in ("/a", "/b", "/c"))
    result = wrk.run(LoadSpec(urls=urls, concurrency=4, duration_s=1, timeout_s=2, threads=2), tmp_path)
    seen = counting_server.seen
    assert result.error_count == 0 and result.requests > 50
    assert result.requests <= seen.requests <= result.requests + 4
    tolerance = 5 * (2 / 9 / seen.requests) ** 0.5  # five binomial standard deviations
    for path in ("/a", "/b", "/c"):  # uniform choice: a third each
        assert abs(seen.hits[path] / seen.requests - 1 / 3) < tolerance, seen.hits
    assert seen.connections == 4 + 1  # keep-alive: C, plus wrk's start-up probe
    assert {Path(p).name for p in result.raw_files} == {"wrk.json", "wrk.stdout", "wrk.stderr"}


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_connection_close_is_one_connection_per_request(counting_server, tmp_path):
    need("wrk")
    spec_ = LoadSpec(
        urls=(counting_server.url("/hello"),), concurrency=4, duration_s=1, timeout_s=2, threads=2, keepalive=False
    )
    result = wrk.run(spec_, tmp_path)
    seen = counting_server.seen
    assert result.error_count == 0 and result.requests > 20
    assert seen.close_requests == seen.requests  # every request said close
    assert seen.requests <= seen.connections <= seen.requests + 4 + 1  # a connection each


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_pipeline_sends_depth_requests_per_round(counting_server, tmp_path):
    need("wrk")
    urls = (counting_server.url("/a"), counting_server.url("/b"))
    result = wrk.run(LoadSpec(urls=urls, concurrency=2, duration_s=1, timeout_s=2, threads=1, pipeline=4), tmp_path)
    seen = counting_server.seen
    assert result.error_count == 0 and result.requests > 20
    assert set(seen.batches) == {4}  # each read held exactly 4 requests
    assert seen.hits["/a"] > 0 and seen.hits["/b"] > 0  # random choice inside the batch too
    assert result.requests <= seen.requests


@pytest.mark.live
def test_live_histogram_of_latencies_spread_over_seconds_is_wrks_own(tmp_path):
    """Many buckets over a range of seconds (the shape that made done()'s bucket walk quadratic): wrk.json holds
    every bucket, and wrk's own min, max and percentiles come back from it by wrk's rule, so the one-pass walk
    over wrk's stats struct reads the right fields."""
    need("wrk")
    from live_servers import running

    with running("tornado") as server:
        urls = tuple(f"{server.url}/delay/async?ms={ms}" for ms in (1, 300, 700, 1500, 2500))
        result = wrk.run(LoadSpec(urls=urls, concurrency=200, duration_s=3, timeout_s=5), tmp_path)
    latency = result.extra["latency_us"]
    histogram = [(int(v), int(c)) for v, c in latency["histogram"]]  # as wrk handed it to done()
    assert len(histogram) > 200 and histogram[-1][0] - histogram[0][0] > 2_000_000
    assert (histogram[0][0], histogram[-1][0]) == (latency["min"], latency["max"])
    for percent, value in latency["percentiles"].items():
        assert wrk.percentile(histogram, float(percent)) == value, percent
    recovered = wrk.histogram_of(result)  # its correction undone: one per answer
    assert result.requests - result.errors["timeout"] <= sum(c for _, c in recovered) <= result.requests


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_closed_port_raises_with_wrk_message(tmp_path):
    need("wrk")
    from tornado.netutil import bind_sockets

    sock = bind_sockets(0, "127.0.0.1")[0]
    port = sock.getsockname()[1]
    sock.close()  # a port nobody listens on
    with pytest.raises(LoadgenError, match="unable to connect"):
        wrk.run(LoadSpec(urls=(f"http://127.0.0.1:{port}/",), concurrency=1, duration_s=1, timeout_s=1), tmp_path)
    assert (tmp_path / "wrk.stderr").read_text().startswith("unable to connect")


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_declared_requests_arrive_as_declared_by_weight_with_statuses_merged(counting_server, tmp_path):
    """A workload file's requests through report.lua: each method, header and body arrives as declared, each
    kind about as often as its weight says, and the answers per status are counted across wrk's threads."""
    need("wrk")
    declared = (
        {"method": "GET", "path": "/a", "headers": {"X-Kind": "a"}, "body": None, "weight": 1},
        {"method": "POST", "path": "/b", "headers": {"X-Kind": "b"}, "body": '{"n":"é \\"q\\"\\n"}', "weight": 3},
        {"method": "DELETE", "path": "/missing", "headers": {}, "body": None, "weight": 1},
    )
    spec_ = LoadSpec(
        urls=(counting_server.url("/a"),), concurrency=4, duration_s=1, timeout_s=2, threads=2, requests=declared
    )
    result = wrk.run(spec_, tmp_path)
    sent = counting_server.seen.sent
    kinds = {key[:2]: n for key, n in sent.items()}
    assert set(sent) == {
        ("GET", "/a", "", "a"),
        ("POST", "/b", '{"n":"é \\"q\\"\\n"}'.encode().decode("latin-1"), "b"),
        ("DELETE", "/missing", "", None),
    }
    total = sum(sent.values())
    tolerance = 5 * (0.6 * 0.4 / total) ** 0.5  # five binomial standard deviations
    assert abs(kinds[("POST", "/b")] / total - 0.6) < tolerance, kinds
    statuses = result.extra["status_counts"]
    assert set(statuses) == {"200", "404"}
    assert statuses["404"] == result.errors["non_2xx"]
    assert sum(statuses.values()) == result.requests  # both threads' counts, merged in done()
    assert result.requests <= total <= result.requests + 4


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_statuses_are_not_counted_without_declared_requests(counting_server, tmp_path):
    need("wrk")
    result = wrk.run(LoadSpec(urls=(counting_server.url("/a"),), concurrency=2, duration_s=1, timeout_s=2), tmp_path)
    assert result.extra["status_counts"] is None and result.requests > 20


def test_the_answers_per_status_are_read_from_wrk_json_and_added_over_load_hosts():
    data = json.loads((FIXTURES / "recovered_c1_static" / "wrk.json").read_text())
    counted = wrk.parse(json.dumps({**data, "statuses": {"200": 7, "404": 2}}))
    assert counted.extra["status_counts"] == {"200": 7, "404": 2}
    assert wrk.parse(json.dumps(data)).extra["status_counts"] is None  # a run that counted none
    other = wrk.parse(json.dumps({**data, "statuses": {"200": 1, "503": 4}}))
    merged = wrk.merge_hosts([("a", counted, None), ("b", other, None)])
    assert merged.extra["status_counts"] == {"200": 8, "404": 2, "503": 4}


@pytest.mark.live
@pytest.mark.shares_cores
def test_live_one_declared_request_is_sent_as_declared_not_as_the_url_s_get(counting_server, tmp_path):
    need("wrk")
    declared = ({"method": "PUT", "path": "/b", "headers": {"X-Kind": "b"}, "body": "x=1", "weight": 1},)
    spec_ = LoadSpec(urls=(counting_server.url("/b"),), concurrency=2, duration_s=1, timeout_s=2, requests=declared)
    result = wrk.run(spec_, tmp_path)
    assert set(counting_server.seen.sent) == {("PUT", "/b", "x=1", "b")}
    assert result.extra["status_counts"] == {"200": result.requests} and result.requests > 20

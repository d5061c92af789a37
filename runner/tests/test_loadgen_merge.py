"""Several load generators' results merged exactly (each adapter's GENERATOR.merge over loadgen/merge.py): wrk histograms
added bucket by bucket and read with wrk's own percentile rule (checked against a live wrk run, whose own
percentiles one histogram must reproduce)."""

from __future__ import annotations

import pytest
from test_loadgen_support import counting_server, need  # noqa: F401  (pytest fixture)

from crossbench.loadgen import wrk
from crossbench.loadgen.base import LoadResult, LoadSpec, empty_errors


def result(histogram, requests, duration_s=10.0, **errors) -> LoadResult:
    return LoadResult(
        "wrk",
        "x",
        requests,
        duration_s,
        100 * requests,
        {**empty_errors(), **errors},
        {},
        "wrk's histogram.",
        (f"/cells/{requests}/wrk.json",),
        {"histogram_us": histogram, "command": ["wrk", str(requests)]},
    )


def test_wrks_rank_rule_on_a_small_histogram():
    histogram = [(100, 1), (200, 2), (300, 1)]  # n = 4: ranks round(p/100*4 + 0.5)
    assert [wrk.percentile(histogram, p) for p in (0, 25, 50, 75, 99, 100)] == [100, 200, 200, 300, 300, 300]
    assert wrk.percentile([], 50) is None


def test_a_rank_that_falls_on_a_half_rounds_up_as_c_does():
    """n = 4, p = 50: round(2.5) is 3 in C (wrk), 2 in Python's round; wrk reports the third value (a CI run
    once read p50 700901 us from the histogram against wrk's own 700994)."""
    histogram = [(1, 1), (2, 1), (3, 1), (4, 1)]
    assert [wrk.percentile(histogram, p) for p in (50, 75, 100)] == [3, 4, 4]


def test_two_hosts_merge_into_the_union_of_their_samples():
    fast = result([(1000, 90), (2000, 10)], 100, connect=1)
    slow = result([(2000, 50), (9000, 50)], 100, duration_s=10.2, timeout=3)
    one = wrk.GENERATOR.merge([("a", fast, 40.0), ("b", slow, 97.5)])
    assert one.requests == 200 and one.duration_s == 10.2 and one.bytes == 20000
    assert one.errors["connect"] == 1 and one.errors["timeout"] == 3
    # the union: 90 x 1 ms, 60 x 2 ms, 50 x 9 ms; averaging the hosts' p50s (1 and 2 ms) would say 1.5
    assert one.latency_ms == {
        "mean": pytest.approx((90 * 1 + 60 * 2 + 50 * 9) / 200),
        "p50": 2.0,
        "p90": 9.0,
        "p99": 9.0,
        "max": 9.0,
    }
    assert [h["host"] for h in one.extra["per_host"]] == ["a", "b"] and one.extra["hosts"] == 2
    assert one.extra["per_host"][1]["cpu_percent"] == 97.5 and one.extra["per_host"][0]["requests"] == 100
    assert len(one.raw_files) == 2 and "2 load hosts" in one.latency_source


def test_a_json_without_histogram_is_refused():
    with pytest.raises(Exception, match="no recovered histogram"):
        wrk.histogram_of(LoadResult("wrk", "x", 1, 1.0, 1, empty_errors(), {}, "", (), {"latency_us": {}}))


@pytest.mark.live
@pytest.mark.shares_cores  # wrk's own figures against its histogram, and a count floor: no rate or time
def test_one_runs_histogram_gives_wrks_own_figures(counting_server, tmp_path):
    need("wrk")
    run = wrk.run(LoadSpec(urls=(counting_server.url("/hello"),), concurrency=8, duration_s=1, timeout_s=2), tmp_path)
    # the histogram wrk handed over (its coordinated-omission correction's synthetic samples in it, never fewer
    # than the requests) gives wrk's own figures by wrk's rule; the recovered one holds one sample per request
    reported = [(int(v), int(c)) for v, c in run.extra["latency_us"]["histogram"]]
    assert sum(count for _, count in reported) >= run.requests > 100
    own = run.extra["latency_us"]["percentiles"]
    assert [wrk.percentile(reported, float(p)) for p in own] == list(own.values())
    assert wrk.latency_ms_of(reported)["mean"] == pytest.approx(run.reported_latency_ms["mean"])
    recovered = wrk.histogram_of(run)
    assert sum(count for _, count in recovered) == run.requests
    assert wrk.latency_ms_of(recovered) == run.latency_ms


def test_two_open_loop_runs_merge_into_one_population_of_requests():
    from pathlib import Path

    from crossbench.loadgen import oha, openloop

    normal = Path(__file__).parent / "fixtures" / "loadgen" / "oha" / "normal"
    run = oha.parse(normal)
    both = oha.GENERATOR.merge([("a", run, 10.0), ("b", run, 12.0)])
    rows = oha.requests(normal)
    assert both.requests == 2 * run.requests == 2 * len(rows)
    assert both.latency_ms == openloop.latency(rows + rows)  # the union, not an average of figures
    assert both.extra["rate"] == 2 * run.extra["rate"] and both.extra["never_sent"] == 2 * run.extra["never_sent"]
    assert both.extra["rate_achieved"] == pytest.approx(2 * run.extra["rate_achieved"]) == both.rps
    assert [h["host"] for h in both.extra["per_host"]] == ["a", "b"]


def test_a_broken_pipelined_histogram_leaves_only_the_largest_max():
    broken = result([(100, 5)], 50)
    broken = LoadResult(
        **{
            **broken.__dict__,
            "latency_ms": {"max": 7.5},
            "extra": {**broken.extra, "latency_invalid": "synthetic samples below min"},
        }
    )
    fine = result([(2000, 50)], 50)
    one = wrk.GENERATOR.merge([("a", broken, None), ("b", fine, None)])
    assert one.latency_ms == {"mean": None, "p50": None, "p90": None, "p99": None, "max": 7.5}
    assert one.extra["latency_invalid"] == "synthetic samples below min" and one.requests == 100


def test_two_k6_runs_merge_like_oha_runs():
    from pathlib import Path

    from crossbench.loadgen import k6, openloop

    fixtures = Path(__file__).parent / "fixtures" / "loadgen" / "k6"
    run_dir = next(d for d in sorted(fixtures.iterdir()) if (d / "k6.csv").is_file())
    run = k6.parse(run_dir)
    both = k6.GENERATOR.merge([("a", run, None), ("b", run, None)])
    rows = k6.requests(run_dir)
    assert both.requests == 2 * run.requests and both.latency_ms == openloop.latency(rows + rows)


def test_a_mix_from_two_load_hosts_keeps_each_kinds_latency_over_both_hosts_rows():
    """A declared mix sent from two hosts: each kind's count, non-2xx and latency over every host's rows, by the
    names the parts carry (k6's by_kind), not dropped by the merge."""
    from crossbench.loadgen import merge, openloop

    rows = {
        "a": [
            openloop.Request(0, 0, 0.001, 1.0, 200, 0, kind="0"),
            openloop.Request(0, 0, 0.05, 50.0, 404, 0, kind="1"),
        ],
        "b": [
            openloop.Request(0, 0, 0.003, 3.0, 200, 0, kind="0"),
            openloop.Request(0, 0, 0.007, 7.0, 200, 0, kind="1"),
        ],
    }
    names = ["get", "post"]

    def part(host: str) -> tuple[str, LoadResult, None]:
        mine = rows[host]
        extra = {"by_kind": openloop.by_kind(mine, names), "rate": 10, "status_counts": {}}
        return (
            host,
            LoadResult("k6", "x", len(mine), 1.0, 0, empty_errors(), openloop.latency(mine), "k6", (), extra),
            None,
        )

    parts = [part("a"), part("b")]
    rows_of = {id(result): rows[host] for host, result, _ in parts}
    both = merge.merge_open_loop(parts, lambda result: rows_of[id(result)])
    kinds = both.extra["by_kind"]
    assert list(kinds) == names
    assert {name: (k["requests"], k["non_2xx"]) for name, k in kinds.items()} == {"get": (2, 0), "post": (2, 1)}
    assert kinds["get"]["latency_ms"]["mean"] == 2.0 and kinds["post"]["latency_ms"]["max"] == 50.0

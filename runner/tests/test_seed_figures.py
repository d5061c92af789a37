"""The pure parts of the seed 000 / 001 drivers: ab's start-up artifact taken out, the probe's percentiles,
counting pipelined responses in a byte stream."""

from __future__ import annotations

from pathlib import Path

import pytest

from crossbench import kinds
from crossbench.clients.pipeline_check import pipelined_requests, split_responses
from crossbench.clients.probe import latency_stats
from crossbench.drivers import ab_startup
from crossbench.drivers.pipelined import pipeline_figures
from crossbench.loadgen import ab
from crossbench.loadgen.base import LoadResult, empty_errors
from crossbench.stats import nearest_rank

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen" / "ab"


# --- ab's lone first request ----------------------------------------------------------------------


def rows_for_async_run(n: int, c: int, delay_ms: float) -> tuple[list[tuple[float, float]], float]:
    """What ab sees on a server that answers every request after exactly delay_ms, all C at once:
    the lone first request, then rounds of C."""
    rows, t = [(0.0, delay_ms)], delay_ms / 1000
    left = n - 1
    while left:
        batch = min(c, left)
        rows += [(t, delay_ms)] * batch
        left -= batch
        t += delay_ms / 1000
    return rows, t


def test_the_seed_setting_loses_one_round_and_gets_it_back():
    rows, taken = rows_for_async_run(200, 40, 1000)
    assert taken == pytest.approx(6.0)  # 1 lone + 5 rounds: ab says 33.3 req/s
    free = ab_startup.startup_free(rows, taken, 40)
    assert free["rps"] == pytest.approx(199 / 5.0)  # 39.8: what the server did
    assert free["time_per_request_ms"] == pytest.approx(40 * 1000 / (199 / 5.0))
    assert free["lone_request_ms"] == 1000 and free["requests"] == 199


def test_a_serial_server_pays_nothing_for_the_lone_request():
    rows = [(float(i), 1000.0 * (i + 1)) for i in range(200)]  # served one by one: no extra round
    free = ab_startup.startup_free(rows, 200.0, 40)
    assert free["rps"] == pytest.approx(199 / 199.0)
    assert ab_startup.expected_rounds(200, 40, blocking_workers=1) == {"ideal": 200, "with_lone_first_request": 200}
    assert ab_startup.expected_rounds(200, 40, blocking_workers=None) == {"ideal": 5, "with_lone_first_request": 6}
    assert ab_startup.expected_rounds(200, 40, blocking_workers=200) == {"ideal": 5, "with_lone_first_request": 6}


def test_degenerate_runs_give_no_figure():
    assert ab_startup.startup_free([], 1.0, 1) is None
    assert ab_startup.startup_free([(0.0, 5.0)], 1.0, 1) is None
    assert ab_startup.startup_free([(0.0, 500.0), (0.0, 500.0)], 0.4, 2) is None


def test_on_real_ab_output_with_the_artifact():
    # ab -n 40 -c 10 on a 200 ms delay: 1.021 s = the lone request + 4 rounds; ab says 39.17 req/s
    case = FIXTURES / "slow_first_alone"
    reported = ab_startup.ab_reported((case / "ab.stdout").read_text())
    assert reported == {
        "rps": 39.17,
        "time_per_request_ms": 255.291,
        "time_per_request_across_ms": 25.529,
        "time_taken_s": 1.021,
    }
    free = ab_startup.startup_free(ab.per_request(case), reported["time_taken_s"], 10)
    assert free["lone_request_ms"] == 202
    assert free["rps"] == pytest.approx(39 / (1.021 - 0.202))  # 47.6: 4 rounds of ~205 ms
    assert 10 / 0.205 * 0.95 < free["rps"] < 10 / 0.205


def test_starts_per_second_shows_the_lone_request():
    rows, _ = rows_for_async_run(200, 40, 1000)
    assert ab_startup.starts_per_second(rows) == [1, 40, 40, 40, 40, 39, 0, 0, 0, 0]
    assert ab_startup.starts_per_second(rows, 3) == [1, 40, 40]
    assert ab_startup.starts_per_second([]) == []


def test_ab_reported_time_per_request_is_c_times_time_over_n():
    reported = ab_startup.ab_reported((FIXTURES / "normal" / "ab.stdout").read_text())
    assert reported["time_per_request_ms"] == pytest.approx(10 * reported["time_taken_s"] * 1000 / 500, rel=1e-3)


# --- the probe's percentiles -------------------------------------------------------------------------


def test_nearest_rank():
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert nearest_rank(values, 50) == 50 and nearest_rank(values, 99) == 99 and nearest_rank(values, 100) == 100
    assert nearest_rank(values, 0) == 1
    assert nearest_rank([7.0], 99) == 7.0
    assert nearest_rank([1.0, 2.0, 3.0, 4.0], 50) == 2.0 and nearest_rank([1.0, 2.0, 3.0, 4.0], 51) == 3.0
    assert nearest_rank([], 50) is None


def test_latency_stats_unsorted_input_and_few_samples():
    stats = latency_stats([10000.0, 2.0, 3.0, 1.0, 9000.0])
    assert stats == {"mean": pytest.approx(19006 / 5), "p50": 3.0, "p90": 10000.0, "p99": 10000.0, "max": 10000.0}
    assert latency_stats([]) == {k: None for k in ("mean", "p50", "p90", "p99", "max")}


@pytest.mark.parametrize(("window_s", "interval_s", "due"), [(0.3, 0.01, 30), (0.25, 0.1, 3), (0.12, 0.04, 3)])
def test_the_probe_sends_the_ticks_it_plans(monkeypatch, window_s, interval_s, due):
    """Ticks 0, i, 2i, ... before the window's end: a sum of intervals that lands a hair under the end (0.01 added
    1,200 times is 11.99999...) is not one more probe (seed000 read "1,201 of 1,200 probes")."""
    from crossbench.clients import probe

    def answered_at_once(host, port, path, timeout_s, started):
        # sent at the window's start and answered at once: the next tick is then due by the plan alone, however
        # late a busy machine wakes the thread (what is checked is the count of ticks the plan makes)
        return probe.ProbeSample(0.0, 0.0, 200, 2, "")

    monkeypatch.setattr(probe, "probe_once", answered_at_once)
    sent = probe.Probe("127.0.0.1", 1, "/now", interval_s=interval_s, lead_s=0.0, window_s=window_s, timeout_s=1.0)
    sent.start().join()
    assert sent.planned == due and len(sent.samples) == due


# --- pipelined responses ---------------------------------------------------------------------------

HELLO = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: 12\r\n\r\nHello, world"


def test_split_complete_responses_and_leftover():
    assert split_responses(HELLO * 3) == ([(200, b"Hello, world")] * 3, 0)
    partial = HELLO * 2 + HELLO[:30]
    assert split_responses(partial) == ([(200, b"Hello, world")] * 2, 30)
    body_cut = HELLO + HELLO[:-1]
    assert split_responses(body_cut) == ([(200, b"Hello, world")], len(HELLO) - 1)
    not_found = b"HTTP/1.1 404 Not Found\r\ncontent-length: 10\r\n\r\nnot found\n"
    assert split_responses(HELLO + not_found) == ([(200, b"Hello, world"), (404, b"not found\n")], 0)
    assert split_responses(b"") == ([], 0)


def test_the_batch_is_the_requests_wrk_sends():
    batch = pipelined_requests("127.0.0.1", 8080, "/hello", 24)
    assert batch.count(b"GET /hello HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n") == 24
    assert len(batch) == 24 * len(b"GET /hello HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n")


def test_pipeline_figures_little_law():
    class Plan:
        pipeline, concurrency = 24, 100

    result = LoadResult(
        "wrk",
        "4.1.0",
        requests=240_000,
        duration_s=10.0,
        bytes=0,
        errors=empty_errors(),
        latency_ms={},
        latency_source="",
    )
    figures = pipeline_figures(Plan, result)
    assert figures["pipeline_batches_per_connection"] == 100
    assert figures["pipeline_flowing"] is True
    assert figures["batch_latency_mean_ms"] == pytest.approx(100 * 24 / 24_000 * 1000)  # 100 ms


# --- the experiment files and the refusals before a run ------------------------------------------------


def test_seed_experiments_expand_into_the_planned_cells():
    from crossbench.plan import experiment

    seed000 = experiment.expand(experiment.apply_overrides(experiment.load("seed000"), {"precision": False}))
    planned = sorted((c.kind, c.server, c.endpoint) for c in seed000)
    assert len(planned) == 8 and {k for k, _, _ in planned} == {"fixed_count", "hol_probe"}
    ab_tornado_sync = next(c for c in seed000 if c.cell_id == "ab_sync-tornado-delay_sync-c40-d1000-r1")
    assert ab_tornado_sync.options["requests"] == 200 and ab_tornado_sync.settings["processes"] == 1
    assert ab_tornado_sync.options["reference"]["tornado"]["rps"] == 1.00
    # ab runs without -k (the group's keepalive = false) and its cells say so; the probe's background keeps the
    # run's keep-alive, but the requests its record counts are probes on a connection each
    from crossbench.drivers import DRIVERS

    assert {c.keepalive for c in seed000 if c.kind == "fixed_count"} == {False}
    probes = [c for c in seed000 if c.kind == "hol_probe"]
    assert {c.keepalive for c in probes} == {True}
    assert not any(DRIVERS[c.kind].reuses_connections(c) for c in seed000)
    assert kinds.headline({"kind": "hol_probe", "delay_ms": 1000}) == "latency_ms.p50"
    seed001 = experiment.expand(experiment.apply_overrides(experiment.load("seed001"), {"precision": False}))
    assert sorted((c.server, c.settings.get("processes"), c.pipeline, c.concurrency) for c in seed001) == [
        ("tomcat", None, 24, 100),
        ("tornado", 1, 24, 100),
        ("tornado", 2, 24, 100),
        ("uvicorn", None, 24, 100),
    ]


def test_fixed_count_refuses_what_ab_cannot_do():
    from dataclasses import replace

    from crossbench.drivers import DRIVERS, DriverRefused
    from crossbench.plan import experiment

    plan = next(
        c
        for c in experiment.expand(experiment.apply_overrides(experiment.load("seed000-quick"), {}))
        if c.kind == "fixed_count"
    )
    preflight = DRIVERS["fixed_count"].preflight
    preflight(plan)
    for options in ({}, {"requests": "40"}, {"requests": 4}):  # missing, not an int, below C = 8
        with pytest.raises(DriverRefused):
            preflight(replace(plan, options=options))

"""Open-loop cells: planning (rates, --loadgen oha, rates = "auto"), the driver's flags on captured oha runs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crossbench.decide.between_cells import PeakMissing, with_rate_from_peak
from crossbench.drivers import DRIVERS, DriverRefused
from crossbench.drivers.open_loop import open_loop_figures, unsustainable
from crossbench.loadgen import k6, oha
from crossbench.loadgen.openloop import cached_binary
from crossbench.plan.experiment import apply_overrides, expand, load
from crossbench.plan.experiment_schema import AUTO_SHARES, ExperimentError
from crossbench.record.record import point_of

OHA_RUNS = Path(__file__).parent / "fixtures" / "loadgen" / "oha"


def cells_of(name: str, **overrides):
    return expand(apply_overrides(load(name), {"shuffle": False, **overrides}))


@pytest.fixture
def generators_built(tmp_path, monkeypatch):
    """The preflight asks only whether the pinned generators are in the tools cache (it runs none): a tools cache
    holding their files, so that a fresh machine, which builds them in the full test command, runs these too."""
    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path))
    for tool, version in (("oha", oha.VERSION), ("k6", k6.VERSION)):
        binary = cached_binary(tool, version)
        binary.parent.mkdir(parents=True)
        binary.write_text("")


def auto_config(**group_changes) -> dict:
    config = load("openloop-quick")
    config["run"]["shuffle"] = False
    config["group"] = [{**config["group"][0], "rates": "auto", **group_changes}]
    return config


def test_openloop_quick_plans_each_rate_on_each_server():
    cells = cells_of("openloop-quick", groups=["delay"])
    assert sorted((c.server, c.rate) for c in cells) == [
        ("tomcat", 50),
        ("tomcat", 150),
        ("tornado", 50),
        ("tornado", 150),
    ]
    assert {(c.kind, c.loadgen) for c in cells} == {("open_loop", "oha")}
    assert "delay-tomcat-mt20-delay_sync-c1000-d200-q150-r1" in {c.cell_id for c in cells}


def test_an_open_loop_generator_turns_closed_loop_groups_open():
    cells = cells_of("quick", loadgen="oha", rates=[100, 200], groups=["delay"])
    assert {c.kind for c in cells} == {"open_loop"} and {c.rate for c in cells} == {100, 200}
    with pytest.raises(ExperimentError, match="need rates"):
        cells_of("quick", loadgen="oha", groups=["delay"])


@pytest.mark.parametrize(
    "group, message",
    [
        ({"rates": [50, 0]}, "positive"),
        ({"rates": "fast"}, "positive"),
        ({"rate_shares": [0]}, "shares of the peak"),
        ({"peak_loadgen": "oha"}, "closed-loop generator"),
    ],
)
def test_bad_rates_are_refused(group, message):
    config = load("openloop-quick")
    config["group"] = [{**config["group"][0], **group}]
    with pytest.raises(ExperimentError, match=message):
        expand(apply_overrides(config, {}))


def test_auto_rates_measure_the_peak_first_then_offer_shares_of_it():
    cells = expand(apply_overrides(auto_config(), {"shuffle": True, "repetitions": 2}))
    peaks = [c for c in cells if c.peak_cell is None]
    assert len(peaks) == 2 * 2 and {(c.kind, c.loadgen, c.rate) for c in peaks} == {("closed_loop", "wrk", None)}
    for peak in peaks:  # shuffled, yet every launch of a peak runs before any cell offering its share
        assert peak.index < min(c.index for c in cells if c.peak_cell and point_of(c.peak_cell) == peak.point_id)
    offered = [c for c in cells if c.peak_cell is not None]
    assert len(offered) == 2 * 2 * len(AUTO_SHARES)
    assert {c.peak_cell for c in offered} == {c.cell_id for c in peaks if c.repetition == 1}
    assert all(c.kind == "open_loop" and c.rate is None for c in offered)
    assert "delay-tornado-delay_async-c1000-d200-q110pct-r2" in {c.cell_id for c in offered}


def test_the_rate_comes_from_the_peak_cells_throughput():
    cells = expand(apply_overrides(auto_config(rate_shares=[0.5, 1.2]), {"servers": ["tornado"]}))
    peak, half, over = cells
    assert with_rate_from_peak(half, {peak.cell_id: {"status": "ok", "rps": 481.3}}).rate == 240.7
    assert with_rate_from_peak(over, {peak.cell_id: {"status": "ok", "rps": 481.3}}).rate == 577.6
    assert with_rate_from_peak(peak, {}) is peak
    with pytest.raises(PeakMissing, match="was not measured"):
        with_rate_from_peak(half, {})
    with pytest.raises(PeakMissing, match="no throughput"):
        with_rate_from_peak(half, {peak.cell_id: {"status": "failed", "rps": None, "error": "verify failed"}})


def test_the_rate_is_a_share_of_the_mean_over_the_peaks_launches_that_counted():
    cells = expand(apply_overrides(auto_config(rate_shares=[0.5]), {"servers": ["tornado"], "repetitions": 2}))
    first, second = [c for c in cells if c.peak_cell is None]
    half = next(c for c in cells if c.peak_cell)
    launches = {
        first.cell_id: {"status": "ok", "rps": 480.0},
        second.cell_id: {"status": "ok", "rps": 500.0},
        "other-point-r1": {"status": "ok", "rps": 9000.0},
    }
    assert with_rate_from_peak(half, launches).rate == 245.0
    launches[second.cell_id] = {"status": "failed", "rps": None}
    assert with_rate_from_peak(half, launches).rate == 240.0


def test_open_loop_cells_refuse_a_closed_loop_generator_and_accept_auto_rates(generators_built):
    cell = cells_of("openloop-quick")[0]
    DRIVERS["open_loop"].preflight(cell)
    with pytest.raises(DriverRefused, match="open-loop generator"):
        DRIVERS["open_loop"].preflight(type(cell)(**{**cell.to_dict(), "loadgen": "wrk"}))
    shares = [c for c in expand(apply_overrides(auto_config(), {})) if c.rate_share is not None]
    DRIVERS["open_loop"].preflight(shares[0])


def test_a_capacity_search_holds_its_window_on_a_pool_sized_from_littles_law():
    """capacity-quick's Tomcat (100 req/s, p99 within 300 ms): 45 connections (1.5 x 100 x 0.3), opened by the
    load before the window in the same process; a 3 s window (300 requests for its p99) and a 1 s tail."""
    cell = next(c for c in cells_of("capacity-quick") if c.group == "tomcat")
    driver = DRIVERS["open_loop"]
    assert (cell.rate, cell.target_ms, cell.concurrency) == (100.0, 300.0, 1000)
    assert driver.holds(cell) and driver.opens_before_window(cell) and driver.pool(cell) == 45
    spec = driver.load_spec(cell, "http://127.0.0.1:1")
    assert (spec.rate, spec.concurrency, spec.held_s, spec.duration_s, spec.tail_s) == (100.0, 45, 1.0, 3.0, 1.0)
    assert driver.planned_s(cell) == 5.0
    slow = replace(cell, rate=10.0)  # 300 requests take 30 s at 10 req/s, the longest a window runs
    assert driver.load_spec(slow, "http://127.0.0.1:1").duration_s == 30.0


def test_a_fixed_rate_holds_its_window_on_a_pool_sized_at_its_delay():
    """openloop-quick's Tomcat at 50 req/s on a 200 ms delay, no target: Little's law at the delay, 1.5 x 50 x 0.2
    = 15 connections, the load before the window the warm-up (1 s, more than 2 ticks a connection) and a 1 s tail;
    a cell with no delay keeps the group's concurrency; a rates = "auto" cell holds once its peak sets its rate,
    and k6 (which cannot) runs the window after a warm-up of its own."""
    driver = DRIVERS["open_loop"]
    cell = next(c for c in cells_of("openloop-quick") if c.server == "tomcat" and c.rate == 50)
    spec = driver.load_spec(cell, "http://127.0.0.1:1")
    assert driver.holds(cell) and driver.pool(cell) == 15 and (spec.held_s, spec.tail_s) == (1.0, 1.0)
    static = replace(cell, delay_ms=0, rate=5000.0)
    assert driver.holds(static) and driver.pool(static) == cell.concurrency
    auto = next(c for c in cells_of("openloop-quick") if c.rate_share is not None)
    assert auto.rate is None and not driver.holds(auto) and driver.holds(replace(auto, rate=90.0))
    k6 = replace(cell, loadgen="k6")
    assert not driver.holds(k6) and driver.pool(k6) == cell.concurrency
    assert driver.load_spec(k6, "http://127.0.0.1:1").held_s == 0.0


def test_a_generator_not_built_is_refused_with_the_command_that_builds_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(DriverRefused, match=r"oha is not built: run ./runner/install-openloop.sh"):
        DRIVERS["open_loop"].preflight(cells_of("openloop-quick")[0])


def test_a_pool_too_small_for_the_target_is_refused_with_the_number_it_needs(generators_built):
    cell = next(c for c in cells_of("capacity-quick") if c.group == "tomcat")
    DRIVERS["open_loop"].preflight(cell)
    with pytest.raises(DriverRefused, match="Little's law needs 30 connections"):
        DRIVERS["open_loop"].preflight(replace(cell, concurrency=20))


@pytest.mark.parametrize(
    "rate, achieved, rise, p50, flagged",
    [
        (100, 96, 2.0, 200, False),  # kept up, flat
        (100, 94, 2.0, 200, True),  # fell short of 95%
        (100, 100, 101, 200, True),  # a queue growing by more than half the median
        (100, 100, 9.0, 5, False),  # tiny latencies: under the 10 ms floor is noise
        (100, 100, None, None, False),  # too few answers to fit a slope
    ],
)
def test_unsustainable_rule(rate, achieved, rise, p50, flagged):
    assert (unsustainable(rate, achieved, rise, p50) is not None) == flagged


def plan_at(rate: float, duration_s: float = 2.0, delay_ms: int = 0):
    cell = cells_of("openloop-quick")[0]
    return type(cell)(**{**cell.to_dict(), "rate": rate, "duration_s": duration_s, "delay_ms": delay_ms})


def test_a_run_that_kept_its_rate_is_not_flagged():
    figures, flags = open_loop_figures(plan_at(200), oha.parse(OHA_RUNS / "normal"))
    assert flags == [] and figures["unsustainable_reason"] is None
    assert figures["rate_achieved"] == pytest.approx(200, rel=0.01) and figures["never_sent"] == 0


def test_a_queueing_server_is_flagged_unsustainable_with_its_unsent_requests():
    figures, flags = open_loop_figures(plan_at(100, delay_ms=20), oha.parse(OHA_RUNS / "queueing"))
    assert "unsustainable" in flags and "of 100 req/s offered" in figures["unsustainable_reason"]
    assert figures["never_sent"] == 107 and figures["latency_rise_ms"] > 500
    assert figures["latency_ratio"] > 10  # mean latency / 20 ms delay: the queue, not the delay


def test_the_achieved_rate_counts_only_answers_inside_the_window():
    from crossbench.loadgen.openloop import Request, completion_rate

    # offered 150/s for 10 s to a server that answers 100/s: the generator waits for the rest after the window
    rows = [
        Request(scheduled_s=i / 150, start_s=i / 150, end_s=0.2 + i / 100, latency_ms=0, status=200, bytes=0)
        for i in range(1500)
    ]
    assert completion_rate(rows, 10.0) == pytest.approx(100, rel=0.01)
    assert completion_rate(rows[:100], 10.0) == pytest.approx(100 / 9.8)  # it stopped answering after 1 s
    assert completion_rate([], 10.0) == 0.0


def test_the_generator_is_judged_behind_by_what_its_lag_could_move():
    """Issue W: at 25 req/s in a 2 s window one 5.5 ms hiccup was p99 (the largest of 50 lags) and called Tomcat's
    20 threads "above the generator's ceiling". The lag judged has five lags above it, and is held against the
    larger of 5 ms and 5 % of the median latency."""
    from crossbench.loadgen import openloop

    hiccup = openloop.lag_figures([1.0] * 49 + [5.5])
    assert hiccup["p99"] == 5.5 and hiccup["judged"]["percentile"] == 90.0 and hiccup["judged"]["ms"] == 1.0
    assert openloop.behind_schedule({"schedule_lag_ms": hiccup}, 200.0) is None
    late = openloop.lag_figures([12.0] * 50)  # every tick 12 ms late
    assert "limit 10.0 ms" in openloop.behind_schedule({"schedule_lag_ms": late}, 200.0)
    assert openloop.behind_schedule({"schedule_lag_ms": late}, 300.0) is None  # 5 % of 300 ms is 15
    fast = openloop.lag_figures([6.0] * 1000)  # 1 ms answers: the 5 ms floor decides
    assert fast["judged"]["percentile"] == 99.0 and "limit 5.0 ms" in openloop.behind_schedule(
        {"schedule_lag_ms": fast}, 1.0
    )
    assert openloop.behind_schedule({"schedule_lag_ms": late, "schedule_lag_exact": False}, 1.0) is None
    # a record of an older run has no judged lag: its p99 is judged, as before
    assert openloop.behind_schedule({"schedule_lag_ms": {"p99": 6.0}}, 1.0) is not None


def test_a_group_may_state_clients_that_open_a_connection_per_request():
    """capacity's connection-per-request group: no keep-alive, on purpose; its window still runs held at its rate,
    and opening connections inside it is its model, not a flag."""
    cell = next(c for c in cells_of("capacity") if c.group == "connection-per-request")
    driver = DRIVERS["open_loop"]
    assert cell.keepalive is False and driver.holds(cell) and not driver.opens_before_window(cell)
    assert "--disable-keepalive" in oha.build_command(driver.load_spec(cell, "http://127.0.0.1:1"))
    pooled = next(c for c in cells_of("capacity") if c.group == "event-loops" and c.server == "tornado")
    assert pooled.keepalive is True and driver.opens_before_window(pooled)

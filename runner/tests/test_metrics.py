import pytest

from crossbench.record import metrics


def test_perfect_server_with_window_edge():
    """C=1000, 1 s delay, 20 s window: each connection finishes 19 of its 20 rounds inside the window."""
    r = metrics.ratios(concurrency=1000, delay_ms=1000, rps=19_000 / 20, mean_latency_ms=1000.0)
    assert r.efficiency_ratio == pytest.approx(20 / 19)      # the seed's figure reads 5% high
    assert r.latency_ratio == pytest.approx(1.0)
    assert r.rps_steady == pytest.approx(1000.0)             # Little's law: no edge
    assert (1000 / r.rps_steady) / 1.0 == pytest.approx(r.latency_ratio)   # (C / rps_steady) / delay: one ratio


def test_tomcat_pool_bound():
    """1000 clients, 200 threads, 1 s: five rounds per answer, so ratio 5 both ways."""
    r = metrics.ratios(concurrency=1000, delay_ms=1000, rps=200.0, mean_latency_ms=5000.0)
    assert r.efficiency_ratio == pytest.approx(5.0)
    assert r.latency_ratio == pytest.approx(5.0)


def test_static_cells_have_no_ratio():
    r = metrics.ratios(concurrency=10, delay_ms=0, rps=5000.0, mean_latency_ms=2.0)
    assert (r.efficiency_ratio, r.latency_ratio) == (None, None)
    assert r.rps_steady == pytest.approx(5000.0)


def test_no_completions_gives_no_ratio():
    r = metrics.ratios(concurrency=10, delay_ms=1000, rps=0.0, mean_latency_ms=None)
    assert r == metrics.Ratios(None, None, None)


def test_a_saturated_load_generator_leaves_no_steady_throughput():
    """Little's law counts only time inside a request; a saturated client also spends time between them."""
    r = metrics.ratios(concurrency=1000, delay_ms=1000, rps=950.0, mean_latency_ms=1000.0, loadgen_saturated=True)
    assert r.rps_steady is None and r.latency_ratio == pytest.approx(1.0)
    assert metrics.latency_ratio(250.0, 100) == pytest.approx(2.5) and metrics.latency_ratio(None, 100) is None
    assert metrics.latency_ratio(5.0, 0) is None


def test_the_closed_loop_driver_decides_rps_steady_once_knowing_the_cells_saturation():
    """No one overwrites it after the merge: the driver's figures come after the cell's own flags."""
    from crossbench.drivers import DRIVERS, Measurement
    from crossbench.loadgen.base import LoadResult, empty_errors
    plan = type("Plan", (), {"concurrency": 10, "delay_ms": 100, "pipeline": 1})()
    result = LoadResult("wrk", "4.1.0", 1000, 10.0, 0, empty_errors(), {"mean": 100.0}, "test")
    for kind in ("closed_loop", "pipelined"):
        calm, _ = DRIVERS[kind].figures(plan, Measurement(result), loadgen_saturated=False)
        busy, _ = DRIVERS[kind].figures(plan, Measurement(result), loadgen_saturated=True)
        assert calm["rps_steady"] == pytest.approx(100.0) and "Little" in calm["rps_steady_method"]
        assert busy["rps_steady"] is None and busy["rps_steady_method"].startswith("null: the load generator")
        assert busy["efficiency_ratio"] == calm["efficiency_ratio"] == pytest.approx(1.0)


def flags(**overrides):
    args = dict(concurrency=10, requests=600, errors={"connect": 0, "read": 0, "write": 0, "timeout": 0,
                                                     "non_2xx": 0, "other": 0},
                ratios_=metrics.ratios(10, 1000, 10.0, 1000.0))
    args.update(overrides)
    return metrics.flags(**args)


def test_clean_cell_has_no_flags():
    assert flags() == []


@pytest.mark.parametrize("overrides, expected", [
    ({"errors": {"timeout": 3}}, ["timeouts"]),
    ({"errors": {"connect": 1, "timeout": 0}}, ["errors"]),
    ({"errors": {"non_2xx": 5}}, ["errors"]),
    ({"requests": 20}, ["few_completions"]),          # 2 round trips per connection
    ({"requests": 0}, ["few_completions"]),
    ({"ratios_": metrics.ratios(10, 1000, 10 / 1.2, 1000.0)}, ["ratio_disagreement"]),
    ({"ratios_": metrics.ratios(10, 1000, 10 / 1.09, 1000.0)}, []),
    ({"ratios_": metrics.ratios(10, 1000, 10 * 1.2, 1000.0), "window_s": 10.0, "mean_latency_ms": 1000.0},
     ["ratio_disagreement"]),                        # the edge only ever lowers the count: never excused below
])
def test_each_flag(overrides, expected):
    assert flags(**overrides) == expected


@pytest.mark.parametrize("window_s, flagged", [(10.0, []), (60.0, ["ratio_disagreement"])])
def test_the_windows_edge_excuses_one_round_trip_a_connection_and_no_more(window_s, flagged):
    """Seed 002's 10 s window at a 1 s delay counts 9 round trips of 10 (efficiency ratio 1.11 against a latency
    ratio of 1.0, measured): the edge, not a fault. The same 1.2 over a 60 s window is more than one trip."""
    assert flags(ratios_=metrics.ratios(10, 1000, 10 / 1.2, 1000.0), window_s=window_s,
                 mean_latency_ms=1000.0) == flagged
    assert metrics.edge_allowance(10.0, 1000.0) == pytest.approx(10 / 9)
    assert metrics.edge_allowance(None, 1000.0) == 1.0


@pytest.mark.parametrize("cpu, cores, saturated", [(95.0, 1, True), (150.0, 2, False), (None, 1, False),
                                                    (185.0, 2, True)])
def test_loadgen_saturation(cpu, cores, saturated):
    assert metrics.loadgen_saturated(cpu, cores) is saturated


def test_timeouts_cover_the_slowest_healthy_answer():
    """Tomcat at 200 threads, C=1000, 10 s delay answers after about 50 s: wrk's 2 s default would lie."""
    worst = metrics.expected_worst_latency_s(delay_ms=10_000, concurrency=1000, blocking=True, workers=200)
    assert worst == 50.0
    assert metrics.loadgen_timeout_s(worst) > 50.0
    one_loop = metrics.expected_worst_latency_s(delay_ms=1000, concurrency=10, blocking=True, workers=1)
    assert one_loop == 10.0
    async_ = metrics.expected_worst_latency_s(delay_ms=10_000, concurrency=1000, blocking=False, workers=200)
    assert async_ == 10.0


def test_in_flight_is_throughput_times_mean_latency():
    assert metrics.in_flight(2147.5, 0.904) == pytest.approx(1.941, abs=1e-3)   # wrk's own figures, C=1 (issue 45)
    assert metrics.in_flight(0.0, 1.0) is None and metrics.in_flight(10.0, None) is None


def test_more_in_flight_than_the_closed_loop_holds_is_flagged():
    assert "in_flight_over_concurrency" in flags(in_flight_=10.3)              # past 2 % over C = 10
    assert "in_flight_over_concurrency" not in flags(in_flight_=10.1)
    assert "in_flight_over_concurrency" not in flags(in_flight_=39.0, pipeline=4)  # 4 batches' worth per connection
    assert "in_flight_over_concurrency" not in flags(in_flight_=10.6, rounding=0.5)  # ab's whole-ms mean
    assert "in_flight_over_concurrency" not in flags(in_flight_=None)


def test_the_closed_loop_driver_flags_samples_no_request_had():
    """wrk's own mean on a fast endpoint (its synthetic samples in it): 1.94 requests in flight on one
    connection, which the closed loop cannot hold."""
    from crossbench.drivers.closed_loop import closed_loop_figures
    from crossbench.loadgen.base import LoadResult, empty_errors
    plan = type("Plan", (), {"concurrency": 1, "delay_ms": 0, "pipeline": 1})()
    as_wrk_said = LoadResult("wrk", "4.1.0", 8590, 4.0, 0, empty_errors(), {"mean": 0.904}, "test")
    figures, found = closed_loop_figures(plan, as_wrk_said)
    assert figures["in_flight"] == pytest.approx(1.94, abs=0.01) and "in_flight_over_concurrency" in found
    measured = LoadResult("wrk", "4.1.0", 8590, 4.0, 0, empty_errors(), {"mean": 0.462}, "test")
    figures, found = closed_loop_figures(plan, measured)
    assert figures["in_flight"] == pytest.approx(0.99, abs=0.01) and "in_flight_over_concurrency" not in found

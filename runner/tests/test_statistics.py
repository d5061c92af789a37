"""Known answers for the suite's statistics (crossbench/stats.py) and the points built on them: if the interval
arithmetic is wrong, these fail."""

import json
import math

import pytest

from crossbench import stats
from crossbench.decide import precision
from crossbench.figures import points
from crossbench.plan.experiment import apply_overrides, expand, load, recorded


def test_student_t_interval_of_one_to_five():
    # mean 3, s = sqrt(2.5), se = s / sqrt(5) = 0.70711, t(0.975, 4) = 2.77645: half-width 1.96324
    interval = stats.t_interval([1, 2, 3, 4, 5])
    assert interval.mean == 3
    assert interval.low == pytest.approx(1.036757, abs=1e-6) and interval.high == pytest.approx(4.963243, abs=1e-6)
    assert interval.half_width_rel == pytest.approx(1.963243 / 3, abs=1e-6)
    assert interval.method == stats.T_METHOD


def test_a_figure_is_the_geometric_mean_with_students_t_on_logs_and_never_goes_below_zero():
    # logs of 100, 110, 105: mean 4.653203, s = 0.047661, se = 0.027517, t(0.975, 2) = 4.302653: half 0.118397
    found = stats.estimate([100, 110, 105])
    assert found.value == pytest.approx(104.920575, abs=1e-6) and found.method == stats.GEOMETRIC
    assert found.low == pytest.approx(93.205864, abs=1e-5) and found.high == pytest.approx(118.107666, abs=1e-5)
    assert found.half_width_rel == pytest.approx(118.107666 / 104.920575 - 1, abs=1e-6)  # the wider, upper side
    # the quick run's Tomcat static p99 that read [-1950, 2775] on the straight scale: wide, but above zero
    wide = stats.estimate([60.0, 976.0, 700.0])
    assert 0 < wide.low < wide.value < wide.high


def test_under_three_launches_a_figure_is_indicative_and_a_launch_at_zero_has_no_interval():
    two = stats.estimate([10, 12])  # t(1) = 12.7 would make the interval as wide as the figure
    assert (two.low, two.high, two.indicative, two.method) == (None, None, True, stats.INDICATIVE)
    assert two.value == pytest.approx(math.sqrt(120)) and two.launches == (10.0, 12.0)
    idle = stats.estimate([0.0, 0.3, 0.6])  # an idle CPU: no log, no interval, said so
    assert (idle.value, idle.low, idle.method) == (pytest.approx(0.3), None, stats.NOT_POSITIVE)
    assert points.fmt_interval(two.as_figure(), "req/s") == "2 launches: 10, 12 req/s (indicative)"
    assert points.fmt_interval(idle.as_figure(), "%") == "0.3 % (3 launches, one at zero)"
    with pytest.raises(ValueError):
        stats.estimate([])


def test_steins_rule_sets_the_launches_from_the_first_stage_spread():
    # logs of 100, 150, 120: s = 0.203075; (t(0.975, 2) s / ln 1.05)^2 = (4.302653 * 0.203075 / 0.048790)^2 = 320.7
    assert stats.launches_needed([100, 150, 120], 0.05) == 321
    assert stats.launches_needed([100, 100.2, 100.1], 0.05) == stats.MIN_LAUNCHES  # already tight
    assert stats.launches_needed([100, 101], 0.05) == stats.MIN_LAUNCHES  # no first stage yet
    # only the first stage counts: a tight fourth launch does not lower what a wide first stage asked
    assert stats.launches_needed([100, 150, 120, 121, 120], 0.05) == 321


def test_welch_on_log_values_known_answer():
    # B's geometric mean over A's: (92*97*95*90)^(1/4) / (100*110*105)^(1/3) = 0.890781; Welch's t = -3.5971 on
    # 3.424 degrees of freedom, p = 0.02963, 95 % interval of the ratio [0.80963, 0.98006] (scipy agrees)
    test = stats.log_ratio([100, 110, 105], [92, 97, 95, 90])
    assert test.ratio == pytest.approx(0.8907806, abs=1e-6)
    assert test.low == pytest.approx(0.8096321, abs=1e-6) and test.high == pytest.approx(0.9800626, abs=1e-6)
    assert test.p_value == pytest.approx(0.0296294, abs=1e-6)
    assert (test.n_a, test.n_b, test.method) == (3, 4, stats.WELCH_METHOD)


def test_a_ratio_with_one_launch_a_side_has_no_interval():
    test = stats.log_ratio([100], [90, 91])
    assert test.ratio == pytest.approx(math.sqrt(90 * 91) / 100)
    assert (test.low, test.high, test.p_value, test.method) == (None, None, None, stats.ONE_LAUNCH)
    with pytest.raises(ValueError):
        stats.log_ratio([0.0, 1.0], [1.0, 2.0])


def test_paired_t_on_log_values_known_answer_and_what_pairing_takes_out():
    # Four rounds whose machine state moves both sides alike: log(b/a) = -0.08338, -0.08536, -0.10008, -0.07411;
    # mean -0.08573, s = 0.010751, t(0.975, 3) = 3.18245: B/A 0.917839 [0.902271, 0.933676], p = 0.000536
    # (scipy.stats.ttest_1samp agrees). Welch's t on the same values, unpaired, barely leaves 1: [0.8425, 0.9999].
    a, b = [100, 110, 105, 98], [92, 101, 95, 91]
    test = stats.paired_log_ratio(list(zip(a, b)))
    assert test.ratio == pytest.approx(0.9178391, abs=1e-6)
    assert test.low == pytest.approx(0.9022711, abs=1e-6) and test.high == pytest.approx(0.9336757, abs=1e-6)
    assert test.p_value == pytest.approx(0.000536, abs=1e-6)
    assert (test.n_a, test.n_b, test.method) == (4, 4, stats.PAIRED_METHOD)
    unpaired = stats.log_ratio(a, b)
    assert unpaired.ratio == pytest.approx(test.ratio) and unpaired.low == pytest.approx(0.8425348, abs=1e-6)


def test_one_pair_has_no_interval_and_bad_values_are_refused():
    one = stats.paired_log_ratio([(100, 90)])
    assert (one.ratio, one.low, one.high, one.p_value, one.method) == (
        pytest.approx(0.9),
        None,
        None,
        None,
        stats.ONE_LAUNCH,
    )
    with pytest.raises(ValueError):
        stats.paired_log_ratio([(0.0, 1.0), (1.0, 2.0)])
    with pytest.raises(ValueError):
        stats.paired_log_ratio([])


def record(cell_id, rps, p99, status="ok", flags=(), delay_ms=0, kind="closed_loop"):
    return {
        "cell_id": cell_id,
        "point_id": cell_id.rsplit("-r", 1)[0],
        "repetition": int(cell_id.rsplit("-r", 1)[1]),
        "status": status,
        "flags": list(flags),
        "rps": rps,
        "delay_ms": delay_ms,
        "kind": kind,
        "latency_ms": {"p50": p99 / 2, "p99": p99},
        "server": "tomcat",
        "concurrency": 10,
        "efficiency_ratio": None,
        "threads_peak": 30,
    }


def test_a_launch_without_its_jfr_recording_leaves_its_point_valid():
    # the first Tomcat start on a machine makes the class-data archive, with JFR off: its window still counts
    records = [record("s-tomcat-c10-d0-r1", 100, 10, flags=["jfr_unreadable"]), record("s-tomcat-c10-d0-r2", 110, 12)]
    [point] = points.aggregate(records)
    assert point["valid"] and point["flags"] == ["jfr_unreadable"] and point["n"] == 2
    [spoiled] = points.aggregate(
        [record("s-tomcat-c10-d0-r1", 100, 10, flags=["timeouts"]), record("s-tomcat-c10-d0-r2", 110, 12)]
    )
    assert not spoiled["valid"]


def test_launches_whose_latency_could_not_be_recovered_keep_their_throughput():
    """wrk's histogram under pipelining cannot be undone: the record keeps no latency figure and the flag says so,
    and its throughput still counts (seed001's Tomcat was left out whole before)."""
    records = [
        {
            **record(f"p-tomcat-c100-d0-r{i}", rps, 1.0, flags=["latency_unrecoverable"]),
            "latency_ms": {"p50": None, "p99": None, "max": 840.0},
        }
        for i, rps in ((1, 70000), (2, 72000), (3, 71000))
    ]
    [point] = points.aggregate(records)
    assert point["valid"] and point["flags"] == ["latency_unrecoverable"] and point["n"] == 3
    assert point["figures"]["rps"]["value"] == pytest.approx((70000 * 72000 * 71000) ** (1 / 3))
    assert "latency_ms.p99" not in point["figures"]


def test_a_point_holds_its_launches_with_intervals_and_counts_failures_apart():
    records = [
        record("s-tomcat-c10-d0-r1", 100, 10),
        record("s-tomcat-c10-d0-r2", 110, 12),
        record("s-tomcat-c10-d0-r3", None, 0.0, status="failed"),
        record("s-tomcat-c10-d0-r4", 105, 11),
    ]
    [point] = points.aggregate(records)
    assert (point["point_id"], point["n"], point["failed"]) == ("s-tomcat-c10-d0", 3, 1)
    assert point["cells"] == ["s-tomcat-c10-d0-r1", "s-tomcat-c10-d0-r2", "s-tomcat-c10-d0-r4"]
    rps = point["figures"]["rps"]
    assert rps["value"] == pytest.approx(104.920575, abs=1e-6) and rps["ci95_low"] == pytest.approx(93.2059, abs=1e-4)
    assert rps["ci95_high"] == pytest.approx(118.1077, abs=1e-4) and rps["n"] == 3
    assert rps["estimator"] == stats.GEOMETRIC and rps["launches"] == [100, 110, 105]
    p99 = point["figures"]["latency_ms.p99"]  # a percentile: the same estimator over the launches' own p99
    assert p99["value"] == pytest.approx((10 * 12 * 11) ** (1 / 3)) and p99["estimator"] == stats.GEOMETRIC
    assert "efficiency_ratio" not in point["figures"] and point["headline"] == "rps" and point["valid"]


def test_flags_of_a_launch_mark_the_point_and_precision_marks_imprecise_points():
    records = [record("p-r1", 100, 10, flags=["errors"]), record("p-r2", 140, 10)]
    [point] = points.aggregate(records, precision=0.05)
    assert point["flags"] == ["errors", "imprecise"] and not point["valid"]
    [tight] = points.aggregate(
        [record("q-r1", 100, 10), record("q-r2", 100.5, 10), record("q-r3", 100.2, 10)], precision=0.05
    )
    assert tight["flags"] == [] and tight["valid"]


def test_an_imprecise_point_keeps_its_figures_and_stays_valid():
    """imprecise says how wide the interval is, not that the point measured wrong: findings, advice and knees
    read it with its interval (seed000's blocked /now probe, 13 s +- 100 %, was 'no figure')."""
    [wide] = points.aggregate([record("p-r1", 100, 10), record("p-r2", 140, 10)], precision=0.05)
    assert wide["flags"] == ["imprecise"] and wide["valid"]
    assert wide["figures"]["rps"]["value"] == pytest.approx(math.sqrt(100 * 140))


def test_a_noisy_launch_is_left_out_while_the_point_has_a_quiet_one():
    records = [record("p-r1", 100, 10), record("p-r2", 60, 30, flags=["noisy_host"]), record("p-r3", 102, 10)]
    [point] = points.aggregate(records, precision=0.05)
    assert point["cells"] == ["p-r1", "p-r3"] and point["disturbed_cells"] == ["p-r2"] and point["n"] == 2
    assert point["failed"] == 0 and precision.summary([point], 0.05).endswith("3 launches in all")  # not failed
    assert point["figures"]["rps"]["value"] == pytest.approx(math.sqrt(100 * 102))
    assert point["flags"] == ["imprecise"]  # two launches: indicative, no interval
    # every launch noisy: none is left out, and the point keeps their flags
    [alone] = points.aggregate(
        [record("q-r1", 100, 10, flags=["noisy_host"]), record("q-r2", 90, 10, flags=["noisy_host", "errors"])]
    )
    assert alone["cells"] == ["q-r1", "q-r2"] and alone["disturbed_cells"] == []  # none quiet: all stay
    assert alone["flags"] == ["errors", "noisy_host"] and not alone["valid"]


def test_a_point_whose_noisy_launch_is_left_out_asks_for_another():
    config = apply_overrides(load("quick"), {"precision": 0.05, "shuffle": False})
    cells = expand(config)
    first = cells[0]
    records = [
        {**record(c.cell_id, 100 + c.repetition, 10), "point_id": c.point_id}
        for c in cells
        if c.point_id == first.point_id
    ]
    records[1]["flags"] = ["noisy_host"]  # three launches, one noisy: two count, no first stage
    wanted = precision.next_round(cells, records, recorded(config).run)
    assert [c.cell_id for c in wanted] == [first.launch(4).cell_id]


def test_a_noisy_launch_does_not_use_up_max_launches():
    """seed004's reference (precision 0.05, max_launches 3) left a point on 1 quiet launch of 3: the launches the
    host disturbed counted against the maximum, so none was launched again."""
    config = apply_overrides(load("quick"), {"precision": 0.05, "max_launches": 3, "shuffle": False})
    cells, run = expand(config), recorded(config).run
    first = cells[0]
    records = [
        {**record(c.cell_id, 100 + c.repetition, 10), "point_id": c.point_id}
        for c in cells
        if c.point_id == first.point_id
    ]
    for noisy in records[:2]:
        noisy["flags"] = ["noisy_host"]
    launches = [c for c in cells if c.point_id == first.point_id]
    while more := precision.next_round(launches, records, run):
        launches += more
        records += [{**record(c.cell_id, 101, 10), "point_id": c.point_id} for c in more]
    assert [c.repetition for c in launches] == [1, 2, 3, 4, 5]  # two disturbed: two more, then 3 counted
    for r in records:
        r["flags"] = ["noisy_host"] if r["cell_id"] != records[-1]["cell_id"] else []
    while more := precision.next_round(launches, records, run):
        launches += more
        records += [{**record(c.cell_id, 101, 10), "point_id": c.point_id, "flags": ["noisy_host"]} for c in more]
    assert max(c.repetition for c in launches) == 6  # never past twice max_launches


def test_with_a_precision_target_a_point_whose_windows_were_all_too_short_is_launched_longer():
    """Three launches, tight, each flagged window_too_short (the same short window loses the same waves): the
    point has its first stage, but no figure to trust, so one more launch with 50 of its slowest round trips
    (quick's Tomcat at 250 ms under 400 clients: 2 rounds, 25 s); once that one counts, the next launches keep
    its window."""
    config = apply_overrides(load("quick"), {"precision": 0.05, "shuffle": False})
    cells, run = expand(config), recorded(config).run
    first = next(c for c in cells if c.server == "tomcat" and c.concurrency == 400 and c.delay_ms)
    launches = [c for c in cells if c.point_id == first.point_id]
    records = [{**record(c.cell_id, 100, 10), "point_id": c.point_id, "flags": ["window_too_short"]} for c in launches]
    [again] = precision.next_round(launches, records, run)
    assert (again.repetition, again.duration_s, first.duration_s) == (4, 25.0, 4)
    records.append({**record(again.cell_id, 100, 10), "point_id": first.point_id})
    [more] = precision.next_round([*launches, again], records, run)  # one counted launch: the first stage
    assert (more.repetition, more.duration_s) == (5, 25.0)
    assert precision.next_round(launches, [{**r, "flags": []} for r in records[:3]], run) == []


def test_the_headline_follows_the_kind_of_point():
    assert points.headline({"kind": "closed_loop", "delay_ms": 0}) == "rps"
    assert points.headline({"kind": "closed_loop", "delay_ms": 1000}) == "latency_ratio"
    assert points.headline({"kind": "open_loop", "delay_ms": 0}) == "latency_ms.p99"
    assert points.headline({"kind": "hold_connections", "delay_ms": 0}) == "rss_per_connection_kb"


def test_interval_text():
    """One notation, [low, high], to the place the interval supports; no interval of zero width."""
    assert (
        points.fmt_interval({"value": 2710.4, "ci95_low": 2650.1, "ci95_high": 2770.7}, "req/s")
        == "2710 [2650, 2770] req/s"
    )
    assert (
        points.fmt_interval({"value": 2710.4, "ci95_low": 2550.1, "ci95_high": 2870.7}, "req/s")
        == "2710 [2550, 2870] req/s"
    )
    assert points.fmt_interval({"value": 1.0432, "ci95_low": 1.031, "ci95_high": 1.0554}) == "1.043 [1.031, 1.055]"
    assert (
        points.fmt_interval({"value": 1.11392, "ci95_low": 1.11322, "ci95_high": 1.11462}) == "1.1139 [1.1132, 1.1146]"
    )
    assert (
        points.fmt_interval({"value": 229.0, "ci95_low": 229.0, "ci95_high": 229.0, "n": 3}, "threads")
        == "229 threads (all 3 launches)"
    )
    # a knee fitted on a measured concurrency: one end is the value itself, the other sets the digits
    assert (
        points.fmt_interval({"value": 200.1982, "ci95_low": 200.1982, "ci95_high": 200.2983})
        == "200.20 [200.20, 200.30]"
    )
    assert (
        points.fmt_interval({"value": 2710.4, "ci95_low": None, "ci95_high": None}, "req/s") == "2710 req/s (1 launch)"
    )
    # an interval on logs is wider above: both ends shown
    assert points.fmt_interval({"value": 518.0, "ci95_low": 310.2, "ci95_high": 866.4}, "ms") == "520 [310, 870] ms"


def test_points_file_is_written_and_read_back_and_computed_for_older_runs(tmp_path):
    from crossbench.record.record import upgrade

    records = [upgrade(record("a-r1", 100, 10)), upgrade(record("a-r2", 102, 10))]  # as the runner writes them
    (tmp_path / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    computed = points.load(tmp_path)
    written = points.write(tmp_path, records)
    assert (tmp_path / points.POINTS_FILE).is_file() and points.load(tmp_path) == written == computed


def quick_run(**run):
    """The quick experiment's cells and its typed [run], with these settings over the file's."""
    config = apply_overrides(load("quick"), {"shuffle": False, **run})
    return expand(config), recorded(config).run


def test_precision_launches_again_the_points_whose_first_stage_asks_more_up_to_the_maximum():
    cells, run = quick_run(precision=0.05, max_launches=4)
    a, b = cells[0], cells[1]
    first_stage = [c for c in cells if c.point_id in (a.point_id, b.point_id)]
    assert len(first_stage) == 6
    rps = {a.point_id: (100, 100.2, 100.1), b.point_id: (100, 150, 120)}  # a tight, b far from 5 %
    records = [
        {**record(c.cell_id, rps[c.point_id][c.repetition - 1], 10), "kind": c.kind, "delay_ms": c.delay_ms}
        for c in first_stage
    ]
    if a.delay_ms or b.delay_ms:
        pytest.skip("quick's first cells are delayed: this test wants static ones")
    more = precision.next_round(first_stage, records, run)
    assert [c.cell_id for c in more] == [f"{b.point_id}-r4"]
    records.append({**record(more[0].cell_id, 120, 10), "kind": "closed_loop"})
    assert precision.next_round(first_stage + more, records, run) == []  # out of launches: 4


def test_an_interrupted_adaptive_run_resumes_its_planned_launches_and_runs_none_twice(tmp_path):
    from crossbench.plan.cellplan import plan_from_dict
    from crossbench.record.rundir import RunDir

    cells, _ = quick_run(precision=0.05, max_launches=5)
    cells = [c for c in cells if c.group == "static"]
    _, run = quick_run(precision=0.05, max_launches=5, shuffle=True, shuffle_seed=11)
    run_dir = RunDir(tmp_path / "run")
    run_dir.create({"config": {"run": {"precision": 0.05, "max_launches": 5}}}, [c.to_dict() for c in cells])
    for c in cells:  # every static point's first stage far from 5 %
        run_dir.append({**record(c.cell_id, 100 if c.repetition == 1 else 150, 10), "kind": c.kind})
    more = precision.next_round(cells, run_dir.records(), run)
    assert {c.repetition for c in more} == {4} and len(more) == len({c.point_id for c in cells})
    run_dir.extend_plan([c.to_dict() for c in more])
    run_dir.append({**record(more[0].cell_id, 125, 10), "kind": "closed_loop"})  # then Ctrl-C
    _, planned = run_dir.load()  # --resume: the plan as written, the records so far
    resumed = [plan_from_dict(d) for d in planned]
    todo = [c for c in resumed if c.cell_id not in run_dir.finished_ids()]
    assert [c.cell_id for c in todo] == [c.cell_id for c in more[1:]]
    for c in todo:
        run_dir.append({**record(c.cell_id, 125, 10), "kind": "closed_loop"})
    again = precision.next_round(resumed, run_dir.records(), run)
    assert {c.repetition for c in again} == {5}  # still short: a fifth, the maximum
    assert not set(c.cell_id for c in again) & run_dir.finished_ids()


def test_noise_foreign_cpu_is_the_cores_user_and_system_time_less_ours_and_steal_is_apart():
    import os

    from crossbench.sampling.noise import Snapshot, connections, flags, window

    me = (os.getpid(), 1.0)
    # one second; core 0: 0.5 s user+system, core 1: 1.0 s, of which the runner's tree 0.7 s and wrk 0.3 s
    before = Snapshot(10.0, [(100.0, 40.0, 1.0), (100.0, 50.0, 0.0)], 1000, {me: 5.0, (4242, 2.0): 20.0})
    after = Snapshot(
        11.0, [(101.0, 40.5, 1.0), (101.0, 50.94, 0.06)], 1010, {me: 5.1, (4242, 2.0): 20.6, (777, 10.5): 3.0}
    )
    figures = window(before, after, (0, 1), loadgen_percent=30.0)
    assert figures["steal_percent"] == pytest.approx(3.0)  # 0.06 of 2 s of the two cores
    assert figures["foreign_cpu_percent"] == pytest.approx(144 - 70 - 30, abs=0.1)  # the new pid is not ours
    assert figures["harness_cpu_percent"] == pytest.approx(10.0)
    assert flags(figures, keepalive=True, concurrency=10) == ["noisy_host"]
    wire = connections(before, after, requests=4000)
    assert wire == {"tcp_passive_opens": 10, "requests_per_connection": 400.0}
    closing = {"tcp_passive_opens": 3900, "requests_per_connection": 1.03, "foreign_cpu_percent": 1.0}
    assert flags(closing, keepalive=True, concurrency=10) == ["server_closed_connections"]
    assert flags(closing, keepalive=False, concurrency=10) == []
    # an open loop's concurrency is a cap: 3000 requests on 3000 new connections under a cap of 2000 were closed
    # by the server; 1001 connections for 1016 slow answers at C=1000 were not (each took one or two requests)
    uvicorn = {"tcp_passive_opens": 3000, "requests_per_connection": 1.0}
    assert flags(uvicorn, keepalive=True, concurrency=2000) == ["server_closed_connections"]
    slow = {"tcp_passive_opens": 1001, "requests_per_connection": 1.02}
    assert flags(slow, keepalive=True, concurrency=1000) == []
    # a pool of 45 opened before its window: the machine accepting 3 inside it is slack, 30 is not
    assert flags({"tcp_opens_in_window": 3}, keepalive=True, concurrency=45, pool_before_window=True) == []
    opened = {"tcp_opens_in_window": 30}
    assert flags(opened, keepalive=True, concurrency=45, pool_before_window=True) == ["connections_in_window"]
    assert flags(opened, keepalive=True, concurrency=45) == []  # a window that opens its own connections
    assert flags(opened, keepalive=False, concurrency=45, pool_before_window=True) == []
    # Tomcat closes a connection after 100 requests (maxKeepAliveRequests): 45 opened for 6000 requests in 60 s
    # is the server's keep-alive; 45 for 400 requests is a pool that was not reused
    tomcat = {"tcp_opens_in_window": 45, "requests": 6000}
    assert flags(tomcat, keepalive=True, concurrency=45, pool_before_window=True) == []
    assert flags({**tomcat, "requests": 400}, keepalive=True, concurrency=45, pool_before_window=True) == [
        "connections_in_window"
    ]
    # a server that closes every connection after one request (gunicorn's sync workers) opened them itself
    gunicorn = {"tcp_opens_in_window": 294, "tcp_passive_opens": 340, "requests_per_connection": 1.0}
    assert flags(gunicorn, keepalive=True, concurrency=9, pool_before_window=True) == ["server_closed_connections"]


def test_noise_impact_weighs_foreign_cpu_by_how_much_of_its_core_each_role_needs():
    from crossbench.sampling.noise import Snapshot, flags, noise_impact

    server, runner = (101, 1.0), (100, 1.0)
    pinned = {server: (1,), runner: (0,)}
    roles = {"server": (1,), "loadgen": (0,)}

    def busy(server_s, core1_busy_s, core0_busy_s=0.3):
        # one second: the server (pinned to core 1) used server_s of it; core 1 was busy core1_busy_s in all
        before = Snapshot(10.0, [(100.0, 40.0, 0.0), (100.0, 50.0, 0.0)], 0, {server: 5.0, runner: 1.0}, pinned)
        after = Snapshot(
            11.0,
            [(101.0, 40.0 + core0_busy_s, 0.0), (101.0, 50.0 + core1_busy_s, 0.0)],
            0,
            {server: 5.0 + server_s, runner: 1.05},
            pinned,
        )
        return noise_impact(before, after, roles, loadgen_percent=25.0)

    # a CPU-bound server (90 % of its core) beside 10 % foreign on it: 10 % x 0.9 = 9 %, past the 5 % target
    assert busy(0.9, 1.0) == pytest.approx(9.0)
    assert flags({"noise_impact_percent": 9.0, "foreign_cpu_percent": 10.0}, True, 10) == ["noisy_host"]
    # a server waiting on a delay (5 % of its core) beside 50 % foreign: 50 % x 0.05 = 2.5 %, not flagged
    assert busy(0.05, 0.55) == pytest.approx(2.5)
    assert flags({"noise_impact_percent": 2.5, "foreign_cpu_percent": 50.0}, True, 10) == []
    # the roles sharing a core: no impact to tell, the flat limit of foreign CPU decides
    assert noise_impact(Snapshot(0, [], 0, {}), Snapshot(1, [], 0, {}), {"server": (0,), "loadgen": (0,)}, 0) is None
    assert flags({"noise_impact_percent": None, "foreign_cpu_percent": 12.0}, True, 10) == ["noisy_host"]


def test_steal_is_judged_by_what_it_could_take_from_each_role():
    """Steal on the server's core takes from it as a foreign process would: a waiting server is not flagged for
    steal a CPU-bound one would lose throughput to (issue 45: 2.4 % steal flagged 4 of 9 delay launches)."""
    from crossbench.sampling.noise import Snapshot, flags, noise_impact, window

    server, runner = (101, 1.0), (100, 1.0)
    pinned = {server: (1,), runner: (0,)}
    roles = {"server": (1,), "loadgen": (0,)}

    def stolen(server_s, steal_s):
        # one second; the server alone on core 1 used server_s of it, and the hypervisor stole steal_s of it
        before = Snapshot(10.0, [(100.0, 40.0, 0.0), (100.0, 50.0, 0.0)], 0, {server: 5.0, runner: 1.0}, pinned)
        after = Snapshot(
            11.0,
            [(101.0, 40.3, 0.0), (101.0, 50.0 + server_s, steal_s)],
            0,
            {server: 5.0 + server_s, runner: 1.05},
            pinned,
        )
        figures = window(before, after, (0, 1), loadgen_percent=25.0)
        return {**figures, "noise_impact_percent": noise_impact(before, after, roles, loadgen_percent=25.0)}

    waiting = stolen(0.05, 0.06)  # 6 % steal on the core of a server using 5 % of it
    assert waiting["steal_percent"] == pytest.approx(3.0) and waiting["noise_impact_percent"] == pytest.approx(0.3)
    assert flags(waiting, True, 10) == []
    busy = stolen(0.9, 0.06)  # the same steal under a CPU-bound server: 6 % x 0.9
    assert busy["noise_impact_percent"] == pytest.approx(5.4) and flags(busy, True, 10) == ["noisy_host"]
    # roles sharing cores: steal past 2 % of their time flags, as before
    assert flags({"noise_impact_percent": None, "steal_percent": 2.5, "foreign_cpu_percent": 0.0}, True, 10) == [
        "noisy_host"
    ]


def test_least_squares_by_hand_with_the_slopes_interval():
    # (0,1) (1,2) (2,2) (3,4): mx 1.5, my 2.25, sxx 5, sxy 4.5: slope 0.9, intercept 0.9; residuals 0.1, 0.2,
    # -0.7, 0.4: 0.7 squared; s.e. sqrt(0.7 / 2 / 5) = 0.264575; t(2, 97.5 %) = 4.302653: half 1.138367
    fit = stats.least_squares([0, 1, 2, 3], [1, 2, 2, 4])
    assert (fit.slope, fit.intercept, fit.n) == (pytest.approx(0.9), pytest.approx(0.9), 4)
    assert fit.slope_low == pytest.approx(0.9 - 1.138367, abs=1e-5)
    assert fit.slope_high == pytest.approx(0.9 + 1.138367, abs=1e-5)
    assert fit.r2 == pytest.approx(4.5**2 / (5 * 4.75))  # syy = 1.5625 + 0.0625 + 0.0625 + 3.0625
    two = stats.least_squares([1, 3], [2, 6])
    assert two.slope == pytest.approx(2) and two.slope_low is None  # two points: a line, no interval
    assert stats.least_squares([1, 2], [1, 2], min_points=3) is None
    assert stats.least_squares([2, 2, 2], [1, 2, 3]) is None  # no spread in x


def test_the_noise_floors_length_is_2_s_or_what_the_environment_says_and_a_bad_one_is_refused(monkeypatch):
    from crossbench.refusal import Refusal
    from crossbench.sampling.noise import FLOOR_SECONDS, FLOOR_SECONDS_ENV, floor_seconds

    monkeypatch.delenv(FLOOR_SECONDS_ENV, raising=False)
    assert floor_seconds() == FLOOR_SECONDS == 2.0
    monkeypatch.setenv(FLOOR_SECONDS_ENV, "0.5")
    assert floor_seconds() == 0.5
    for bad in ("0", "-1", "half", "600"):
        monkeypatch.setenv(FLOOR_SECONDS_ENV, bad)
        with pytest.raises(Refusal, match=FLOOR_SECONDS_ENV) as refused:
            floor_seconds()
        assert refused.value.exit_code == 2

"""A point from its launches (crossbench/figures/points.py): which launches count, the figures' estimators and
intervals, the flags a point carries, the headline per kind, the interval's text, points.jsonl."""

import json
import math

import pytest
from testkit import launch_record as record

from crossbench import stats
from crossbench.decide import precision
from crossbench.figures import points


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
    # a wide interval on logs whose low end is under half the rounding place: shown to its own digit, never 0
    assert points.fmt_interval({"value": 400.0, "ci95_low": 43.2, "ci95_high": 2812.0}) == "400 [40, 2810]"
    assert points.fmt_interval({"value": 0.9, "ci95_low": 0.004, "ci95_high": 3.1}) == "0.900 [0.004, 3.100]"


def test_points_file_is_written_and_read_back_and_computed_for_older_runs(tmp_path):
    from crossbench.record.record import upgrade

    records = [upgrade(record("a-r1", 100, 10)), upgrade(record("a-r2", 102, 10))]  # as the runner writes them
    (tmp_path / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    computed = points.load(tmp_path)
    written = points.write(tmp_path, records)
    assert (tmp_path / points.POINTS_FILE).is_file() and points.load(tmp_path) == written == computed

"""Knee detection (analysis) on synthetic ratio tables, and the knee records of a small synthetic cells list."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dataclasses import asdict

from crossbench_analysis.knees import find_knee, read_jsonl, settings_knees, summary, write_jsonl


def test_knee_between_points_is_interpolated_in_log_concurrency():
    # 20 -> 1.0, 40 -> 2.0: 1.1 is a tenth of the way, in log C: 20 * 2 ** 0.1
    knee = find_knee([(10, 1.0), (20, 1.0), (40, 2.0), (80, 4.0)])
    assert knee.status == "crossed"
    assert knee.concurrency == pytest.approx(20 * 2 ** 0.1)
    assert knee.excursions == ()


def test_knee_interpolation_uses_the_ratios_at_both_ends():
    knee = find_knee([(100, 1.05), (1000, 1.15)])
    assert knee.concurrency == pytest.approx(10 ** 2.5)      # halfway in ratio, halfway in log C


def test_point_exactly_at_threshold_counts_as_under_so_the_knee_sits_on_it():
    knee = find_knee([(10, 1.0), (20, 1.1), (40, 2.0)])
    assert knee.status == "crossed" and knee.concurrency == pytest.approx(20)


def test_never_exceeded_is_none_and_not_reached():
    knee = find_knee([(25, 1.01), (100, 1.02), (1000, 1.08)])
    assert knee.concurrency is None and knee.status == "not_reached"


def test_above_from_the_first_point_is_below_range():
    knee = find_knee([(50, 1.3), (100, 2.0)])
    assert knee.concurrency is None and knee.status == "below_range"


def test_noisy_excursion_before_the_real_crossing_is_reported_not_taken():
    # a spike at C=50 that comes back under: the knee is the crossing that stays
    knee = find_knee([(25, 1.0), (50, 1.2), (100, 1.05), (200, 1.9), (400, 3.8)])
    assert knee.status == "crossed"
    assert 100 < knee.concurrency < 200
    assert knee.excursions == (50,)


def test_noisy_excursion_with_no_lasting_crossing_is_not_a_knee():
    knee = find_knee([(25, 1.0), (50, 1.15), (100, 1.02)])
    assert knee.concurrency is None and knee.status == "not_reached" and knee.excursions == (50,)


def test_order_of_points_does_not_matter_and_empty_is_not_reached():
    assert find_knee([(40, 2.0), (20, 1.0)]).concurrency == pytest.approx(20 * 2 ** 0.1)
    assert find_knee([]).status == "not_reached"


def cell(group, c, ratio, *, mt=20, executor="platform", steady=True, delay=200, status="ok", threads=30):
    record = {"cell_id": f"{group}-{executor}-{mt}-c{c}", "group": group, "server": "tomcat",
              "endpoint": "/delay/sync", "concurrency": c, "delay_ms": delay, "status": status,
              "executor": executor, "max_threads": mt if executor == "platform" else None,
              "efficiency_ratio": ratio * 0.97, "threads_peak": threads}
    record["latency_ratio"] = ratio if steady else None
    return record


def synthetic_cells():
    return [
        cell("delay", 10, 1.01), cell("delay", 20, 1.02), cell("delay", 40, 2.0, threads=45),
        cell("delay", 10, 1.0, mt=50), cell("delay", 40, 1.0, mt=50), cell("delay", 80, 1.6, mt=50),
        cell("delay", 10, 1.0, executor="virtual"), cell("delay", 80, 1.01, executor="virtual", threads=25),
        cell("delay", 40, 5.0, mt=50, status="failed"),           # failed cells are left out
        {**cell("static", 10, 1.0), "endpoint": "/static/*", "delay_ms": 0, "efficiency_ratio": None,
         "latency_ratio": None},                        # no delay, no ratio: no knee
        cell("queues", 10, 1.0, mt=10, steady=False), cell("queues", 30, 2.8, mt=10, steady=False),
    ]


def test_knees_jsonl_has_one_record_per_setting(tmp_path):
    written = [asdict(k) for k in settings_knees(synthetic_cells())]
    write_jsonl(written, tmp_path / "knees.jsonl")
    lines = read_jsonl(tmp_path / "knees.jsonl")
    assert len(lines) == len(written) == 4 and lines == written
    by = {(k["group"], k["setting"]): k for k in lines}
    assert set(by) == {("delay", "tomcat maxThreads=20"), ("delay", "tomcat maxThreads=50"),
                       ("delay", "tomcat virtual"), ("queues", "tomcat maxThreads=10")}

    mt20 = by[("delay", "tomcat maxThreads=20")]
    assert mt20["predicted"] == 20 and mt20["status"] == "crossed"
    assert mt20["knee_concurrency"] == pytest.approx(20 * 2 ** (0.08 / 0.98), abs=0.1)
    assert mt20["knee_vs_predicted"] == pytest.approx(mt20["knee_concurrency"] / 20, abs=0.01)
    assert mt20["ratio_used"] == "latency_ratio" and mt20["threads_peak_max"] == 45
    assert [p["concurrency"] for p in mt20["points"]] == [10, 20, 40]
    assert mt20["points"][0]["cell_ids"] == ["delay-platform-20-c10"]
    assert mt20["points"][2]["efficiency_ratio"] == pytest.approx(2.0 * 0.97)     # the seed's, alongside

    mt50 = by[("delay", "tomcat maxThreads=50")]
    assert [p["concurrency"] for p in mt50["points"]] == [10, 40, 80]     # the failed C=40 duplicate is out
    assert mt50["knee_concurrency"] == pytest.approx(40 * 2 ** (0.1 / 0.6), abs=0.1)

    virtual = by[("delay", "tomcat virtual")]
    assert virtual["predicted"] is None and virtual["knee_concurrency"] is None
    assert virtual["status"] == "not_reached" and virtual["text"] == "not reached up to C=80 (predicted none)"

    queues = by[("queues", "tomcat maxThreads=10")]
    assert queues["ratio_used"] == "efficiency_ratio"            # a record without the steady ratio
    assert queues["points"][1]["ratio"] == pytest.approx(2.8 * 0.97)


def test_a_knee_only_the_seeds_ratio_sees_is_reported_as_a_disagreement():
    """Past maxConnections, unanswered clients lower rps but add no latency: maxThreads 20, C=80 read 4.09 by
    the seed's formula while the latency ratio stayed under 1.1 (issue 9)."""
    cells = [cell("queues", c, lat, mt=20) for c, lat in ((10, 1.0), (40, 1.05), (80, 1.08))]
    for record, seed in zip(cells, (1.0, 1.9, 4.09)):
        record["efficiency_ratio"] = seed
    knee = settings_knees(cells)[0]
    assert knee.status == "not_reached" and knee.seed_ratio_status == "crossed"
    assert 10 < knee.seed_ratio_knee < 40 and "waiting outside" in knee.disagreement
    agreeing = settings_knees([cell("delay", 10, 1.0), cell("delay", 40, 2.0)])[0]
    assert agreeing.disagreement is None


def test_repetitions_are_averaged_per_concurrency():
    knees = settings_knees([cell("delay", 20, 1.0), cell("delay", 20, 1.1), cell("delay", 40, 2.05)])
    point = knees[0].points[0]
    assert point["ratio"] == pytest.approx(1.05) and len(point["cell_ids"]) == 2
    assert math.isclose(knees[0].knee_concurrency, round(20 * 2 ** (0.05 / 1.0), 1))


def test_empty_run_has_no_knees_and_says_so(tmp_path):
    assert settings_knees([]) == []
    write_jsonl([], tmp_path / "knees.jsonl")
    assert (tmp_path / "knees.jsonl").read_text() == "" and read_jsonl(tmp_path / "knees.jsonl") == []
    assert summary([]) == "knees: no delay cells to judge"
    assert "delay tomcat maxThreads=20 delay 200 ms: ratio > 1.1 from C=21 (predicted 20)" in summary(
        [asdict(k) for k in settings_knees(synthetic_cells())])



def knee_records(ratios_by_c: dict[int, list[float]]) -> list[dict]:
    return [{"cell_id": f"d-c{c}-r{i}", "group": "delay", "endpoint": "/delay/sync", "delay_ms": 1000,
             "server": "tomcat", "executor": "platform", "max_threads": 200, "parallel_limit": 200,
             "concurrency": c, "status": "ok", "latency_ratio": ratio, "efficiency_ratio": ratio}
            for c, ratios in ratios_by_c.items() for i, ratio in enumerate(ratios, 1)]


def test_a_knee_is_resolved_only_beyond_the_intervals_and_unjudged_with_one_launch():
    from crossbench_analysis.knees import settings_knees
    clear = settings_knees(knee_records({100: [1.0, 1.01, 1.0], 400: [2.0, 2.02, 1.98]}))[0]
    assert clear.status == "crossed" and clear.resolved is True and "beyond the 95 % intervals" in clear.text
    blurred = settings_knees(knee_records({100: [1.0, 1.01], 400: [1.05, 1.3]}))[0]
    assert blurred.status == "crossed" and blurred.resolved is False and "not resolved" in blurred.text
    single = settings_knees(knee_records({100: [1.0], 400: [2.0]}))[0]
    assert single.resolved is None and single.text.endswith("(predicted 200)")


def test_seed004s_pool_sizes_are_series_of_their_own_never_launches_of_one_point():
    """The pools group runs each stack at four pool sizes under one setting label: one knee series each, the
    label saying which pool (the old key averaged the four as if they were launches)."""
    fixtures = Path(__file__).parent / "fixtures" / "runs"
    records = [json.loads(line) for line in (fixtures / "seed004-quick" / "cells.jsonl").read_text().splitlines()]
    pools = [k for k in settings_knees(records) if k.group == "pools"]
    tomcat = sorted(k.setting for k in pools if k.server == "tomcat")
    assert tomcat == ["tomcat maxThreads=200, pool16", "tomcat maxThreads=200, pool2"]
    assert all(len(k.points) == 1 for k in pools)

"""Knees from the hinge fitted over every launch (knees.judge, hinge.py): the three cases the issue names (a
coarse grid, two points a factor of 4 apart, a rise the hinge does not fit), a grid fine enough to state N, the
ends of the range, the indicative fit of too few launches, and the knee records of a small synthetic cells list."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path

import pytest

from crossbench_analysis.judge.knee_rule import judge, knee_text
from crossbench_analysis.judge.knees import overheads, read_jsonl, settings_knees, summary, write_jsonl

NOISE = (0.99, 1.0, 1.01)  # three launches a point, 1 % apart


def launches(spec: list[tuple[float, float]], noise=NOISE) -> list[tuple[float, float]]:
    return [(c, ratio * k) for c, ratio in spec for k in noise]


def test_a_coarse_grid_gives_the_bracket_that_holds_the_pool_not_a_grid_artefact():
    """maxThreads=20 measured only at C=10, 40, 160: the interpolation rule said "from C=11"; the hinge's rising
    side gives N = 20, but C=10 and 40 are a factor of 4 apart, too far to trust the overhead read at C=10 at the
    knee: the bracket, with the fit beside it."""
    knee = judge(launches([(10, 1.0), (40, 2.0), (160, 8.0)]))
    assert knee.status == "bracket" and knee.bracket == (10, 40) and knee.concurrency == pytest.approx(20, rel=0.03)
    assert knee.low <= 20 <= knee.high
    assert knee_text(knee, 20).startswith("between C=10 and C=40 (predicted 20; the hinge through them: C=20 [")
    assert "C=11" not in knee_text(knee, 20)


def test_two_points_a_factor_of_four_apart_give_their_bracket():
    """C=100 at 1.01 and C=400 at 1.98 (the quick profile's Tomcat maxThreads=200): the hinge through them gives
    N = 400 x 1.01 / 1.98 = 204 only if the overhead at C=400 is C=100's; measured, it grows with the load (the
    quick run: 1.023 at C=100, 1.035 at C=400, putting N at 196 for a pool of 200), so the grid's bracket.
    The hinge's interval beside it is the launches' (hinge's test by hand: 200.23 to 207.92)."""
    knee = judge(launches([(100, 1.01), (400, 1.98)]))
    assert knee.status == "bracket" and knee.bracket == (100, 400)
    assert knee.concurrency == pytest.approx(400 * 1.01 / 1.98, rel=0.002)
    assert (knee.low, knee.high) == (pytest.approx(200.23, rel=1e-4), pytest.approx(207.92, rel=1e-4))
    assert knee_text(knee, 200) == (
        f"between C=100 and C=400 (predicted 200; the hinge through them: C=204 "
        f"[{knee.low:.0f}, {knee.high:.0f}], if the overhead past the knee were the "
        "flat side's)"
    )


def test_a_grid_fine_around_the_knee_states_n_with_its_interval():
    """Concurrencies a factor of 2 apart around the pool (100, 200, 400): the overhead is read at C=200, beside
    the knee, and N is stated with its interval."""
    knee = judge(launches([(100, 1.01), (200, 1.02), (400, 2.0)]))
    assert knee.status == "fitted" and knee.low <= 200 <= knee.high < 220
    assert knee_text(knee, 200).startswith("knee at C=20") and "(predicted 200)" in knee_text(knee, 200)


def test_a_rise_the_hinge_does_not_fit_is_said_to_be_a_poor_fit_not_a_knee():
    """CPU saturation: 1.0, 1.02, 1.3, 1.35 does not rise as C / N; the concurrencies' means stray from the best
    hinge far more than their launches stray from each other."""
    knee = judge(launches([(50, 1.0), (100, 1.02), (200, 1.3), (400, 1.35)]))
    assert knee.status == "poor_fit" and knee.concurrency is None
    assert knee.fit.lack_of_fit_p < 1e-6 and "does not rise as a pool's C / N" in knee.words()


def test_the_ends_of_the_range():
    flat = judge(launches([(1, 1.0), (100, 1.01), (400, 1.02)]))
    assert flat.status == "not_reached" and flat.words() == "not reached up to C=400"
    bent = judge(launches([(40, 2.0), (80, 4.0), (160, 8.0)]))
    assert bent.status == "below_range" and bent.words() == "bends at or below C=40"


def test_a_knee_the_launches_cannot_place_is_not_resolved():
    noisy = judge(launches([(100, 1.0), (200, 1.02), (400, 1.15)], noise=(0.85, 1.0, 1.15)))
    assert noisy.status == "not_resolved" and noisy.words().startswith("not resolved up to C=400: N > ")


def test_one_launch_a_point_gives_the_bracket_with_an_indicative_fit():
    """One launch past the knee: no interval, so the measured concurrencies around the fit, the fit indicative."""
    knee = judge([(100, 1.01), (400, 1.98)])
    assert knee.status == "bracket" and knee.bracket == (100, 400) and knee.indicative
    assert knee_text(knee, 200) == "between C=100 and C=400 (predicted 200; fit C=204, indicative: 1 launch past it)"


def test_one_concurrency_is_too_few_to_fit():
    assert judge([(16, 1.3)]).status == "too_few" and judge([]).words() == "no launch to fit"


def cell(group, c, ratio, *, mt=20, executor="platform", steady=True, delay=200, status="ok", threads=30, rep=1):
    record = {
        "cell_id": f"{group}-{executor}-{mt}-c{c}-r{rep}",
        "group": group,
        "server": "tomcat",
        "endpoint": "/delay/sync",
        "concurrency": c,
        "delay_ms": delay,
        "status": status,
        "executor": executor,
        "max_threads": mt if executor == "platform" else None,
        "efficiency_ratio": ratio * 0.97,
        "threads_peak": threads,
        "repetition": rep,
    }
    record["latency_ratio"] = ratio if steady else None
    return record


def three(group, c, ratio, **kw):
    """Three launches of a point, 1 % apart."""
    return [cell(group, c, ratio * k, rep=i, **kw) for i, k in enumerate(NOISE, 1)]


def synthetic_cells():
    return [
        *three("delay", 10, 1.01),
        *three("delay", 20, 1.01),
        *three("delay", 40, 2.02, threads=45),
        *three("delay", 80, 4.04, threads=45),
        *three("delay", 10, 1.0, mt=50),
        *three("delay", 40, 1.0, mt=50),
        *three("delay", 80, 1.6, mt=50),
        cell("delay", 10, 1.0, executor="virtual"),
        cell("delay", 80, 1.01, executor="virtual", threads=25),
        cell("delay", 40, 5.0, mt=50, status="failed", rep=4),  # failed cells are left out
        {
            **cell("static", 10, 1.0),
            "endpoint": "/static/*",
            "delay_ms": 0,
            "efficiency_ratio": None,
            "latency_ratio": None,
        },  # no delay, no ratio: no knee
        cell("queues", 10, 1.0, mt=10, steady=False),
        cell("queues", 40, 2.8, mt=10, steady=False),
    ]


def test_knees_jsonl_has_one_record_per_setting(tmp_path):
    written = [asdict(k) for k in settings_knees(synthetic_cells())]
    write_jsonl(written, tmp_path / "knees.jsonl")
    lines = read_jsonl(tmp_path / "knees.jsonl")
    assert len(lines) == len(written) == 4 and lines == written
    by = {(k["group"], k["setting"]): k for k in lines}
    assert set(by) == {
        ("delay", "tomcat maxThreads=20"),
        ("delay", "tomcat maxThreads=50"),
        ("delay", "tomcat virtual"),
        ("queues", "tomcat maxThreads=10"),
    }

    mt20 = by[("delay", "tomcat maxThreads=20")]
    assert mt20["predicted"] == 20 and mt20["status"] == "fitted"
    assert mt20["knee_concurrency"] == pytest.approx(20, abs=0.2) and mt20["knee_low"] <= 20 <= mt20["knee_high"]
    assert mt20["knee_vs_predicted"] == pytest.approx(mt20["knee_concurrency"] / 20, abs=0.01)
    assert mt20["text"].startswith("knee at C=20") and mt20["text"].endswith("(predicted 20)")
    assert mt20["fit"]["launches"] == 12 and mt20["fit"]["past"] == 6 and mt20["bracket"] is None
    assert mt20["ratio_used"] == "latency_ratio" and mt20["threads_peak_max"] == 45
    assert [p["concurrency"] for p in mt20["points"]] == [10, 20, 40, 80]
    assert mt20["points"][0]["cell_ids"] == [f"delay-platform-20-c10-r{i}" for i in (1, 2, 3)]
    assert mt20["points"][2]["efficiency_ratio"] == pytest.approx(2.02 * 0.97)  # the seed's, alongside
    assert mt20["points"][2]["ratio_launches"] == pytest.approx([2.02 * k for k in NOISE])
    # 1.01 below the pool and 1.01 per round past it (2.02 at C=40 is two rounds): the N they predict is the pool
    assert mt20["overheads"] == {
        "a": pytest.approx(1.01, abs=1e-4),
        "a_past": pytest.approx(1.01, abs=1e-4),
        "predicted": pytest.approx(20.0, abs=0.01),
    }

    mt50 = by[("delay", "tomcat maxThreads=50")]
    assert [p["concurrency"] for p in mt50["points"]] == [10, 40, 80]  # the failed C=40 launch is out
    assert mt50["status"] == "fitted" and mt50["knee_concurrency"] == pytest.approx(50, abs=0.5)

    virtual = by[("delay", "tomcat virtual")]
    assert virtual["predicted"] is None and virtual["knee_concurrency"] is None
    assert virtual["status"] == "not_reached" and virtual["text"] == "not reached up to C=80 (predicted none)"

    queues = by[("queues", "tomcat maxThreads=10")]
    assert queues["ratio_used"] == "efficiency_ratio"  # a record without the steady ratio
    assert queues["points"][1]["ratio"] == pytest.approx(2.8 * 0.97)
    assert queues["status"] == "bracket" and queues["bracket"] == [10, 40]
    assert queues["text"] == "between C=10 and C=40 (predicted 10; fit C=14.3, indicative: 1 launch past it)"


def test_a_knee_only_the_seeds_ratio_sees_is_reported_as_a_disagreement():
    """Past maxConnections, unanswered clients lower rps but add no latency: maxThreads 20, C=80 read 4.09 by
    the seed's formula while the latency ratio stayed under 1.1 (issue 9)."""
    cells = [cell("queues", c, lat, mt=20) for c, lat in ((10, 1.0), (40, 1.05), (80, 1.08))]
    for record, seed in zip(cells, (1.0, 1.9, 4.09)):
        record["efficiency_ratio"] = seed
    knee = settings_knees(cells)[0]
    assert knee.status == "not_reached" and knee.seed_ratio_status == "bracket"
    assert 10 < knee.seed_ratio_knee < 40 and "waiting outside" in knee.disagreement
    agreeing = settings_knees([cell("delay", 10, 1.0), cell("delay", 40, 2.0)])[0]
    assert agreeing.disagreement is None


def test_repetitions_are_one_point_by_the_points_estimator_and_every_launch_is_fitted():
    knees = settings_knees([cell("delay", 20, 1.0), cell("delay", 20, 1.1, rep=2), cell("delay", 40, 2.05)])
    point = knees[0].points[0]
    assert point["ratio"] == pytest.approx(math.sqrt(1.1), abs=1e-4) and len(point["cell_ids"]) == 2
    assert point["ratio_low"] is None and point["launches"] == 2  # two launches: no interval
    # a = the geometric mean of C=20's launches, N = 40 a / 2.05; one launch past it: the bracket, indicative
    assert knees[0].knee_concurrency == round(40 * math.sqrt(1.1) / 2.05, 1) and knees[0].bracket == [20, 40]


def test_empty_run_has_no_knees_and_says_so(tmp_path):
    assert settings_knees([]) == []
    write_jsonl([], tmp_path / "knees.jsonl")
    assert (tmp_path / "knees.jsonl").read_text() == "" and read_jsonl(tmp_path / "knees.jsonl") == []
    assert summary([]) == "knees: no delay cells to judge"
    assert "delay tomcat maxThreads=20 delay 200 ms: knee at C=20" in summary(
        [asdict(k) for k in settings_knees(synthetic_cells())]
    )


def knee_records(ratios_by_c: dict[int, list[float]]) -> list[dict]:
    return [
        {
            "cell_id": f"d-c{c}-r{i}",
            "group": "delay",
            "endpoint": "/delay/sync",
            "delay_ms": 1000,
            "server": "tomcat",
            "executor": "platform",
            "max_threads": 200,
            "parallel_limit": 200,
            "concurrency": c,
            "status": "ok",
            "latency_ratio": ratio,
            "efficiency_ratio": ratio,
        }
        for c, ratios in ratios_by_c.items()
        for i, ratio in enumerate(ratios, 1)
    ]


def test_the_knee_record_states_the_interval_or_the_bracket():
    clear = settings_knees(knee_records({100: [1.0, 1.01, 1.02], 200: [1.01, 1.02, 1.03], 400: [2.02, 2.04, 2.06]}))[0]
    assert clear.status == "fitted" and clear.knee_low < 200 < clear.knee_high < 220 and clear.bracket is None
    assert clear.text.startswith("knee at C=198 [195, 202]") and clear.text.endswith("(predicted 200)")
    coarse = settings_knees(knee_records({100: [1.0, 1.01, 1.02], 400: [1.96, 1.98, 2.0]}))[0]
    assert coarse.status == "bracket" and coarse.bracket == [100, 400] and coarse.knee_low < coarse.knee_high
    single = settings_knees(knee_records({100: [1.0], 400: [2.0]}))[0]
    assert single.status == "bracket" and single.bracket == [100, 400] and single.knee_low is None
    assert single.text.startswith("between C=100 and C=400 (predicted 200; fit C=200, indicative")


def test_seed004s_pool_sizes_are_series_of_their_own_never_launches_of_one_point():
    """The pools group runs each stack at four pool sizes under one setting label: one knee series each, the
    label saying which pool (the old key averaged the four as if they were launches)."""
    fixtures = Path(__file__).parent / "fixtures" / "runs"
    records = [json.loads(line) for line in (fixtures / "seed004-quick" / "cells.jsonl").read_text().splitlines()]
    pools = [k for k in settings_knees(records) if k.group == "pools"]
    tomcat = sorted(k.setting for k in pools if k.server == "tomcat")
    assert tomcat == ["tomcat maxThreads=200, pool16", "tomcat maxThreads=200, pool2"]
    assert all(len(k.points) == 1 for k in pools)


def test_overheads_on_either_side_of_the_pool_predict_where_the_hinge_sits():
    """Known answer: the delay and 0.2 % more at C <= 200, the delay alone per round past it: a = 1.002,
    a_past = 1.000, N = 200 x 1.002 / 1.000 = 200.4; a sweep all on one side of its pool has none."""
    found = overheads(200, [(50, 1.002), (100, 1.002), (200, 1.002), (400, 2.0), (800, 4.0)])
    assert found.a == pytest.approx(1.002) and found.a_past == pytest.approx(1.0)
    assert found.predicted == pytest.approx(200.4)
    assert overheads(200, [(50, 1.0), (100, 1.0)]) is None and overheads(None, [(50, 1.0), (400, 2.0)]) is None

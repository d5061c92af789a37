"""--slo: targets parsed or refused in one line, each point judged pass / fail / undecided by its interval, and
the run's exit status when one fails."""

import json
import subprocess

import pytest
from live_servers import build_missing_reason
from testkit import experiment_with

from crossbench import paths
from crossbench.decide import slo


def test_the_forms_it_understands():
    p99 = slo.parse("p99<300ms")
    assert (p99.figure, p99.op, p99.limit) == ("latency_ms.p99", "<", 300)
    assert slo.parse(" p50 < 1.5s ").limit == 1500
    assert slo.parse("rps>500").figure == "rps" and slo.parse("rps>500 req/s").limit == 500
    errors = slo.parse("errors<0.1%")
    assert (errors.figure, errors.limit) == ("error_rate", pytest.approx(0.001))


@pytest.mark.parametrize(
    "text, words",
    [
        ("p99<300", "with its unit"),
        ("p99>300ms", "upper bound"),
        ("latency<3ms", "the forms are"),
        ("rps<500", "lower bound"),
        ("errors<0.1", "percent"),
        ("errors<100%", "under 100"),
        ("p99<0ms", "above zero"),
        ("p99<-1ms", "the forms are"),
    ],
)
def test_a_target_it_cannot_judge_is_refused_in_one_line(text, words):
    with pytest.raises(slo.SloError, match=words) as refused:
        slo.parse(text)
    assert "\n" not in str(refused.value)


def test_a_latency_target_at_or_under_the_delay_can_never_hold():
    slo.check_reachable([slo.parse("p99<300ms")], {0, 250})
    with pytest.raises(slo.SloError, match="holds requests for 250 ms"):
        slo.check_reachable([slo.parse("p99<250ms")], {0, 250})
    slo.check_reachable([slo.parse("rps>10")], {250})  # a throughput target has no such bound


def point(pid, figure, value, low=None, high=None, launches=None, cells=()):
    return {
        "point_id": pid,
        "cells": list(cells),
        "figures": {figure: {"value": value, "ci95_low": low, "ci95_high": high, "launches": launches or [value]}},
    }


def test_each_point_is_judged_by_its_whole_interval():
    target = slo.parse("p99<300ms")
    points = [
        point("under", "latency_ms.p99", 250, 240, 260),
        point("over", "latency_ms.p99", 350, 320, 380),
        point("across", "latency_ms.p99", 295, 280, 310),
        point("two-agree", "latency_ms.p99", 200, launches=[190, 210]),
        point("two-split", "latency_ms.p99", 300, launches=[280, 320]),
        {"point_id": "none", "figures": {}},
    ]
    verdicts = {j.point_id: j.verdict for j in slo.evaluate(points, [], [target])}
    assert verdicts == {
        "under": "pass",
        "over": "fail",
        "across": "undecided",
        "two-agree": "pass",
        "two-split": "undecided",
        "none": "undecided",
    }
    judged = slo.evaluate(points, [], [target])
    assert slo.failed(judged)
    text = slo.summary(judged)
    assert "slo p99<300ms: 2 pass, 1 fail, 3 undecided of 6 points" in text
    assert "FAIL over: 350 (95 % interval [320, 380])" in text and "indicative: 2 launches" in text
    assert "under" not in text.split("\n", 1)[1]  # passes are counted, not listed


def test_errors_are_counted_over_the_points_launches():
    records = [
        {"cell_id": "p-r1", "requests": 1000, "error_total": 0},
        {"cell_id": "p-r2", "requests": 1000, "error_total": 3},
    ]
    p = {"point_id": "p", "cells": ["p-r1", "p-r2"], "figures": {}}
    [fine] = slo.evaluate([p], records, [slo.parse("errors<0.5%")])
    [bad] = slo.evaluate([p], records, [slo.parse("errors<0.1%")])
    assert (fine.verdict, bad.verdict) == ("pass", "fail") and bad.value == pytest.approx(0.0015)
    assert "3 errors in 2000 requests over 2 launch(es)" in bad.why
    [empty] = slo.evaluate([{"point_id": "q", "cells": [], "figures": {}}], records, [slo.parse("errors<0.1%")])
    assert empty.verdict == "undecided"


RUN_ALL = str(paths.RUNNER / "run_all.sh")


@pytest.mark.live
@pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason()))
def test_a_run_whose_point_fails_its_target_exits_99_and_names_it(tmp_path):
    """20 threads, 50 clients, a 200 ms hold: each answer waits about 2.5 holds, far past 300 ms, in every launch.
    One 1 s window without a warm-up (max_window_bias off, so not 50 round trips): 30 of the first 50 clients wait
    behind 20 threads from the start, so the p99 is past 300 ms in any window and the verdict and the exit status
    are the same."""
    out = tmp_path / "slo"
    experiment_file = experiment_with(
        tmp_path,
        "maxthreads-quick",
        "max_window_bias = 0.02",
        "max_window_bias = 0",
        ("relaunch_disturbed = true", "relaunch_disturbed = false"),  # its 1 s window is the point
    )
    done = subprocess.run(
        [
            RUN_ALL,
            "--experiment",
            str(experiment_file),
            "--out",
            str(out),
            "--no-analysis",
            "--max-threads",
            "20",
            "--executor",
            "platform",
            "--concurrency",
            "50",
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--slo",
            "p99<300ms",
            "--slo",
            "errors<1%",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == slo.EXIT_FAILED, done.stderr[-2000:]
    assert "slo p99<300ms: 0 pass, 1 fail, 0 undecided of 1 points" in done.stderr
    assert "FAIL delay-tomcat-mt20-delay_sync-c50-d200" in done.stderr
    assert "slo errors<1%: 1 pass" in done.stderr
    [judged] = [j for j in json.loads((out / "slo.json").read_text()) if j["target"] == "p99<300ms"]
    assert judged["verdict"] == "fail" and judged["value"] > 300


@pytest.mark.live
@pytest.mark.shares_cores  # refused before any server starts: exit statuses and messages only
def test_a_target_that_can_never_hold_is_refused_before_any_cell_runs(tmp_path):
    done = subprocess.run(
        [RUN_ALL, "--experiment", "maxthreads-quick", "--out", str(tmp_path / "never"), "--slo", "p99<150ms"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "holds requests for 200 ms" in done.stderr
    assert not (tmp_path / "never" / "cells.jsonl").exists()
    bad = subprocess.run([RUN_ALL, "--quick", "--slo", "p99 under 3"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "not a target this suite judges" in bad.stderr

"""maxThreads advice: the queueing arithmetic (answers worked out by hand below), the advice on the recorded
maxthreads-quick run (analysis/tests/fixtures/runs/; its figures read off cells.jsonl in the comments), on a
SYNTHETIC run for what the fixture lacks (a machine that bends before the pool, flagged cells, the queue group,
no virtual threads), the refusals, and advise.sh end to end."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from crossbench.advice_load import WorkloadRefused, checked
from crossbench_analysis import cli
from crossbench_analysis.advice import advice, advice_capacity
from crossbench_analysis.advice.advice_run import AdviceRefused
from crossbench_analysis.judge import capacity_models
from crossbench_analysis.judge.workload import (
    erlang_c,
    poisson_tail,
    pool_for_headroom,
    pool_for_p99,
    queue_within_target,
)

ANALYSIS = Path(__file__).resolve().parents[1]
FIXTURE = ANALYSIS / "tests" / "fixtures" / "runs" / "maxthreads-quick"
MT20, MT50 = "delay-tomcat-mt20-delay_sync-c{}-d200", "delay-tomcat-mt50-delay_sync-c{}-d200"


# ------------------------------------------------------------------------------------ the arithmetic alone


def test_headroom_pool_is_the_poisson_tail_by_hand():
    # mean 1: P(X <= k) = e^-1 (1 + 1 + 1/2 + 1/6 + 1/24 + 1/120) = 0.36788 x 2.71667 = 0.99941 up to k = 5, so
    # P(X >= 6) = 0.00059 <= 0.001; up to k = 4: 0.99634, P(X >= 5) = 0.0037 > 0.001. Pool: 6.
    assert poisson_tail(1, 5) == pytest.approx(0.00366, abs=1e-5)
    assert pool_for_headroom(1) == 6
    # mean 2: e^-2 = 0.135335; P(X <= 7) = 0.135335 (1 + 2 + 2 + 4/3 + 2/3 + 4/15 + 4/45 + 8/315) = 0.998904,
    # P(X >= 8) = 0.0011 > 0.001; P(X = 8) = 0.135335 x 256 / 40320 = 0.000859, P(X >= 9) = 0.00024. Pool: 9.
    assert poisson_tail(2, 8) == pytest.approx(0.001096, abs=1e-6)
    assert pool_for_headroom(2) == 9


def test_erlang_c_by_the_recurrence_by_hand():
    # A = 2, n = 3: B1 = 2/3, B2 = (4/3)/(2 + 4/3) = 0.4, B3 = 0.8/3.8 = 0.210526;
    # C = 3 B3 / (3 - 2 (1 - B3)) = 0.631579 / 1.421053 = 4/9
    assert erlang_c(3, 2) == pytest.approx(4 / 9)
    assert erlang_c(2, 2) == 1.0  # no more threads than load: everyone waits
    # budget 1.3 ms on 20 ms holds, A = 2: n = 6 leaves C(6) e^(-4 x 0.065) = 0.018018 x 0.771 = 0.0139 > 1 %,
    # n = 7: C(7) = 0.004810, x e^(-0.325) = 0.00348 <= 1 %
    assert pool_for_p99(2, 20, 1.3) == 7
    assert pool_for_p99(2, 20, -0.1) is None  # the target is missed before any wait


def test_queue_within_target_drains_a_pool_per_holding_time():
    # 9 threads, 20 ms holds: 9 requests leave the queue every 20 ms; 200.3 ms of budget drains 90.1 -> 90
    assert queue_within_target(9, 20, 200.3) == 90


@pytest.mark.parametrize(
    "rate, hold, p99, reason",
    [
        (0, 50, None, "--rate 0: an arrival rate must be above 0"),
        (-5, 50, None, "--rate -5: an arrival rate must be above 0"),
        (10, 0, None, "--hold-ms 0: a request holds its thread for some time"),
        (10, -1, None, "--hold-ms -1"),
        (10, 50, 40, "--p99-ms 40 is below --hold-ms 50"),
        (math.inf, 50, None, "--rate must be a finite number"),
        (None, 50, None, "advice needs both --rate and --hold-ms; --rate is missing"),
    ],
)
def test_workloads_that_make_no_sense_are_refused_with_the_reason(rate, hold, p99, reason):
    with pytest.raises(WorkloadRefused, match="^" + reason.replace("+", r"\+")):
        checked(rate, hold, p99)


def test_a_p99_target_equal_to_the_holding_time_is_accepted():
    assert checked(10, 50, 50).p99_ms == 50


# ------------------------------------------------------------------------------------ the recorded run


@pytest.fixture
def fixture_run(tmp_path) -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / "maxthreads-quick"))


def test_fixture_advice_by_hand(fixture_run):
    a = advice.advise(fixture_run, checked(100, 20, 300))
    pool = a["max_threads"]
    # Little: 100 /s x 0.020 s = 2 busy; Poisson(2) headroom (above): 9 threads, 7 above the mean (350 %)
    assert (pool["busy"], pool["for_headroom"], pool["value"]) == (2, 9, 9)
    assert (pool["headroom_threads"], pool["headroom_percent"]) == (7, 350)
    # p99 overhead: p99 - 200 ms at the valid platform points with latency ratio <= 1.1: mt20 c10 215.155 ->
    # 15.2, mt50 c10 209.173 -> 9.2, mt50 c20 279.686 -> 79.7 (mt20 c20's 1.104 is over); the largest, 79.7.
    # Budget 300 - 20 - 79.7 = 200.3 ms; n = 3: C(3, 2) e^(-200.3/20) = 4/9 x 4.5e-5 <= 1 %: 3 threads.
    assert pool["from"] == MT50.format(20) and pool["p99_overhead_ms"] == 79.7
    assert pool["wait_budget_ms"] == pytest.approx(200.3) and pool["for_p99"] == 3
    # the knee, the hinge fitted over every launch: mt20's C=10 (1.015), C=20 (1.104) and C=50 (2.389, flagged
    # ratio_disagreement but its seed ratio 2.687 is above 1.1 too: past the knee either way) put N near 22;
    # mt50's C=50 (1.625, the same) and C=100 (2.016) near 40. One launch a point, fewer than 3 past the knee:
    # the brackets around the fits, both reaching maxThreads (20 and 50). mt20's C=100 (few_completions too)
    # stays out.
    k = a["knee_check"]
    assert k["follows"] is True
    assert [x["knee_between"] for x in k["knees"]] == [[20, 50], [20, 50]]
    assert [x["status"] for x in k["knees"]] == ["bracket", "bracket"]
    assert all("indicative" in x["text"] for x in k["knees"])
    assert k["knees"][1]["flagged_but_past"] == [MT50.format(50)] and k["knees"][1]["left_out"] == []
    assert k["knees"][0]["left_out"] == [
        {"point": MT20.format(100), "concurrency": 100, "flags": ["few_completions", "ratio_disagreement"]}
    ]
    # RSS per thread over the 5 valid platform points (threads, MB): (35, 145.05) (44, 145.62) (36, 143.49)
    # (45, 162.18) (74, 166.18): mean x 46.8, Sxx 1006.8, Sxy 559.156: 0.55538 MB = 568.7 KB a thread;
    # 9 threads 5.0 MB. Residuals -0.90 -5.33 -3.01 10.68 -1.43, squares 154.3; standard error
    # sqrt(154.3 / 3 / 1006.8) = 0.2260; t(3) = 3.182: +-0.7192 MB, -0.164 .. 1.275 MB = -168 .. 1305 KB
    rss = a["cost"]["rss"]
    assert rss["kb_per_thread"] == pytest.approx(568.7, abs=0.05) and rss["pool_mb"] == pytest.approx(5.0)
    assert rss["kb_per_thread_ci95"] == pytest.approx([-167.8, 1305.3], abs=0.2)
    # the JVM's own threads where the pool was full: 44 - 20 (mt20 c20) and 74 - 50 (mt50 c100): 24
    assert a["measurements"]["jvm_own_threads"]["value"] == pytest.approx(24)
    # CPU: cpu_percent on rps over the same points: mean rps 101.06, Sxx 23425.7, Sxy 5036.96: slope
    # 0.21502 % of a core per req/s = 2.150 ms a request, intercept 12.71 %; at 100 /s: 12.71 + 21.50 = 34.2 %
    # residuals 0.63 -3.70 0.27 2.66 0.14, squares 21.25; standard error sqrt(21.25 / 3 / 23425.7) = 0.01739;
    # x 3.182 = 0.0553: 0.1597 .. 0.2704 % per req/s = 1.597 .. 2.704 ms; at 100 /s 12.71 + 15.97 .. 27.04:
    # 28.7 .. 39.75 (39.7 as rounded)
    cpu = a["cost"]["cpu"]
    assert cpu["ms_per_request"] == pytest.approx(2.150, abs=0.001)
    assert cpu["ms_per_request_ci95"] == pytest.approx([1.6, 2.7], abs=0.05)
    assert cpu["at_rate_percent_ci95"] == pytest.approx([28.7, 39.75], abs=0.06)
    assert cpu["at_rate_percent"] == pytest.approx(34.2, abs=0.05) and cpu["share_of_cores"] == pytest.approx(0.342)
    # connections: the queue the target absorbs, 9 x 200.3 / 20 = 90; 9 + 90 < 8192 keeps the default;
    # acceptCount: one second of 100 /s = 100, Tomcat's default, under somaxconn 4096
    c = a["connections"]
    assert (c["queue_within_target"], c["max_connections"], c["accept_count"]) == (90, 8192, 100)
    # queueing past maxThreads: mt50 at C=100, ratio 2.016 against 100 / 50 = 2, 50 threads busy, 101 held
    assert [(q["point"], q["ratio"], q["predicted"], q["pool_busy_peak"]) for q in c["queueing"]] == [
        (MT50.format(100), 2.016, 2.0, 50)
    ]
    # virtual threads: ratios 1.012, 1.015, 1.017, 1.033 up to C=100: no knee, and 2 busy is inside C=100
    v = a["virtual_threads"]
    assert (v["removes_knee"], v["covers_workload"], v["max_ratio"]) == (True, True, 1.033)


def test_fixture_says_what_it_could_not_tell(fixture_run):
    said = " ".join(advice.advise(fixture_run, checked(100, 20))["could_not_tell"])
    for expected in (
        MT20.format(100) + "` (few_completions, ratio_disagreement)",
        "one launch",
        "memory per thread's 95 % interval reaches 0 or below",
        "heap was not fixed",
        "--groups queues",
        "`--delays 20ms`",
    ):
        assert expected in said


def test_a_run_without_a_maxthreads_sweep_names_the_experiment(tmp_path):
    quick = shutil.copytree(FIXTURE.parent / "quick", tmp_path / "quick")
    with pytest.raises(AdviceRefused, match=r"only maxThreads=200 .*run_all.sh --experiment maxthreads"):
        advice.advise(quick, checked(10, 100))


# ------------------------------------------------------------------------------------ a SYNTHETIC run


def synthetic_cell(group, mt, c, *, ratio=None, flags=(), threads=None, limit=15, **extra) -> dict:
    """A SYNTHETIC record of a 100 ms /delay/sync cell on a machine that serves at most `limit` requests at
    once whatever the pool: ratio = C / min(maxThreads, limit) past that; RSS 100 MB + 0.25 MB a thread,
    CPU 5 % + 0.1 % per req/s (exactly linear, so the fits are known)."""
    ratio = ratio or max(1.0, c / min(mt, limit))
    rps = c / (0.1 * ratio)
    threads = threads or 20 + min(c, mt)
    return {
        "cell_id": f"{group}-tomcat-mt{mt}-c{c}-d100-r1",
        "group": group,
        "server": "tomcat",
        "endpoint": "/delay/sync",
        "executor": "platform",
        "max_threads": mt,
        "concurrency": c,
        "delay_ms": 100,
        "kind": "closed_loop",
        "status": "ok",
        "flags": list(flags),
        "valid": not flags,
        "latency_ratio": ratio,
        "efficiency_ratio": ratio,
        "rps": rps,
        "cpu_percent": 5 + 0.1 * rps,
        "threads_peak": threads,
        "rss_peak_mb": 100 + 0.25 * threads,
        "latency_ms": {"p50": 100 * ratio, "p99": 100 * ratio + 4},
        "accept_count": 1024,
        "max_connections": 8192,
        "server_cpus": [1],
        "error_total": 0,
        **extra,
    }


@pytest.fixture
def busy_run(tmp_path) -> Path:
    cells = [synthetic_cell("delay", mt, c) for mt in (10, 40) for c in (5, 10, 20, 40, 80)]
    cells[2]["flags"], cells[2]["valid"] = ["noisy_host"], False  # mt10 C=20
    cells.append(
        synthetic_cell(
            "queues", 10, 100, accept_count=5, max_connections=20, tomcat_connection_count_peak=20, ratio=10.7
        )
    )
    run = tmp_path / "SYNTHETIC-busy"
    run.mkdir()
    (run / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    (run / "metadata.json").write_text(
        json.dumps(
            {
                "run_id": "SYNTHETIC-busy",
                "experiment": "maxthreads",
                "machine": {"cpu_model": "SYNTHETIC", "somaxconn": "128"},
            }
        )
    )
    return run


def test_synthetic_machine_that_bends_before_the_pool(busy_run):
    a = advice.advise(busy_run, checked(300, 100))
    # mt10: C=5, 10 ratio 1, C=20 flagged, C=40 4, C=80 8: the hinge's N = 10, two launches past it: the
    # bracket 10..40 around it, which holds 10: at maxThreads. mt40: the machine's 15: C=20 20/15 = 1.33, C=40
    # 2.67, C=80 5.33 put N at 15 exactly (three launches past it, no residual: the interval [15, 15]), between
    # the measured 10 and 20; 15 < 0.8 x 40: not at maxThreads
    k = a["knee_check"]
    assert [(x["setting"], x["knee_between"], x["follows_max_threads"]) for x in k["knees"]] == [
        ("tomcat maxThreads=10", [10, 40], True),
        ("tomcat maxThreads=40", [10, 20], False),
    ]
    assert k["follows"] is False and k["machine_limit_concurrency"] == 20
    # exact lines: 0.25 MB = 256 KB a thread; 0.1 % of a core per req/s = 1 ms a request, 5 % idle
    assert a["cost"]["rss"]["kb_per_thread"] == pytest.approx(256)
    assert a["cost"]["cpu"]["ms_per_request"] == pytest.approx(1) and a["cost"]["cpu"]["idle_percent"] == 5
    # 300 /s x 0.1 s = 30 busy; acceptCount one second = 300, cut to somaxconn 128
    assert a["max_threads"]["busy"] == 30
    assert (a["connections"]["accept_count_wanted"], a["connections"]["accept_count"]) == (300, 128)
    q = a["connections"]["queue_limits"]
    assert [(x["concurrency"], x["connections_held"], x["errors"]) for x in q] == [(100, 20, 0)]
    said = " ".join(a["could_not_tell"])
    assert "noisy_host" in said and "No virtual-thread cells" in said
    assert f"maxThreads {a['max_threads']['value']} is above C=20, where this machine bent" in said
    assert a["virtual_threads"] == {"measured": False, "removes_knee": None}
    text = advice.advice_text.render(a)
    assert "NOT at maxThreads" in text and "--executor platform,virtual" in text


def test_synthetic_launches_give_the_knee_its_interval(tmp_path):
    # 3 launches a point, 1 % apart; mt10 reads 1.0 at C=5, 1.06 at C=10, 2.0 at C=20 and 4.0 at C=40. The
    # hinge: a from C=5 and C=10, N = 20 a / 2.0, about 10.3; six launches past it give its interval, narrower
    # than half the gap between C=10 and C=20: a number. mt40 stays flat: not reached.
    cells = []
    for launch, k in enumerate((0.99, 1.0, 1.01), 1):
        for mt, c, ratio in (
            (10, 5, 1.0),
            (10, 10, 1.06),
            (10, 20, 2.0),
            (10, 40, 4.0),
            (40, 5, 1.0),
            (40, 10, 1.0),
            (40, 20, 1.0),
        ):
            cell = synthetic_cell("delay", mt, c, ratio=ratio * k)
            cell["cell_id"] = cell["cell_id"].replace("-r1", f"-r{launch}")
            cells.append(cell)
    run = tmp_path / "SYNTHETIC-launches"
    run.mkdir()
    (run / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    a = advice.advise(run, None)
    knee, flat = a["knee_check"]["knees"]
    assert knee["setting"] == "tomcat maxThreads=10" and knee["status"] == "fitted"
    assert knee["knee_concurrency"] == pytest.approx(10.3, abs=0.2) and knee["knee_low"] < 10.3 < knee["knee_high"]
    assert knee["knee_between"] == [10, 20] and knee["follows_max_threads"] is True
    assert flat["status"] == "not_reached" and flat["follows_max_threads"] is None
    text = advice.advice_text.render(a)
    assert f"bends at C={knee['knee_concurrency']:g} (95 % interval" in text
    assert a["run"]["launches"] == [3]


def test_synthetic_run_with_every_point_flagged_says_nothing_was_checked(tmp_path):
    cells = [
        synthetic_cell("delay", mt, c, flags=["noisy_host"], foreign_cpu_percent=c + mt)
        for mt in (10, 40)
        for c in (5, 10, 20)
    ]  # foreign CPU largest at 20 + 40 = 60 %
    run = tmp_path / "SYNTHETIC-noisy"
    run.mkdir()
    (run / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    a = advice.advise(run, checked(50, 100, 400))
    # Little 50 x 0.1 = 5 busy; no unqueued valid point, so no p99 overhead: budget 400 - 100 - 0 = 300 ms
    assert a["max_threads"]["checked"] is False and a["max_threads"]["wait_budget_ms"] == 300
    assert a["knee_check"]["follows"] is None and a["cost"]["rss"]["fit"] is None
    text = advice.advice_text.render(a)
    assert "Not checked against this machine" in text and "no valid point to judge" in text
    assert "6 cells flagged noisy_host" in text and "no valid unqueued point measured it" in text
    assert "other processes took up to 60 % of a core" in text


def test_advice_without_a_workload_still_reports_the_machine(busy_run):
    a = advice.advise(busy_run, None)
    assert a["max_threads"] is None and a["cost"]["rss"]["kb_per_thread"] == pytest.approx(256)
    assert "No workload stated" in advice.at_end(busy_run, None)
    assert (busy_run / "advice.md").is_file() and json.loads((busy_run / "advice.json").read_text())["workload"] is None


# ------------------------------------------------------------------------------------ the commands


def advise_sh(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(ANALYSIS / "advise.sh"), *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.mark.spawns  # advise.sh
def test_advise_sh_end_to_end_on_the_fixture(fixture_run):
    """The advice goes to a folder of its own inside the run, never over the run's own advice.md."""
    (fixture_run / "advice.md").write_text("the run's own advice\n")
    done = advise_sh(fixture_run, "--rate", 100, "--hold-ms", 20, "--p99-ms", 300)
    assert done.returncode == 0, done.stderr
    out = fixture_run / "advice-100rps-20ms-p99-300ms"
    assert "## maxThreads = 9" in done.stdout and f"advice: {out / 'advice.md'}" in done.stdout
    assert (out / "advice.md").read_text() in done.stdout
    assert json.loads((out / "advice.json").read_text())["max_threads"]["value"] == 9
    assert (fixture_run / "advice.md").read_text() == "the run's own advice\n"


def test_advise_out_writes_where_it_is_told(fixture_run, tmp_path, capsys):
    from crossbench_analysis import cli

    assert (
        cli.main(["advise", str(fixture_run), "--rate", "100", "--hold-ms", "20", "--out", str(tmp_path / "mine")]) == 0
    )
    assert "## maxThreads = 9" in (tmp_path / "mine" / "advice.md").read_text()
    assert not any(fixture_run.glob("advice*"))


@pytest.mark.parametrize(
    "args, reason",
    [
        (("--rate", 0, "--hold-ms", 20), "advise: --rate 0: an arrival rate must be above 0 requests per second"),
        (("--rate", 10, "--hold-ms", 0), "advise: --hold-ms 0: a request holds its thread"),
        (("--rate", 10, "--hold-ms", 50, "--p99-ms", 30), "advise: --p99-ms 30 is below --hold-ms 50"),
    ],
)
@pytest.mark.spawns  # gnuplot (the analysed run)
def test_advise_sh_refuses_in_one_line(fixture_run, args, reason):
    done = advise_sh(fixture_run, *args)
    assert done.returncode == 2 and done.stderr.startswith(reason) and done.stderr.count("\n") == 1
    assert not any(fixture_run.glob("advice*"))


@pytest.mark.spawns  # advise.sh
def test_advise_sh_on_a_run_without_the_sweep(tmp_path):
    quick = shutil.copytree(FIXTURE.parent / "quick", tmp_path / "quick")
    done = advise_sh(quick, "--rate", 10, "--hold-ms", 100)
    assert done.returncode == 2 and "./runner/run_all.sh --experiment maxthreads" in done.stderr


def test_run_all_refuses_a_bad_workload_before_anything_runs(capsys):
    from crossbench.run import run

    with pytest.raises(SystemExit) as stop:
        run.parse_args(["--experiment", "maxthreads-quick", "--advise-rate", "5", "--advise-hold-ms", "0"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == (
        "run_all: --advise-hold-ms 0: a request holds its thread for some time; it must be above 0 ms\n"
    )
    args = run.parse_args(["--experiment", "maxthreads-quick", "--advise-rate", "5", "--advise-hold-ms", "40"])
    assert args.workload.busy == pytest.approx(0.2)


# ------------------------------------------------------------------------------------ measured capacity beside the model

CAPACITY_REF = ANALYSIS.parent / "docs" / "results" / "capacity" / "runs" / "capacity"


def test_models_place_a_prediction_against_the_bracket():
    out = {"held_rps": 100.0, "fails_rps": 104.0}
    assert [capacity_models.where(x, out) for x in (100, 104, 99.9, 104.1, None)] == [
        capacity_models.INSIDE,
        capacity_models.INSIDE,
        capacity_models.BELOW,
        capacity_models.ABOVE,
        capacity_models.UNJUDGED,
    ]
    assert capacity_models.where(50, {"held_rps": None, "fails_rps": None}) == capacity_models.UNJUDGED
    # 1.09 ms a request x 805 req/s = 877 ms of CPU a second: 87.7 % of one core, 43.9 % of two
    busy = {"held_rps": 805.0, "cost": {"cpu_ms_per_request": {"value": 1.09}}}
    assert capacity_models.cpu_share(busy, 1) == pytest.approx(0.87745)
    assert capacity_models.cpu_share(busy, 2) == pytest.approx(0.438725)
    assert (
        capacity_models.models(
            {
                **busy,
                "fails_rps": 841.0,
                "parallel_limit": 200,
                "delay_ms": 200,
                "target_p99_ms": 300,
                "predicted_rps": 1000.0,
            },
            2,
        )["cpu_bound"]
        is False
    )


def test_capacity_run_beside_the_model_from_the_committed_reference(fixture_run):
    # docs/results/capacity (2026-11-27, on kept-alive pools): maxThreads=20 held 95.2 req/s for 60 s and failed
    # 100, maxThreads=200 held 952 and failed 1,000 (Little's law: 100 and 1000, inside both), neither core near busy
    a = advice.advise(fixture_run, checked(400, 200, 300), CAPACITY_REF)
    c = a["capacity"]
    by = {row["setting"]: row for row in c["rows"]}
    assert set(by) == {"tomcat maxThreads=20", "tomcat maxThreads=200", "tomcat virtual"}
    assert by["tomcat maxThreads=20"]["little_where"] == capacity_models.INSIDE
    assert by["tomcat maxThreads=200"]["little_where"] == capacity_models.INSIDE
    assert not by["tomcat maxThreads=200"]["cpu_bound"] and not by["tomcat maxThreads=20"]["cpu_bound"]
    assert by["tomcat virtual"]["little_rps"] is None
    assert c["model_held_at"] == [20, 200] and c["model_missed_at"] == []
    text = advice.write(a, fixture_run)
    assert "Model and measurement disagree" not in text
    # the event loops beside the pool: Tornado held 2,560 req/s for 60 s on its kept connections (its
    # connection-per-request search and nginx's generator check are not loops to serve the workload with)
    assert {row["setting"] for row in c["event_loops"]} == {"tornado", "uvicorn"}
    assert (
        "Yes, if your handler's wait can be written asynchronously: uvicorn held 2690 req/s on one thread, at "
        "or above your 400 req/s" in text
    )


def test_an_event_loop_that_held_less_than_the_workload_says_so(fixture_run):
    text = advice.write(advice.advise(fixture_run, checked(5000, 50, 300), CAPACITY_REF), fixture_run)
    assert (
        "- Not on one process: the most an event loop held here was 2690 req/s (uvicorn), under your 5000 req/s" in text
    )


@pytest.mark.parametrize(
    "pool, verdict",
    [(15, "within_held"), (20, "within_held"), (110, "within_held"), (200, "within_held"), (400, "unchecked")],
)
def test_the_advised_pool_against_where_the_model_held(pool, verdict):
    assert advice_capacity.measured(CAPACITY_REF, pool)["for_pool"]["verdict"] == verdict


def test_advice_without_a_capacity_run_says_how_to_get_one(fixture_run):
    a = advice.advise(fixture_run, checked(100, 20, 300))
    assert a["capacity"] is None
    assert "`./runner/run_all.sh --experiment capacity` measures each setting's capacity" in advice.write(
        a, fixture_run
    )


def test_a_capacity_run_without_tomcat_searches_is_refused_in_one_line(fixture_run, capsys):
    assert (
        cli.main(["advise", str(fixture_run), "--rate", "10", "--hold-ms", "100", "--capacity", str(fixture_run)]) == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("advise: run ref-maxthreads-quick has no capacity search of Tomcat") and err.count("\n") == 1
    assert not (fixture_run / "advice.md").exists()

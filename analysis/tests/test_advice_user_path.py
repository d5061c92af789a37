"""maxThreads advice on a sweep of a user's own path (--war --path): the holding time is the path's service time,
its latency at C=1 in the same run, unless --hold-ms states one; the knees are the path's. On a SYNTHETIC run
whose figures are known: a request costing 2 ms (maxThreads=10) and 2.2 ms (maxThreads=40) alone, on a machine
that serves at most 3 at once whatever the pool (a CPU-bound request), so the knee sits below either pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_run import user_path_cell, write_user_run

from crossbench import endpoints
from crossbench_analysis import cli
from crossbench_analysis.advice import advice
from crossbench_analysis.advice.advice_run import AdviceRefused

PATH = "/shop/orders"
SERVICE_MS = {10: 2.0, 40: 2.2}
LIMIT = 3  # requests the machine serves at once


@pytest.fixture(autouse=True)
def no_user_paths():
    yield
    endpoints.USER.clear()


def user_cell(mt: int, c: int, path: str = PATH, service_ms: float | None = None) -> dict:
    service_ms = service_ms or SERVICE_MS[mt]
    threads = 20 + min(c, mt)
    return user_path_cell(
        f"paths-tomcat-mt{mt}-{path.strip('/')}-c{c}-d0-r1",
        "tomcat",
        path,
        c,
        service_ms * max(1.0, c / min(mt, LIMIT)),
        group="paths" if path == PATH else "other",
        executor="platform",
        max_threads=mt,
        threads_peak=threads,
        rss_peak_mb=100 + 0.25 * threads,
        accept_count=1024,
        max_connections=8192,
    )


def write_run(run: Path, cells: list[dict], paths: list[str]) -> Path:
    return write_user_run(run, cells, paths, "your-war")


@pytest.fixture
def war_run(tmp_path) -> Path:
    cells = [user_cell(mt, c) for mt in (10, 40) for c in (1, 5, 10, 20, 40)]
    return write_run(tmp_path / "SYNTHETIC-war", cells, [PATH])


def test_the_path_s_service_time_is_the_holding_time_when_none_is_stated(war_run, tmp_path):
    out = tmp_path / "advice"
    assert cli.main(["advise", str(war_run), "--rate", "400", "--out", str(out)]) == 0
    a = json.loads((out / "advice.json").read_text())
    # the median over the two settings of their C=1 service times, 2.0 and 2.2 ms
    assert a["hold_from"]["value_ms"] == pytest.approx(2.1) and a["hold_from"]["path"] == PATH
    assert a["workload"]["hold_ms"] == pytest.approx(2.1)
    assert a["max_threads"]["busy"] == pytest.approx(400 * 0.0021, abs=1e-3)  # Little: 0.84 busy
    text = (out / "advice.md").read_text()
    assert f"the service time of {PATH} measured at C=1 in this run" in text
    assert f"requests to {PATH}, whose service time at C=1 was 2 ms (1 launch) (tomcat maxThreads=10)" in text


def test_the_knee_of_a_cpu_bound_path_is_not_at_maxthreads(war_run):
    a = advice.advise(war_run, None)
    knees = a["knee_check"]["knees"]
    assert [(k["setting"], k["held"], k["follows_max_threads"]) for k in knees] == [
        ("tomcat maxThreads=10", f"{PATH} (service time 2 ms)", False),
        ("tomcat maxThreads=40", f"{PATH} (service time 2.2 ms)", False),
    ]
    # the machine's 3 at once: ratio 1 at C=1, 5/3 at C=5: bent between C=1 and C=5 under both pools
    assert a["knee_check"]["follows"] is False and a["knee_check"]["machine_limit_concurrency"] == 5
    # p99 beyond the holding time with no queue: p99 - service time = 1 ms at each C=1 point
    assert a["measurements"]["p99_overhead"]["value_ms"] == pytest.approx(1.0)
    assert a["run"]["delays_ms"] == [] and {t["path"] for t in a["run"]["service_times"]} == {PATH}
    # CPU per request at each point (99 % of the core over its rps): 99 / 1500 at C >= 5 under maxThreads=10 and
    # 99 / 1363.6 under 40 (the machine's 3 at once over 2.0 and 2.2 ms), 99 / 500 and 99 / 454.5 at C=1; the
    # median of the ten, 0.0726 % of a core per req/s, is 0.726 ms
    cpu = a["cost"]["cpu"]
    assert cpu["per_point"] and cpu["ms_per_request"] == pytest.approx(0.726, abs=0.001)
    assert cpu["ms_per_request_ci95"] == pytest.approx([0.66, 2.178], abs=0.001)


def test_a_stated_hold_wins_over_the_measured_one(war_run, tmp_path):
    assert cli.main(["advise", str(war_run), "--rate", "400", "--hold-ms", "5", "--out", str(tmp_path / "a")]) == 0
    a = json.loads((tmp_path / "a" / "advice.json").read_text())
    assert a["workload"]["hold_ms"] == 5 and a["hold_from"] is None


def test_two_paths_without_a_stated_hold_are_refused_naming_both(tmp_path, capsys):
    cells = [user_cell(mt, c) for mt in (10, 40) for c in (1, 5)]
    cells += [user_cell(mt, c, "/shop/cart", 7.0) for mt in (10, 40) for c in (1, 5)]
    run = write_run(tmp_path / "SYNTHETIC-two", cells, [PATH, "/shop/cart"])
    with pytest.raises(AdviceRefused, match=r"measured 2 paths \(/shop/cart: 7, 7 ms; /shop/orders: 2, 2.2 ms\)"):
        advice.measured_hold(advice.points_run.load_any(run))
    assert cli.main(["advise", str(run), "--rate", "400"]) == 2
    assert "say which with --hold-ms" in capsys.readouterr().err


def test_the_model_alone_still_needs_a_hold(capsys):
    assert cli.main(["advise", "--rate", "400"]) == 2
    assert "advice needs both --rate and --hold-ms; --hold-ms is missing" in capsys.readouterr().err


def test_the_summary_points_a_war_run_to_advise_sh_without_a_hold(war_run):
    from crossbench_analysis.findings import summary
    from crossbench_analysis.findings.finding import load_points
    from crossbench_analysis.read.runinfo import load_run

    note = summary.compute(load_points(load_run(war_run)))["note"]
    assert note == summary.USER_POOL_NOTE and "--hold-ms" not in note and len(note) < 100


def test_the_committed_war_reference_gives_its_service_time_from_its_points_alone(tmp_path):
    """docs/results/your-war keeps points.jsonl, not cells.jsonl: its user path is registered from metadata.json
    and its service time read from the points, as advise.sh on the reference says in docs/your-server.md."""
    (reference,) = (Path(__file__).resolve().parents[2] / "docs" / "results" / "your-war" / "runs").iterdir()
    run = advice.points_run.load_any(reference)
    hold = advice.measured_hold(run)
    assert hold["path"] == "/jolokia/read/java.lang:type=Memory/HeapMemoryUsage/used" and 0 < hold["value_ms"] < 5
    a = advice.advise(run, None, hold_from=hold)
    assert a["source"]["kind"] == "reference" and a["knee_check"]["knees"]
    assert all(k["held"].startswith(hold["path"]) for k in a["knee_check"]["knees"])

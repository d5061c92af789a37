"""compare's noise model on SYNTHETIC runs (not measurements): the fit per kind of figure and server, the held-out
study that never fits on the run it judges, the binomial interval, the smallest change a verdict could see, and
the machine check that widens or refuses."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from synthetic_run import make_run

from crossbench_analysis.compare import holdout, machine_check, noise_fit
from crossbench_analysis.compare.compare import CompareRefused, compare_runs
from crossbench_analysis.compare.compare_stats import INCONCLUSIVE, judge, run_sd_of, run_sds, smallest_seen
from crossbench_analysis.compare.noise_fit import RunTable
from crossbench_analysis.read.runinfo import AnalysisError, load_run

POINTS = {
    "s-tomcat": ("static", "tomcat"),
    "s-tornado": ("static", "tornado"),
    "d-tomcat": ("delayed", "tomcat"),
    "d-tornado": ("delayed", "tornado"),
}


def table(
    run_id: str,
    levels: dict[str, float],
    launch_sd: float = 0.001,
    seed: int = 0,
    speed: float = 15.0,
    configuration: str = "quick",
) -> RunTable:
    """A run whose every point sits at exp(level) x 1000 with three launches a little apart."""
    rng = random.Random(seed)
    points = {}
    for pid, (kind, server) in POINTS.items():
        centre = 1000 * math.exp(levels.get(pid, 0.0))
        values = [centre * math.exp(rng.gauss(0, launch_sd)) for _ in range(3)]
        points[pid] = (kind, server, {"rps": values})
    return RunTable(run_id, "AMD EPYC, 2 cores", speed, points, configuration)


def drifting(shifts: list[float], seed: int = 0, **kw) -> list[RunTable]:
    """Runs whose static points share a run level (shifts), the delayed points steady."""
    return [table(f"r{i}", {"s-tomcat": s, "s-tornado": s}, seed=seed + i, **kw) for i, s in enumerate(shifts)]


def test_the_fit_recovers_each_kinds_run_spread_and_keeps_a_server_apart_only_where_it_differs():
    shifts = [-0.1, 0.1, 0.0, 0.05, -0.05]
    runs = [table(f"r{i}", {"s-tomcat": s, "s-tornado": s, "d-tornado": s / 5}, seed=i) for i, s in enumerate(shifts)]
    model = noise_fit.fit(runs)
    centre = sum(shifts) / len(shifts)
    planted = math.sqrt(sum((s - centre) ** 2 for s in shifts) / (len(shifts) - 1))
    assert model["run_sd"]["static"]["rps"] == pytest.approx(planted, abs=0.002)
    assert model["run_df"] == 4 and model["core_speed_ms"] == [15.0, 15.0]
    assert "static" not in model["by_server"]  # both servers drift alike
    own = model["by_server"]["delayed"]  # tornado drifts, tomcat does not
    assert own["tornado"]["rps"] == pytest.approx(planted / 5, abs=0.002) and own["tomcat"]["rps"] < 0.001
    spreads = noise_fit.model_table(model, "test")
    assert run_sd_of("rps", "delayed", spreads, "tornado") == own["tornado"]["rps"]
    assert run_sd_of("rps", "delayed", spreads, "declared-server") == model["run_sd"]["delayed"]["rps"]


def test_the_fit_refuses_runs_of_other_configurations_in_one_line():
    runs = drifting([0.0, 0.1]) + [table("old", {}, configuration="older schema")]
    with pytest.raises(AnalysisError, match="different configurations.*r0, r1; old|different configurations.*old; r0"):
        noise_fit.fit(runs)


def test_the_held_out_fit_never_uses_the_held_out_run(monkeypatch):
    runs = drifting([0.0, 0.02, -0.02, 0.01])
    fitted_on = []
    real_fit = noise_fit.fit
    monkeypatch.setattr(
        noise_fit, "fit", lambda tables: fitted_on.append([t.run_id for t in tables]) or real_fit(tables)
    )
    result = holdout.study(runs)
    assert [row["run"] for row in result["held_out"]] == ["r0", "r1", "r2", "r3"]
    assert fitted_on == [[r for r in ("r0", "r1", "r2", "r3") if r != held] for held in ("r0", "r1", "r2", "r3")]
    assert all(row["run"] not in row["fitted_on"] for row in result["held_out"])


def test_a_run_far_off_the_others_is_judged_by_a_spread_that_never_saw_it():
    """Three steady runs and one 30 % off on the static points: held out, it meets a model fitted on the steady
    three (spread about 0), so compare calls its static points changed; in sample it would have widened the
    spread enough to call nothing."""
    runs = drifting([0.0, 0.001, -0.001, 0.3])
    result = holdout.study(runs)
    off = next(row for row in result["held_out"] if row["run"] == "r3")
    assert off["run_sd"]["static"]["rps"] < 0.01
    assert off["aa"]["changed"] == 6 and off["aa"]["comparisons"] == 12  # 2 static points x 3 pairs
    steady = [row for row in result["held_out"] if row["run"] != "r3"]
    assert all(row["run_sd"]["static"]["rps"] > 0.1 for row in steady)
    assert result["aa"]["changed"] == 6 and result["aa"]["comparisons"] == 48


def test_clopper_pearson_known_answers():
    """Each bound is the rate at which k or more (k or fewer) of n has probability 2.5 %: found by root-finding
    on the binomial's own tail, not by the beta quantile the code uses."""
    assert holdout.clopper_pearson(0, 10) == pytest.approx((0.0, 0.30850), abs=1e-5)
    assert holdout.clopper_pearson(10, 10) == pytest.approx((0.69150, 1.0), abs=1e-5)
    assert holdout.clopper_pearson(2, 900) == pytest.approx((0.00026923, 0.00800416), abs=1e-7)
    assert holdout.clopper_pearson(5, 20) == pytest.approx((0.08657, 0.49105), abs=1e-5)
    with pytest.raises(ValueError):
        holdout.clopper_pearson(0, 0)


def test_the_smallest_change_seen_known_answers():
    # known se, no degrees of freedom: log(1.05) + (1.95996 + 0.84162) x 0.1 on the logs
    assert smallest_seen(0.1, None, 0.05) == pytest.approx(math.exp(math.log(1.05) + 0.280158) - 1, abs=1e-5)
    # 4 degrees of freedom: t(0.975, 4) = 2.77645, t(0.8, 4) = 0.94096
    assert smallest_seen(0.05, 4, 0.05) == pytest.approx(math.exp(math.log(1.05) + 3.71741 * 0.05) - 1, abs=1e-5)
    assert smallest_seen(0.0, None, 0.05) == pytest.approx(0.05)


def test_the_models_smallest_change_seen_is_the_tests_own():
    """No launch noise: the test's standard error is sqrt(2) sigma_run over run_df degrees of freedom."""
    assert noise_fit.smallest_seen_between(0.0, 0.1, 3) == pytest.approx(smallest_seen(math.sqrt(2) * 0.1, 3, 0.05))
    # launch noise alone (no run spread): Welch over 2 + 2 degrees of freedom, se = sqrt(2 x 0.001)
    assert noise_fit.smallest_seen_between(0.001, 0.0, 3) == pytest.approx(smallest_seen(math.sqrt(0.002), 4, 0.05))


def test_an_inconclusive_verdict_names_the_smallest_change_it_could_have_seen():
    a = [1000, 1010, 990]
    verdict = judge("rps", a, [v * 1.02 for v in a], None, None, 0.1565, run_df=3, kind="static")
    assert verdict.word == INCONCLUSIVE
    assert verdict.sees == pytest.approx(smallest_seen(verdict.test.se, verdict.test.df, 0.05))
    assert verdict.sees > 0.5  # three runs' spread of static rps
    assert f"changes under {100 * verdict.sees:.3g} % cannot be seen on static rps on this machine" in verdict.said


def timed(run: Path, ms: float) -> Path:
    """The run's metadata given a core speed reading (both cores at `ms`) and the machine noise_floor.toml holds."""
    meta = json.loads((run / "metadata.json").read_text())
    meta["machine"].update({"cpu_model": "AMD EPYC", "cores": 2})
    meta["noise_floor"] = {"core_speed": {"per_core": {"0": {"median_ms": ms}, "1": {"median_ms": ms}}}}
    (run / "metadata.json").write_text(json.dumps(meta))
    return run


SMALL = dict(concurrency=(1, 100), delays=(250,), groups=("static", "delay"), failed=False, repetitions=3)


def test_compare_widens_the_static_spread_for_cores_outside_the_models_range_and_refuses_far_outside(tmp_path):
    low, high = run_sds(None, ("AMD EPYC, 2 cores",))["core_speed_ms"]
    a = timed(make_run(tmp_path / "a", run_id="A", **SMALL), (low + high) / 2)
    b = timed(make_run(tmp_path / "b", run_id="B", seed=3, **SMALL), (low + high) / 2)
    inside = compare_runs(load_run(a), load_run(b))
    assert not [n for n in inside.notes if "outside" in n]
    timed(b, high * 1.5)
    widened = compare_runs(load_run(a), load_run(b))
    (note,) = [n for n in widened.notes if "outside" in n]
    assert note.startswith("B (B)'s cores timed the fixed unit at") and "1.50 times outside" in note
    measured = run_sds(None, ("AMD EPYC, 2 cores",))
    assert run_sd_of("rps", "static", widened.run_sd) == pytest.approx(
        math.sqrt(measured["static"]["rps"] ** 2 + math.log(1.5) ** 2), abs=1e-4
    )
    assert run_sd_of("rps", "delayed", widened.run_sd, "tomcat") == run_sd_of("rps", "delayed", measured, "tomcat")
    timed(b, low / 2.5)
    with pytest.raises(CompareRefused, match=r"2.50 times outside .* more than 2 times") as refused:
        compare_runs(load_run(a), load_run(b))
    assert "\n" not in str(refused.value)
    given = compare_runs(load_run(a), load_run(b), run_sd=0.05)  # a spread given is the user's to answer for
    assert run_sd_of("rps", "static", given.run_sd) == 0.05


def test_a_run_without_a_core_speed_reading_is_said_not_checked():
    spreads = {
        "static": {"rps": 0.1},
        "delayed": {},
        "measured": True,
        "core_speed_ms": [10, 12],
        "measured_on": "m",
        "source": "test",
    }
    kept, notes = machine_check.checked(spreads, {"A": None, "B": 11.0})
    assert kept is spreads and len(notes) == 1 and notes[0].startswith("A did not time its cores")


RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


@pytest.mark.parametrize("name", ["quick-hours", "quick-aa", "quick-day-2026-12-02", "quick-day-2026-12-03"])
def test_the_committed_held_out_study_is_what_the_committed_runs_give(name):
    """holdout.json, stated in methods.md, as `aa --holdout` computes it from the committed runs today."""
    runs = sorted(p for p in (RESULTS / name / "runs").iterdir() if p.is_dir())
    fresh = json.loads(json.dumps(holdout.study_of(runs)))
    committed = json.loads((RESULTS / name / "holdout.json").read_text())
    assert fresh == committed
    assert all(one["run"] not in one["fitted_on"] for one in committed["held_out"])

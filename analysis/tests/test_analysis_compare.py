"""compare on SYNTHETIC runs (not measurements): the verdicts (faster, slower, same within the margin,
inconclusive, cannot tell), the run-to-run variance, Benjamini-Hochberg, refusal of mismatched runs, --force."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from analysis_markers import ANALYSIS, needs_gnuplot
from synthetic_run import make_run

from crossbench_analysis.compare.compare import CompareRefused, compare_runs
from crossbench_analysis.compare.compare_stats import CANNOT_TELL, FASTER, INCONCLUSIVE, NO_VALUE, SAME, SLOWER, judge
from crossbench_analysis.read.runinfo import AnalysisError, load_run

SMALL = dict(concurrency=(1, 10, 100), delays=(1000,), groups=("static", "delay"), failed=False)


def scaled_copy(src: Path, dst: Path, factors: dict[tuple, float], run_id: str) -> Path:
    """B = A with rps multiplied (and p99 divided) by a factor for the cells of the given
    (server, group, concurrency) keys, every repetition alike, so the spread stays A's."""
    shutil.copytree(src, dst)
    lines = []
    for line in (dst / "cells.jsonl").read_text().splitlines():
        cell = json.loads(line)
        factor = factors.get((cell["server"], cell["group"], cell["concurrency"]), 1.0)
        if cell["rps"] is not None:
            cell["rps"] *= factor
            cell["latency_ms"]["p99"] /= factor
        lines.append(json.dumps(cell))
    (dst / "cells.jsonl").write_text("\n".join(lines) + "\n")
    metadata = json.loads((dst / "metadata.json").read_text())
    metadata["run_id"] = run_id
    (dst / "metadata.json").write_text(json.dumps(metadata))
    return dst


def verdicts(cmp) -> dict[str, dict]:
    return {row.label: row.verdicts for row in cmp.rows}


CHANGED = ("tomcat", "static", 100)  # +30 % rps, p99 / 1.3
NUDGED = ("tornado", "static", 10)  # +1 % rps, p99 / 1.01


def test_a_30_percent_change_is_found_with_its_interval_and_a_1_percent_one_is_not(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", repetitions=3, noise=0.02, **SMALL)
    b = make_run(tmp_path / "b0", run_id="B", repetitions=3, noise=0.02, seed=9, **SMALL)  # other launches
    b = scaled_copy(b, tmp_path / "b", {CHANGED: 1.30, NUDGED: 1.01}, "B")
    cmp = compare_runs(load_run(a), load_run(b), run_sd=0.01)  # the logic, not this machine's spreads
    v = verdicts(cmp)
    changed, nudged = v["tomcat static C100"], v["tornado static C10"]
    assert changed["rps"].word == FASTER and changed["latency_ms.p99"].word == FASTER
    assert changed["rps"].test.low > 1.15 and changed["rps"].test.high < 1.45
    assert changed["rps"].test.low < changed["rps"].ratio < changed["rps"].test.high
    assert changed["rps"].p_adjusted <= 0.05
    assert nudged["rps"].word in (SAME, INCONCLUSIVE)
    untouched = [f for label, f in v.items() if label not in ("tomcat static C100", "tornado static C10")]
    assert untouched and not any(f["rps"].changed for f in untouched)
    assert {row.launches for row in cmp.rows} == {(3, 3)}
    assert "2 sigma_run^2" in cmp.method() and "TOST" in cmp.method() and "Benjamini-Hochberg" in cmp.method()
    assert "expect at most 0.05 false changes" in cmp.expected_false()


def test_one_launch_a_point_cannot_tell_anywhere_and_says_to_launch_more(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", repetitions=1, **SMALL)
    b = scaled_copy(a, tmp_path / "b", {CHANGED: 1.30}, "B")
    cmp = compare_runs(load_run(a), load_run(b))
    assert {v.word for row in cmp.rows for v in row.verdicts.values()} <= {CANNOT_TELL, NO_VALUE}
    assert {row.verdict.word for row in cmp.rows} == {CANNOT_TELL}
    assert verdicts(cmp)["tomcat static C100"]["rps"].ratio == pytest.approx(1.30)
    assert verdicts(cmp)["tomcat static C100"]["rps"].said == (
        "cannot tell (1 launch in A, fewer than 3; however many launches, changes under 38.6 % cannot be seen on "
        "static rps on this machine)"
    )  # the default 7 % alone: log 1.05 + (1.96 + 0.842) sqrt(2) 0.07
    (note,) = [n for n in cmp.notes if "launch more" in n]
    assert "12 of 12 point(s)" in note and "--repetitions 3" in note


def test_tied_launches_cannot_tell_never_p_zero(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", repetitions=3, noise=0.0, **SMALL)  # every launch alike
    b = scaled_copy(a, tmp_path / "b", {CHANGED: 1.30}, "B")
    rps = verdicts(compare_runs(load_run(a), load_run(b), run_sd=0.01))["tomcat static C100"]["rps"]
    assert rps.word == CANNOT_TELL and rps.test is None and rps.p_value is None and "tied" in rps.why
    assert rps.ratio == pytest.approx(1.30)
    assert judge("rps", [100, 100, 100], [90, 91, 92], 100, 91, 0.05).word == CANNOT_TELL


def test_a_wide_interval_is_inconclusive_not_same():
    wide = judge("rps", [100, 130, 80], [95, 125, 85], 100, 100, 0.0)
    assert wide.word == INCONCLUSIVE and 0.95 < wide.ratio < 1.05
    assert wide.said.startswith("inconclusive (interval +-") and wide.test.low < 0.8


def test_an_interval_inside_the_margin_is_same_within_it():
    same = judge("rps", [100, 100.5, 99.5, 100.2], [100.3, 100.9, 99.8, 100.1], 100, 100.3, 0.002)
    assert same.word == SAME and same.said == "same within 5 %"
    assert 1 / 1.05 < same.test.interval(0.90)[0] < same.test.interval(0.90)[1] < 1.05
    narrow = judge("rps", [100, 100.5, 99.5, 100.2], [100.3, 100.9, 99.8, 100.1], 100, 100.3, 0.002, margin=0.001)
    assert narrow.word == INCONCLUSIVE and narrow.said.startswith("inconclusive")


def test_a_planted_10_percent_slowdown_with_tight_launches_is_slower():
    a = [1000, 1003, 998, 1001]
    assert judge("rps", a, [0.9 * v * (1 + 0.001 * i) for i, v in enumerate(a)], 1000, 900, 0.005).word == SLOWER
    assert judge("latency_ms.p99", a, [v / 0.9 for v in reversed(a)], 1000, 1111, 0.005).word == SLOWER


def test_a_planted_10_percent_on_the_delayed_points_reads_slower_with_the_files_spreads(tmp_path):
    from crossbench_analysis.compare import aa

    a = make_run(tmp_path / "a", run_id="A", repetitions=3, noise=0.002, **SMALL)
    b = make_run(tmp_path / "b", run_id="B", repetitions=3, noise=0.002, seed=5, **SMALL)
    for run in (a, b):
        set_cpu_model(run, "AMD EPYC", 2)  # the machine noise_floor.toml holds spreads of
    cmp = compare_runs(load_run(a), load_run(aa.planted_copy(b, tmp_path / "p", 0.10)))
    tomcat_delayed = [row for row in cmp.rows if row.label.startswith("tomcat sync 1s")]
    assert len(tomcat_delayed) == 3 and {row.headline for row in tomcat_delayed} == {"latency_ratio"}
    assert {row.verdict.word for row in tomcat_delayed} == {SLOWER}
    tornado_delayed = [row for row in cmp.rows if row.label.startswith("tornado async 1s")]
    assert {row.verdict.word for row in tornado_delayed} == {CANNOT_TELL}  # its toy latency ratio is one number


def test_benjamini_hochberg_turns_a_marginal_change_inconclusive_among_many_null_points():
    import math

    from crossbench.figures import changes
    from crossbench_analysis.compare.compare_stats import controlled, verdict_of

    marginal = verdict_of("rps", changes.ChangeTest(math.log(0.85), 0.05, 30, 3, 3, "hand"), 1, 0.85, 0.05)
    # its p is against the margin: that the slowdown is 5 % or less, t = (ln(1 / 0.85) - ln 1.05) / 0.05 = 2.27
    assert marginal.word == SLOWER and marginal.p_value == pytest.approx(0.0151, abs=0.0005)
    null = [verdict_of("rps", changes.ChangeTest(0.0, 0.01, 30, 3, 3, "hand"), 1, 1, 0.05) for _ in range(30)]
    assert controlled([marginal])[0].word == SLOWER
    judged = controlled([marginal, *null])
    assert judged[0].word == INCONCLUSIVE and judged[0].p_adjusted == pytest.approx(31 * marginal.p_value)
    assert "Benjamini-Hochberg" in judged[0].said and {v.word for v in judged[1:]} == {SAME}


@pytest.mark.parametrize("margin", [0, 1.5, 1, -0.1])
def test_a_margin_outside_zero_one_is_refused_in_one_line(tmp_path, margin):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    with pytest.raises(CompareRefused, match=r"the margin is a share between 0 and 1") as refused:
        compare_runs(load_run(a), load_run(a), margin=margin)
    assert "\n" not in str(refused.value)
    from crossbench_analysis.compare.compare_within import compare_within

    with pytest.raises(CompareRefused, match="margin"):
        compare_within(load_run(a), "tomcat", "tornado", margin=margin)


def test_lower_is_better_for_latencies_and_ratios():
    assert judge("latency_ms.p99", [10, 10.1, 9.9], [20, 20.2, 19.8], 10, 20, 0.05).word == SLOWER
    assert judge("efficiency_ratio", [1.5, 1.51, 1.49], [1.0, 1.01, 0.99], 1.5, 1.0, 0.05).word == FASTER
    assert judge("rps", [100, 101, 99], [], 100, None, 0.05).word == NO_VALUE


def test_refuses_different_experiments_unless_forced(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", experiment="seed002", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", experiment="quick", **SMALL)
    with pytest.raises(CompareRefused, match=r"experiments differ: A \(A\) ran 'seed002', B \(B\) ran 'quick'"):
        compare_runs(load_run(a), load_run(b))
    cmp = compare_runs(load_run(a), load_run(b), force=True)
    assert len(cmp.rows) == 12 and any("experiments differ" in n for n in cmp.notes)


def test_a_refusal_names_every_mismatch_and_the_points_it_could_not_pair(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", experiment="seed002", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", experiment="quick", **{**SMALL, "concurrency": (1, 10)})
    set_cpu_model(b, "Other CPU")
    with pytest.raises(CompareRefused) as refused:
        compare_runs(load_run(a), load_run(b))
    message = str(refused.value)
    assert "experiments differ" in message and "machines differ" in message
    assert "4 point(s) only in A could not be paired: delay-tomcat-delay_sync-c100-d1000" in message
    assert "0 only in B" in message and "--force compares the 8 point(s) both runs hold" in message


def test_different_machines_are_noted_not_refused(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **SMALL)
    set_cpu_model(b, "Other CPU")
    cmp = compare_runs(load_run(a), load_run(b))
    assert any(n.startswith("the machines differ") for n in cmp.notes)
    assert any("another machine" in n for n in cmp.notes)


def test_points_measured_by_different_generators_are_noted_not_refused(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **SMALL)
    assert not any("generators differ" in n for n in compare_runs(load_run(a), load_run(b)).notes)
    cells = [json.loads(line) for line in (b / "cells.jsonl").read_text().splitlines()]
    for cell in cells:
        cell["loadgen"] = "vegeta" if cell["delay_ms"] else cell["loadgen"]
    (b / "cells.jsonl").write_text("".join(json.dumps(cell) + "\n" for cell in cells))
    (b / "points.jsonl").unlink(missing_ok=True)
    cmp = compare_runs(load_run(a), load_run(b))
    delayed = len({c["point_id"] for c in cells if c["delay_ms"]})
    assert f"the load generators differ on {delayed} of {len(cmp.rows)} pair(s) (wrk in A, vegeta in B)" in " ".join(
        cmp.notes
    )


def test_refuses_different_point_sets_and_force_compares_the_intersection(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **{**SMALL, "concurrency": (1, 10)})
    with pytest.raises(CompareRefused, match="points differ"):
        compare_runs(load_run(a), load_run(b))
    cmp = compare_runs(load_run(a), load_run(b), force=True)
    assert len(cmp.rows) == 8
    assert sorted(cmp.left_out_a) == [
        "delay-tomcat-delay_sync-c100-d1000",
        "delay-tornado-delay_async-c100-d1000",
        "static-tomcat-static_all-c100-d0",
        "static-tornado-static_all-c100-d0",
    ]
    assert cmp.left_out_b == []
    assert any("--force: the points differ: 4 point(s) only in A" in n for n in cmp.notes)


def test_compare_states_how_steady_each_runs_cores_were(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **SMALL)
    assert not any("cores' speed" in n for n in compare_runs(load_run(a), load_run(b)).notes)  # older runs
    meta = json.loads((a / "metadata.json").read_text())
    (a / "metadata.json").write_text(json.dumps({**meta, "noise_floor": {"core_speed": {"cv_percent": 14.2}}}))
    (note,) = [n for n in compare_runs(load_run(a), load_run(b)).notes if "cores' speed" in n]
    assert "varied by 14.2 % (A) and not measured (B)" in note


def run_compare_sh(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(ANALYSIS / "compare.sh"), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )


@pytest.mark.spawns  # compare.sh
@needs_gnuplot
def test_compare_sh_exit_status_outputs_and_chart(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = scaled_copy(a, tmp_path / "b", {CHANGED: 1.30}, "B")
    other = make_run(tmp_path / "c", run_id="C", **{**SMALL, "concurrency": (1, 10)})

    refused = run_compare_sh(a, other)
    assert refused.returncode == 2 and "points differ" in refused.stderr

    forced = run_compare_sh(a, other, "--force", "--out", tmp_path / "forced")
    assert forced.returncode == 0, forced.stderr
    assert "could not be paired" in forced.stdout and (tmp_path / "forced" / "compare.html").is_file()

    ok = run_compare_sh(a, b)
    assert ok.returncode == 0, ok.stderr
    assert "method: B/A of each figure's launch values" in ok.stdout
    line = next(row for row in ok.stdout.splitlines() if row.startswith("tomcat static C100 "))
    assert "1.300" in line  # the ratio alone, and what the spread would let it see
    assert "cannot tell (1 launch in A, fewer than 3; however many launches, changes under" in line
    assert "launch more (--repetitions 3 or more)" in ok.stdout and "expect at most 0 false changes" in ok.stdout
    out = b / "compare-A"
    png = (out / "charts" / "compare.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    assert ET.parse(out / "charts" / "compare.svg").getroot().tag.endswith("svg")
    html = (out / "compare.html").read_text()
    assert 'src="charts/compare.png"' in html and "Method" in html and "cannot tell" in html
    assert (out / "compare.txt").read_text() == ok.stdout.split("\ncompare report:")[0]


def test_aa_study_counts_false_alarms_and_finds_a_planted_change(tmp_path):
    from crossbench_analysis.compare import aa

    runs = [
        make_run(tmp_path / name, run_id=name, repetitions=3, noise=0.02, seed=seed, **SMALL)
        for name, seed in (("A", 1), ("B", 2), ("C", 3))
    ]
    result = aa.study(runs, plant=0.30, run_sd=0.01)
    assert result["pairs"] == 3 and result["aa"]["points"] == 3 * 12
    assert result["aa"]["false_alarm_rate"] <= 0.1
    assert (
        result["aa"]["same"] + result["aa"]["inconclusive"] + result["aa"]["cannot_tell"] + result["aa"]["changed"]
        == 36
    )
    tied = result["aa"]["cannot_tell"]  # tornado's delayed toy latency ratio: every launch alike
    assert tied == 3 * 3 and result["planted"]["slower"] == 36 - tied  # 30 % against 2 % noise: every other
    kinds = result["by_kind"]  # the same counts per kind of point: static and delayed apart
    assert set(kinds) == {"static", "delayed"}
    assert sum(k["aa"]["points"] for k in kinds.values()) == 36
    assert sum(k["planted"]["slower"] for k in kinds.values()) == result["planted"]["slower"]
    assert kinds["delayed"]["aa"]["cannot_tell"] == tied
    assert "same (" in aa.text(result) and "delayed points: A/A" in aa.text(result)
    # where the plant was not found, what compare said and on whose points: tornado's tied ratio, every pair
    delayed = kinds["delayed"]
    assert delayed["planted"]["missed"] == {"cannot tell": tied}
    assert {name: s["slower"] for name, s in delayed["by_server"].items()} == {"tomcat": 3 * 3, "tornado": 0}
    assert f"not found: {tied} cannot tell (tomcat 9 of 9, tornado 0 of 9 found)" in aa.text(result)
    # held out: spreads measured on other runs, here a run-to-run spread of the static points' throughput far wider
    # than the planted change, which then cannot be told from the drift between runs
    wide = aa.study(runs, plant=0.30, spreads={"runs": 4, "run_sd": {"static": {"rps": 1.0}}})
    assert wide["by_kind"]["static"]["planted"]["slower"] == 0 and "over 4 other runs" in wide["run_sd"]["source"]
    planted = aa.planted_copy(runs[0], tmp_path / "p", 0.5)
    first = json.loads((planted / "cells.jsonl").read_text().splitlines()[0])
    original = json.loads((runs[0] / "cells.jsonl").read_text().splitlines()[0])
    assert first["rps"] == pytest.approx(original["rps"] * 0.5)
    assert first["latency_ms"]["p99"] == pytest.approx(original["latency_ms"]["p99"] * 2)


def drifted_runs(tmp_path: Path, shifts: list[float]) -> list[Path]:
    """Runs of one configuration whose static points' level moves by exp(shift) from run to run (launch noise
    0.2 %); the delayed points do not move."""
    static = {(server, "static", c): 1.0 for server in ("tomcat", "tornado") for c in SMALL["concurrency"]}
    runs = []
    for i, shift in enumerate(shifts):
        raw = make_run(tmp_path / f"raw{i}", run_id=f"R{i}", repetitions=3, noise=0.002, seed=i, **SMALL)
        runs.append(scaled_copy(raw, tmp_path / f"run{i}", {k: math.exp(shift) for k in static}, f"R{i}"))
    return runs


def test_the_observed_run_to_run_spread_recovers_a_planted_drift_of_the_static_points_only(tmp_path):
    """The estimate (what noise_floor.toml takes, with run_df = k - 1 = 3) recovers the planted drift; run_sd, its
    95 % upper bound over those degrees of freedom, is worked by hand from the run means' variance."""
    from scipy.stats import chi2

    from crossbench_analysis.compare import aa

    shifts = [-0.05, 0.05, 0.0, 0.02]
    observed = aa.observed_floor(drifted_runs(tmp_path, shifts))
    assert observed["runs"] == 4 and observed["measured"] is True and observed["run_df"] == 3
    centre = sum(shifts) / 4
    planted = math.sqrt(sum((s - centre) ** 2 for s in shifts) / 3)
    assert observed["estimate"]["static"]["rps"] == pytest.approx(planted, abs=0.003)
    between = observed["detail"]["static"]["rps"]["run_means_variance"]
    assert observed["run_sd"]["static"]["rps"] == pytest.approx(math.sqrt(between * 3 / chi2.ppf(0.05, 3)), abs=1e-4)
    assert observed["run_sd"]["static"]["rps"] > 1.5 * planted  # 3 degrees of freedom bound it loosely
    assert observed["estimate"]["delayed"]["rps"] < 0.002 and observed["run_sd"]["delayed"]["rps"] < 0.01
    assert observed["estimate"]["delayed"]["latency_ratio"] < 0.002
    assert observed["detail"]["static"]["rps"]["points"] == 6
    assert set(observed["run_sd"]) == {"static", "delayed"}
    with pytest.raises(AnalysisError, match="two or more runs"):
        aa.observed_floor(drifted_runs(tmp_path / "one", [0.0]))


def test_spreads_from_other_runs_judge_with_the_estimate_and_its_degrees_of_freedom_not_the_bound():
    """aa --spreads and compare --spreads take observe-floor's estimate with run_df, as noise_floor.toml does: the
    bound is the estimate widened for its degrees of freedom already, and both would count them twice."""
    from crossbench_analysis.compare import compare_stats

    observed = {
        "run_sd": {"delayed": {"rps": 0.0203}, "static": {"rps": 0.509}},
        "estimate": {"delayed": {"rps": 0.0056}, "static": {"rps": 0.1565}},
        "run_df": 3,
        "runs": 4,
    }
    table = compare_stats.observed_table(observed)
    assert compare_stats.run_sd_of("rps", "delayed", table) == 0.0056 and table["run_df"] == 3
    assert compare_stats.run_sd_of("rps", "static", table) == 0.1565
    older = {key: value for key, value in observed.items() if key != "estimate"}
    assert compare_stats.run_sd_of("rps", "delayed", compare_stats.observed_table(older)) == 0.0203


def test_the_run_variance_widens_between_runs_what_launches_alone_would_call_a_change(tmp_path):
    runs = drifted_runs(tmp_path, [0.0, 0.08])  # static points 8 % apart, launches within 0.2 %
    alone = verdicts(compare_runs(load_run(runs[0]), load_run(runs[1]), run_sd=0.0))
    assert alone["tomcat static C10"]["rps"].word == FASTER
    drifting = verdicts(compare_runs(load_run(runs[0]), load_run(runs[1]), run_sd=0.06))
    assert drifting["tomcat static C10"]["rps"].word == INCONCLUSIVE
    assert drifting["tomcat static C10"]["rps"].test.run_sd == 0.06


def set_cpu_model(run: Path, model: str, cores: int | None = None) -> None:
    meta = json.loads((run / "metadata.json").read_text())
    meta["machine"]["cpu_model"] = model
    if cores is not None:
        meta["machine"]["cores"] = cores
    (run / "metadata.json").write_text(json.dumps(meta))


def test_a_machine_with_no_spread_of_its_own_gets_the_stated_default_never_another_machines(tmp_path):
    from crossbench_analysis.compare.compare_stats import floor_file, floor_machines, run_sd_of

    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **SMALL)
    assert floor_machines()[0] == "AMD EPYC, 2 cores"
    cmp = compare_runs(load_run(a), load_run(b))
    (note,) = [n for n in cmp.notes if "no run-to-run spread was measured on" in n]
    assert "SYNTHETIC" in note and "conservative default 7 %" in note and "--within" in note
    assert run_sd_of("rps", "static", cmp.run_sd) == floor_file()["unmeasured"] and cmp.run_sd["run_df"] is None
    for run in (a, b):
        set_cpu_model(run, "AMD EPYC 7B13", 2)  # a name that holds the measured one is not it
    assert [n for n in compare_runs(load_run(a), load_run(b)).notes if "no run-to-run spread" in n]
    for run in (a, b):
        set_cpu_model(run, "AMD EPYC", 64)  # nor the same model with other cores
    assert [n for n in compare_runs(load_run(a), load_run(b)).notes if "no run-to-run spread" in n]
    for run in (a, b):
        set_cpu_model(run, "AMD EPYC", 2)
    cmp = compare_runs(load_run(a), load_run(b))
    measured = next(m for m in floor_file()["machine"] if m["measured_on"] == "AMD EPYC, 2 cores")
    assert not [n for n in cmp.notes if "no run-to-run spread" in n] and cmp.run_sd["run_df"] == measured["run_df"]
    assert not [n for n in compare_runs(load_run(a), load_run(b), run_sd=0.01).notes if "no run-to-run" in n]


def test_each_machine_is_judged_by_the_spreads_measured_on_it_per_kind_of_point(tmp_path):
    import tomllib

    from crossbench_analysis.compare.compare_stats import FLOOR_FILE, run_sd_of

    machines = tomllib.loads(FLOOR_FILE.read_text())["machine"]
    assert machines and all(m["measured"] and m["run_df"] >= 1 for m in machines)
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **SMALL)
    for machine in machines:
        model, cores = machine["measured_on"].rsplit(", ", 1)
        for run in (a, b):
            set_cpu_model(run, model, int(cores.split()[0]))
        cmp = compare_runs(load_run(a), load_run(b))
        assert run_sd_of("rps", "static", cmp.run_sd) == machine["run_sd"]["static"]["rps"]
        assert run_sd_of("latency_ratio", "delayed", cmp.run_sd) == machine["run_sd"]["delayed"]["latency_ratio"]
        assert machine["measured_on"] in cmp.run_sd["source"] and cmp.run_sd["run_df"] == machine["run_df"]
        assert not [n for n in cmp.notes if "no run-to-run spread" in n]
        row = next(r for r in cmp.rows if r.label == "tomcat sync 1s C10")
        own = machine.get("by_server", {}).get("delayed", {}).get("tomcat", {})  # the server's, where kept apart
        expected = own.get("latency_ratio", machine["run_sd"]["delayed"]["latency_ratio"])
        assert run_sd_of("latency_ratio", "delayed", cmp.run_sd, "tomcat") == expected
        assert row.verdict.test is None or row.verdict.test.run_sd == expected


def test_a_same_is_held_to_the_false_discovery_rate_too():
    """30 points that each alone read "same within 5 %" by a hair (TOST p just under 0.05), among 30 that could
    not be told apart: after Benjamini-Hochberg over the sames' p, none is said same; one clear same stays."""
    import math

    from crossbench.figures import changes
    from crossbench_analysis.compare.compare_stats import controlled, verdict_of

    bound = math.log(1.05)
    hair = [verdict_of("rps", changes.ChangeTest(0.0, bound / 1.75, 30, 3, 3, "hand"), 1, 1, 0.05) for _ in range(30)]
    assert {v.word for v in hair} == {SAME} and 0.04 < hair[0].p_value < 0.05
    wide = [verdict_of("rps", changes.ChangeTest(0.0, 0.5, 30, 3, 3, "hand"), 1, 1, 0.05) for _ in range(30)]
    clear = verdict_of("rps", changes.ChangeTest(0.0, 0.005, 30, 3, 3, "hand"), 1, 1, 0.05)
    judged = controlled([clear, *hair, *wide])
    assert judged[0].word == SAME and {v.word for v in judged[1:31]} == {INCONCLUSIVE}
    assert "Benjamini-Hochberg" in judged[1].said

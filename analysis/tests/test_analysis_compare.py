"""compare on SYNTHETIC runs (not measurements): refusal of mismatched runs, --force, and the noise rule."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from analysis_markers import ANALYSIS, needs_gnuplot
from synthetic_run import make_run

from crossbench_analysis.compare import CompareRefused, compare_runs
from crossbench_analysis.compare_stats import CANNOT_TELL, FASTER, NO_VALUE, SAME, SLOWER
from crossbench_analysis.runinfo import load_run

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


CHANGED = ("tomcat", "static", 100)    # +30 % rps, p99 / 1.3
NUDGED = ("tornado", "static", 10)     # +1 % rps, p99 / 1.01


def test_a_30_percent_change_is_found_with_its_interval_and_a_1_percent_one_is_no_difference(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", repetitions=3, noise=0.02, **SMALL)
    b = make_run(tmp_path / "b0", run_id="B", repetitions=3, noise=0.02, seed=9, **SMALL)   # other launches
    b = scaled_copy(b, tmp_path / "b", {CHANGED: 1.30, NUDGED: 1.01}, "B")
    cmp = compare_runs(load_run(a), load_run(b), noise_floor=0.05)     # the logic, not this machine's floors
    v = verdicts(cmp)
    changed, nudged = v["tomcat static C100"], v["tornado static C10"]
    assert changed["rps"].word == FASTER and changed["latency_ms.p99"].word == FASTER
    assert changed["rps"].test.low > 1.15 and changed["rps"].test.high < 1.45
    assert changed["rps"].test.low < changed["rps"].ratio < changed["rps"].test.high
    assert nudged["rps"].word == SAME
    untouched = [f for label, f in v.items() if label not in ("tomcat static C100", "tornado static C10")]
    assert untouched and all(f["rps"].word == SAME for f in untouched)
    assert {row.launches for row in cmp.rows} == {(3, 3)}
    assert "Welch" in cmp.method() and "noise floor" in cmp.method()


def test_one_launch_on_a_side_cannot_tell(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", repetitions=1, **SMALL)
    b = scaled_copy(a, tmp_path / "b", {CHANGED: 1.30}, "B")
    cmp = compare_runs(load_run(a), load_run(b))
    assert {row.verdict.word for row in cmp.rows} == {CANNOT_TELL}
    assert verdicts(cmp)["tomcat static C100"]["rps"].ratio == pytest.approx(1.30)


def test_a_change_inside_the_noise_floor_is_no_difference_even_when_its_interval_leaves_one(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", repetitions=3, noise=0.002, **SMALL)
    b = scaled_copy(a, tmp_path / "b", {CHANGED: 1.03}, "B")
    assert verdicts(compare_runs(load_run(a), load_run(b), noise_floor=0.05))["tomcat static C100"]["rps"].word == SAME
    tight = verdicts(compare_runs(load_run(a), load_run(b), noise_floor=0.01))["tomcat static C100"]["rps"]
    assert tight.word == FASTER and tight.test.low > 1


def test_lower_is_better_for_latencies_and_ratios():
    from crossbench_analysis.compare_stats import judge
    assert judge("latency_ms.p99", [10, 10.1, 9.9], [20, 20.2, 19.8], 10, 20, 0.05).word == SLOWER
    assert judge("efficiency_ratio", [1.5, 1.51, 1.49], [1.0, 1.01, 0.99], 1.5, 1.0, 0.05).word == FASTER
    assert judge("rps", [100, 101, 99], [], 100, None, 0.05).word == NO_VALUE


def test_refuses_different_experiments_unless_forced(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", experiment="seed002", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", experiment="quick", **SMALL)
    with pytest.raises(CompareRefused, match="experiments differ"):
        compare_runs(load_run(a), load_run(b))
    cmp = compare_runs(load_run(a), load_run(b), force=True)
    assert len(cmp.rows) == 12 and any("experiments differ" in n for n in cmp.notes)


def test_refuses_different_point_sets_and_force_compares_the_intersection(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **{**SMALL, "concurrency": (1, 10)})
    with pytest.raises(CompareRefused, match="points differ"):
        compare_runs(load_run(a), load_run(b))
    cmp = compare_runs(load_run(a), load_run(b), force=True)
    assert len(cmp.rows) == 8
    assert sorted(cmp.left_out_a) == ["delay-tomcat-delay_sync-c100-d1000", "delay-tornado-delay_async-c100-d1000",
                                      "static-tomcat-static_all-c100-d0", "static-tornado-static_all-c100-d0"]
    assert cmp.left_out_b == []
    assert any("left out 4 point(s) only in A" in n for n in cmp.notes)


def test_compare_states_how_steady_each_runs_cores_were(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **SMALL)
    assert not any("cores' speed" in n for n in compare_runs(load_run(a), load_run(b)).notes)  # older runs
    meta = json.loads((a / "metadata.json").read_text())
    (a / "metadata.json").write_text(json.dumps({**meta, "noise_floor": {"core_speed": {"cv_percent": 14.2}}}))
    (note,) = [n for n in compare_runs(load_run(a), load_run(b)).notes if "cores' speed" in n]
    assert "varied by 14.2 % (A) and not measured (B)" in note


def run_compare_sh(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(ANALYSIS / "compare.sh"), *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))


@needs_gnuplot
def test_compare_sh_exit_status_outputs_and_chart(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = scaled_copy(a, tmp_path / "b", {CHANGED: 1.30}, "B")
    other = make_run(tmp_path / "c", run_id="C", **{**SMALL, "concurrency": (1, 10)})

    refused = run_compare_sh(a, other)
    assert refused.returncode == 2 and "points differ" in refused.stderr

    forced = run_compare_sh(a, other, "--force", "--out", tmp_path / "forced")
    assert forced.returncode == 0, forced.stderr
    assert "left out" in forced.stdout and (tmp_path / "forced" / "compare.html").is_file()

    ok = run_compare_sh(a, b)
    assert ok.returncode == 0, ok.stderr
    assert "method: B/A of each figure's launch values" in ok.stdout
    line = next(l for l in ok.stdout.splitlines() if l.startswith("tomcat static C100 "))
    assert "1.300" in line and "cannot tell *" in line        # one launch a side: no verdict, the ratio shown
    out = b / "compare-A"
    png = (out / "charts" / "compare.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    assert ET.parse(out / "charts" / "compare.svg").getroot().tag.endswith("svg")
    html = (out / "compare.html").read_text()
    assert 'src="charts/compare.png"' in html and "Method" in html and "cannot tell" in html
    assert (out / "compare.txt").read_text() == ok.stdout.split("\ncompare report:")[0]


def test_aa_study_counts_false_alarms_and_finds_a_planted_change(tmp_path):
    from crossbench_analysis import aa
    runs = [make_run(tmp_path / name, run_id=name, repetitions=3, noise=0.02, seed=seed, **SMALL)
            for name, seed in (("A", 1), ("B", 2), ("C", 3))]
    result = aa.study(runs, plant=0.30, noise_floor=0.05)
    assert result["pairs"] == 3 and result["aa"]["points"] == 3 * 12
    assert result["aa"]["false_alarm_rate"] <= 0.1
    assert result["planted"]["power"] == 1.0           # 30 % slower against 2 % noise: every point
    planted = aa.planted_copy(runs[0], tmp_path / "p", 0.5)
    first = json.loads((planted / "cells.jsonl").read_text().splitlines()[0])
    original = json.loads((runs[0] / "cells.jsonl").read_text().splitlines()[0])
    assert first["rps"] == pytest.approx(original["rps"] * 0.5)
    assert first["latency_ms"]["p99"] == pytest.approx(original["latency_ms"]["p99"] * 2)


def test_the_observed_floor_is_the_95th_percentile_of_the_changes_between_runs(tmp_path):
    from crossbench_analysis import aa
    runs = [make_run(tmp_path / name, run_id=name, repetitions=2, noise=0.02, seed=seed, **SMALL)
            for name, seed in (("A", 1), ("B", 2))]
    observed = aa.observed_floor(runs)
    rows = compare_runs(load_run(runs[0]), load_run(runs[1])).rows
    judged_by_rps = sum(row.headline == "rps" for row in rows)
    assert 0 < judged_by_rps < len(rows) == 12          # the static points: the delayed ones have their ratio
    assert observed["rps"] == {**observed["rps"], "points": judged_by_rps, "over": "headline"}
    assert 0 < observed["rps"]["floor"] <= observed["rps"]["largest"] < 0.05
    assert observed["latency_ms.p99"]["over"] == "every point" and observed["latency_ms.p99"]["points"] == 12


def set_cpu_model(run: Path, model: str) -> None:
    meta = json.loads((run / "metadata.json").read_text())
    meta["machine"]["cpu_model"] = model
    (run / "metadata.json").write_text(json.dumps(meta))


def test_compare_says_when_its_noise_floor_was_measured_on_another_machine(tmp_path):
    from crossbench_analysis.compare_stats import floor_machines
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **SMALL)
    assert floor_machines()[0] == "AMD EPYC"
    (note,) = [n for n in compare_runs(load_run(a), load_run(b)).notes if "another machine" in n]
    assert "(AMD EPYC)" in note and "SYNTHETIC" in note and "--within" in note
    assert not [n for n in compare_runs(load_run(a), load_run(b), noise_floor=0.05).notes if "another machine" in n]
    for run in (a, b):
        set_cpu_model(run, "AMD EPYC 7B13")
    assert not [n for n in compare_runs(load_run(a), load_run(b)).notes if "another machine" in n]


def test_each_machine_is_judged_by_the_floors_measured_on_it(tmp_path):
    import tomllib
    from crossbench_analysis.compare_stats import FLOOR_FILE
    machines = tomllib.loads(FLOOR_FILE.read_text())["machine"]
    assert len(machines) >= 2 and len({m["figures"]["rps"] for m in machines}) >= 2
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **SMALL)
    for machine in machines:
        for run in (a, b):
            set_cpu_model(run, f"{machine['measured_on']} (2 cores)")
        cmp = compare_runs(load_run(a), load_run(b))
        assert cmp.floors["rps"] == machine["figures"]["rps"] and machine["measured_on"] in cmp.floors["source"]
        assert not [n for n in cmp.notes if "another machine" in n]
    set_cpu_model(a, f"{machines[0]['measured_on']} 7B13")     # two machines: no floor fits both
    cmp = compare_runs(load_run(a), load_run(b))
    assert cmp.floors["rps"] == machines[0]["figures"]["rps"]
    assert [n for n in cmp.notes if "another machine" in n]

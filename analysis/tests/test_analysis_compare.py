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

from crossbench_analysis.compare import FIXED_THRESHOLD, RULE_FIXED, RULE_REPS, CompareRefused, compare_runs
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
    return {row.label: row.figures for row in cmp.rows}


CHANGED = ("tomcat", "static", 100)    # +30 % rps, p99 / 1.3
NUDGED = ("tornado", "static", 10)     # +1 % rps, p99 / 1.01


@pytest.mark.parametrize("repetitions", [1, 3])
def test_noise_rule_marks_a_30_percent_change_and_not_a_1_percent_one(tmp_path, repetitions):
    a = make_run(tmp_path / "a", run_id="A", repetitions=repetitions, noise=0.02, **SMALL)
    b = scaled_copy(a, tmp_path / "b", {CHANGED: 1.30, NUDGED: 1.01}, "B")
    cmp = compare_runs(load_run(a), load_run(b))
    v = verdicts(cmp)
    changed, nudged = v["tomcat static C100"], v["tornado static C10"]
    assert changed["rps"].beyond and changed["p99"].beyond
    assert abs(changed["rps"].ratio - 1.30) < 1e-9
    assert not nudged["rps"].beyond and not nudged["p99"].beyond
    untouched = [f for label, f in v.items() if label not in ("tomcat static C100", "tornado static C10")]
    assert untouched and not any(f["rps"].beyond or f["p99"].beyond for f in untouched)
    rule = RULE_REPS if repetitions > 1 else RULE_FIXED
    assert {f.rule for figures in v.values() for f in figures.values()} == {rule}
    if repetitions == 1:
        assert changed["rps"].threshold == FIXED_THRESHOLD["rps"] and "fixed thresholds" in cmp.rules_used()
    else:
        assert 0.01 < nudged["rps"].threshold < 0.3 and "repetitions" in cmp.rules_used()


def test_refuses_different_experiments_unless_forced(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", experiment="seed002", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", experiment="quick", **SMALL)
    with pytest.raises(CompareRefused, match="experiments differ"):
        compare_runs(load_run(a), load_run(b))
    cmp = compare_runs(load_run(a), load_run(b), force=True)
    assert len(cmp.rows) == 12 and any("experiments differ" in n for n in cmp.notes)


def test_refuses_different_cell_sets_and_force_compares_the_intersection(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = make_run(tmp_path / "b", run_id="B", **{**SMALL, "concurrency": (1, 10)})
    with pytest.raises(CompareRefused, match="cell sets differ"):
        compare_runs(load_run(a), load_run(b))
    cmp = compare_runs(load_run(a), load_run(b), force=True)
    assert len(cmp.rows) == 8
    assert sorted(cmp.left_out_a) == ["tomcat static C100", "tomcat sync 1s C100", "tornado async 1s C100",
                                      "tornado static C100"]
    assert cmp.left_out_b == []
    assert any("left out 4 cell key(s) only in A" in n for n in cmp.notes)


def run_compare_sh(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(ANALYSIS / "compare.sh"), *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))


@needs_gnuplot
def test_compare_sh_exit_status_outputs_and_chart(tmp_path):
    a = make_run(tmp_path / "a", run_id="A", **SMALL)
    b = scaled_copy(a, tmp_path / "b", {CHANGED: 1.30}, "B")
    other = make_run(tmp_path / "c", run_id="C", **{**SMALL, "concurrency": (1, 10)})

    refused = run_compare_sh(a, other)
    assert refused.returncode == 2 and "cell sets differ" in refused.stderr

    forced = run_compare_sh(a, other, "--force", "--out", tmp_path / "forced")
    assert forced.returncode == 0, forced.stderr
    assert "left out" in forced.stdout and (tmp_path / "forced" / "compare.html").is_file()

    ok = run_compare_sh(a, b)
    assert ok.returncode == 0, ok.stderr
    assert "noise rule: fixed thresholds" in ok.stdout
    line = next(l for l in ok.stdout.splitlines() if l.startswith("tomcat static C100 "))
    assert "+30.0%" in line and "CHANGED" in line
    out = b / "compare-A"
    png = (out / "charts" / "compare.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    assert ET.parse(out / "charts" / "compare.svg").getroot().tag.endswith("svg")
    html = (out / "compare.html").read_text()
    assert 'src="charts/compare.png"' in html and "Noise rule" in html
    assert (out / "compare.txt").read_text() == ok.stdout.split("\ncompare report:")[0]

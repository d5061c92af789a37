"""compare --within on SYNTHETIC runs (not measurements): two variants of one run, launches paired by round, find a
change that the rounds' shared drift hides from an unpaired test; refusals; the within-run A/A study."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest
from analysis_markers import ANALYSIS, needs_gnuplot
from synthetic_run import make_run

from crossbench_analysis.compare import aa
from crossbench_analysis.compare.compare import CompareRefused
from crossbench_analysis.compare.compare_stats import CANNOT_TELL, INCONCLUSIVE, SAME, SLOWER, judge
from crossbench_analysis.compare.compare_within import compare_within, paired
from crossbench_analysis.read.runinfo import load_run

SMALL = dict(concurrency=(1, 10, 100), delays=(1000,), groups=("static", "delay"), failed=False, flagged=False)
# A machine whose speed moves by up to 30 % from round to round, the same for every launch of a round.
DRIFT = {1: 1.00, 2: 0.80, 3: 1.10, 4: 0.85, 5: 1.05, 6: 0.78}


def drifting(run: Path, tornado_share: float, drift: dict[int, float] = DRIFT) -> Path:
    """Every static launch's rps set to 10000 x its round's drift; Tornado's x tornado_share, and a wobble of up to
    0.3 % of each launch's own (seeded by the launch), so no two launches are exactly alike."""
    lines = []
    for line in (run / "cells.jsonl").read_text().splitlines():
        cell = json.loads(line)
        if cell["group"] == "static":
            rep = cell["repetition"]
            share = tornado_share if cell["server"] == "tornado" else 1.0
            wobble = random.Random(f"{cell['server']}-{cell['concurrency']}-{rep}").uniform(-0.003, 0.003)
            cell["rps"] = 10000 * drift[rep] * share * (1 + wobble)
        lines.append(json.dumps(cell))
    (run / "cells.jsonl").write_text("\n".join(lines) + "\n")
    return run


def static_row(cmp, c: int):
    return next(row for row in cmp.rows if row.label == f"static C{c}")


def test_pairing_by_round_finds_a_change_the_rounds_drift_hides_from_an_unpaired_test(tmp_path):
    run = drifting(make_run(tmp_path / "r", run_id="R", repetitions=6, **SMALL), tornado_share=0.92)
    cmp = compare_within(load_run(run), "tomcat", "tornado")
    assert cmp.sides == ("tomcat in run R", "tornado in run R")
    assert {row.label for row in cmp.rows} == {
        "static C1",
        "static C10",
        "static C100",
        "delay 1s C1",
        "delay 1s C10",
        "delay 1s C100",
    }
    rps = static_row(cmp, 100).verdicts["rps"]
    assert rps.word == SLOWER and rps.test.run_sd == 0.0 and rps.p_adjusted <= 0.05
    assert rps.test.ratio == pytest.approx(0.92, abs=0.003) and 0.90 < rps.test.low < rps.test.high < 0.94
    assert (rps.test.n_a, rps.test.n_b) == (6, 6)
    pairs = paired(load_run(run), *(p for p in _points(run, 100)), "rps")
    unpaired = judge("rps", [a for a, _ in pairs], [b for _, b in pairs], None, None, 0.0)
    assert unpaired.word == INCONCLUSIVE  # the drift's 30 % swamps 8 % without the pairing
    assert "paired by round" in cmp.method() and "no run-to-run variance" in cmp.method()


def _points(run: Path, c: int):
    from crossbench.figures import points

    by_server = {p["server"]: p for p in points.load(run) if p["group"] == "static" and p["concurrency"] == c}
    return by_server["tomcat"], by_server["tornado"]


def test_the_same_configuration_against_itself_is_same_within_the_margin(tmp_path):
    run = drifting(make_run(tmp_path / "r", run_id="R", repetitions=6, **SMALL), tornado_share=1.0)
    verdict = static_row(compare_within(load_run(run), "tomcat", "tornado"), 10).verdict
    assert verdict.word == SAME and verdict.said == "same within 5 %"
    tighter = static_row(compare_within(load_run(run), "tomcat", "tornado", margin=0.001), 10).verdict
    assert tighter.word == INCONCLUSIVE  # the wobble of 0.3 % is wider than a margin of 0.1 %


def test_tied_pairs_and_fewer_than_three_rounds_cannot_tell():
    from crossbench_analysis.compare.compare_stats import judge_paired

    tied = judge_paired("rps", [(100, 90), (200, 180), (50, 45)], None, None)
    assert tied.word == CANNOT_TELL and tied.p_value is None and "tied" in tied.why
    two = judge_paired("rps", [(100, 90), (200, 181)], None, None)
    assert two.word == CANNOT_TELL and two.said == "cannot tell (2 rounds holding both, fewer than 3)"


def test_one_round_cannot_tell_and_names_must_be_known_distinct_and_meet(tmp_path):
    one = load_run(make_run(tmp_path / "one", run_id="ONE", repetitions=1, **SMALL))
    cmp = compare_within(one, "tomcat", "tornado")
    assert {row.verdict.word for row in cmp.rows} == {CANNOT_TELL}
    assert any("launch more (--repetitions 3 or more)" in note for note in cmp.notes)
    with pytest.raises(CompareRefused, match="no point of 'nginx'.*tomcat, tornado"):
        compare_within(one, "tomcat", "nginx")
    with pytest.raises(CompareRefused, match="name the same variant"):
        compare_within(one, "tomcat", "tomcat")


def test_a_round_missing_on_one_side_is_left_out_of_the_pairs(tmp_path):
    run = drifting(make_run(tmp_path / "r", run_id="R", repetitions=4, **SMALL), tornado_share=0.9)
    lines = [
        line
        for line in (run / "cells.jsonl").read_text().splitlines()
        if not ('"server": "tornado"' in line and '"repetition": 2,' in line)
    ]
    (run / "cells.jsonl").write_text("\n".join(lines) + "\n")
    rps = static_row(compare_within(load_run(run), "tomcat", "tornado"), 1).verdicts["rps"]
    assert (rps.test.n_a, rps.test.n_b) == (3, 3)


def test_within_run_study_pairs_odd_with_even_rounds_and_finds_the_planted_change(tmp_path):
    # rounds 2k-1 and 2k share their drift (a slow machine), so the halves agree and a 10 % change stands out
    slow = {1: 1.0, 2: 1.0, 3: 0.8, 4: 0.8, 5: 1.1, 6: 1.1, 7: 0.9, 8: 0.9}
    run = drifting(make_run(tmp_path / "r", run_id="R", repetitions=8, **SMALL), 1.0, slow)
    assert aa.halves({1: 1.0, 2: 2.0, 3: 3.0, 5: 5.0, 6: 6.0}) == [(1.0, 2.0), (5.0, 6.0)]
    result = aa.study_within([run], plant=0.10)
    static = [p for p in result["points"] if p["point_id"].startswith("static")]
    assert len(static) == 6 and {p["pairs"] for p in static} == {4}
    assert {p["aa_verdict"] for p in static} == {SAME} and {p["planted_verdict"] for p in static} == {SLOWER}
    assert {p["welch_planted_verdict"] for p in static} == {INCONCLUSIVE}  # unpaired, the drift hides it
    # the delayed points do not drift: both tests find 10 % on Tomcat's; Tornado's toy latency ratio is one number
    # in every launch, so its pairs are tied: cannot tell, never p = 0
    tests = result["tests"]
    assert (tests["paired"]["points"], tests["paired"]["planted_found"], tests["welch"]["planted_found"]) == (12, 9, 3)
    assert tests["paired"]["aa_cannot_tell"] == tests["welch"]["aa_cannot_tell"] == 3
    assert "paired t on log values" in aa.text_within(result)


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
def test_compare_sh_within_writes_its_report_and_refuses_a_second_run(tmp_path):
    run = drifting(make_run(tmp_path / "r", run_id="R", repetitions=3, **SMALL), tornado_share=0.8)
    ok = run_compare_sh(run, "--within", "tomcat", "tornado")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("A: tomcat in run R") and "paired by round" in ok.stdout
    line = next(row for row in ok.stdout.splitlines() if row.startswith("static C100 "))
    assert "slower *" in line
    html = (run / "compare-within-tomcat-tornado" / "compare.html").read_text()
    assert "tornado in run R (B) vs tomcat in run R (A)" in html
    refused = run_compare_sh(run, run, "--within", "tomcat", "tornado")
    assert refused.returncode == 2 and "one run directory" in refused.stderr
    unknown = run_compare_sh(run, "--within", "tomcat", "uvicorn")
    assert unknown.returncode == 2 and "no point of 'uvicorn'" in unknown.stderr


def test_auto_rate_points_match_by_their_share_of_each_servers_peak():
    from crossbench_analysis.compare.compare_within import where_key

    tomcat = {"group": "static", "concurrency": 2000, "rate": 2400.0, "rate_share": 0.5, "server": "tomcat"}
    tornado = {**tomcat, "rate": 900.0, "server": "tornado"}
    fixed = {**tomcat, "rate_share": None}
    assert where_key(tomcat) == where_key(tornado) != where_key(fixed)
    assert where_key(fixed) != where_key({**fixed, "rate": 900.0})

"""Every figure of the measured sections of the README and docs/ traces to a committed reference result: each section
is what crossbench_analysis.report.reference renders from docs/results, and this fails when the two disagree (a figure
typed by hand, a result changed without its document)."""

import json
import re
import shutil
from pathlib import Path

from crossbench_analysis.report import (
    front,
    reference,
    reference_experiments,
    reference_noise,
    reference_quick,
    reference_sets,
)

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"


def test_the_docs_state_what_their_reference_results_say():
    assert reference.update_all(REPO, RESULTS, check=True) == [], (
        "a measured section is stale: python -m crossbench_analysis reference"
    )


def test_every_reference_set_is_rendered_somewhere():
    text = "".join(doc.read_text() for doc in reference_sets.documents(REPO) if doc.is_file())
    assert reference_quick.MEASURED_BEGIN in text
    for name in reference_sets.experiment_sets(RESULTS):
        assert reference_experiments.run_begin(name) in text, f"docs/results/{name} is rendered nowhere"


def test_a_figure_typed_by_hand_is_caught(tmp_path):
    [source] = [
        doc
        for doc in reference_sets.documents(REPO)
        if doc.is_file() and reference_quick.MEASURED_BEGIN in doc.read_text()
    ]
    doc = tmp_path / "doc.md"
    text = source.read_text()
    start = text.index(reference_quick.MEASURED_BEGIN)
    doc.write_text(text[:start] + text[start:].replace(" launches in all", " launches in all (about)", 1))
    assert not reference.update(doc, RESULTS, check=True)
    assert reference.update(doc, RESULTS) and reference.update(doc, RESULTS, check=True)


def test_aa_within_is_said_with_its_counts_and_each_points_ratio(tmp_path):
    tally = {"points": 6, "aa_changed": 1, "aa_cannot_tell": 0, "planted_found": 5}
    point = {
        "run": "r",
        "point_id": "static-tornado-static_mix-c10-d0",
        "figure": "rps",
        "pairs": 12,
        "aa_ratio": 1.0123,
        "aa_low": 0.9871,
        "aa_high": 1.0381,
        "aa_verdict": "inconclusive",
        "planted_verdict": "slower",
        "welch_planted_verdict": "inconclusive",
    }
    (tmp_path / reference_experiments.AA_WITHIN).write_text(
        json.dumps(
            {
                "runs": ["r"],
                "plant": 0.1,
                "within": True,
                "tests": {"paired": tally, "welch": {**tally, "planted_found": 2}},
                "points": [point],
            }
        )
    )
    lines = reference_experiments.within_lines(tmp_path)
    assert (
        "- paired t on the logs (compare --within): A/A called a change at 1 of 6 points, could not tell at 0; "
        "the planted slowdown found at 5 of 6." in lines
    )
    assert any(line.startswith("- Welch's t") and "found at 2 of 6" in line for line in lines)
    assert (
        "- static-tornado-static_mix-c10-d0 (rps, 12 pairs): even / odd rounds 1.012 [0.987, 1.038], inconclusive; "
        "planted: slower (Welch: inconclusive)." in lines
    )
    assert reference_experiments.within_lines(tmp_path / "none") == []


def test_the_experiments_table_has_a_row_for_every_reference_run_and_where_it_is_rendered():
    table = reference_experiments.render_index(RESULTS).splitlines()
    for name in reference_sets.experiment_sets(RESULTS):
        [row] = [line for line in table if line.startswith(f"| `{name}` |")]
        assert re.search(r" launches( in \d+ runs)?, ", row) and not row.endswith("| none |"), row


def test_a_set_measured_in_sittings_says_each_runs_groups_and_counts_them_all(tmp_path):
    """An experiment measured group by group (`--groups`, one run per sitting): each run's source names its groups,
    the findings of both are shown, and the experiments table counts every launch of both."""
    [source] = reference_sets.runs_of(RESULTS / "seed000")
    for name, groups in (("run-a", ["delay"]), ("run-b", ["static", "queues"])):
        run = tmp_path / "exp" / "runs" / name
        shutil.copytree(source, run)
        meta = json.loads((run / "metadata.json").read_text())
        meta["config"]["group"] = [{"name": g} for g in groups]
        (run / "metadata.json").write_text(json.dumps(meta))
    section = reference_experiments.render_run(tmp_path, "exp")
    assert "From `docs/results/exp/runs/run-a/` (group delay): " in section
    assert "From `docs/results/exp/runs/run-b/` (groups static, queues): " in section
    lead = json.loads((source / "findings.json").read_text())["findings"][0]["sentence"]
    assert section.count(lead) == 2
    launches = reference_sets.launch_count(reference_sets.run_points_of([source]))
    [row] = [line for line in reference_experiments.render_index(tmp_path).splitlines() if line.startswith("| `exp` |")]
    assert f"| {2 * launches} launches in 2 runs, " in row, row


def test_runs_hours_apart_are_said_with_their_span_spreads_and_held_out_study(tmp_path):
    folder = tmp_path / reference_noise.HOURS
    for name, started in (("hours-1", "2026-11-28T06:44:05+00:00"), ("hours-2", "2026-11-28T09:14:40+00:00")):
        (folder / "runs" / name).mkdir(parents=True)
        (folder / "runs" / name / "metadata.json").write_text(json.dumps({"started_at": started}))
    (folder / "observed.json").write_text(
        json.dumps(
            {
                "runs": 2,
                "run_df": 1,
                "run_sd": {"static": {"rps": 0.2512}},
                "estimate": {"static": {"rps": 0.0123}},
                "by_server": {"delayed": {"tornado": {"rps": 0.0079}}},
                "core_speed_ms": [13.2, 15.5],
                "sees": {"static": {"rps": 1.5536}},
            }
        )
    )
    assert len(reference_noise.hours_lines(tmp_path)) == 1  # no held-out study: none said
    aa = {"changed": 1, "comparisons": 40, "rate": 0.025, "interval": [0.0006, 0.1316]}
    plant = {"found": 3, "comparisons": 12}
    (folder / "holdout.json").write_text(
        json.dumps(
            {
                "runs": ["h1", "h2", "h3"],
                "margin": 0.05,
                "stated_rate": 0.05,
                "aa": aa,
                "held_out": [{"run": "h1", "aa": aa}],
                "by_figure": {
                    "static rps": {
                        "aa": aa,
                        "sees": 2.05,
                        "planted": {"0.1": plant},
                        "by_server": {
                            "tomcat": {"planted": {"0.1": {"found": 3, "comparisons": 6}}},
                            "tornado": {"planted": {"0.1": {"found": 0, "comparisons": 6}}},
                        },
                    }
                },
            }
        )
    )
    first, second = reference_noise.hours_lines(tmp_path)
    assert first.startswith("- **Run-to-run spread, hours apart** (`docs/results/quick-hours/`, ")
    assert "2 quick runs started from 2026-11-28 06:44 to 2026-11-28 09:14 UTC, 2.5 h apart at most" in first
    assert "95 % upper bound over 1 degrees of freedom: static rps 25.12%" in first
    assert "estimate by moments: static rps 1.23%" in first
    assert (
        "(F test at 5 %): delayed tornado rps 0.79%; the runs' cores timed the fixed unit at 13.2 to 15.5 ms" in first
    )
    assert "compare finds a change 80 % of the time from: static rps 155 %" in first
    assert "each of the 3 runs held out in turn, the model fitted on the other 2 (1 degrees of freedom)" in second
    assert (
        "called a change in 1 of 40 (2.5 %, 95 % interval 0.06 % to 13.2 %) A/A comparisons, against the "
        "stated 5 % (h1 1 of 40)" in second
    )
    assert (
        "static rps: A/A 1 of 40 (2.5 %, 95 % interval 0.06 % to 13.2 %), a planted slowdown of 10 % in 3 of "
        "12 (tomcat 3 of 6, tornado 0 of 6); changes under 205 % cannot be seen" in second
    )
    assert reference_noise.hours_lines(tmp_path / "none") == []
    assert reference_noise.HOURS not in reference_sets.experiment_sets(tmp_path)


def test_another_days_runs_are_said_apart_with_the_first_days_spreads_judging_them(tmp_path):
    day = reference_noise.OTHER_DAYS[0]  # only this day's folder is made: a day without one says nothing
    folder = tmp_path / day
    (folder / "runs" / "day-1").mkdir(parents=True)
    (folder / "runs" / "day-1" / "metadata.json").write_text(json.dumps({"started_at": "2026-12-02T18:40:00+00:00"}))
    observed = {"runs": 1, "run_df": 1, "run_sd": {"delayed": {"rps": 0.02}}, "estimate": {"delayed": {"rps": 0.01}}}
    (folder / "observed.json").write_text(json.dumps(observed))
    by_kind = {
        "static": {
            "aa": {"changed": 0, "points": 40, "interval": [0.0, 0.0881]},
            "planted": {"slower": 1, "points": 40},
        },
        "delayed": {
            "aa": {"changed": 2, "points": 60, "interval": [0.004058, 0.114825]},
            "planted": {"slower": 57, "points": 60, "missed": {"inconclusive": 2, "cannot tell": 1}},
            "by_server": {"tomcat": {"slower": 30, "points": 30}, "tornado": {"slower": 27, "points": 30}},
        },
    }
    across = {"runs": ["a", "b", "c", "d", "e"], "pairs": 10, "plant": 0.1, "margin": 0.05, "by_kind": by_kind}
    (folder / reference_noise.ACROSS_DAYS).write_text(json.dumps(across))
    spread, judged = reference_noise.hours_lines(tmp_path)
    assert spread.startswith(f"- **Run-to-run spread, another day** (`docs/results/{day}/`): 1 quick runs")
    assert judged.startswith(f"- **compare fitted on another day** (`docs/results/{day}/across-days.json`")
    # delayed first; each A/A rate with its binomial interval (2 of 60: 0.406 % to 11.5 %)
    assert (
        "these 5 runs' 10 pairs, margin 5 %: delayed points: A/A 2 of 60 headline comparisons called a change "
        "(95 % interval 0.406 % to 11.5 %), a planted 10 % slowdown found in 57 of 60 (tomcat 30 of 30, tornado "
        "27 of 30; the rest 2 inconclusive and 1 cannot tell); static points: A/A 0 of 40" in judged
    )
    assert day not in reference_sets.experiment_sets(tmp_path)


def test_the_readme_opens_with_the_measured_answer_and_the_quick_runs_output():
    """The README's first screen: the answer measured here, then what --quick prints; the rest one link away."""
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 150
    assert front.ANSWER_BEGIN in lines[:10], "the answer opens the README"
    assert front.QUICK_BEGIN in lines[:40], "the quick run's output is on the first screen"
    opening = "\n".join(lines[: lines.index(front.ANSWER_BEGIN)])
    assert "](docs/your-server.md)" in opening, "the opening says your own server can be measured, and where"
    text = "\n".join(lines)
    for page in (
        "docs/getting-started.md",
        "docs/experiments.md",
        "docs/found.md",
        "docs/servers.md",
        "docs/layout.md",
        "docs/reading-a-report.md",
        "CHANGELOG.md",
    ):
        assert f"]({page})" in text and (REPO / page).is_file(), page


def test_the_answer_reads_the_pools_rounds_from_the_reference_points(tmp_path):
    """Known answer: launches at C / 200 = 5 rounds past a pool of 200 are said with their interval."""
    run = tmp_path / front.ANSWER_SET / "runs" / "r"
    run.mkdir(parents=True)

    def point(server, endpoint, c, ratio):
        fig = {"value": ratio, "ci95_low": ratio * 0.99, "ci95_high": ratio * 1.01, "launches": [ratio] * 3}
        return {
            "server": server,
            "endpoint": endpoint,
            "concurrency": c,
            "delay_ms": 1000,
            "max_threads": 200,
            "figures": {"latency_ratio": fig, "efficiency_ratio": fig},
        }

    found = [point("tomcat", "/delay/sync", c, max(1.0, c / 200)) for c in (1, 10, 100, 400, 1000)]
    found += [point("tornado", "/delay/async", c, 1.0) for c in (1, 1000)]
    (run / "points.jsonl").write_text("".join(json.dumps(p) + "\n" for p in found))
    answer = front.render_answer(tmp_path)
    assert "Tomcat's 200 threads bend at C=200" in answer
    assert "latency ratio reads 5.00 [4.95, 5.05]" in answer
    assert "efficiency ratio 1.000 [0.990, 1.010] at 1,000 clients" in answer

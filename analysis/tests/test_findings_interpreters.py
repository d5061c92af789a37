"""The interpreter experiment's findings on SYNTHETIC runs (not measurements): one server's setting on two
interpreters, launched in the same rounds of a drifting machine; each point says, number first, whether the newer
interpreter moved the figure beyond its interval, and one line says whether a free-threaded build was here."""

from __future__ import annotations

import json
import random
from pathlib import Path

from synthetic_run import make_run

from crossbench_analysis.findings import findings
from crossbench_analysis.read.runinfo import load_run

SMALL = dict(concurrency=(10, 100), delays=(1000,), groups=("static",), failed=False, flagged=False)
DRIFT = {1: 1.00, 2: 0.80, 3: 1.10, 4: 0.85}
ON = {"tomcat": "3.11", "tornado": "3.13"}  # the synthetic run's two servers stand for one server on two interpreters


def on_two_interpreters(run: Path, newer_share: float, found: list[str]) -> Path:
    """Every launch made tornado's on the interpreter ON names; the newer one's rps newer_share of the older's, both
    moved by their round's drift (and a wobble of 0.3 % a launch); the interpreters found in the metadata."""
    lines = []
    for line in (run / "cells.jsonl").read_text().splitlines():
        cell = json.loads(line)
        python = ON[cell["server"]]
        rep = cell["repetition"]
        wobble = random.Random(f"{python}-{cell['concurrency']}-{rep}").uniform(-0.003, 0.003)
        share = newer_share if python == "3.13" else 1.0
        cell.update(python=python, setting=f"tornado Python {python}", rps=10000 * DRIFT[rep] * share * (1 + wobble))
        lines.append(json.dumps(cell))
    (run / "cells.jsonl").write_text("\n".join(lines) + "\n")
    meta = json.loads((run / "metadata.json").read_text())
    meta["pythons"] = {"found": found, "used": []}
    (run / "metadata.json").write_text(json.dumps(meta))
    return run


def sentences(run: Path) -> list[str]:
    return [f.sentence for f in findings.compute(load_run(run))]


def test_each_point_says_number_first_whether_the_newer_interpreter_moved_it(tmp_path):
    run = make_run(tmp_path / "r", experiment="interpreters", run_id="R", repetitions=4, **SMALL)
    said = sentences(on_two_interpreters(run, 0.90, ["3.11.7 (/opt/3.11)", "3.13.0 (/opt/3.13)"]))
    moved = [s for s in said if "on Python 3.13 against 3.11" in s]
    assert len(moved) == 2 and all(len(s) < 300 for s in said)
    assert all(s.startswith("0.9") and "moved it: worse beyond its interval and the 5 % margin" in s for s in moved)
    assert {s.split("against 3.11, ")[1].split(":")[0] for s in moved} == {"static C10", "static C100"}
    assert said[-1].startswith("No free-threaded Python build (3.13t) on this machine: every Python cell runs")


def test_a_point_the_interpreter_left_alone_says_it_did_not_move(tmp_path):
    run = make_run(tmp_path / "r", experiment="interpreters-quick", run_id="R", repetitions=4, **SMALL)
    said = sentences(on_two_interpreters(run, 1.0, ["3.11.7 (/opt/3.11)", "3.13.1t (/opt/3.13t)"]))
    moved = [s for s in said if "on Python 3.13 against 3.11" in s]
    assert len(moved) == 2 and all(s.startswith("1") and "did not move it: within 5 %" in s for s in moved)
    assert said[-1] == "A free-threaded build was here (3.13.1t) but no threaded point ran on it."


def test_a_launch_launched_again_in_a_later_round_is_compared_unpaired(tmp_path):
    run = make_run(tmp_path / "r", experiment="interpreters", run_id="R", repetitions=4, **SMALL)
    run = on_two_interpreters(run, 0.90, ["3.11.7 (/opt/3.11)", "3.13.0 (/opt/3.13)"])
    lines = []
    for line in (run / "cells.jsonl").read_text().splitlines():  # 3.13's rounds 1 and 2 ran as rounds 5 and 6
        cell = json.loads(line)
        if cell["python"] == "3.13" and cell["repetition"] in (1, 2):
            cell["repetition"] += 4
        lines.append(json.dumps(cell))
    (run / "cells.jsonl").write_text("\n".join(lines) + "\n")
    found = [f for f in findings.compute(load_run(run)) if "against 3.11" in f.sentence]
    assert len(found) == 2 and all(f.basis == "4 and 4 launches, unpaired" for f in found)
    # unpaired, the rounds' drift of up to 30 % is in the interval: the 10 % the pairing saw cannot be told
    assert all(
        f.sentence.startswith("0.9") and "cannot say whether it moved it (interval +-" in f.sentence for f in found
    )


def test_a_small_change_the_pairing_sees_is_said_to_lie_within_the_margin(tmp_path):
    run = make_run(tmp_path / "r", experiment="interpreters", run_id="R", repetitions=4, **SMALL)
    said = sentences(on_two_interpreters(run, 0.98, ["3.11.7 (/opt/3.11)", "3.13.0 (/opt/3.13)"]))
    moved = [s for s in said if "on Python 3.13 against 3.11" in s]
    assert len(moved) == 2
    assert all(
        s.startswith("0.98") and "moved it (worse) beyond its interval, by less than the 5 % margin" in s for s in moved
    )


REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "results" / "interpreters" / "runs" / "interpreters-ref"


def test_seed_000s_pair_is_stated_on_each_interpreter_oldest_first_from_the_committed_reference():
    from crossbench_analysis.read import points_run

    said = [f.sentence for f in findings.compute(points_run.load(REFERENCE))]
    pair = [s for s in said if "/delay/async against its /delay/sync" in s]
    assert [s.split("times: ")[1].split("'s")[0] for s in pair] == [f"tornado Python 3.{m}" for m in (11, 12, 13)]
    assert all("a blocking handler holds its one loop" in s for s in pair)
    assert sum("against 3.11," in s for s in said) == 2 * 10  # 10 points on 3.12 and on 3.13 each

"""maxThreads in ten minutes: advise answers from the model alone when no run is given, and from the committed
maxthreads reference (its points.jsonl, no cells.jsonl), saying which it used and writing nothing into either;
docs/tuning-maxthreads.md opens with the model's own table."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from crossbench.advice_load import Workload
from crossbench_analysis import cli
from crossbench_analysis.advice import model
from crossbench_analysis.judge.workload import poisson_tail, pool_for_headroom

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / model.REFERENCE


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_the_model_alone_answers_without_a_run_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["advise", "--rate", "400", "--hold-ms", "50"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("# maxThreads = 36 (the model alone: no run read)")
    assert "400 x 0.05 s = 20 threads busy on average" in said and "at most 0.1 % of the time" in said
    assert f"./analysis/advise.sh {model.REFERENCE} --rate 400 --hold-ms 50" in said
    assert listing(tmp_path) == []


def test_the_model_with_a_p99_target_says_erlang_c_and_refuses_a_capacity_run_alone(capsys):
    assert cli.main(["advise", "--rate", "400", "--hold-ms", "50", "--p99-ms", "200"]) == 0
    assert "Erlang C (M/M/N) for at most 1 % of requests waiting past 150 ms: 22 threads" in capsys.readouterr().out
    assert cli.main(["advise", "--rate", "400", "--hold-ms", "50", "--capacity", "somewhere"]) == 2


def test_the_committed_reference_answers_from_its_points_and_is_not_written_into(capsys):
    assert not (REFERENCE / "cells.jsonl").exists()
    before = listing(REFERENCE)
    assert cli.main(["advise", str(REFERENCE), "--rate", "400", "--hold-ms", "50"]) == 0
    said = capsys.readouterr().out
    assert "Read from the points.jsonl of the reference run maxthreads-delay" in said
    assert "## maxThreads = 36" in said and "tomcat maxThreads=200, 1000 ms: measured latency ratio" in said
    assert "KB of RSS per busy platform thread" in said and "heap was not fixed" not in said
    assert listing(REFERENCE) == before


def test_a_workload_of_thousands_of_busy_threads_is_sized_at_once():
    """e^-mean underflows past a mean of about 745: the tail is summed in logs from the mode, and matches the
    normal approximation's 99.9th percentile (mean + 3.09 sd) for a mean of 4000."""
    assert poisson_tail(20.0, 36) == pytest.approx(0.00080366, rel=1e-4)
    assert poisson_tail(4000.0, 4198) <= 0.001 < poisson_tail(4000.0, 4197) < 0.0011  # e^-4000 read as 0: 1
    started = time.monotonic()
    pool = pool_for_headroom(4000.0)
    assert time.monotonic() - started < 5 and abs(pool - (4000 + 3.09 * math.sqrt(4000))) < 10


def test_the_tuning_page_opens_with_the_rule_and_the_models_table():
    page = (REPO / "docs" / "tuning-maxthreads.md").read_text()
    quick = page[: page.index("## ", page.index("## ") + 1)]  # the first section
    assert model.RULE in quick.replace("\n", " ") and "\n".join(model.table()) in quick
    assert "./analysis/advise.sh --rate 400 --hold-ms 50" in quick
    assert model.size(Workload(400.0, 50.0))["value"] == 36


def test_counts_agree_with_their_nouns_in_the_advice_and_its_committed_copies(capsys):
    from crossbench_analysis.advice.words import count

    assert (count(1, "core"), count(2, "core"), count(3, "launch", "launches")) == ("1 core", "2 cores", "3 launches")
    assert cli.main(["advise", str(REFERENCE), "--rate", "400", "--hold-ms", "50"]) == 0
    files = [*REPO.glob("docs/results/maxthreads/**/advice.md"), REPO / "docs" / "tuning-maxthreads.md"]
    for text in [capsys.readouterr().out, *(f.read_text() for f in files)]:
        assert not any(hedge in text for hedge in ("core(s)", "launch(es)", "cell(s)", "setting(s)"))

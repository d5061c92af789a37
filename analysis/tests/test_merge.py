"""Findings that repeat one fact per delay are merged into one sentence listing the values, and counts read right
(never 'all 0 launches'): on seed002's committed findings, and on every committed file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crossbench_analysis.findings import findings, merge
from crossbench_analysis.findings.finding import Finding

REPO = Path(__file__).resolve().parents[2]
SEED002 = REPO / "docs" / "results" / "seed002" / "runs" / "seed002"


def record(sentence: str, **fields) -> dict:
    return {
        "family": "f",
        "chart": "charts/efficiency.png",
        "sentence": sentence,
        "figure_text": "",
        "detail": "",
        "cells": [sentence[-6:]],
        "left_out": [],
        **fields,
    }


def test_seed002s_three_facts_per_delay_become_one_sentence_each():
    records = json.loads((SEED002 / findings.FILE_JSON).read_text())["findings"]
    sentences = [r["sentence"] for r in records]
    assert len(sentences) == 8 and all(len(s) <= 300 for s in sentences), sentences
    assert not any(s.count("(/delay/sync, 1 s)") for s in sentences)
    [top] = [s for s in sentences if "rounds of the delay" in s]
    assert top.startswith("Latency ratio 4.989 [4.975, 5.002] / 4.97 [4.90, 5.04] / 5.00 [4.90, 5.11] and ")
    assert "tomcat maxThreads=200 (/delay/sync, 1 / 3 / 10 s)" in top
    assert any("(/delay/sync, each of 1, 3 and 10 s) filled its pool" in s for s in sentences)
    [async_pool] = [r for r in records if "never filled its pool" in r["sentence"]]
    assert "(at most 2 of 200 busy)" in async_pool["sentence"] and "busy or idle" in async_pool["detail"]


def test_merging_lists_values_in_the_delays_order_and_keeps_every_fold_and_cell():
    said = merge.merged(
        [
            record("Ratio 5.0 [4.9, 5.1] at C=1000: tomcat maxThreads=200 (/delay/sync, 10 s) waits."),
            record(
                "Ratio 4.99 [4.98, 5.00] at C=1000: tomcat maxThreads=200 (/delay/sync, 1 s) waits.",
                figure_text="ratio 4.99",
                detail="fit one",
            ),
            record("Something else."),
        ]
    )
    assert [r["sentence"] for r in said] == [
        "Ratio 4.99 [4.98, 5.00] / 5.0 [4.9, 5.1] at C=1000: tomcat maxThreads=200 (/delay/sync, 1 / 10 s) waits.",
        "Something else.",
    ]
    assert said[0]["detail"].startswith("at 1 s: ratio 4.99; fit one | at 10 s: ") and len(said[0]["cells"]) == 2


def test_sweeps_of_different_settings_or_the_same_delay_stay_apart():
    apart = [
        record("Knee at C=50: tomcat maxThreads=50 (/delay/sync, 1 s) bends."),
        record("Knee at C=200: tomcat maxThreads=200 (/delay/sync, 3 s) bends."),
        record("Knee at C=201: tomcat maxThreads=200 (/delay/sync, 3 s) bends."),
    ]
    assert merge.merged(apart) == apart


@pytest.mark.parametrize("interval", [[228.0, 228.0], [227.99999999999997, 228.00000000000003]])
def test_launches_that_tie_read_all_n_launches(interval):
    finding = Finding("f", "s", label="peak threads", figure=228.0, unit="threads", interval=interval, n=3)
    assert finding.figure_text == "peak threads: 228 threads (all 3 launches)"


def test_no_committed_result_or_document_says_all_0_launches():
    files = [*REPO.glob("docs/**/*.md"), *REPO.glob("docs/results/**/*.json"), REPO / "README.md"]
    assert not [str(f.relative_to(REPO)) for f in files if "all 0 launches" in f.read_text()]

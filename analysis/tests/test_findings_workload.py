"""A workload's mix read per request kind (findings/findings_workload.py): each kind's p99 inside the mix, over the
counted launches, only where the generator measured the kinds."""

from __future__ import annotations

from crossbench.figures import points
from crossbench_analysis.findings import findings_workload
from crossbench_analysis.findings.finding import LAUNCH_RULE


def launch(cell: str, get_p99: float, post_p99: float | None, flags=()) -> dict:
    post = (
        {"requests": 0, "non_2xx": 0, "latency_ms": {"p99": None}}
        if post_p99 is None
        else {
            "requests": 9,
            "non_2xx": 0,
            "latency_ms": {"p99": post_p99},
        }
    )
    return {
        "cell_id": cell,
        "status": "ok",
        "flags": list(flags),
        "latency_by_kind": {"get": {"requests": 30, "non_2xx": 0, "latency_ms": {"p99": get_p99}}, "post": post},
    }


def mix_point(records: list[dict], endpoint: str = "/*") -> dict:
    return {
        "endpoint": endpoint,
        "valid": True,
        "concurrency": 4,
        "setting": "gunicorn sync",
        "records": records,
        "cells": [r["cell_id"] for r in points.counted(records)],
        LAUNCH_RULE: points.FIXED,
    }


def test_each_kinds_p99_over_the_counted_launches():
    noisy = launch("m-r3", 900.0, 900.0, flags=("noisy_host",))  # left out: its siblings are undisturbed
    [found] = findings_workload.kinds_in_mix(
        "your-app", [mix_point([launch("m-r1", 10, 40), launch("m-r2", 20, 80), noisy])]
    )
    expected = [points.figure_of(v, points.FIXED)["value"] for v in ([10.0, 20.0], [40.0, 80.0])]
    assert found.sentence == (
        "p99 per request kind inside the mix at C=4, gunicorn sync: "
        f"get {findings_workload.sig(expected[0])} ms, post {findings_workload.sig(expected[1])} ms."
    )
    assert found.cells == ["m-r1", "m-r2"] and found.n == 2


def test_a_kind_no_launch_answered_says_so():
    [found] = findings_workload.kinds_in_mix("f", [mix_point([launch("m-r1", 10, None)])])
    assert found.sentence.endswith("get 10.0 ms, post none answered.")


def test_nothing_without_kinds_or_outside_the_mix():
    plain = {**launch("m-r1", 10, 40), "latency_by_kind": None}
    assert findings_workload.kinds_in_mix("f", [mix_point([plain])]) == []
    assert findings_workload.kinds_in_mix("f", [mix_point([launch("g-r1", 10, 40)], endpoint="/get")]) == []

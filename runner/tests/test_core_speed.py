"""The cores' speed probe (sampling/core_speed.py): its summary arithmetic on fixed times, and a real probe."""

from __future__ import annotations

import os

import psutil
import pytest

from crossbench.sampling import core_speed


def test_summary_of_known_times():
    times = [0.004] * 18 + [0.005, 0.008]  # 20 units: two slow ones
    s = core_speed.summary(times)
    assert s["units"] == 20 and s["median_ms"] == 4.0
    mean = (18 * 4 + 5 + 8) / 20  # 4.25 ms
    sd = ((18 * (4 - mean) ** 2 + (5 - mean) ** 2 + (8 - mean) ** 2) / 19) ** 0.5
    assert s["cv_percent"] == round(sd / mean * 100, 1) == 21.4
    assert s["p95_over_p5"] == 1.25  # rank 19 is 5 ms, rank 1 is 4 ms: the 8 ms one is not it


def test_one_unit_has_no_spread():
    assert core_speed.summary([0.004])["cv_percent"] is None


@pytest.mark.spawns  # a Python child
def test_a_real_probe_on_every_core_we_may_use():
    cores = sorted(os.sched_getaffinity(0))
    result = core_speed.measure(cores, seconds=0.3)
    assert set(result["per_core"]) == {str(c) for c in cores}
    for core in result["per_core"].values():
        # a unit or more on each core: this tier shares the cores with other tests, which may take most of them
        assert core["units"] >= 1 and core["median_ms"] > 0 and core["p95_over_p5"] >= 1
        assert 0 < core["core_share_percent"] <= 100
    assert result["cv_percent"] == max(c["cv_percent"] for c in result["per_core"].values())


@pytest.mark.spawns  # a Python child
def test_a_core_that_cannot_be_had_is_an_error_not_a_crash():
    result = core_speed.measure([os.cpu_count() + 7], seconds=0.2)
    (only,) = result["per_core"].values()
    assert "error" in only and "Invalid argument" in only["error"] and result["cv_percent"] is None


@pytest.mark.spawns  # a Python child
def test_no_child_outlives_the_probe():
    core_speed.measure(sorted(os.sched_getaffinity(0)), seconds=0.2)
    assert psutil.Process().children() == []


@pytest.mark.spawns  # a Python child and a busy loop beside it
def test_a_probe_beside_a_busy_loop_on_its_core_says_it_shared_the_core():
    """The speed figure must measure the core, not the harness beside it: a loop on the probe's core halves the
    probe's share of it, and the summary says so."""
    import subprocess
    import sys

    core = sorted(os.sched_getaffinity(0))[0]
    hog = subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{core}}})\nwhile True: pass"])
    try:
        result = core_speed.measure([core], seconds=0.6)
    finally:
        hog.kill()
        hog.wait()
    assert result["per_core"][str(core)]["core_share_percent"] < 100 * core_speed.SHARED_BELOW

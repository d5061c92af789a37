"""The planted-load study (crossbench_analysis/compare/noise_study.py) on SYNTHETIC runs: nothing here was
measured. A launch's change is read against the nearest quiet runs, never its own, and the limits' table counts
what each limit of the impact figure would miss and flag."""

import json

import pytest

from crossbench_analysis.compare import noise_study
from crossbench_analysis.read.runinfo import AnalysisError

SYNTHETIC = {"cpu_model": "SYNTHETIC test data, not a measurement", "cores": 2}


def synthetic_run(path, started, rps_and_impact, duty=None, core=1):
    """A run of one static point (C=100), a launch per (rps, impact) pair; planted.json when duty is given."""
    path.mkdir()
    meta = {
        "run_id": path.name,
        "started_at": started,
        "experiment": "quick",
        "machine": SYNTHETIC,
        "config": {"run": {"server_cpus": [1], "loadgen_cpus": [0]}},
    }
    (path / "metadata.json").write_text(json.dumps(meta))
    cells = [
        {
            "cell_id": f"static-tomcat-c100-d0-r{n}",
            "point_id": "static-tomcat-c100-d0",
            "repetition": n,
            "status": "ok",
            "kind": "closed_loop",
            "server": "tomcat",
            "group": "static",
            "concurrency": 100,
            "delay_ms": 0,
            "rps": rps,
            "noise_impact_percent": impact,
            "foreign_cpu_percent": impact,
            "flags": ["noisy_host"] if impact > 5 else [],
        }
        for n, (rps, impact) in enumerate(rps_and_impact, 1)
    ]
    (path / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    if duty is not None:
        (path / "planted.json").write_text(json.dumps({"duty_percent": duty, "core": core, "reached_percent": duty}))
    return path


def test_a_planted_launch_is_read_against_the_quiet_runs_either_side_and_the_limits_count_misses(tmp_path):
    quiet_a = synthetic_run(tmp_path / "a", "2026-12-02T18:00:00", [(1000, 0.5), (1000, 0.5)])
    planted = synthetic_run(tmp_path / "b", "2026-12-02T18:05:00", [(810, 9.0), (900, 4.0)], duty=10)
    quiet_c = synthetic_run(tmp_path / "c", "2026-12-02T18:10:00", [(1000, 0.4), (960, 0.6)])
    result = noise_study.study([planted, quiet_c, quiet_a])  # read in time order, whatever the order given
    assert [r["condition"] for r in result["runs"]] == ["quiet", "server core 10 %", "quiet"]
    base = (1000 * 1000 * 1000 * 960) ** 0.25  # both quiet runs' launches
    changes = {(r["run"], r["noise_impact_percent"]): r["change"] for r in result["launches"]}
    assert changes[("b", 9.0)] == pytest.approx(1 - 810 / base, abs=1e-4)  # rps: worse is lower
    assert changes[("c", 0.6)] == pytest.approx(0.04, abs=1e-4)  # a quiet run is read against the other one only
    at_5 = next(row for row in result["limits"]["all"] if row["limit"] == 5.0)
    # moved past 5 %: the planted launches (19 % and 10 % worse); the 4.0 impact one is missed at a limit of 5
    assert (at_5["moved"], at_5["missed"], at_5["still"], at_5["flagged_still"]) == (2, 1, 4, 0)
    at_3 = next(row for row in result["limits"]["rps"] if row["limit"] == 3.0)
    assert (at_3["missed"], at_3["flagged_still"]) == (0, 0)
    table = noise_study.text(result)
    assert (
        "| server core 10 % | static-tomcat-c100-d0 | rps | 2 |" in table
        and "| 5 | 1 of 2 | 0 of 4 | 1 of 2 | 0 of 4 |" in table
    )


def test_a_loop_on_the_generators_core_is_named_so_and_a_study_without_a_quiet_run_is_refused(tmp_path):
    planted = synthetic_run(tmp_path / "g", "2026-12-02T18:00:00", [(900, 3.0)], duty=30, core=0)
    with pytest.raises(AnalysisError, match="no quiet run"):
        noise_study.study([planted])
    quiet = synthetic_run(tmp_path / "q", "2026-12-02T18:05:00", [(1000, 0.1)])
    assert noise_study.study([planted, quiet])["runs"][0]["condition"] == "loadgen core 30 %"

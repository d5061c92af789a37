"""The record contract (crossbench.record): shared fields are the cell's, drivers cannot overwrite them,
server death is decided from the server process, and analysis reads only fields the runner writes."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from crossbench import cell, experiment, paths, points, record, servers
from crossbench.drivers import DRIVERS
from crossbench.loadgen.base import LoadgenError
from crossbench.metadata import now_iso
from crossbench.servers import RunningServer, ServerSpec, free_port

REFERENCE_RUNS = paths.REPO / "analysis" / "tests" / "fixtures" / "runs"
sys.path.insert(0, str(paths.REPO / "analysis"))
from crossbench_analysis.finding import Finding  # noqa: E402
from crossbench_analysis.knees import SettingKnee, ratio_interval  # noqa: E402  (analysis, beside the runner)


def quick_plan():
    return experiment.expand(experiment.apply_overrides(experiment.load("quick"), {}))[0]


def test_a_driver_cannot_overwrite_a_shared_field():
    with pytest.raises(record.DriverKeyClash, match=r"writes shared fields \['flags', 'valid'\]"):
        record.merge({"flags": [], "valid": True, "rps": 1.0}, {"flags": ["mine"], "valid": False}, "fixed_count")
    merged = record.merge({"rps": 1.0}, {"pipeline_verified": True}, "pipelined")
    assert merged["pipeline_verified"] and merged["efficiency_ratio"] is None   # driver defaults are present


def test_a_failed_load_generator_is_not_a_dead_server():
    """The old rule searched the error text for 'died' or 'exited': wrk exiting 1 was recorded as server death."""
    plan = quick_plan()
    failed = cell.failed_record(plan, now_iso(), LoadgenError("wrk exited with status 1; the thread died"))
    assert failed["flags"] == ["failed"] and failed["status"] == "failed"
    died = cell.failed_record(plan, now_iso(), cell.ServerDied("tomcat exited with status -9"))
    assert died["flags"] == ["server_died"]
    assert set(record.SHARED) >= {k for k in failed if k not in record.DRIVER_DEFAULTS} - set(
        plan.plugin.record_fields(plan.settings))


def test_death_is_read_from_the_server_process(tmp_path):
    plan = quick_plan()
    spec = ServerSpec("sleeper", free_port(), [sys.executable, "-c", "import time; time.sleep(30)"],
                      tmp_path / "log")
    server = RunningServer(spec).start()
    try:
        assert cell.died(plan, server) is None
        server.process.kill()
        server.process.wait()
        assert isinstance(cell.died(plan, server), cell.ServerDied)
    finally:
        server.stop()


def written_keys() -> set[str]:
    """What the contract declares: shared and default fields, plan fields, every plug-in's knobs, the fields of
    points.jsonl, and those of knees.jsonl and findings.json (which analysis writes itself)."""
    keys = set(record.SHARED) | set(record.DRIVER_DEFAULTS) | set(experiment.CellPlan.__dataclass_fields__)
    keys |= {name for driver in DRIVERS.values() for name in driver.FIELDS}
    keys |= set(SettingKnee.__dataclass_fields__) | {"concurrency", "ratio", "efficiency_ratio", "cell_ids"}
    keys |= set(ratio_interval([1.0]))          # a knee point's interval (the knees chart draws it)
    # findings.json, which analysis writes itself, and a point's launches it attaches to the point ("records")
    keys |= set(Finding.__dataclass_fields__) | {"figure_text", "chart_name", "records"}
    keys |= set(points.point_record("p", [{"cell_id": "p-r1", "status": "ok"}], None, None))    # points.jsonl
    return keys | {k.name for p in servers.PLUGINS.values() for k in p.knobs}


def reference_keys() -> set[str]:
    """Keys present in the checked-in reference runs (records, nested objects, CSV headers)."""
    found = set()
    for path in REFERENCE_RUNS.rglob("*"):
        if path.suffix in (".jsonl", ".json"):
            found |= set(re.findall(r'"([a-z_0-9]+)":', path.read_text()))
        elif path.suffix == ".csv":
            found |= set(path.read_text().splitlines()[0].split(",")) if path.stat().st_size else set()
    return found


def test_every_planned_cell_has_its_run_order():
    cells = experiment.expand(experiment.apply_overrides(experiment.load("quick"), {"shuffle": True}))
    assert [c.index for c in cells] == list(range(1, len(cells) + 1))   # what the report's "#" column shows


def analysis_reads() -> set[str]:
    pattern = re.compile(r'\b(?:c|cell|r|rec|record|row|s|sample|k|knee|p|pt|meta|m)(?:\.get\(|\[)"([a-z_0-9]+)"')
    sources = (paths.REPO / "analysis" / "crossbench_analysis").glob("*.py")
    return {key for source in sources for key in pattern.findall(source.read_text())}


TEST_ONLY = {"synthetic"}     # metadata of the synthetic runs analysis tests draw (the report bannners them)


def test_analysis_reads_only_what_the_runner_writes():
    unknown = analysis_reads() - written_keys() - reference_keys() - TEST_ONLY
    assert not unknown, f"analysis reads fields no runner writes: {sorted(unknown)}"


def test_every_shared_field_is_documented_in_the_readme():
    readme = (paths.RUNNER / "README.md").read_text()
    assert "crossbench/record.py" in readme

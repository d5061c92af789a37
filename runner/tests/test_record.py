"""The record contract (crossbench.record): shared fields are the cell's, drivers cannot overwrite them,
server death is decided from the server process, and analysis reads only fields the runner writes."""

from __future__ import annotations

import io
import json
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from crossbench import paths, servers
from crossbench.cell import fields
from crossbench.cell.cell_checks import ServerDied, died
from crossbench.cell.cell_record import failed_record
from crossbench.drivers import DRIVERS
from crossbench.figures import points
from crossbench.hosts.local import HERE
from crossbench.loadgen.base import LoadgenError
from crossbench.oskit import free_port
from crossbench.plan import experiment
from crossbench.plan.cellplan import CellPlan
from crossbench.record import record, rundir
from crossbench.record.record import now_iso
from crossbench.servers import RunningServer, ServerSpec
from crossbench_analysis.findings.finding import Finding
from crossbench_analysis.judge.knees import SettingKnee, ratio_interval
from crossbench_analysis.read.runinfo import load_run

REFERENCE_RUNS = paths.REPO / "analysis" / "tests" / "fixtures" / "runs"


def quick_plan():
    return experiment.expand(experiment.apply_overrides(experiment.load("quick"), {}))[0]


def test_a_driver_cannot_overwrite_a_shared_field():
    with pytest.raises(record.DriverKeyClash, match=r"writes shared fields \['flags', 'valid'\]"):
        record.merge({"flags": [], "valid": True, "rps": 1.0}, {"flags": ["mine"], "valid": False}, "fixed_count")
    merged = record.merge({"rps": 1.0}, {"pipeline_verified": True}, "pipelined")
    assert merged["pipeline_verified"] and merged["efficiency_ratio"] is None  # driver defaults are present


def test_a_failed_load_generator_is_not_a_dead_server():
    """The old rule searched the error text for 'died' or 'exited': wrk exiting 1 was recorded as server death."""
    plan = quick_plan()
    failed = failed_record(plan, now_iso(), LoadgenError("wrk exited with status 1; the thread died"))
    assert failed["flags"] == ["failed"] and failed["status"] == "failed"
    died = failed_record(plan, now_iso(), ServerDied("tomcat exited with status -9"))
    assert died["flags"] == ["server_died"]
    assert set(record.LIFECYCLE) >= {k for k in failed if k not in record.DRIVER_DEFAULTS} - set(
        plan.plugin.record_fields(plan.settings)
    )
    assert fields.problems(failed) == [] and fields.problems(died) == []


@pytest.mark.spawns  # a Python child
def test_death_is_read_from_the_server_process(tmp_path):
    plan = quick_plan()
    spec = ServerSpec("sleeper", free_port(), [sys.executable, "-c", "import time; time.sleep(30)"], tmp_path / "log")
    server = RunningServer(spec, HERE).start()
    try:
        assert died(plan, server) is None
        server.process.kill()
        server.process.wait()
        assert isinstance(died(plan, server), ServerDied)
    finally:
        server.stop()


def written_keys() -> set[str]:
    """What the contract declares: shared and default fields, plan fields, every plug-in's knobs, the fields of
    points.jsonl, and those of knees.jsonl and findings.json (which analysis writes itself)."""
    keys = set(record.LIFECYCLE) | set(record.DRIVER_DEFAULTS) | set(CellPlan.__dataclass_fields__)
    keys |= {name for driver in DRIVERS.values() for name in driver.FIELDS}
    keys |= {name for plugin in servers.PLUGINS.values() for name in plugin.FIELDS}
    keys |= set(SettingKnee.__dataclass_fields__) | {"concurrency", "ratio", "efficiency_ratio", "cell_ids"}
    keys |= set(ratio_interval([1.0]))  # a knee point's interval (the knees chart draws it)
    # findings.json, which analysis writes itself, and a point's launches it attaches to the point ("records",
    # and the disturbed ones it left out: "disturbed_records")
    keys |= set(Finding.__dataclass_fields__) | {"figure_text", "chart_name", "records", "disturbed_records"}
    keys |= set(points.point_record("p", [{"cell_id": "p-r1", "status": "ok"}], None))  # points.jsonl
    return keys | {k.name for p in servers.PLUGINS.values() for k in p.knobs}


def reference_keys(runs: Path = REFERENCE_RUNS) -> set[str]:
    """Keys present in the checked-in reference runs (records, nested objects, CSV headers)."""
    found = set()
    for path in runs.rglob("*"):
        if path.suffix in (".jsonl", ".json"):
            found |= set(re.findall(r'"([a-z_0-9]+)":', path.read_text()))
        elif path.suffix == ".csv":
            found |= set(path.read_text().splitlines()[0].split(",")) if path.stat().st_size else set()
    return found


# What writes a run directory besides the record contract: the runner (metadata.json, samples.csv, ...), the JVM
# probe (probe.jsonl) and the Python servers' pool gauge (db-pool/<pid>.csv).
WRITERS = (paths.RUNNER / "crossbench", paths.RUNNER / "probes", paths.REPO / "python-contract" / "crossbench_contract")


def writers_spell() -> set[str]:
    """Every word of the writers' sources: a key they write is spelled there (a quoted JSON key or CSV column, a
    dataclass field they dump, a keyword argument)."""
    sources = (p for d in WRITERS for p in d.rglob("*") if p.suffix in (".py", ".java"))
    return {word for source in sources for word in re.findall(r"\b[a-z_][a-z_0-9]*\b", source.read_text())}


def written_outside_the_contract(runs: Path = REFERENCE_RUNS) -> set[str]:
    """Keys the reference runs hold that the writers still spell: metadata, series' columns, nested objects. A key
    a fixture holds but nothing writes any more (a stale or hand-made fixture) is not among them."""
    return reference_keys(runs) & writers_spell()


def test_every_planned_cell_has_its_run_order():
    cells = experiment.expand(experiment.apply_overrides(experiment.load("quick"), {"shuffle": True}))
    assert [c.index for c in cells] == list(range(1, len(cells) + 1))  # what the report's "#" column shows


def analysis_reads() -> set[str]:
    pattern = re.compile(r'\b(?:c|cell|r|rec|record|row|s|sample|k|knee|p|pt|meta|m)(?:\.get\(|\[)"([a-z_0-9]+)"')
    sources = (paths.REPO / "analysis" / "crossbench_analysis").rglob("*.py")
    return {key for source in sources for key in pattern.findall(source.read_text())}


TEST_ONLY = {"synthetic"}  # metadata of the synthetic runs analysis tests draw (the report bannners them)
# metadata.json's noise floor (run/metadata.py, sampling/core_speed.py), newer than the recorded fixtures: the
# report's header reads it (report/noise_words.py)
NEWER_THAN_FIXTURES = {"noise_floor", "median_ms", "core_share_percent"}


def test_analysis_reads_only_what_the_runner_writes():
    reads = analysis_reads()
    assert {"rps", "efficiency_ratio", "cell_id", "concurrency"} <= reads  # the pattern finds analysis's reads
    unknown = reads - written_keys() - written_outside_the_contract() - TEST_ONLY - NEWER_THAN_FIXTURES
    assert not unknown, f"analysis reads fields no runner writes: {sorted(unknown)}"


def test_a_key_only_a_fixture_holds_is_not_taken_for_a_written_one(tmp_path):
    """The reference runs forgive a key only where a writer still spells it: one that nothing writes any more (a
    stale or hand-made fixture) does not hide a read of it."""
    assert {"rss_mb", "git_revision", "vm_name"} <= written_outside_the_contract()  # samples.csv, metadata, probe
    run = tmp_path / "stale"
    run.mkdir()
    (run / "cells.jsonl").write_text(json.dumps({"cell_id": "c-r1", "rps": 1.0, "qps_legacy": 2.0}) + "\n")
    (run / "samples.csv").write_text("t_epoch,rss_mb,heap_legacy_mb\n1.0,2.0,3.0\n")
    assert {"qps_legacy", "heap_legacy_mb", "rps", "rss_mb"} <= reference_keys(run)
    assert written_outside_the_contract(run) == {"cell_id", "rps", "t_epoch", "rss_mb"}


def test_every_shared_field_is_documented_where_the_readme_points():
    """The README documents the record by pointing at record.py's groups and `python -m crossbench.cell.fields`:
    every group it names exists and together they are the lifecycle's fields, each with its line of documentation,
    and the listing prints every field with it."""
    readme = (paths.RUNNER / "README.md").read_text()
    section = readme[readme.index("### A cell record") :]
    section = section[: section.index("\n#", 1)]
    assert "crossbench/record/record.py" in section and "python -m crossbench.cell.fields" in section
    groups = {name: getattr(record, name) for name in ("PLANNED", "MEASURED", "DATABASE", "FAILURE", "DRIVER_DEFAULTS")}
    assert all(f"`{name}`" in section for name in groups), "the README names each group of record.py"
    assert set(record.LIFECYCLE) == {
        k for name in ("PLANNED", "MEASURED", "DATABASE", "FAILURE") for k in groups[name]
    }, "a lifecycle field outside the groups the README names"
    undocumented = [k for fields_ in groups.values() for k, doc in fields_.items() if not (doc and doc.strip())]
    assert not undocumented, f"shared fields without their line of documentation: {undocumented}"
    listed = io.StringIO()
    with redirect_stdout(listed):
        assert fields.main([]) == 0
    lines = set(listed.getvalue().splitlines())
    missing = [k for fields_ in groups.values() for k, doc in fields_.items() if f"  {k}: {doc}" not in lines]
    assert not missing, f"python -m crossbench.cell.fields does not list {missing}"


SCHEMA3 = Path(__file__).parent / "fixtures" / "schema3"  # two launches of one point and a failed cell, schema 3


def schema3_records() -> list[dict]:
    return rundir.RunDir(SCHEMA3).records()


def test_every_field_is_declared_once():
    """A driver's FIELDS repeat no lifecycle field, and take a DRIVER_DEFAULTS one only by reference (common);
    a server plug-in's FIELDS are its own."""
    lifecycle = set(record.LIFECYCLE)
    for kind, driver in DRIVERS.items():
        assert not lifecycle & set(driver.FIELDS), kind
        for name, doc in driver.FIELDS.items():
            assert doc and (name not in record.DRIVER_DEFAULTS or doc is record.DRIVER_DEFAULTS[name]), (kind, name)
    for name, plugin in servers.PLUGINS.items():
        knobs = {k.name for k in plugin.knobs if k.in_record}
        assert not (lifecycle | set(record.DRIVER_DEFAULTS) | knobs) & set(plugin.FIELDS), name
    tomcat_only = {k for k in record.LIFECYCLE if k.startswith(("tomcat_", "jvm"))}
    assert not tomcat_only, f"Tomcat's fields belong to its plug-in: {sorted(tomcat_only)}"


def test_the_checker_names_a_missing_and_an_undeclared_field_and_the_cell():
    good = schema3_records()[0]
    assert good["kind"] == "closed_loop" and fields.problems(good) == []
    bad = {k: v for k, v in good.items() if k != "efficiency_ratio"} | {"surprise_ms": 1.0}
    found = fields.problems(bad)
    assert len(found) == 2, found
    assert "efficiency_ratio" in found[0] and "missing" in found[0] and good["cell_id"] in found[0]
    assert "surprise_ms" in found[1] and "declared nowhere" in found[1] and good["cell_id"] in found[1]
    tomcat_key = good | {"tomcat_gc_count": 0}  # Tomcat's own field in a Tornado record
    assert any("tomcat_gc_count" in p for p in fields.problems(tomcat_key))
    assert any("'error'" in p and "missing" in p for p in fields.problems({**good, "status": "failed"}))


def test_a_driver_that_forgets_a_declared_field_leaves_it_missing():
    """merge fills DRIVER_DEFAULTS a driver does not declare; one it declares and forgot stays missing."""
    declared = DRIVERS["closed_loop"].FIELDS
    merged = record.merge({"rps": 1.0}, {k: None for k in declared if k != "rps_steady"}, "closed_loop", declared)
    assert "rps_steady" not in merged and "loadgen_hosts" in merged


def test_a_schema_3_run_reads_as_schema_4():
    """The loaders branch on schema_version (record.upgrade): a schema 3 record gains what schema 4 added and then
    matches the schema 4 contract; points and analysis read the run as before."""
    raw = [json.loads(line) for line in (SCHEMA3 / "cells.jsonl").read_text().splitlines()]
    assert {r["schema_version"] for r in raw} == {3} and all("db_pool_active_peak" not in r for r in raw)
    upgraded = schema3_records()
    for r in upgraded:
        assert fields.problems(r) == [], fields.problems(r)
    ok = [r for r in upgraded if r["status"] == "ok"]
    assert ok and all(r["db_pool_active_peak"] is None and r["db_pool_waiting_peak"] is None for r in ok)
    (point, failed) = points.load(SCHEMA3)
    assert point["n"] == 2 and point["figures"]["rps"]["value"] > 0 and failed["failed"] == 1
    run = load_run(SCHEMA3)
    assert len(run.cells) == 3 and not [w for w in run.warnings if "schema" in w], run.warnings
    assert record.upgrade({"schema_version": 2, "cell_id": "a-b-r3"})["point_id"] == "a-b"


def test_a_schema_4_open_loop_record_reads_its_rps_as_the_answers_inside_the_window():
    """Schema 4 counted every answer an open-loop generator waited for, late ones too, over the window (Tomcat
    with 20 threads on a 1 s delay read 42.5 req/s); schema 5 counts those inside it (rate_achieved)."""
    old = {
        "schema_version": 4,
        "cell_id": "g-p-r1",
        "status": "ok",
        "kind": "open_loop",
        "requests": 1275,
        "rps": 42.5,
        "rate_achieved": 20.0,
        "rps_method": "answers / window at the offered rate (open loop)",
    }
    new = record.upgrade(old)
    assert (new["rps"], new["rps_method"]) == (20.0, record.OPEN_LOOP_RPS_METHOD) and new["requests"] == 1275
    closed = {"schema_version": 4, "cell_id": "g-c-r1", "status": "ok", "rps": 42.5, "rate_achieved": None}
    assert record.upgrade(closed)["rps"] == 42.5
    assert record.upgrade({**old, "schema_version": 5, "rps": 19.9})["rps"] == 19.9


def test_a_schema_6_record_says_its_wrk_latency_held_wrks_synthetic_samples():
    """Schema 7 reads latency from the samples requests had; an older wrk record's figures are wrk's own, with its
    coordinated-omission correction in them: it says so (latency_method 'corrected'), so no reader takes them for
    measured ones."""
    wrk_source = (
        "wrk's latency histogram (1 us buckets): ... wrk applies its own coordinated-omission correction "
        "(stats_correct in wrk.c adds synthetic samples for latencies above 2x the expected interval)"
    )
    wrk_cell = {
        "schema_version": 6,
        "cell_id": "g-w-r1",
        "status": "ok",
        "latency_source": wrk_source,
        "latency_ms": {"mean": 0.904},
    }
    new = record.upgrade(wrk_cell)
    assert new["latency_method"] == "corrected" and new["loadgen_reported_latency_ms"] is None
    assert new["in_flight"] is None
    assert record.upgrade({**wrk_cell, "latency_ms": {"mean": None}})["latency_method"] == "none"
    http_load = "http_load's msecs/first-response: ...; it prints mean, max and min only, so p50/p90/p99 are unknown."
    assert record.upgrade({**wrk_cell, "latency_source": http_load})["latency_method"] == "summary"
    assert record.upgrade({**wrk_cell, "latency_source": "oha 1.16.0 -q RATE"})["latency_method"] == "samples"
    failed = record.upgrade({"schema_version": 6, "cell_id": "g-w-r2", "status": "failed"})
    assert "latency_method" not in failed and failed["in_flight"] is None
    assert (
        record.upgrade({**wrk_cell, "schema_version": 7, "latency_method": "recovered"})["latency_method"]
        == "recovered"
    )


def test_a_held_window_needs_one_answer_a_connection_or_thirty_in_all_and_schema_7_is_judged_again():
    """Tomcat's 1000 clients on 200 threads at 10 s answer 600 in a 30 s held window: enough (its edges cost
    nothing); a window of its own still needs 3 round trips a connection; C=1 at 10 s answers 3 in 30 s: enough."""
    from crossbench.record import metrics

    assert not metrics.few_completions(600, 1000, held=True) and metrics.few_completions(29, 1000, held=True)
    assert not metrics.few_completions(3, 1, held=True) and metrics.few_completions(0, 1, held=True)
    assert metrics.few_completions(600, 1000, held=False) and not metrics.few_completions(3000, 1000, held=False)
    held = {
        "schema_version": 7,
        "cell_id": "d-t-c1000-d10000-r1",
        "status": "ok",
        "concurrency": 1000,
        "requests": 600,
        "held_window": {"answered": 600},
        "flags": ["few_completions"],
        "valid": False,
    }
    again = record.upgrade(held)
    assert again["flags"] == [] and again["valid"] is True
    short = record.upgrade({**held, "requests": 20})
    assert short["flags"] == ["few_completions"] and short["valid"] is False
    other = record.upgrade({**held, "flags": ["few_completions", "timeouts"]})
    assert other["flags"] == ["timeouts"] and other["valid"] is False
    unheld = {**held, "held_window": None}
    assert record.upgrade(unheld)["flags"] == ["few_completions"]
    assert record.upgrade({**held, "schema_version": 8})["flags"] == ["few_completions"]  # current: as recorded


def test_a_schema_8_record_reads_with_the_capacity_connection_fields():
    """Schema 9: target_ms on every record, tcp_opens_in_window on a measured one, pool_connections on an open-loop
    one (its concurrency: the pool it had)."""
    old = {
        "schema_version": 8,
        "cell_id": "c-t-c1000-d200-q100-r1",
        "status": "ok",
        "rate_achieved": 99.0,
        "concurrency": 1000,
        "flags": [],
        "valid": True,
    }
    again = record.upgrade(old)
    assert again["target_ms"] is None and again["tcp_opens_in_window"] is None
    assert again["pool_connections"] == 1000
    closed = record.upgrade({k: v for k, v in old.items() if k != "rate_achieved"})
    assert "pool_connections" not in closed and closed["tcp_opens_in_window"] is None
    failed = record.upgrade({**old, "status": "failed"})
    assert failed["target_ms"] is None and "tcp_opens_in_window" not in failed


def test_the_field_list_prints_every_declared_field(capsys):
    assert fields.main([]) == 0
    out = capsys.readouterr().out
    for owner, declared in fields.owners().items():
        assert f"{owner}:" in out and all(f"  {name}: " in out for name in declared), owner


def test_the_live_tests_record_reader_holds_current_records_to_the_contract(tmp_path):
    """testkit.records, which every live test reads its run with, fails on a current record that breaks the
    contract, naming the field and the cell; records of older schemas (the analysis fixtures) it leaves alone."""
    from testkit import records

    good = {**schema3_records()[0], "schema_version": record.SCHEMA_VERSION}
    cells = tmp_path / "cells.jsonl"
    cells.write_text(json.dumps(good) + "\n")
    assert records(tmp_path) == [good]
    broken = {k: v for k, v in good.items() if k != "rps_steady"}
    cells.write_text(json.dumps(broken) + "\n" + json.dumps({**broken, "schema_version": 3}) + "\n")
    with pytest.raises(AssertionError, match=rf"{good['cell_id']}.*'rps_steady'.*missing") as failed:
        records(tmp_path)
    assert str(failed.value).count("rps_steady") == 1  # the schema 3 copy is not held to schema 4

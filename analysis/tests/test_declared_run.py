"""A run with a declared server, read by the analysis: its recorded declaration registers the server's facts by
name (its knobs, labels, palette and pools, as for a built-in server), though the paths it names are not on this
machine, and without its plug-in: reading a run starts nothing."""

from __future__ import annotations

import json

import pytest

from crossbench import known_servers, servers
from crossbench.server_facts import DECLARED_PALETTE, declared_facts
from crossbench_analysis.charts.kit_labels import label_fields, palette
from crossbench_analysis.read.runinfo import load_run
from crossbench_analysis.read.setting import pool_size, setting, sweeps_pool

DECLARATION = {
    "command": ["serve", "--port", "{port}", "--threads", "{threads}"],
    "workdir": "/nowhere/on/this/host",
    "env": {},
    "runtime": "other",
    "endpoints": ["/hello"],
    "ready": {"path": "/hello", "timeout_s": 5.0},
    "stop": {"signal": "TERM", "grace_s": 5.0},
    "processes": None,
    "parallel": {},
    "like": None,
    "knobs": {"threads": {"default": 10, "values": [10, 50], "at_most": None}},
}
SETTING = "mine threads=50"  # as its plug-in described the cell when the run was made


@pytest.fixture(autouse=True)
def only_built_in():
    servers.forget_declared()
    yield
    servers.forget_declared()


def run_dir(tmp_path, config: dict):
    (tmp_path / "metadata.json").write_text(json.dumps({"config": config}))
    (tmp_path / "cells.jsonl").write_text(
        json.dumps({"cell_id": "g-mine-threads50-hello-c1-r1", "server": "mine", "threads": 50, "setting": SETTING})
        + "\n"
    )
    return tmp_path


def test_reading_a_run_registers_its_declared_servers_facts_not_their_plug_ins(tmp_path):
    run = load_run(run_dir(tmp_path, {"name": "x", "server": {"mine": DECLARATION}}))
    assert known_servers.get("mine") == declared_facts("mine", DECLARATION) and not run.warnings
    assert "mine" not in servers.PLUGINS
    assert setting(run.cells[0]) == SETTING
    assert [name for name, _ in label_fields("mine")][1] == "threads" and palette("mine")[0] == DECLARED_PALETTE[0]


def test_a_declaration_the_analysis_cannot_read_is_a_warning_not_a_failure(tmp_path):
    run = load_run(run_dir(tmp_path, {"name": "x", "server": {"mine": {**DECLARATION, "runtime": "ruby"}}}))
    assert known_servers.get("mine") is None and setting(run.cells[0]) == SETTING
    assert palette("mine")[0] != DECLARED_PALETTE[0]
    assert any("[server.mine] runtime: one of jvm, python, other" in w for w in run.warnings), run.warnings


def test_a_declared_servers_pool_knob_is_the_pool_the_maxthreads_family_sweeps(tmp_path):
    declaration = {**DECLARATION, "endpoints": ["/delay/sync", "/hello"], "parallel": {"/delay/sync": "threads"}}
    load_run(run_dir(tmp_path, {"name": "x", "server": {"mine": declaration}}))
    blocking = {"server": "mine", "threads": 50, "endpoint": "/delay/sync"}
    assert pool_size(blocking) == 50 and sweeps_pool(blocking)
    other = {**blocking, "endpoint": "/hello"}  # no knob caps it: not a pool's cell
    assert pool_size(other) is None and not sweeps_pool(other)
    tomcat = {"server": "tomcat", "max_threads": 20, "executor": "platform", "endpoint": "/hello"}
    assert pool_size(tomcat) == 20 and pool_size({**tomcat, "executor": "virtual"}) is None
    assert pool_size({"server": "tornado", "processes": 1, "endpoint": "/delay/sync"}) is None

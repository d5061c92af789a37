"""The interpreter experiment's planning: python = "all" (and "3.12+") as the interpreters found from the suite's
lowest, the plan's one line on free-threaded builds, and the interpreter each server process reports of itself."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from crossbench import pyenvs, servers
from crossbench.plan import experiment
from crossbench.pyenvs import Interpreter
from crossbench.run.plan_notes import threads_note
from crossbench.servers import python_runtime

FOUND = (
    Interpreter(Path("/opt/py/3.10/bin/python3.10"), "3.10.13"),
    Interpreter(Path("/usr/bin/python3.11"), "3.11.2"),
    Interpreter(Path("/opt/py/3.11/bin/python3.11"), "3.11.7"),
    Interpreter(Path("/opt/py/3.12/bin/python3.12"), "3.12.1"),
    Interpreter(Path("/opt/py/3.13/bin/python3.13"), "3.13.0"),
)
THREADED = (*FOUND, Interpreter(Path("/opt/py/3.13t/bin/python3.13t"), "3.13.1", free_threaded=True))


def asked(plugin, section: dict) -> list[str]:
    return [settings["python"] for settings in plugin.variants(section)]


def test_all_is_every_interpreter_found_from_the_suites_lowest_and_a_plus_from_its_version(monkeypatch):
    monkeypatch.setattr(pyenvs, "installed", lambda: THREADED)
    tornado = servers.get("tornado")
    assert pyenvs.lowest_supported() == (3, 11)  # 3.10 is found but older than the suite supports
    assert asked(tornado, {"python": "all"}) == ["3.11", "3.12", "3.13", "3.13t"]
    assert asked(tornado, {"python": "3.13+"}) == ["3.13", "3.13t"]
    assert asked(tornado, {"python": ["3.12", "3.13+"]}) == ["3.12", "3.13", "3.13t"]
    assert asked(tornado, {"python": "3.12"}) == ["3.12"]  # a version is itself
    gunicorn = servers.get("gunicorn")
    both = gunicorn.variants({"python": "all", "workers": [1, 3]})
    assert len(both) == 8 and {s["workers"] for s in both} == {1, 3}  # crossed with the other sweeps


def test_all_with_no_interpreter_from_there_up_is_one_line_with_those_found(monkeypatch):
    monkeypatch.setattr(pyenvs, "installed", lambda: FOUND[:1])
    with pytest.raises(servers.CannotRunHere) as refused:
        servers.get("tornado").variants({"python": "all"})
    message = str(refused.value)
    assert "no interpreter from 3.11 up found; found: 3.10.13" in message and "\n" not in message


def plan(name: str, monkeypatch, found) -> list:
    monkeypatch.setattr(pyenvs, "installed", lambda: found)
    return experiment.expand(experiment.apply_overrides(experiment.load(name), {"shuffle": False}))


def test_the_experiment_runs_each_point_on_every_interpreter_and_says_when_no_free_threaded_build_is_here(
    monkeypatch,
):
    cells = plan("interpreters", monkeypatch, FOUND)
    by_python = {c.settings["python"] for c in cells}
    assert by_python == {"3.11", "3.12", "3.13"}
    points = {c.point_id for c in cells}
    assert len(points) == 3 * len(
        {c.point_id.replace(f"-py{c.settings['python'].replace('.', '')}", "") for c in cells}
    )
    gthread = {c.point_id for c in cells if c.settings.get("worker_class") == "gthread"}
    assert gthread and all("-py3" in p for p in gthread)
    note = threads_note(cells)
    assert note.startswith("no free-threaded Python build (3.13t) on this machine")
    assert f"gunicorn's gthread workers, threads that can run Python at once ({len(gthread)} point(s) here)" in note


def test_where_a_free_threaded_build_is_here_its_gthread_points_are_marked(monkeypatch):
    cells = plan("interpreters", monkeypatch, THREADED)
    on_free = [c for c in cells if c.settings["python"] == "3.13t" and c.settings.get("worker_class") == "gthread"]
    assert on_free and all(
        c.describe().endswith("Python 3.13t free-threaded /db C=16 rep " + str(c.repetition)) for c in on_free
    )
    note = threads_note(cells)
    assert note.startswith(f"{len({c.point_id for c in on_free})} threaded point(s) run on a free-threaded build")


def test_a_run_whose_python_servers_name_no_interpreter_adds_no_line(monkeypatch):
    assert threads_note(plan("quick", monkeypatch, FOUND)) is None


def test_each_server_process_writes_the_interpreter_it_runs_with_and_the_record_reads_them(tmp_path, monkeypatch):
    from crossbench_contract import runtime

    assert runtime.ENV == python_runtime.RUNTIME_ENV
    monkeypatch.setenv(runtime.ENV, str(tmp_path / python_runtime.RUNTIME_DIR))
    runtime.report()  # as each process of a server does once its modules are imported
    written = tmp_path / python_runtime.RUNTIME_DIR / f"{os.getpid()}.json"
    (written.parent / "1.json").write_text(written.read_text())  # a second process of the same server
    said = python_runtime.in_server(tmp_path)
    gil = sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True
    assert said == {
        "processes": 2,
        "version": ".".join(map(str, sys.version_info[:3])),
        "free_threaded": False,
        "gil_enabled": gil,
    }
    first = sorted((tmp_path / python_runtime.RUNTIME_DIR).glob("*.json"))[0]
    first.write_text(json.dumps({**json.loads(first.read_text()), "gil_enabled": not gil}))
    assert python_runtime.in_server(tmp_path)["gil_enabled"] == "mixed"
    tornado = servers.get("tornado")
    describe = {"python": {"version": "3.12.1"}}
    assert tornado.stopped_settings(describe, tmp_path / "elsewhere")["python"]["in_server"] is None
    spec = tornado.spec(tornado.settings({}), 8123, tmp_path, cell_dir=tmp_path)
    assert spec.env[python_runtime.RUNTIME_ENV] == str(tmp_path / python_runtime.RUNTIME_DIR)

"""Python as a variable: the interpreters found, a request resolved or refused in one line, an environment per
interpreter keyed by its version and the pins' hash, and the Python plug-ins carrying the interpreter in their
cells' ids, words and records."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from crossbench import pyenvs, pyvenv, servers
from crossbench.pyenvs import Interpreter, PythonNotHere, candidates, resolve
from crossbench.pyvenv import PythonEnv
from crossbench.servers import python_runtime

FOUND = (
    Interpreter(Path("/opt/py/3.10/bin/python3.10"), "3.10.13"),
    Interpreter(Path("/usr/bin/python3.11"), "3.11.2"),
    Interpreter(Path("/opt/py/3.11/bin/python3.11"), "3.11.7"),
    Interpreter(Path("/opt/py/3.12/bin/python3.12"), "3.12.1"),
    Interpreter(Path("/opt/py/3.13t/bin/python3.13t"), "3.13.1", free_threaded=True),
)


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_candidates_are_python3_on_path_pyenv_versions_and_system_dirs_but_not_shims(tmp_path):
    on_path = executable(tmp_path / "bin" / "python3.12")
    executable(tmp_path / "bin" / "python3-config")  # not an interpreter
    executable(tmp_path / "shims" / "python3.11")  # pyenv's shim: whatever pyenv selects
    pyenv = executable(tmp_path / "pyenv" / "versions" / "3.13.0" / "bin" / "python3")
    system = executable(tmp_path / "sys" / "python3.13t")
    found = candidates(f"{tmp_path / 'bin'}:{tmp_path / 'shims'}", tmp_path / "pyenv", (tmp_path / "sys",))
    assert found == [on_path, system, pyenv]


def test_a_version_resolves_to_its_newest_patch_release_and_t_to_the_free_threaded_build():
    assert resolve("3.11", FOUND, (3, 11)).version == "3.11.7"
    assert resolve("3.13t", FOUND, (3, 11)).free_threaded
    assert FOUND[4].label == "3.13t" and FOUND[2].label == "3.11"


@pytest.mark.parametrize(
    "request_, words",
    [
        ("3.14", "no Python 3.14 on this machine"),
        ("3.13", "no Python 3.13 on this machine"),  # only its free-threaded build is here
        ("3.10", "Python 3.10 is older than the suite supports: the lowest is 3.11"),
        ("3.9", "Python 3.9 is older than the suite supports: the lowest is 3.11"),
        ("3.1x", "neither a version (3.12, or 3.13t for a free-threaded build) nor a path"),
    ],
)
def test_each_bad_request_is_one_line_naming_what_is_wrong(request_, words):
    with pytest.raises(PythonNotHere) as refused:
        resolve(request_, FOUND, (3, 11))
    message = str(refused.value)
    assert words in message and "\n" not in message, message
    if message.startswith("no Python"):
        assert "3.11.7 (/opt/py/3.11/bin/python3.11)" in message and "3.13.1t" in message  # what is here


def test_the_lowest_supported_is_the_contract_packages_requires_python():
    assert pyenvs.lowest_supported() == (3, 11)


def test_an_environment_is_keyed_by_interpreter_and_the_pins_and_lives_in_the_tools_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path / "tools"))
    pins = tmp_path / "requirements.txt"
    pins.write_text("tornado==6.5.2\n")
    one = PythonEnv(FOUND[2], (pins,))
    assert one.path == tmp_path / "tools" / "python-envs" / one.key and one.key.startswith("cpython-3.11.7-")
    assert one.key == PythonEnv(FOUND[2], (pins,)).key  # the same: found again, not rebuilt
    assert one.key != PythonEnv(FOUND[3], (pins,)).key  # another interpreter
    assert PythonEnv(FOUND[4], (pins,)).key.startswith("cpython-3.13.1t-")
    before = one.key
    pins.write_text("tornado==6.5.3\n")
    assert PythonEnv(FOUND[2], (pins,)).key != before  # a changed pin: a new environment


def test_the_suites_environment_holds_every_apps_pins():
    names = {p.parent.name for p in pyenvs.suite_requirements()}
    assert names == {"tornado-app", "gunicorn-app", "uvicorn-app"}


def test_a_pinned_package_without_a_wheel_is_named_with_the_file_that_pins_it(tmp_path):
    pins = tmp_path / "requirements.txt"
    pins.write_text("flask==3.1.3\nuvloop==0.23.0\n")
    env = PythonEnv(FOUND[4], (pins,))
    pip = (
        "Collecting flask==3.1.3\nERROR: Could not find a version that satisfies the requirement uvloop==0.23.0 "
        "(from versions: none)\nERROR: No matching distribution found for uvloop==0.23.0\n"
    )
    message = env.failure(pip)
    assert f"no wheel of uvloop==0.23.0 (pinned in {pins}) for this interpreter" in message
    assert "3.13.1t" in message and "left out of the run" in message and "\n" not in message
    assert env.failure("Collecting x\nERROR: could not install: disk full\n\n").endswith(
        "building its environment failed: ERROR: could not install: disk full"
    )


def test_an_unbuilt_environment_is_missing_and_a_failed_one_leaves_its_cells_out(tmp_path, monkeypatch):
    from crossbench.run.run_checks import unbuilt

    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path))
    monkeypatch.setattr(pyenvs, "installed", lambda: FOUND)
    plugin = servers.get("tornado")
    settings = plugin.settings({"python": "3.12"})
    with pytest.raises(pyenvs.EnvNotBuilt) as missing:  # a dry run lists it; the run builds it first
        plugin.preflight(settings)
    assert "the run builds it first" in str(missing.value) and isinstance(missing.value, servers.base.Missing)
    env = plugin.python_env(settings)
    builds = pyvenv.Builds({env.path: "Python 3.12.1: no wheel of uvloop==0.23.0"})  # this run's, nothing global
    cell = SimpleNamespace(plugin=plugin, settings=settings)  # the two fields of a cell the check reads
    with pytest.raises(servers.CannotRunHere, match="no wheel of uvloop"):
        unbuilt(builds, cell)
    unbuilt(pyvenv.Builds(), cell)  # another run's builds know nothing of it
    with pytest.raises(servers.CannotRunHere, match="older than the suite supports"):
        plugin.preflight(plugin.settings({"python": "3.10"}))


@pytest.mark.parametrize(
    "server, words",
    [
        ("tornado", "tornado Python 3.12"),
        ("uvicorn", "uvicorn Python 3.12"),
        ("gunicorn", "gunicorn 5 sync workers Python 3.12"),
    ],
)
def test_a_named_interpreter_is_in_each_python_servers_cell_id_and_setting(server, words):
    plugin = servers.get(server)
    fixed = {"workers": 5} if server == "gunicorn" else {}
    on_312, on_313t = plugin.settings({**fixed, "python": "3.12"}), plugin.settings({**fixed, "python": "3.13t"})
    assert plugin.describe(on_312) == words
    assert plugin.variant_label(on_312).endswith("-py312") and plugin.variant_label(on_313t).endswith("-py313t")
    default = plugin.settings({})
    assert "py" not in plugin.variant_label(default) and "Python" not in plugin.describe(default)
    by_path = plugin.settings({"python": "/opt/py/3.12/bin/python3.12"})  # a path: the record says which
    assert plugin.variant_label(by_path) == plugin.variant_label(default)


def test_python_is_a_sweep_option_of_every_python_server_alone():
    owners = {name for name, plugin in servers.BUILT_IN.items() if any(k.name == "python" for k in plugin.knobs)}
    assert owners == {"tornado", "gunicorn", "uvicorn"}
    assert servers.get("tornado").knob("python").sweep


def test_the_project_interpreters_facts_are_read_in_this_process():
    facts = servers.get("tornado").describe_start(servers.get("tornado").settings({}))["python"]
    assert facts["version"] == ".".join(map(str, sys.version_info[:3])) and facts["asked"] is None
    assert facts["implementation"] == sys.implementation.name
    assert facts["gil_enabled"] is (sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True)
    assert set(facts) >= {"free_threaded", "jit", "executable"}


@pytest.mark.spawns  # runs every interpreter found once
def test_another_interpreter_answers_the_same_facts_as_this_one_reads_of_itself():
    found = pyenvs.run_facts(sys.executable)
    assert found == pyenvs.own_facts()
    with pytest.raises(PythonNotHere, match="is not a Python interpreter"):
        pyenvs.run_facts("/bin/false")


@pytest.mark.spawns  # python -m venv, then pip
def test_a_build_that_fails_says_pips_last_line_and_the_runs_builds_remember_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path))
    here = Interpreter(Path(sys.executable), ".".join(map(str, sys.version_info[:3])))
    missing = tmp_path / "absent" / "requirements.txt"
    missing.parent.mkdir()
    missing.write_text("")
    env = PythonEnv(here, (missing,))
    missing.unlink()  # pip cannot open it: its last line is the reason
    monkeypatch.setattr(PythonEnv, "key", "broken")
    with pytest.raises(pyenvs.EnvBuildFailed) as failed:
        env.build()
    assert "building its environment failed" in str(failed.value) and str(missing) in str(failed.value)
    builds = pyvenv.Builds()
    builds.build(env)  # remembered, not raised: its cells are left out with the reason
    assert not env.ready() and builds.failure(env) == str(failed.value)


@pytest.mark.parametrize("server", ["tornado", "gunicorn", "uvicorn"])
def test_a_cell_on_a_named_interpreter_starts_its_environments_python_with_the_contract_on_its_path(
    server, tmp_path, monkeypatch
):
    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path))
    monkeypatch.setattr(pyenvs, "installed", lambda: FOUND)
    monkeypatch.setattr(python_runtime, "interpreter_facts", lambda python, modules, env: (("read", python),))
    plugin = servers.get(server)
    spec = plugin.spec(plugin.settings({"python": "3.12"}), 8123, tmp_path)
    env = plugin.python_env(plugin.settings({"python": "3.12"}))
    assert spec.argv[0] == str(env.python) and env.interpreter.version == "3.12.1"
    assert spec.env["PYTHONPATH"].split(":")[0] == str(pyenvs.CONTRACT)
    assert spec.describe["python"]["read"] == str(env.python) and spec.describe["python"]["asked"] == "3.12"
    default = plugin.spec(plugin.settings({}), 8123, tmp_path)
    assert default.argv[0] == sys.executable and "PYTHONPATH" not in (default.env or {})


def test_the_run_builds_each_interpreters_environment_once_and_leaves_out_only_the_one_that_failed(
    tmp_path, monkeypatch, capsys
):
    from crossbench.plan import experiment
    from crossbench.run.run_checks import without_unrunnable

    monkeypatch.setenv("CROSSBENCH_TOOLS", str(tmp_path))
    monkeypatch.setattr(pyenvs, "installed", lambda: FOUND)
    built = []

    def build(env):  # the real build needs PyPI: 3.12 fails as a missing wheel does, 3.11 is stamped
        built.append(env.interpreter.version)
        if env.interpreter.version == "3.12.1":
            raise pyenvs.EnvBuildFailed(env.failure("ERROR: No matching distribution found for uvloop==0.23.0"))
        env.path.mkdir(parents=True)
        (env.path / pyenvs.STAMP).write_text("{}")

    monkeypatch.setattr(PythonEnv, "build", build)
    config = experiment.apply_overrides(
        experiment.load("quick"),
        {
            "shuffle": False,
            "precision": False,
            "servers": ["tornado", "uvicorn"],
            "python": ["3.11", "3.12"],
            "groups": ["delay"],
            "repetitions": 1,
        },
    )
    cells = without_unrunnable(experiment.expand(config))
    assert sorted(built) == ["3.11.7", "3.12.1"]  # one build per interpreter, not per cell
    assert {c.plugin.describe(c.settings) for c in cells} == {"tornado Python 3.11", "uvicorn Python 3.11"}
    said = capsys.readouterr().err
    assert "skipping 6 cells: Python 3.12.1 (/opt/py/3.12/bin/python3.12): no wheel of uvloop==0.23.0" in said


def test_the_interpreter_asked_for_is_a_record_field_the_charts_label_their_series_by():
    from crossbench_analysis.charts.kit_labels import series_of

    plugin = servers.get("tornado")
    cells = [
        {
            "cell_id": f"c{version}",
            "server": "tornado",
            "group": "delay",
            "endpoint": "/delay/async",
            "concurrency": 20,
            "repetition": 1,
            **plugin.record_fields(plugin.settings({"python": version})),
        }
        for version in ("3.11", "3.12")
    ]
    assert [c["python"] for c in cells] == ["3.11", "3.12"]
    labels = sorted(s.label for s in series_of(cells, lambda c: 0)[0])
    assert labels == ["tornado Python 3.11", "tornado Python 3.12"]


def test_a_schema_9_record_of_a_python_server_reads_with_no_interpreter_asked_for():
    from crossbench.record import record

    old = {"schema_version": 9, "cell_id": "delay-gunicorn-w5-delay_sync-c1-d250-r1", "status": "ok"}
    assert record.upgrade({**old, "server": "gunicorn"})["python"] is None
    assert "python" not in record.upgrade({**old, "server": "tomcat"})

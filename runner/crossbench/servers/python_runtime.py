"""The interpreter a Python server runs on, as a setting: the `python` knob every Python plug-in carries.

Unset, a server runs on the interpreter of the project's environment. Set ("3.11", "3.13t", or a path; a list
runs each cell on each; "all" every interpreter the machine has that the suite supports, "3.12+" those from 3.12 up), it runs on that interpreter in an environment of its own built from the suite's pins
(pyvenv.py), with the shared contract package on its path; a version asked for by name is part of the cell's id
and its setting's words, so each interpreter is a series of its own. Every record carries the interpreter's
facts in server_settings.python, read from it with the server's own modules imported (an extension module
without free-threading support turns the GIL back on, so that is the GIL the server runs with).
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import cache
from pathlib import Path

from .. import pyenvs
from ..pyenvs import (
    CONTRACT,
    REQUEST,
    PythonNotHere,
    lowest_supported,
    own_facts,
    resolve,
    run_facts,
    suite_requirements,
)
from ..pyvenv import PythonEnv
from . import python_app
from .base import CannotRunHere, ServerPlugin, SettingsError

RUNTIME_ENV = "CROSSBENCH_PYTHON_RUNTIME"  # crossbench_contract.runtime.ENV: where each process writes its facts
RUNTIME_DIR = "python-runtime"  # in the cell's folder
ALL = "all"
FROM = re.compile(r"(\d+)\.(\d+)\+$")  # "3.12+": every interpreter found from 3.12 up


def expanded(value) -> list[str] | str | None:
    """The knob's value with "all" and "3.12+" replaced by the versions this machine has from there up (the
    suite's lowest at least), free-threaded builds as "3.13t": a list, so each is a cell of its own. PythonNotHere
    when none is found."""
    values = value if isinstance(value, list) else [value]
    if not any(str(v).strip() == ALL or FROM.match(str(v).strip()) for v in values if v):
        return value
    out: list[str] = []
    for v in values:
        out += found_from(str(v).strip()) if v and (str(v).strip() == ALL or FROM.match(str(v).strip())) else [v]
    return list(dict.fromkeys(out))


def found_from(request: str) -> list[str]:
    """The labels of the interpreters found from the version `request` names ("all": the suite's lowest)."""
    lowest = lowest_supported()
    match = FROM.match(request)
    floor = max(lowest, (int(match.group(1)), int(match.group(2)))) if match else lowest
    labels = list(dict.fromkeys(i.label for i in pyenvs.installed() if i.minor >= floor))
    if not labels:
        have = ", ".join(map(str, pyenvs.installed())) or "none"
        raise PythonNotHere(f"--python {request}: no interpreter from {floor[0]}.{floor[1]} up found; found: {have}")
    return labels


def free_threaded(settings: dict) -> bool:
    """A cell asked for a free-threaded build ("3.13t")."""
    return str(settings.get("python") or "").endswith("t")


def threaded(settings: dict) -> bool:
    """A cell whose requests run on threads of one process (gunicorn's gthread workers): where a free-threaded
    build lets them run Python at once."""
    return settings.get("worker_class") == "gthread"


def named(settings: dict) -> bool:
    """An interpreter asked for by version: part of the cell's name, so a run sets one against another. A path is
    not (its version is in the record either way)."""
    return bool(REQUEST.match(str(settings.get("python") or "")))


def label(settings: dict) -> str:
    """The cell id's part: '-py311', '-py313t'."""
    return "-py" + settings["python"].replace(".", "") if named(settings) else ""


def words(settings: dict) -> str:
    """The setting's part: ' Python 3.11', ' Python 3.13t free-threaded'."""
    if not named(settings):
        return ""
    return f" Python {settings['python']}" + (" free-threaded" if free_threaded(settings) else "")


def environment(settings: dict) -> PythonEnv | None:
    """The environment a cell runs in; None for the project's own. CannotRunHere (its cells are left out, said
    once) for an interpreter this machine lacks or one too old. A user's app (--app) has one of its own on
    whichever interpreter."""
    if python_app.given(settings):
        try:
            return python_app.environment(settings)
        except PythonNotHere as e:
            raise CannotRunHere(str(e)) from None
    if not settings.get("python"):
        return None
    try:
        return PythonEnv(resolve(settings["python"]), suite_requirements())
    except PythonNotHere as e:
        raise CannotRunHere(str(e)) from None


def check_environment(settings: dict, server: str) -> None:
    """Its environment built (else Missing: the run builds it first; a build that failed leaves its cells out
    before this check, run_checks.unbuilt)."""
    env = environment(settings)
    if env is not None:
        env.check(f"{server}'s cells")


def executable(settings: dict) -> str:
    env = environment(settings)
    return str(env.python) if env else sys.executable


def env_vars(settings: dict, cell_dir: Path | None = None) -> dict:
    """What the server's process needs beyond its command line: the contract package on its path in an
    environment of the suite's pins or of a user's app (which hold third-party packages only), and in a cell the
    folder where each of its processes writes the interpreter it runs with (crossbench_contract.runtime)."""
    out = {RUNTIME_ENV: str(cell_dir / RUNTIME_DIR)} if cell_dir else {}
    if not settings.get("python") and not python_app.given(settings):
        return out
    contract = str(CONTRACT)
    return {**out, "PYTHONPATH": os.pathsep.join(filter(None, [contract, os.environ.get("PYTHONPATH")]))}


def in_server(cell_dir: Path) -> dict | None:
    """What the server's processes wrote of their interpreter at start-up (crossbench_contract.runtime): how
    many said, and the GIL as they saw it (true or false when all agree, "mixed" otherwise); None when none
    wrote (a server on another host, or one that is not the suite's)."""
    said = []
    for path in sorted((cell_dir / RUNTIME_DIR).glob("*.json")):
        try:
            said.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    if not said:
        return None
    gil = {bool(s.get("gil_enabled")) for s in said}
    return {
        "processes": len(said),
        "version": said[0].get("version"),
        "free_threaded": bool(said[0].get("free_threaded")),
        "gil_enabled": gil.pop() if len(gil) == 1 else "mixed",
    }


def record_facts(settings: dict, modules: tuple[str, ...]) -> dict:
    """The record's server_settings.python: the interpreter's facts with `modules` imported, and the packages its
    environment holds (the project's environment: the server's own distributions are in the run's metadata)."""
    env = environment(settings)
    if env is None:  # the runner's own interpreter, with the same packages: read here, nothing started
        facts = own_facts()
    else:
        facts = dict(interpreter_facts(str(env.python), modules, tuple(sorted(env_vars(settings).items()))))
    facts["asked"] = settings.get("python")
    if env is not None and env.ready():
        facts["packages"] = env.stamp()["packages"]
    return facts


@cache
def interpreter_facts(python: str, modules: tuple[str, ...], extra_env: tuple) -> tuple:
    """run_facts once per interpreter and modules in a run (the answer does not change between cells)."""
    return tuple(run_facts(python, modules, {**os.environ, **dict(extra_env)}).items())


class PythonServer(ServerPlugin):
    """A plug-in whose server is a Python process: the `python` knob in its id, words, preflight and record. A
    plug-in that writes its own variant_label or describe adds `label` and `words` itself. It says which kinds of
    user's app (--app: python_app.py) it serves, with which of its settings, and what it runs them with."""

    app_kinds: tuple[str, ...] = ()  # the kinds of --app it serves (python_app.KINDS)
    app_distributions: tuple[str, ...] = ()  # what an app's environment needs of the suite's pins to run it

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        python_app.SERVER_DISTRIBUTIONS.update(cls.app_distributions)

    def app_settings(self, kind: str) -> dict:
        """The knobs' values it sweeps for an app of `kind` when the command line names none (gunicorn: its
        worker classes)."""
        return {}

    def variants(self, section: dict) -> list[dict]:
        """Its cells' settings, "all" or "3.12+" read as the interpreters found (expanded)."""
        if section.get("python") is None:
            return super().variants(section)
        try:
            return super().variants({**section, "python": expanded(section["python"])})
        except PythonNotHere as e:
            raise CannotRunHere(str(e)) from None

    def variant_label(self, settings: dict) -> str:
        return super().variant_label({**settings, "python": None}) + label(settings)

    def describe(self, settings: dict) -> str:
        return super().describe({**settings, "python": None}) + words(settings)

    def preflight(self, settings: dict) -> None:
        """On an interpreter of its own, its environment holds its packages; on the project's, they are checked.
        A user's app is checked first (its folder, its form, its requirements file)."""
        if python_app.given(settings):
            python_app.check(settings)
            if settings["app_kind"] and settings["app_kind"] not in self.app_kinds:
                raise SettingsError(
                    f"{self.name}: serves {' or '.join(self.app_kinds)} apps, and --app {settings['app']} is "
                    f"{settings['app_kind']}"
                )
        if settings.get("python") or python_app.given(settings):
            check_environment(settings, self.name)
        else:
            super().preflight(settings)

    def python_env(self, settings: dict) -> PythonEnv | None:
        return environment(settings)

    def reads(self, settings: dict) -> tuple[Path, ...]:
        """A user's app folder beside its environment."""
        app_dir = (Path(settings["app_dir"]).resolve(),) if python_app.given(settings) else ()
        return app_dir + super().reads(settings)

    def modules(self) -> tuple[str, ...]:
        """The modules its server imports that the interpreter's facts are read after (its tools)."""
        return tuple(t.what.removeprefix("python:") for t in self.tools if t.what.startswith("python:"))

    def describe_start(self, settings: dict) -> dict:
        """A start's server_settings: its knobs and the interpreter's facts."""
        modules = self.modules()[:1] if python_app.given(settings) else self.modules()  # the server's own
        return {**settings, "python": record_facts(settings, modules)}

    def spec_extras(self, settings: dict, work_dir, spec_kwargs: dict) -> dict:
        """What a start of a user's app adds to its ServerSpec: its folder as the working directory and first on
        the path, no bytecode written there, and ready once it answers at all (the app need not serve /hello)."""
        if not python_app.given(settings):
            return spec_kwargs
        env = python_app.server_env(settings, work_dir, spec_kwargs.get("env", {}))
        return {**spec_kwargs, "env": env, "workdir": Path(settings["app_dir"]), "ready_any_answer": True}

    def stopped_settings(self, describe: dict, cell_dir: Path) -> dict:
        """server_settings with what the server's own processes said of their interpreter at start-up:
        python.in_server (its GIL as the server saw it, beside the one read with its modules imported)."""
        if not isinstance(describe.get("python"), dict):
            return describe
        return {**describe, "python": {**describe["python"], "in_server": in_server(cell_dir)}}

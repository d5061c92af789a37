"""A user's own Python app served by the suite's Python servers: `--app MODULE:CALLABLE --app-dir DIR
[--requirements FILE]`, the knobs gunicorn, uvicorn and Tornado share (builtin_servers.APP_KNOBS).

The app runs in a virtual environment of its own, built from the user's requirements and the suite's pins of the
servers that serve it (each Python plug-in's app_distributions), cached like every Python environment by the interpreter and the hash of
those inputs (pyvenv.py), never the suite's own. What kind of app it is (WSGI, ASGI, a Tornado Application or a
function that makes one) is read by importing it once in that environment (`kind`): each plug-in says which kinds
it serves and with which of its settings (PythonServer.app_kinds, app_settings). The app's folder is the servers' working directory and first on their path; nothing is
written in it (the bytecode cache goes to the cell's folder: PYTHONPYCACHEPREFIX).
"""

from __future__ import annotations

import os
import re
import subprocess
from functools import cache
from pathlib import Path

from ..pyenvs import Interpreter, own_facts, resolve, suite_requirements
from ..pyvenv import PythonEnv
from ..refusal import Refusal

# The kinds of app the probe tells apart: these two, and a Tornado Application (named by the plug-in that serves it).
WSGI, ASGI = "wsgi", "asgi"
# The suite's pinned packages every app environment holds, by their distribution names: what each Python plug-in
# runs a user's app with (PythonServer.app_distributions, gathered as each plug-in class is defined).
SERVER_DISTRIBUTIONS: set[str] = set()

DEFAULT_REQUIREMENTS = "requirements.txt"  # in the app's folder, used when --requirements is not given
PROBE_TIMEOUT_S = 120.0


# Run by the app's interpreter in its folder (first on its path, as `python -c` puts it): imports MODULE, finds CALLABLE, prints its kind and whether it is a
# factory (a function of no arguments, called once here to see what it makes), or exits 3 with the one line that
# says why not. Nothing of the suite is imported: only the app's environment is there.
PROBE = r"""
import inspect, sys, traceback
spec = sys.argv[1]
module_name, _, name = spec.partition(":")
name = name.removesuffix("()")
try:
    import importlib
    target = importlib.import_module(module_name)
except BaseException as e:
    last = traceback.format_exception_only(type(e), e)[-1].strip()
    print(f"{module_name} does not import: {last}")
    sys.exit(3)
for part in name.split("."):
    if not hasattr(target, part):
        print(f"{module_name} imports, but has no {name}")
        sys.exit(3)
    target = getattr(target, part)


def tornado_app(obj):
    web = sys.modules.get("tornado.web")
    return web is not None and isinstance(obj, web.Application)


def is_async(obj):
    return inspect.iscoroutinefunction(obj) or inspect.iscoroutinefunction(getattr(obj, "__call__", None))


def required(obj):
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return None
    return sum(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def kind(obj):
    if tornado_app(obj):
        return "tornado"
    if not callable(obj) or inspect.isclass(obj):
        return None
    if is_async(obj) or required(obj) == 3:
        return "asgi"
    if required(obj) == 2:
        return "wsgi"
    return None


found, factory = kind(target), False
if found is None and callable(target) and required(target) == 0:
    made = target()
    found, factory = kind(made), True
if found is None:
    print(f"{spec} is neither a WSGI app, an ASGI app nor a Tornado Application (nor a function making one)")
    sys.exit(3)
print(found, "factory" if factory else "app")
"""


class AppRefused(Refusal, ValueError):
    """An app that cannot be served: its spec, folder or requirements wrong, or it does not import."""


def given(settings: dict) -> bool:
    return bool(settings.get("app"))


def check(settings: dict) -> None:
    """What can be known wrong without its environment: the spec's form, the folder, the requirements file."""
    app, folder = settings.get("app"), settings.get("app_dir")
    module, colon, name = str(app).partition(":")
    if not colon or not re.fullmatch(r"[\w.]+", module) or not re.fullmatch(r"[\w.]+(\(\))?", name):
        raise AppRefused(f"--app {app}: expected MODULE:CALLABLE (e.g. myapp.web:app), a module and a name with a :")
    if not folder:
        raise AppRefused(f"--app {app}: name the folder it imports from with --app-dir")
    if not Path(folder).is_dir():
        raise AppRefused(f"--app-dir {folder}: no such folder")
    requirements = settings.get("requirements")
    if requirements and not Path(requirements).is_file():
        raise AppRefused(f"--requirements {requirements}: no such file")


def requirements(settings: dict) -> Path | None:
    """The app's requirements file: --requirements, else requirements.txt in its folder, else none."""
    if settings.get("requirements"):
        return Path(settings["requirements"])
    default = Path(settings["app_dir"]) / DEFAULT_REQUIREMENTS
    return default if default.is_file() else None


@cache
def server_pins() -> tuple[str, ...]:
    """The suite's pins (its apps' requirements files) of SERVER_DISTRIBUTIONS, as pip requirement lines."""
    pins = {}
    for path in suite_requirements():
        for line in path.read_text().splitlines():
            name = re.split(r"[=<>!~\[; ]", line.strip(), maxsplit=1)[0].lower()
            if name in SERVER_DISTRIBUTIONS:
                pins[name] = line.strip()
    return tuple(pins[name] for name in sorted(pins))


def factory(app: str) -> bool:
    """MODULE:CALLABLE() names a function that makes the app (gunicorn's form), called once in each worker."""
    return app.endswith("()")


def target(app: str) -> str:
    """MODULE:CALLABLE without the call."""
    return app.removesuffix("()")


@cache
def own_interpreter() -> Interpreter:
    """The interpreter under the project's environment (read in this process): an app's environment is its own,
    never the project's."""
    facts = own_facts()
    return Interpreter(Path(facts["executable"]), facts["version"], facts["implementation"], facts["free_threaded"])


def environment(settings: dict) -> PythonEnv:
    interpreter = resolve(settings["python"]) if settings.get("python") else own_interpreter()
    found = requirements(settings)
    return PythonEnv(interpreter, (found,) if found else (), pins=server_pins())


def kind(settings: dict, python: Path | str) -> tuple[str, bool]:
    """The app's kind and whether CALLABLE is a factory (a function of no arguments that makes the app), read by importing it once with `python` in its folder
    (no bytecode written there); AppRefused with the one line that says why it cannot be served."""
    try:
        done = subprocess.run(
            [os.path.abspath(python), "-c", PROBE, settings["app"]],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            cwd=settings["app_dir"],
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise AppRefused(f"--app {settings['app']}: importing it took over {PROBE_TIMEOUT_S:g} s") from None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        said = lines[-1] if lines else (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise AppRefused(f"--app {settings['app']}: {said}")
    found, made = lines[-1].split()
    return found, made == "factory"


def server_env(settings: dict, work_dir: Path, env: dict) -> dict:
    """A server's environment `env` with what the app needs: its folder first on the path, no bytecode written
    there."""
    path = os.pathsep.join(filter(None, [str(settings["app_dir"]), env.get("PYTHONPATH")]))
    return {**env, "PYTHONPATH": path, "PYTHONPYCACHEPREFIX": str(work_dir / "pycache")}

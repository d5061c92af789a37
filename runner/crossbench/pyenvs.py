"""The Python interpreters on this machine and a virtual environment per interpreter built from pinned requirements.

Interpreters are found on PATH (python3, python3.X, python3.Xt), under pyenv's versions and in the system's
directories; a request ("3.11", "3.13t" for a free-threaded build, or a path) picks one. An environment is built
once per interpreter and set of requirement files into the tools cache, keyed by the interpreter's version and
the files' hash, from wheels only: a pinned package with no wheel for that interpreter is a clear refusal, not a
compile. The suite's own servers use the apps' requirements (`suite_requirements`); a user's app brings its own
file and gets an environment the same way. Facts about an interpreter (version, implementation, free-threaded
build, whether the GIL is on once the server's modules are imported, the JIT) come from running it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from . import paths
from .refusal import Missing, Refusal

PYENV_ROOT = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
SYSTEM_DIRS = (Path("/usr/bin"), Path("/usr/local/bin"))
NAME = re.compile(r"python3(\.\d+t?)?$")
REQUEST = re.compile(r"(\d+)\.(\d+)(t?)$")
STAMP = "crossbench-env.json"  # written last: an environment without it is unfinished and built again
CONTRACT = paths.REPO / "python-contract"

# What an interpreter says about itself, as source: run by another interpreter after importing the modules named on
# its command line (an extension module without free-threading support turns the GIL back on when imported), or
# in this process for its own.
FACTS = r"""
import json, os, platform, sys, sysconfig


def facts():
    config = sysconfig.get_config_var("CONFIG_ARGS") or ""
    jit = getattr(sys, "_jit", None)
    if jit is not None:
        jit_on = jit.is_enabled()
    elif "--enable-experimental-jit=yes-off" in config or "--enable-experimental-jit=interpreter" in config:
        jit_on = os.environ.get("PYTHON_JIT") == "1"
    else:
        jit_on = ("--enable-experimental-jit" in config and "--enable-experimental-jit=no" not in config
                  and os.environ.get("PYTHON_JIT") != "0")
    gil = getattr(sys, "_is_gil_enabled", None)
    return {"version": platform.python_version(), "implementation": sys.implementation.name,
            "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
            "gil_enabled": gil() if gil else True, "jit": bool(jit_on),
            "executable": os.path.realpath(sys.executable)}
"""
IMPORT_THEN_PRINT = """
import importlib
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(facts()))
"""


class PythonNotHere(Refusal, RuntimeError):
    """An interpreter asked for that this machine lacks, or one older than the suite supports."""


class EnvNotBuilt(Missing, RuntimeError):
    """An environment the run builds before its first cell (a dry run says so and builds nothing)."""


class EnvBuildFailed(Refusal, RuntimeError):
    """An environment that could not be built: a pinned package with no wheel for the interpreter, or pip's
    failure (its last line)."""


@dataclass(frozen=True)
class Interpreter:
    path: Path  # the real executable
    version: str  # "3.11.7"
    implementation: str = "cpython"
    free_threaded: bool = False

    @property
    def minor(self) -> tuple[int, int]:
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)

    @property
    def label(self) -> str:
        """'3.11', or '3.13t' for a free-threaded build: what a request names."""
        return "{}.{}".format(*self.minor) + ("t" if self.free_threaded else "")

    def __str__(self) -> str:
        return f"{self.version}{'t' if self.free_threaded else ''} ({self.path})"


def lowest_supported() -> tuple[int, int]:
    """The oldest Python the suite's servers run on: the shared contract package's requires-python."""
    text = (CONTRACT / "pyproject.toml").read_text()
    match = re.search(r'requires-python\s*=\s*">=\s*(\d+)\.(\d+)', text)
    return (int(match.group(1)), int(match.group(2))) if match else (3, 0)


def run_facts(python: Path | str, modules: tuple[str, ...] = (), env: dict | None = None) -> dict:
    """The interpreter's own account of itself after importing `modules` (FACTS); PythonNotHere when it does not
    run or answers nothing readable."""
    try:
        done = subprocess.run(
            [str(python), "-s", "-c", FACTS + IMPORT_THEN_PRINT, *modules],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        if done.returncode == 0:
            return json.loads(done.stdout.strip().splitlines()[-1])
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
        last = str(e)
    raise PythonNotHere(f"{python} is not a Python interpreter this suite can use ({last})")


def own_facts() -> dict:
    """FACTS for the interpreter running this process, read without starting another."""
    namespace: dict = {}
    exec(FACTS, namespace)  # the same source another interpreter runs: one account of the facts
    return namespace["facts"]()


def interpreter_at(path: Path | str) -> Interpreter:
    facts = run_facts(path)
    return Interpreter(Path(facts["executable"]), facts["version"], facts["implementation"], facts["free_threaded"])


def candidates(
    path_env: str | None = None, pyenv_root: Path = PYENV_ROOT, system_dirs: tuple[Path, ...] = SYSTEM_DIRS
) -> list[Path]:
    """Executables that may be Python 3 interpreters: python3* on PATH (pyenv's shims left out: they run whatever
    pyenv selects, and its versions are read directly), pyenv's versions and the system's directories."""
    dirs = [
        Path(d)
        for d in (path_env if path_env is not None else os.environ.get("PATH", "")).split(os.pathsep)
        if d and "shims" not in Path(d).parts
    ]
    found = [
        p
        for d in [*dirs, *system_dirs]
        if d.is_dir()
        for p in sorted(d.iterdir())
        if NAME.match(p.name) and os.access(p, os.X_OK) and p.is_file()
    ]
    versions = pyenv_root / "versions"
    if versions.is_dir():
        found += [v / "bin" / "python3" for v in sorted(versions.iterdir()) if (v / "bin" / "python3").is_file()]
    return list(dict.fromkeys(found))


@cache
def installed() -> tuple[Interpreter, ...]:
    """Every distinct Python 3 interpreter found, oldest first: each executable run once, all at once (their
    start-ups overlap, so --dry-run stays quick)."""
    paths_ = list(dict.fromkeys(Path(os.path.realpath(p)) for p in candidates()))
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(interpreter_or_none, paths_))
    found = {i.path: i for i in answers if i is not None and i.minor >= (3, 0)}
    return tuple(sorted(found.values(), key=lambda i: (i.minor, i.free_threaded, i.version, str(i.path))))


def interpreter_or_none(path: Path) -> Interpreter | None:
    try:
        return interpreter_at(path)
    except PythonNotHere:
        return None


def resolve(
    request: str, found: tuple[Interpreter, ...] | None = None, lowest: tuple[int, int] | None = None
) -> Interpreter:
    """The interpreter a request names: a path to one, or a version ("3.12", "3.13t": free-threaded), the newest
    patch release found of it. PythonNotHere, in one line, for a request that is neither, a version this machine
    lacks (with the ones it has) or one older than the suite supports (with the lowest)."""
    lowest = lowest or lowest_supported()
    if os.sep in request:
        interpreter = interpreter_at(request)
        too_old(interpreter.minor, f"{request} is Python %d.%d, which is" % interpreter.minor, lowest)
        return interpreter
    match = REQUEST.match(request.strip())
    if not match:
        raise PythonNotHere(
            f"--python {request}: neither a version (3.12, or 3.13t for a free-threaded build) "
            "nor a path to an interpreter"
        )
    wanted, threaded = (int(match.group(1)), int(match.group(2))), bool(match.group(3))
    too_old(wanted, f"Python {request} is", lowest)
    found = installed() if found is None else found
    matches = [i for i in found if i.minor == wanted and i.free_threaded == threaded]
    if not matches:
        have = ", ".join(map(str, found)) or "none"
        raise PythonNotHere(
            f"no Python {request} on this machine (PATH, {PYENV_ROOT}/versions, "
            f"{', '.join(map(str, SYSTEM_DIRS))}); found: {have}"
        )
    return matches[-1]


def too_old(minor: tuple[int, int], what: str, lowest: tuple[int, int]) -> None:
    if minor < lowest:
        raise PythonNotHere(
            f"{what} older than the suite supports: the lowest is {lowest[0]}.{lowest[1]} "
            "(python-contract's requires-python)"
        )


FREE_THREADED_MATTERS = "gunicorn's gthread workers, threads that can run Python at once"


def no_free_threaded(threaded_points: int) -> str:
    """The one line a plan and its findings say when the machine has no free-threaded build (3.13t)."""
    which = f" ({threaded_points} point(s) here)" if threaded_points else ""
    return (
        f"no free-threaded Python build (3.13t) on this machine: every Python cell runs with the GIL; one would "
        f"matter to {FREE_THREADED_MATTERS}{which}"
    )


def suite_requirements() -> tuple[Path, ...]:
    """The pins every Python server of the suite runs with: each app folder's requirements.txt."""
    return tuple(sorted(paths.REPO.glob("*-app/requirements.txt")))


def cache_root() -> Path:
    tools = Path(os.environ.get("CROSSBENCH_TOOLS") or Path.home() / ".cache" / "crossbench" / "tools")
    return tools / "python-envs"

"""A virtual environment for one interpreter and one set of pinned requirement files, built once into the tools cache.

The environment's folder is named by the interpreter (implementation, version, free-threaded or not) and a hash of
the requirement files' contents, so a run finds the one it needs and never builds it twice; changing a pin makes a
new one. It is built from wheels only (`pip --only-binary=:all:`): a pinned package without a wheel for the
interpreter is refused naming the package, never compiled for minutes. A build takes a lock beside the folder, so
two runs wanting the same one build it once; the stamp written last marks it finished.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .pyenvs import STAMP, EnvBuildFailed, EnvNotBuilt, Interpreter, cache_root, installed, resolve, suite_requirements
from .refusal import Refusal

NO_WHEEL = re.compile(r"No matching distribution found for (\S+)")
PIP_TIMEOUT_S = 1800


@dataclass(frozen=True)
class PythonEnv:
    interpreter: Interpreter
    requirements: tuple[Path, ...]  # pip requirement files, installed together
    pins: tuple[str, ...] = ()  # requirement lines installed with them (a user's app: the suite's server pins)

    @property
    def key(self) -> str:
        digest = hashlib.sha256()
        for path in self.requirements:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        for line in self.pins:
            digest.update(line.encode() + b"\0")
        threaded = "t" if self.interpreter.free_threaded else ""
        return f"{self.interpreter.implementation}-{self.interpreter.version}{threaded}-{digest.hexdigest()[:12]}"

    @property
    def path(self) -> Path:
        return cache_root() / self.key

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def ready(self) -> bool:
        return (self.path / STAMP).is_file()

    def stamp(self) -> dict:
        """What the finished build recorded: the interpreter, the requirement files and every package's version."""
        return json.loads((self.path / STAMP).read_text())

    def check(self, purpose: str) -> None:
        """Before the run's cells: EnvNotBuilt when no build has been made yet (the run makes it first; a dry run
        says so)."""
        if not self.ready():
            now = "" if self.pins else f", or now: .venv/bin/python -m crossbench.pyvenv {self.interpreter.label}"
            raise EnvNotBuilt(
                f"the Python {self.interpreter.label} environment for {purpose} ({self.path}): the run "
                f"builds it first (a minute or two, from PyPI){now}"
            )

    def build(self) -> None:
        """Builds it unless built; EnvBuildFailed with the reason in one line."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.key + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.ready():
                return
            self._build()

    def _build(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)  # an unfinished build: no stamp
        made = subprocess.run(
            [str(self.interpreter.path), "-m", "venv", str(self.path)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=300,
        )
        if made.returncode != 0:
            raise EnvBuildFailed(f"Python {self.interpreter}: python -m venv failed: {last_line(made)}")
        log = self.path / "pip-install.log"
        command = [
            str(self.python),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--only-binary=:all:",
            *(f"--requirement={r}" for r in self.requirements),
            *self.pins,
        ]
        with open(log, "w") as out:
            pip = subprocess.run(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=PIP_TIMEOUT_S
            )
        if pip.returncode != 0:
            raise EnvBuildFailed(self.failure(log.read_text(errors="replace")))
        frozen = subprocess.run(
            [str(self.python), "-m", "pip", "freeze", "--all"], capture_output=True, text=True, timeout=120
        )
        packages = dict(line.split("==", 1) for line in frozen.stdout.splitlines() if "==" in line)
        (self.path / STAMP).write_text(
            json.dumps(
                {
                    "interpreter": str(self.interpreter.path),
                    "version": self.interpreter.version,
                    "free_threaded": self.interpreter.free_threaded,
                    "requirements": [str(r) for r in self.requirements],
                    "pins": list(self.pins),
                    "packages": packages,
                },
                indent=1,
            )
            + "\n"
        )

    def failure(self, pip_output: str) -> str:
        """The one line a failed install is refused with: the pinned package without a wheel for this interpreter
        and the file that pins it, else pip's last line."""
        missing = NO_WHEEL.search(pip_output)
        if missing:
            requirement = missing.group(1)
            name = re.split(r"[=<>!~\[; ]", requirement, maxsplit=1)[0]
            pinned_in = [
                str(r) for r in self.requirements if re.search(rf"(?im)^\s*{re.escape(name)}\b", r.read_text())
            ]
            where = f" (pinned in {', '.join(pinned_in)})" if pinned_in else ""
            return (
                f"Python {self.interpreter}: no wheel of {requirement}{where} for this interpreter on the "
                "package index: its cells are left out of the run"
            )
        lines = [line.strip() for line in pip_output.splitlines() if line.strip()]
        return f"Python {self.interpreter}: building its environment failed: {lines[-1] if lines else 'no output'}"


@dataclass
class Builds:
    """The environment builds of one run, handed from the step that builds them to the checks that leave out the
    cells of one that failed: each failed build's folder and its one-line reason."""

    failed: dict[Path, str] = field(default_factory=dict)

    def build(self, env: PythonEnv) -> None:
        """env.build(); a failure is remembered here and not raised (its cells are left out with its reason)."""
        try:
            env.build()
        except EnvBuildFailed as e:
            self.failed[env.path] = str(e)

    def failure(self, env: PythonEnv | None) -> str | None:
        """Why `env` cannot be used in this run (its build failed), or None."""
        return self.failed.get(env.path) if env is not None else None


def last_line(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in (done.stderr or done.stdout or "").splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"exit status {done.returncode}"


def main(argv: list[str]) -> int:
    """`python -m crossbench.pyvenv [VERSION|PATH ...]`: the interpreters found, and the suite's environment
    built for each one named."""
    for interpreter in installed():
        print(f"found: Python {interpreter}")
    status = 0
    for request in argv:
        try:
            env = PythonEnv(resolve(request), suite_requirements())
            env.build()
            print(f"ready: {env.path}")
        except Refusal as e:
            print(f"pyvenv: {e}", file=sys.stderr)
            status = Refusal.exit_code
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

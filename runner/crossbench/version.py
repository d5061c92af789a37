"""The project's version, for every command's --version and each run's metadata: the package's version and the git
revision the code runs from (+uncommitted when the work tree differs from it)."""

from __future__ import annotations

import argparse
import importlib.metadata
import subprocess
import tomllib

from crossbench import paths

PACKAGE = "crossbench-runner"


def git_revision() -> str:
    try:
        rev = subprocess.run(
            ["git", "-C", str(paths.REPO), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(paths.REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return (rev + ("+uncommitted" if dirty else "")) or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def package_version() -> str:
    """The installed package's version, else (run from the source tree, before the environment is made) the one
    runner/pyproject.toml declares."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        return tomllib.loads((paths.RUNNER / "pyproject.toml").read_text())["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


def text() -> str:
    """One line: 'crossbench 0.1.0 (git 1a2b3c4d5e6f)'."""
    rev = git_revision()
    return f"crossbench {package_version()} (git {rev[:12]}{'+uncommitted' if rev.endswith('+uncommitted') else ''})"


class VersionAction(argparse.Action):
    """--version: prints text() and exits 0; git is asked only when the option is given."""

    def __init__(
        self,
        option_strings,
        dest=argparse.SUPPRESS,
        default=argparse.SUPPRESS,
        help="print the version (the package's and the git revision) and exit",
    ):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(text())
        parser.exit()


def add_option(parser) -> None:
    parser.add_argument("--version", action=VersionAction)

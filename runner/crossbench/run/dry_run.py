"""--dry-run: the plan, its cells one a line, and what this machine lacks to run it (a pinned generator not built,
the Tomcat build, a tool a server or a kind of cell needs), each with the command that brings it. Nothing is
installed, built, started or written; run_all.sh adds the Debian packages and the Python environment, which it
checks itself. It runs on the standard library alone, so a fresh clone answers it before any set-up."""

from __future__ import annotations

import sys

from crossbench.refusal import Missing, Refusal

from .run_checks import checks, unbuilt_generators

INSTALL_GENERATOR = "./runner/install-openloop.sh"


def findings(run, cells) -> tuple[list[str], list[str]]:
    """What the checks before the first cell find, each said once in the order they run: (missing, refused).
    Missing: the pinned generators the run would build first and what a command installs (Missing); refused:
    every other refusal, which no installation lifts."""
    missing = [
        f"{tool}, pinned, for {needing} cell(s): the run builds it first (minutes on 2 cores), or now: "
        f"{INSTALL_GENERATOR} {tool} (with --dry-run: what building it needs)"
        for tool, needing in unbuilt_generators(cells).items()
    ]
    refused = []
    for check in checks(run, cells):
        try:
            check()
        except Missing as e:
            missing.append(str(e))
        except Refusal as e:
            refused.append(str(e))
    return list(dict.fromkeys(missing)), list(dict.fromkeys(refused))


def show(run, todo) -> int:
    """The cells still to run, one a line on stdout; what is missing and what the run would refuse, one a line on
    stderr. The exit status: 2 when the run would be refused whatever is installed, else 0."""
    for cell in todo:
        print(f"  {cell.cell_id}: {cell.describe()}")
    missing, refused = findings(run, todo) if todo else ([], [])
    for line in missing:
        print(f"run_all: missing: {line}", file=sys.stderr)
    for line in refused:
        print(f"run_all: refused: {line}", file=sys.stderr)
    return Refusal.exit_code if refused else 0

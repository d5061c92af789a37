"""Where things are in the repository and in Maven's build output."""

from __future__ import annotations

import os
from pathlib import Path

from crossbench.refusal import Missing

REPO = Path(__file__).resolve().parents[2]
RUNNER = REPO / "runner"
SERVLET_TARGET = REPO / "java-servlet" / "target"
WEBAPP_DIR = SERVLET_TARGET / "crossbench"  # Maven's exploded WAR
STATIC_DIR = REPO / "static-fixtures"
EXPERIMENTS = RUNNER / "experiments"
RESULTS = REPO / "results"
# Built once, reused by every run: class-data-sharing archives, the open-loop generators' binaries, the
# database cluster. Outside the repository; safe to delete (rebuilt on next use).
CACHE = Path(os.environ.get("CROSSBENCH_CACHE", Path.home() / ".cache" / "crossbench"))


class BuildMissing(Missing, RuntimeError):
    """`mvn package` has not been run (or did not finish)."""

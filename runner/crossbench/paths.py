"""Where things are in the repository and in Maven's build output."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNNER = REPO / "runner"
SERVLET_TARGET = REPO / "java-servlet" / "target"
WEBAPP_DIR = SERVLET_TARGET / "crossbench"          # Maven's exploded WAR
STATIC_DIR = REPO / "static-fixtures"
TOMCAT_TEMPLATES = RUNNER / "tomcat"
TORNADO_APP = REPO / "tornado-app" / "server.py"
EXPERIMENTS = RUNNER / "experiments"
RESULTS = REPO / "results"
# Built once, reused by every run: class-data-sharing archives, the open-loop generators' binaries, the
# database cluster. Outside the repository; safe to delete (rebuilt on next use).
CACHE = Path(os.environ.get("CROSSBENCH_CACHE", Path.home() / ".cache" / "crossbench"))


class BuildMissing(RuntimeError):
    """`mvn package` has not been run (or did not finish)."""


def tomcat_home() -> Path:
    """The Tomcat distribution `mvn package` unpacked into java-servlet/target/."""
    homes = sorted(SERVLET_TARGET.glob("apache-tomcat-9.*"))
    if not homes or not WEBAPP_DIR.is_dir():
        raise BuildMissing(
            f"no Tomcat build under {SERVLET_TARGET}: run `mvn package` at {REPO} first")
    if len(homes) > 1:
        raise BuildMissing(f"several Tomcat versions under {SERVLET_TARGET}: run `mvn clean package`")
    return homes[0]


def tomcat_version(home: Path) -> str:
    return home.name.removeprefix("apache-tomcat-")

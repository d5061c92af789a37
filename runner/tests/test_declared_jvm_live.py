"""Declared servers whose runtime is "jvm" get the JVM probe: the suite's pinned Tomcat started as a user starts a
standalone one (catalina.sh run, a CATALINA_BASE of their own whose server.xml reads the port and maxThreads from
system properties). One short launch each at a load past the pool, on three declarations: the connector's own
pool, found under the shell script that starts the JVM; a connector on a shared Executor (the connector reports -1
threads, the probe reads the executor); and a declaration naming a pool the JVM does not have, whose records say
why the pool's figures are empty instead of showing zeros. Nothing is left running."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from declared_tomcat import OWN_POOL, SHARED_EXECUTOR, catalina_base, declaration
from testkit import marked_processes, records

from crossbench import paths, servers
from crossbench.servers.tomcat_config import tomcat_home

pytestmark = [
    pytest.mark.live,
    pytest.mark.shares_cores,
    pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed"),
]

RUN_ALL = str(paths.RUNNER / "run_all.sh")
MARKER = "CROSSBENCH_TEST_DECLARED_JVM"
POOL, CLIENTS, DELAY_MS = 4, 8, 100


def experiment(tmp_path: Path, home: Path) -> str:
    own, shared = (
        catalina_base(tmp_path / "own", home, OWN_POOL),
        catalina_base(tmp_path / "shared", home, SHARED_EXECUTOR),
    )
    return f"""
name = "declared-jvm-live"
[run]
duration = "1s"
warmup = "0s"
repetitions = 1
loadgen = "wrk"
servers = ["own_pool", "shared_executor", "wrong_pool"]
server_cpus = [1]
loadgen_cpus = [0]
{declaration("own_pool", home, own, POOL)}
{declaration("shared_executor", home, shared, POOL)}
{declaration("wrong_pool", home, own, POOL, pool="ajp")}
[[group]]
name = "delay"
endpoint = {{ own_pool = "/delay/sync", shared_executor = "/delay/sync", wrong_pool = "/delay/sync" }}
concurrency = [{CLIENTS}]
delays = ["{DELAY_MS}ms"]
"""


def test_declared_jvms_get_the_jvm_probe_and_say_what_it_could_not_read(tmp_path):
    """One 1 s launch without a warm-up each: the probe is attached before the window and reads the pool several
    times in it, and C=8 clients each held 100 ms keep all four threads busy throughout, so a probe that reads
    the wrong pool, none, or zeros shows in any launch."""
    exp, out = tmp_path / "declared-jvm.toml", tmp_path / "run"
    exp.write_text(experiment(tmp_path, tomcat_home()))
    done = subprocess.run(
        [RUN_ALL, "--experiment", str(exp), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, MARKER: str(out)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert marked_processes(MARKER, str(out)) == []
    meta = json.loads((out / "metadata.json").read_text())
    try:
        servers.declare(meta["config"], "metadata.json")
        cells = {r["server"]: r for r in records(out) if r["status"] == "ok"}
    finally:
        servers.forget_declared()
    own, shared, wrong = cells["own_pool"], cells["shared_executor"], cells["wrong_pool"]
    assert own["jvm_pool"].startswith("http-nio-") and own["jvm_pool_unread"] is None, own
    assert shared["jvm_pool"] == "tomcatThreadPool" and shared["jvm_pool_unread"] is None, shared
    for cell in (own, shared):  # C=8 on a pool of 4: every thread busy
        assert cell["pool_busy_peak"] == POOL and cell["jvm"]["gc"], cell
    assert wrong["jvm_pool"] is None and wrong["pool_busy_peak"] is None and wrong["jvm"]["gc"], wrong
    assert "no ThreadPool or Executor MBean named like 'ajp'" in wrong["jvm_pool_unread"], wrong

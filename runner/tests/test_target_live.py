"""A server the user started themselves, measured with --target: the test starts the repository's Tornado app on
its own (as a user would, outside the suite), and run_all.sh measures it on /hello with the quick your-target
profile. Its records have latency and throughput and no process figures (null, not 0), the findings say once what
was not read and why, its plan says that launches share the one process, and afterwards the user's server is the
same process, still answering, while nothing of the suite's is left running. With --target-pid the same server's
process is sampled (threads, memory) and the findings say only the pool and GC were not read."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import psutil
import pytest
from testkit import marked_processes, run_all_marked

from crossbench import oskit, paths

pytestmark = [
    pytest.mark.live,
    pytest.mark.shares_cores,
    pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed"),
]

MARKER = "CROSSBENCH_TEST_TARGET"  # in the environment of everything run_all starts, never in the user's server's
NOT_READ = "not read: the suite did not start it"
# The quick profile's least load: one 1 s launch without a warm-up at C=1 (the path's service time) and C=5.
LEAST_LOAD = ("--quick", "--duration", "1s", "--warmup", "0", "--concurrency", "5")


@pytest.fixture
def users_server(tmp_path):
    """The repository's Tornado app started the way a user starts their own server, on a port of its own."""
    port = oskit.free_port()
    log = open(tmp_path / "users-server.log", "wb")
    process = subprocess.Popen(
        [sys.executable, str(paths.REPO / "tornado-app" / "server.py"), "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not answers(url) and time.monotonic() < deadline:
        assert process.poll() is None, (tmp_path / "users-server.log").read_text()
        time.sleep(0.1)
    try:
        yield url, psutil.Process(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=15)
        log.close()


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/hello", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def run_all(*args: str, marker: str) -> subprocess.CompletedProcess:
    return run_all_marked(MARKER, marker, *args, timeout_s=600)


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines() if line.strip()]


def test_a_server_the_user_started_is_measured_and_left_as_it_was(tmp_path, users_server):
    """Two 1 s launches: a run that starts, stops or restarts the user's server, reads process figures it has
    none of, or says what it did not read more than once, does so on any launch."""
    url, server = users_server
    started_at = server.create_time()
    marker, out = uuid.uuid4().hex, tmp_path / "run"
    done = run_all("--target", url, "--path", "/hello", *LEAST_LOAD, "--out", str(out), marker=marker)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "every launch measures that one process" in done.stderr  # the plan says launches share it
    cells = records(out)
    assert {c["concurrency"] for c in cells} == {1, 5} and len(cells) == 2 and all(c["status"] == "ok" for c in cells)
    for c in cells:
        assert (c["server"], c["endpoint"], c["setting"]) == ("external", "/hello", url.removeprefix("http://"))
        assert c["rps"] > 0 and c["latency_ms"]["p50"] > 0 and c["latency_ms"]["p99"] >= c["latency_ms"]["p50"]
        for figure in ("threads_peak", "threads_mean", "rss_peak_mb", "cpu_percent", "processes"):
            assert c[figure] is None, (figure, c[figure])
    findings = (out / "findings.md").read_text()
    assert findings.count(NOT_READ) == 1
    assert "threads, CPU, memory, pool, GC and connections not read" in findings
    assert server.is_running() and server.create_time() == started_at and answers(url)  # untouched
    assert marked_processes(MARKER, marker) == []


def test_its_process_named_by_pid_is_sampled_as_any_server_s(tmp_path, users_server):
    """Two 1 s launches: the sampler reads the named process several times in any window, so a pid not sampled
    or not recorded shows in either."""
    url, server = users_server
    marker, out = uuid.uuid4().hex, tmp_path / "run"
    done = run_all(
        "--target",
        url + "/hello",
        "--target-pid",
        str(server.pid),
        "--target-name",
        "users-tornado",
        *LEAST_LOAD,
        "--no-analysis",
        "--out",
        str(out),
        marker=marker,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = records(out)
    assert {c["concurrency"] for c in cells} == {1, 5} and all(c["status"] == "ok" for c in cells)
    for c in cells:
        assert c["setting"] == "users-tornado" and c["target_pid"] == server.pid
        assert c["threads_peak"] >= 1 and c["rss_peak_mb"] > 1 and c["cpu_percent"] is not None
    assert server.is_running() and answers(url)
    assert marked_processes(MARKER, marker) == []

"""A declared server with a knob, swept by the suite's own experiments as the built-in Tomcat is: maxthreads-quick
and capacity-quick name only `tomcat` in their groups, and a standalone Tomcat declared `like = "tomcat"` with its
pool as the knob max_threads takes its place (--servers), the knob set by --max-threads; advise.sh then gives a
maxThreads from that run. Each run asserts what the declared knob must reach (the settings the knees are keyed by and
the pool each predicts, the pool the search starts from, advice that covers Little's law), not a measured figure,
so it runs on the least load that takes the path and may share the cores."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from declared_tomcat import OWN_POOL, catalina_base, declaration
from live_servers import build_missing_reason
from testkit import experiment_with, marked_names, run_all_marked

from crossbench import paths
from crossbench.decide import capacity
from crossbench.servers.tomcat_config import tomcat_home

pytestmark = [
    pytest.mark.live,
    pytest.mark.shares_cores,
    pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason())),
    pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed"),
]

MARKER = "CROSSBENCH_TEST_DECLARED_SWEEPS"
NAME = "my_tomcat"


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    """my_tomcat: the suite's Tomcat under catalina.sh run from a CATALINA_BASE of its own, 4 threads declared."""
    home = tomcat_home()
    base = catalina_base(tmp_path / "base", home, OWN_POOL)
    declared = tmp_path / "my-tomcat.toml"
    declared.write_text(declaration(NAME, home, base, max_threads=4, like="tomcat"))
    return declared


def run_declared(out: Path, experiment: Path, server_file: Path, *options: str):
    """run_all.sh on `experiment` with only the declared my_tomcat, into `out`: it must end well and leave
    nothing running."""
    done = run_all_marked(
        MARKER,
        str(out),
        "--experiment",
        str(experiment),
        "--server-file",
        str(server_file),
        "--servers",
        NAME,
        *options,
        "--out",
        str(out),
        timeout_s=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert marked_names(MARKER, str(out)) == set()


def test_maxthreads_sweeps_a_declared_knob_and_advise_reads_its_run(tmp_path, server_file):
    """maxthreads-quick at C=2 and C=8 on 8 and 16 threads (--max-threads over the declared 4) holding 100 ms, one
    1 s launch a point: each setting of the declared knob must reach the knees (keyed by it, its pool the predicted
    knee) and advise.sh, which needs two settings and must ask for at least Little's law's threads (30 req/s x
    100 ms = 3) from the run's cells. Both settings are off the declared 4: a knob declared with one value is
    named in a setting's words only off it ("my_tomcat" beside "my_tomcat max_threads=8")."""
    out = tmp_path / "mt"
    experiment = experiment_with(
        tmp_path,
        "maxthreads-quick",
        "max_window_bias = 0.02",
        "max_window_bias = 0.5",  # a window of 1 s, not 50 round trips: nothing here reads a ratio
        ("relaunch_disturbed = true", "relaunch_disturbed = false"),  # one launch a point beside other tests
    )
    run_declared(
        out,
        experiment,
        server_file,
        "--max-threads",
        "8,16",
        "--concurrency",
        "2,8",
        "--delays",
        "100ms",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--precision",
        "off",
    )
    knees = [json.loads(line) for line in (out / "charts" / "data" / "knees.jsonl").read_text().splitlines()]
    assert {k["setting"]: k["predicted"] for k in knees} == {f"{NAME} max_threads=8": 8, f"{NAME} max_threads=16": 16}

    advice = subprocess.run(
        [str(paths.REPO / "analysis" / "advise.sh"), "--rate", "30", "--hold-ms", "100", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert advice.returncode == 0, advice.stderr[-2000:]
    threads = re.search(r"^## maxThreads = (\d+)$", advice.stdout, re.MULTILINE)
    assert threads and int(threads[1]) >= 3, advice.stdout


def test_capacity_searches_a_declared_knob_from_its_pool(tmp_path, server_file):
    """capacity-quick's Tomcat group on the declared server, --max-threads 20 over the declaration's 4, 50 ms
    held: the search must start from the declared pool's prediction (20 / 50 ms = 400 req/s), the ceiling it
    knows. Two rates at most, of three 1 s launches each (about 400 requests each, a p99 of its own), and a 1 s
    confirmation: the search's whole road; its verdicts are not read (beside other tests a launch may be flagged
    and the search end early), what the knob must reach is."""
    out = tmp_path / "capacity"
    experiment = experiment_with(
        tmp_path,
        "capacity-quick",
        "search = { p99_ms = 300, resolution = 0.2, max_rates = 8, max_launches = 3, confirm_s = 10 }",
        "search = { p99_ms = 300, resolution = 0.2, max_rates = 2, max_launches = 3, confirm_s = 1 }",
    )
    run_declared(
        out,
        experiment,
        server_file,
        "--groups",
        "tomcat",
        "--max-threads",
        "20",
        "--delays",
        "50ms",
        "--duration",
        "1s",
        "--warmup",
        "0",
    )
    [found] = json.loads((out / capacity.FILE).read_text())
    assert (found["setting"], found["parallel_limit"], found["known_ceiling"]) == (
        f"{NAME} max_threads=20",
        20,
        "its pool: 20 / 50 ms",
    ), found
    assert found["predicted_rps"] == found["known_ceiling_rps"] == 400, found
    first = json.loads((out / "cells.jsonl").read_text().splitlines()[0])
    assert first["rate"] == 400, first  # the search's first launch

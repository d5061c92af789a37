"""tfb-quick end to end: TechEmpower's six types through the runner on one database server, each cell verified
before and after its load (answers, fortunes, stored updates) and its statements counted, plaintext pipelined by
16, the server's workers swept on /json, nothing left running afterwards."""

from __future__ import annotations

import os
import subprocess

import pytest
from testkit import marked_names, records_by_id

from crossbench import paths

pytestmark = [pytest.mark.live, pytest.mark.shares_cores]

MARKER = "CROSSBENCH_TEST_RUN"
# statements verify's 20 requests run: reads per request (5 rows for queries and updates), UPDATEs counted too
STATEMENTS = {"/db": 20, "/fortunes": 20, "/queries": 100, "/updates": 200}


def left_running(out) -> set[str]:
    """What the run marked `out` left running, by name."""
    return marked_names(MARKER, str(out))


def test_tfb_quick_end_to_end(tmp_path, database_cache):
    """uvicorn's eight cells, one 1 s window each without a warm-up: verify before and after, the statement counts,
    wrk's pipelining and the worker sweep are the runner's, the same for every server, and a path that breaks
    fails its cell whatever the window; each server's answers to the six types are test_tfb_conformance.py's."""
    out = tmp_path / "tfb-quick"
    done = subprocess.run(
        [
            str(paths.RUNNER / "run_all.sh"),
            "--experiment",
            "tfb",
            "--quick",
            "--out",
            str(out),
            "--servers",
            "uvicorn",
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--no-analysis",
        ],
        capture_output=True,
        text=True,
        timeout=420,
        env={**os.environ, "CROSSBENCH_DB_CACHE": str(database_cache), MARKER: str(out)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = records_by_id(out)
    assert len(cells) == 8 and all(r["status"] == "ok" for r in cells.values()), [
        r.get("error") for r in cells.values() if r["status"] != "ok"
    ]
    assert {(r["server"], r["endpoint"]) for r in cells.values()} == {
        ("uvicorn", e) for e in ("/json", "/plaintext", *STATEMENTS)
    }
    for r in cells.values():
        assert r["requests"] > 0 and r["error_total"] == 0, (r["cell_id"], r["errors"])
        if r["endpoint"] in STATEMENTS:
            assert r["queries_expected"] == r["queries_counted"] == STATEMENTS[r["endpoint"]], r["cell_id"]
    for r in (c for c in cells.values() if c["endpoint"] == "/plaintext"):
        assert r["pipeline"] == 16 and r["pipeline_verified"] is True, r["cell_id"]
    sweeps = sorted(r["sweep"] for r in cells.values() if r["sweep"])
    assert {s: sweeps.count(s) for s in sweeps} == {"json-uvicorn-wN-json-c16-d0": 3}
    assert not left_running(out), f"{left_running(out)} left running after the run"

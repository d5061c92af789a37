"""tfb-quick end to end: TechEmpower's six types on the four database servers, each cell verified before and
after its load (answers, fortunes, stored updates) and its statements counted, plaintext pipelined by 16, the
Python stacks' workers swept on /json, nothing left running afterwards."""

from __future__ import annotations

import subprocess

import psutil
import pytest
from testkit import records_by_id

from crossbench import paths

pytestmark = pytest.mark.live

# statements verify's 20 requests run: reads per request (5 rows for queries and updates), UPDATEs counted too
STATEMENTS = {"/db": 20, "/fortunes": 20, "/queries": 100, "/updates": 200}


def running(name: str) -> set[int]:
    return {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == name}


def test_tfb_quick_end_to_end(tmp_path, report_figure):
    before = running("postgres")
    out = tmp_path / "tfb-quick"
    # 1 s windows without a warm-up (the quick file's 1 + 2 s are for users; saves ~75 s of the suite; wrk runs
    # whole seconds, so a 0.5 s warm-up was 1 s a cell): what is checked here is that every type answers right,
    # counted and verified, and that the sweeps run all steps, not what a warm server does (a warm-up's path is
    # the quick profile's static cells'; a database pool settling after one, test_db_pool's)
    done = subprocess.run(
        [
            str(paths.RUNNER / "run_all.sh"),
            "--experiment",
            "tfb",
            "--quick",
            "--out",
            str(out),
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--no-analysis",
        ],
        capture_output=True,
        text=True,
        timeout=420,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = records_by_id(out)
    assert len(cells) == 30 and all(r["status"] == "ok" for r in cells.values()), [
        r.get("error") for r in cells.values() if r["status"] != "ok"
    ]
    assert {(r["server"], r["endpoint"]) for r in cells.values()} == {
        (s, e) for s in ("tomcat", "tornado", "gunicorn", "uvicorn") for e in ("/json", "/plaintext", *STATEMENTS)
    }
    for r in cells.values():
        assert r["requests"] > 0 and r["error_total"] == 0, (r["cell_id"], r["errors"])
        if r["endpoint"] in STATEMENTS:
            assert r["queries_expected"] == r["queries_counted"] == STATEMENTS[r["endpoint"]], r["cell_id"]
    for r in (c for c in cells.values() if c["endpoint"] == "/plaintext"):
        assert r["pipeline"] == 16 and r["pipeline_verified"] is True, r["cell_id"]
    sweeps = sorted(r["sweep"] for r in cells.values() if r["sweep"])
    assert {s: sweeps.count(s) for s in sweeps} == {
        "json-tornado-pN-json-c16-d0": 3,
        "json-gunicorn-wN-gthread4-json-c16-d0": 3,
        "json-uvicorn-wN-json-c16-d0": 3,
    }
    assert not (running("postgres") - before), "postgres left running"
    report_figure(
        "tfb-quick (C=16, req/s; one launch each, 1 s windows): "
        + "; ".join(
            f"{e} "
            + ", ".join(
                f"{r['server']} {r['rps']:.0f}"
                for r in cells.values()
                if r["endpoint"] == e and r["sweep_step"] in (None, 2)
            )
            for e in ("/json", "/plaintext", *STATEMENTS)
        )
    )

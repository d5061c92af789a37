"""seed004-quick end to end: the run's own PostgreSQL, every stack's database endpoints verified and counted,
the database and nginx sampled beside the server, nothing left running afterwards."""
from __future__ import annotations

import json
import subprocess

import psutil
import pytest

from crossbench import paths

pytestmark = pytest.mark.live


def running(name: str) -> set[int]:
    return {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == name}


def test_seed004_quick_end_to_end(tmp_path, report_figure):
    before = {name: running(name) for name in ("postgres", "nginx")}
    out = tmp_path / "seed004-quick"
    done = subprocess.run([str(paths.RUNNER / "run_all.sh"), "--experiment", "seed004-quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    cells = {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}
    assert len(cells) == 14 and all(r["status"] == "ok" for r in cells.values()), \
        [r.get("error") for r in cells.values() if r["status"] != "ok"]
    for r in cells.values():
        assert r["queries_expected"] == r["queries_counted"] == 20, r["cell_id"]
        assert r["requests"] > 0 and r["error_total"] == 0, (r["cell_id"], r["errors"])
        assert r["db_cpu_percent"] is not None and r["db_rss_peak_mb"] > 0, r["cell_id"]
        assert (out / "cells" / r["cell_id"] / "db-samples.csv").is_file()
    proxied = [r for r in cells.values() if r["proxy"]]
    assert {r["server"] for r in proxied} == {"gunicorn", "uvicorn"}
    assert all(r["proxy_cpu_percent"] is not None and r["proxy_rss_peak_mb"] > 0 for r in proxied)
    assert cells["db-gunicorn-w2-db-c16-d0-r1"]["db_connections_total"] == 4
    for r in (c for c in cells.values() if c["endpoint"] == "/db/slow"):
        assert r["latency_ms"]["p50"] >= 5, (r["cell_id"], r["latency_ms"])
        assert r["db_connections_total"] in (2, 16), r["cell_id"]      # equal totals, split over processes
    assert (out / "database" / "postgresql.conf").is_file()
    for name, pids in before.items():
        assert not (running(name) - pids), f"{name} left running after the run"
    report_figure("seed004-quick (/db, C=16, req/s): " + ", ".join(
        f"{r['setting']}{' via nginx' if r['proxy'] else ''} {r['rps']:.0f} (db cpu {r['db_cpu_percent']:.0f}%)"
        for r in cells.values() if r["endpoint"] == "/db"))

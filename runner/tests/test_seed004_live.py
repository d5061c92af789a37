"""seed004-quick end to end: the run's own PostgreSQL, every stack's database endpoints verified and counted,
the database and nginx sampled beside the server, nothing left running afterwards."""

from __future__ import annotations

import os
import signal
import subprocess

import psutil
import pytest
from testkit import descendants, marked_names, measure_samples, records, records_by_id, wait_until

from crossbench import paths
from crossbench.figures.points import DISTURBED

pytestmark = pytest.mark.live


MARKER = "CROSSBENCH_TEST_RUN"
STACK = ("postgres", "nginx", "pgbouncer")


def left_running(out) -> set[str]:
    """What the run marked `out` left running, by name."""
    return marked_names(MARKER, str(out))


def seed004_quick(out, *groups: str, env: dict | None = None) -> list[dict]:
    """seed004-quick's `groups` to its end, marked, on 1 s windows without a warm-up (the quick file's 1 + 4 s are
    for users; 4 samples at 0.25 s a cell); its records, every one answered from the database without an error."""
    done = subprocess.run(
        [
            str(paths.RUNNER / "run_all.sh"),
            "--experiment",
            "seed004-quick",
            "--out",
            str(out),
            "--groups",
            ",".join(groups),
            "--duration",
            "1s",
            "--warmup",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {}), MARKER: str(out)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = records_by_id(out)
    assert all(r["status"] == "ok" for r in cells.values()), [
        r.get("error") for r in cells.values() if r["status"] != "ok"
    ]
    for r in cells.values():
        per_request = 20 if r["endpoint"] == "/queries" else 1
        assert r["queries_expected"] == r["queries_counted"] == 20 * per_request, r["cell_id"]
        assert r["requests"] > 0 and r["error_total"] == 0, (r["cell_id"], r["errors"])
        assert r["db_cpu_percent"] is not None and r["db_rss_peak_mb"] > 0, r["cell_id"]
        assert (out / "cells" / r["cell_id"] / "db-samples.csv").is_file()
        assert (out / "cells" / r["cell_id"] / "db-pool.csv").is_file(), r["cell_id"]
    assert (out / "database" / "postgresql.conf").is_file()
    assert not left_running(out), f"{left_running(out)} left running after the run"
    return list(cells.values())


@pytest.mark.shares_cores
def test_seed004_quick_end_to_end(tmp_path, database_cache):
    """Every stack answers from the database, alone, through nginx and through PgBouncer, counted, sampled, swept
    and drawn: a path that breaks fails the cell in its first second, so one 1 s window a cell catches it; the
    pools' known truths are test_seed004_pools_hold_and_queue_as_sized's."""
    out = tmp_path / "seed004-quick"
    found = seed004_quick(
        out, "db", "db-behind-nginx", "db-pgbouncer", env={"CROSSBENCH_DB_CACHE": str(database_cache)}
    )
    cells = {r["cell_id"]: r for r in found}
    assert len(cells) == 16
    proxied = [r for r in cells.values() if r["proxy"]]
    assert {r["server"] for r in proxied} == {"gunicorn", "uvicorn"}
    assert all(r["proxy_cpu_percent"] is not None and r["proxy_rss_peak_mb"] > 0 for r in proxied)
    assert cells["db-gunicorn-w2-db-c16-d0-r1"]["db_connections_total"] == 4
    pooled = [r for r in cells.values() if r["pooler"]]
    assert {r["server"] for r in pooled} == {"tomcat", "tornado", "gunicorn", "uvicorn"}
    for r in pooled:
        assert r["db_prepared"] is False and r["pooler_connections"] == r["db_connections_total"], r["cell_id"]
        assert r["pooler_cpu_percent"] is not None and r["pooler_rss_peak_mb"] > 0, r["cell_id"]
        assert (out / "cells" / r["cell_id"] / "pgbouncer" / "pgbouncer.ini").is_file()
    sweeps: dict[str, list[int]] = {}
    for r in cells.values():
        if r["sweep"]:
            sweeps.setdefault(r["sweep"], []).append(r["sweep_step"])
    assert sweeps == {
        "db-tornado-pN-db-c16-d0": [1, 2, 3],
        "db-gunicorn-wN-db-c16-d0": [1, 2, 3],
        "db-uvicorn-wN-db-c16-d0": [1, 2, 3],
    }
    charts = {p.stem for p in (out / "charts").glob("*.png")}
    assert {"seed004_workers", "seed004_table_db", "seed004_table_db-pgbouncer"} <= charts


def test_seed004_pools_hold_and_queue_as_sized(tmp_path, report_figure):
    """seed004-quick's pools group: 16 clients on a pool of 2 connections hold both and queue the rest, a pool of
    16 queues fewer (gunicorn's two sync workers queue none), and no answer is quicker than its 5 ms query."""
    out = tmp_path / "seed004-pools"
    cells = {r["cell_id"]: r for r in seed004_quick(out, "pools")}
    assert len(cells) == 8
    for r in cells.values():
        assert r["latency_ms"]["p50"] >= 5, (r["cell_id"], r["latency_ms"])
        assert r["db_connections_total"] in (2, 16), r["cell_id"]  # equal totals, split over processes
    for server in ("tomcat-mt200", "tornado", "uvicorn", "gunicorn-w2"):
        starved = cells[f"pools-{server}-pool2-db_slow-c16-d5-r1"]  # 16 clients, 2 connections
        roomy = cells[f"pools-{server}-pool16-db_slow-c16-d5-r1"]
        assert starved["db_pool_active_peak"] == 2, starved
        if server.startswith("gunicorn"):  # two sync workers: two requests at a time, none waits in the pool
            assert starved["db_pool_waiting_peak"] == roomy["db_pool_waiting_peak"] == 0, (starved, roomy)
            assert roomy["db_pool_active_peak"] == 2, roomy
        else:
            assert starved["db_pool_waiting_peak"] >= 8, starved
            assert roomy["db_pool_waiting_peak"] < starved["db_pool_waiting_peak"], roomy
    assert "seed004_table_pools" in {p.stem for p in (out / "charts").glob("*.png")}
    report_figure(
        "seed004-quick pools (/db/slow 5 ms, C=16, waiting peak): "
        + ", ".join(f"{r['setting']} {r['db_pool_waiting_peak']}" for r in cells.values())
    )


# --- faults: the database stopped in mid-cell, Ctrl-C --------------------------------------------------------


def db_run(out, *extra: str) -> list[str]:
    """seed004-quick without the analysis, in plan order: the tests act on cells in that order."""
    return [
        str(paths.RUNNER / "run_all.sh"),
        "--experiment",
        "seed004-quick",
        "--out",
        str(out),
        "--no-analysis",
        "--no-shuffle",
        *extra,
    ]


def wait_for_measuring(cell_dir, samples: int = 1) -> None:
    """Until the cell's sampler has written `samples` rows of its measured window."""
    wait_until(lambda: measure_samples(cell_dir) >= samples, 120, f"{cell_dir.name} to sample its measured window")


def postmasters_of(pid: int) -> list[psutil.Process]:
    """The postgres processes a runner started whose parent is not postgres (the postmaster)."""
    tree = descendants(pid)
    names = {p.pid: p.info["name"] for p in tree}
    return [p for p in tree if p.info["name"] == "postgres" and names.get(p.info["ppid"]) != "postgres"]


@pytest.mark.shares_cores
def test_a_database_stopped_mid_cell_gives_counted_503s_and_the_next_cell_a_database(tmp_path, database_cache):
    """Two 2 s cells, one launch each: the database stopped half a second into the first leaves answers before
    and 503s after it in one window, and the second is the next cell that needs a database again."""
    out = tmp_path / "outage"
    proc = subprocess.Popen(
        db_run(out, "--groups", "db-behind-nginx", "--duration", "2s", "--warmup", "0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CROSSBENCH_DB_CACHE": str(database_cache), MARKER: str(out)},
    )
    try:
        # half a second into the window (the sampler takes 4 a second): answered requests before the outage
        wait_for_measuring(out / "cells" / "db-behind-nginx-gunicorn-w2-via-nginx-db-c16-d0-r1", samples=2)
        (postmaster,) = postmasters_of(proc.pid)
        postmaster.send_signal(signal.SIGQUIT)  # immediate shutdown, as a crash would
        _, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr[-3000:]
    first, second = records(out)
    assert first["status"] == "ok" and "database_died" in first["flags"] and not first["valid"]
    assert first["errors"]["non_2xx"] > 0 and first["requests"] > first["errors"]["non_2xx"]  # 503s, counted
    # valid but for the host's own noise: another process on a busy machine flags the window noisy_host (seen
    # with the cores kept busy), which says nothing of the database the cell got
    assert second["status"] == "ok" and set(second["flags"]) <= DISTURBED, second.get("flags")
    assert second["queries_counted"] == 20 and second["error_total"] == 0
    assert not left_running(out), f"{left_running(out)} left running after the run"


WHOLE_STACK = """
name = "whole-stack"
description = "nginx, uvicorn, PgBouncer and PostgreSQL in one cell"
[run]
duration_s = 30
warmup_s = 0
servers = ["uvicorn"]
[[group]]
name = "stack"
endpoint = { uvicorn = "/db" }
proxy = "nginx"
pooler = "pgbouncer"
concurrency = [4]
"""


@pytest.mark.shares_cores
def test_ctrl_c_in_a_whole_stack_cell_leaves_nothing_running(tmp_path, database_cache):
    """Ctrl-C in the first sampled second of the one cell: every part of the stack is running then."""
    (tmp_path / "whole-stack.toml").write_text(WHOLE_STACK)
    out = tmp_path / "interrupted"
    proc = subprocess.Popen(
        [
            str(paths.RUNNER / "run_all.sh"),
            "--experiment",
            str(tmp_path / "whole-stack.toml"),
            "--out",
            str(out),
            "--no-analysis",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "CROSSBENCH_DB_CACHE": str(database_cache), MARKER: str(out)},
    )
    try:
        wait_for_measuring(out / "cells" / "stack-uvicorn-via-nginx-pgbouncer-db-c4-d0-r1")
        started = {p.info["name"] for p in descendants(proc.pid)}
        assert set(STACK) <= started, started
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole foreground group
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr[-3000:]
    assert not left_running(out), f"{left_running(out)} left running after Ctrl-C"
    assert not records(out), "an interrupted cell is not recorded"

"""A server the run did not start (--target): what it could not read said once per setting, in words that say
why, and nothing said of a server the run started."""

from __future__ import annotations

from pathlib import Path

from crossbench.figures.points import FIXED
from crossbench_analysis.findings import not_read, summary
from crossbench_analysis.findings.finding import LAUNCH_RULE
from crossbench_analysis.read.runinfo import Run


def cell(cell_id: str, **fields) -> dict:
    return {"cell_id": cell_id, "status": "ok", "threads_peak": None, "rss_peak_mb": None, **fields}


def test_what_was_not_read_is_said_once_per_setting_of_a_server_the_run_did_not_start():
    cells = [
        cell("a-r1", server="external", setting="127.0.0.1:8080", target_pid=None),
        cell("a-r2", server="external", setting="127.0.0.1:8080", target_pid=None),
        cell("b-r1", server="external", setting="shop", target_pid=4242, threads_peak=12),
        cell("c-r1", server="tornado", setting="tornado", threads_peak=3),
    ]
    found = not_read.findings(Run(Path("."), {}, cells))
    assert [f.sentence for f in found] == [
        "127.0.0.1:8080: threads, CPU, memory, pool, GC and connections not read: the suite did not start it "
        "(--target-pid PID samples its CPU, memory and threads)",
        "shop: pool and GC not read: the suite did not start it (its process 4242, named by --target-pid, "
        "sampled for CPU, memory and threads)",
    ]
    assert [f.cells for f in found] == [["a-r1", "a-r2"], ["b-r1"]]
    assert not_read.findings(Run(Path("."), {}, cells[3:])) == []


def point(server: str, cpu: float | None) -> dict:
    launch = {"server": server, "status": "ok", "valid": True, "flags": [], "concurrency": 50, "delay_ms": 0}
    figures = {"rps": {"value": 4866.0}, "loadgen_cpu_percent": {"value": 15.2}}
    if cpu is not None:
        figures["cpu_percent"] = {"value": cpu}
    return {"concurrency": 50, "delay_ms": 0, "flags": [], "figures": figures, "records": [launch], LAUNCH_RULE: FIXED}


def test_what_limited_a_server_the_run_did_not_start_is_not_guessed():
    assert summary.limited_by(point("external", None)) == (
        "cannot tell: its CPU and pool not read (the suite did not start it); the load generator 15 % CPU"
    )
    assert summary.limited_by(point("tornado", 40.0)).startswith("no full core or pool (server 40 % CPU)")

"""How steady the machine's cores run: a fixed piece of arithmetic timed back to back on every core at once, one
child process pinned to each, before any load (metadata.json noise_floor.core_speed).

The steal counter does not see a core that runs slower because the host's other tenants share its caches,
memory bandwidth or SMT sibling. A CPU-bound figure (the static mix, where server and load generator each fill
a core) moves with the core's speed, a delayed one does not; so a run records how much its cores' speed varied,
and compare says it when it weighs two runs. On the project's 2-core VM, with nothing else running, the same
arithmetic varied by 14 % (standard deviation) over two minutes while steal read 0.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

PROBE_SECONDS = 2.0
UNIT_LOOPS = 100_000  # one unit: about 5 ms of pure-Python arithmetic on the project's VM

# The child: pin itself to its core, then time units of arithmetic until its seconds are up; one line of times,
# then the share of the wall time it had the core (its CPU time over the wall's): under 1 when something else ran
# on that core, so a slow core can be told from a shared one.
CHILD = """
import os, sys, time
core, seconds, loops = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
os.sched_setaffinity(0, {core})
times, end = [], time.perf_counter() + seconds
wall, cpu = time.perf_counter(), time.process_time()
while time.perf_counter() < end:
    start, total = time.perf_counter(), 0
    for i in range(loops):
        total += i * i
    times.append(time.perf_counter() - start)
print(" ".join(f"{t:.7f}" for t in times))
print(f"{(time.process_time() - cpu) / (time.perf_counter() - wall):.4f}")
"""
SHARED_BELOW = 0.9  # a probe that had less of its core than this ran beside other work there


def summary(times: list[float], share: float | None = None) -> dict:
    """units, median_ms, cv_percent (standard deviation over mean), p95_over_p5 (the slow units' time over the
    fast ones', by nearest rank: a single interrupted unit does not set it) and core_share_percent (how much of
    its core the probe had: under SHARED_BELOW, its times measure sharing, not the core)."""
    ordered = sorted(times)
    rank = lambda share: ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]  # noqa: E731
    mean = statistics.fmean(ordered)
    return {
        "units": len(ordered),
        "median_ms": round(statistics.median(ordered) * 1000, 3),
        "cv_percent": round(statistics.stdev(ordered) / mean * 100, 1) if len(ordered) > 1 else None,
        "p95_over_p5": round(rank(0.95) / rank(0.05), 3),
        "core_share_percent": None if share is None else round(100 * min(1.0, share), 1),
    }


def measure(cores: list[int], seconds: float = PROBE_SECONDS, loops: int = UNIT_LOOPS) -> dict:
    """{"seconds", "unit", "per_core": {core: summary or {"error": ...}}, "cv_percent": the largest}: every core
    probed at once, so no core's probe runs beside another's on the same core."""
    children = {
        core: subprocess.Popen(
            [sys.executable, "-c", CHILD, str(core), str(seconds), str(loops)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for core in cores
    }
    per_core: dict[str, dict] = {}
    try:
        for core, child in children.items():
            try:
                out, err = child.communicate(timeout=seconds + 30)
            except subprocess.TimeoutExpired:
                per_core[str(core)] = {"error": f"no answer within {seconds + 30:g} s"}
                continue
            lines = out.splitlines()
            times = [float(t) for t in lines[0].split()] if lines else []
            share = float(lines[1]) if len(lines) > 1 else None
            per_core[str(core)] = (
                summary(times, share)
                if child.returncode == 0 and times
                else {"error": (err.strip().splitlines() or [f"exit {child.returncode}"])[-1]}
            )
    finally:
        for child in children.values():
            if child.poll() is None:
                child.kill()
                child.wait()
    spreads = [c["cv_percent"] for c in per_core.values() if c.get("cv_percent") is not None]
    return {
        "seconds": seconds,
        "unit": f"{loops} additions of squares in Python, timed back to back",
        "per_core": per_core,
        "cv_percent": max(spreads) if spreads else None,
    }

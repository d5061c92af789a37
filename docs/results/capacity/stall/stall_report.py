"""What delayed the slow requests of probe.sh's launches: `.venv/bin/python stall_report.py OUT...` (the project's
environment: p99 by the suite's one percentile, crossbench.stats). For each launch, p99,
every collection that paused Tornado's loop over 10 ms (when, from the window's start, and how many requests over
220 ms were in flight across it), and where in the window the slow requests were fired and answered."""

import sqlite3
import sys

from crossbench import stats

SLOW_S, PAUSE_S = 0.22, 0.01


def report(out: str) -> None:
    launched = float(open(f"{out}/launched").read())
    rows = (
        sqlite3.connect(f"{out}/oha.sqlite").execute("select start, end, duration from oha order by start").fetchall()
    )
    pauses = [tuple(map(float, line.split())) for line in open(f"{out}/gc.log")]
    pauses = [(t - launched, s, int(gen)) for t, s, gen, _ in pauses if s > PAUSE_S]
    durations = sorted(r[2] for r in rows)
    print(
        f"{out}: {len(rows)} requests, p99 {stats.nearest_rank(durations, 99) * 1000:.1f} ms, "
        f"max {durations[-1] * 1000:.0f} ms"
    )
    for at, pause, gen in pauses:
        across = [r for r in rows if r[2] > SLOW_S and r[0] <= at + pause and r[1] >= at]
        print(
            f"  gen{gen} collection: {pause * 1000:.1f} ms at {at:.3f} s; slow requests in flight across it: "
            f"{len(across)}"
        )
    slow = [r for r in rows if r[2] > SLOW_S]
    if slow:
        covered = [r for r in slow if any(r[0] <= at + p and r[1] >= at for at, p, _ in pauses)]
        others = [r for r in slow if r not in covered]
        print(
            f"  {len(slow)} requests over {SLOW_S * 1000:.0f} ms, {len(covered)} of them across a collection"
            + (
                f"; the other {len(others)} fired at {min(r[0] for r in others):.2f}-{max(r[0] for r in others):.2f} s, "
                f"answered at {min(r[1] for r in others):.3f}-{max(r[1] for r in others):.3f} s"
                if others
                else ""
            )
        )


if __name__ == "__main__":
    for out in sys.argv[1:]:
        report(out)

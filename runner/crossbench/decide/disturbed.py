"""Launches the host disturbed, launched again: a launch flagged `noisy_host` (foreign CPU or steal that could move
its figures past the precision target) is left out of its point while the point has a quiet one. A run with a
precision target then asks for another launch by its own rule (precision.py); without one, a point of three
launches on a VM with occasional steal would rest on two. So each disturbed launch is launched again once, after
the planned rounds, the point never past twice its first rounds (a relaunch that is disturbed too is launched
again within that cap). A run that launches each point once (the seeds' protocols, the tests' one-launch runs)
keeps its one launch, disturbed or not (points.counted falls back to it), unless it sets `relaunch_disturbed`:
a knee's sweep (maxthreads-quick) leaves out a concurrency whose only launch was disturbed, so there a disturbed
launch is launched again once. Capacity searches relaunch their own launches (capacity.py) and are left to it.

A launch flagged `window_too_short` (a held window whose figures break what its mechanics fix) is launched again
the same way, with a longer window (`longer`): the same window would lose the same waves again. So is a launch
whose figure lies far outside its siblings' with no flag to say why (points.outliers), once; it stays in its
point's figures. With a precision target such a launch widens the point's interval, and its rule asks for more.

Decided from the records alone, like the precision rounds, so --resume continues where it stopped.
"""

from __future__ import annotations

import random
from dataclasses import replace

from crossbench.drivers.closed_loop import worst_latency_s
from crossbench.figures.points import DISTURBED, outliers, point_id
from crossbench.flags import WINDOW_TOO_SHORT
from crossbench.plan.cellplan import CellPlan, launches_so_far
from crossbench.plan.experiment_expand import first_rounds, round_seed
from crossbench.plan.experiment_schema import RunSettings
from crossbench.record.metrics import window_for_bias


def relaunches(
    cells: list[CellPlan], records: list[dict], run: RunSettings, searching: set[str] = frozenset()
) -> list[CellPlan]:
    """One more launch of each point that has a disturbed launch, or an outlying one, not yet launched again
    (shuffled like a round)."""
    rounds = first_rounds(run)
    if run.precision or (rounds < 2 and not run.relaunch_disturbed):
        return []
    planned, launched = launches_so_far(cells)
    finished = {r["cell_id"] for r in records}
    disturbed: dict[str, int] = {}
    by_point: dict[str, list[dict]] = {}
    for record in records:
        by_point.setdefault(point_id(record), []).append(record)
        if record.get("status") == "ok" and DISTURBED.intersection(record.get("flags") or ()):
            disturbed[point_id(record)] = disturbed.get(point_id(record), 0) + 1
    for pid, launches in by_point.items():
        if outliers(launches):  # however many lie far out, and whether the new launch does too: once a point
            disturbed[pid] = disturbed.get(pid, 0) + 1
    short = too_short(cells, records)
    wanted = []
    for pid, count in disturbed.items():
        cell = planned.get(pid)
        if cell is None or cell.group in searching or any(c.peak_cell == cell.cell_id for c in cells):
            continue  # a peak's launches set its open-loop cells' rates once, before them
        if any(c.point_id == pid and c.cell_id not in finished for c in cells):
            continue  # a launch of it still to run
        again = launched[pid] - rounds
        if again < min(count, rounds):
            launch = cell.launch(launched[pid] + 1)
            wanted.append(longer(launch, short[pid]) if pid in short else launch)
    if run.shuffle and wanted:
        random.Random(round_seed(run.shuffle_seed, max(c.repetition for c in wanted))).shuffle(wanted)
    return wanted


# The longest window a relaunch asks for 50 round trips: a queue of minutes (Tomcat's 1000 clients on 200 threads at
# 10 s, 50 s a round trip) is launched again at twice its window instead of for hours.
MAX_RELAUNCH_WINDOW_S = 300.0


def too_short(cells: list[CellPlan], records: list[dict]) -> dict[str, float]:
    """Per point with a launch flagged WINDOW_TOO_SHORT, the longest window so flagged."""
    windows = {cell.cell_id: cell.duration_s for cell in cells}
    short: dict[str, float] = {}
    for record in records:
        if record.get("status") == "ok" and WINDOW_TOO_SHORT in (record.get("flags") or ()):
            window = windows.get(record["cell_id"], 0.0)
            short[point_id(record)] = max(short.get(point_id(record), 0.0), window)
    return short


def longer(launch: CellPlan, short_s: float) -> CellPlan:
    """A launch of a point whose window of `short_s` was too short (WINDOW_TOO_SHORT), with one long enough for
    its slowest round trips to move its figures by at most metrics.MAX_WINDOW_BIAS (window_for_bias, at most
    MAX_RELAUNCH_WINDOW_S), and at least twice that window."""
    wanted = min(window_for_bias(worst_latency_s(launch)), MAX_RELAUNCH_WINDOW_S)
    return replace(launch, duration_s=round(max(2 * short_s, wanted, launch.duration_s), 3))

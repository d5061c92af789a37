"""Launches the host disturbed, launched again: a launch flagged `noisy_host` (foreign CPU or steal that could move
its figures past the precision target) is left out of its point while the point has a quiet one. A run with a
precision target then asks for another launch by its own rule (precision.py); without one, a point of three
launches on a VM with occasional steal would rest on two. So each disturbed launch is launched again once, after
the planned rounds, the point never past twice its first rounds (a relaunch that is disturbed too is launched
again within that cap). A run that launches each point once (the seeds' protocols, the tests' one-launch runs)
keeps its one launch, disturbed or not: points.counted falls back to it, and nothing is lost. Capacity searches
relaunch their own launches (capacity.py) and are left to it.

Decided from the records alone, like the precision rounds, so --resume continues where it stopped.
"""
from __future__ import annotations

import random

from crossbench.figures.points import DISTURBED, point_id
from crossbench.plan.cellplan import CellPlan, launches_so_far
from crossbench.plan.experiment_expand import first_rounds, round_seed
from crossbench.plan.experiment_schema import RunSettings


def relaunches(cells: list[CellPlan], records: list[dict], run: RunSettings,
               searching: set[str] = frozenset()) -> list[CellPlan]:
    """One more launch of each point that has a disturbed launch not yet launched again (shuffled like a round)."""
    rounds = first_rounds(run)
    if run.precision or rounds < 2:
        return []
    planned, launched = launches_so_far(cells)
    finished = {r["cell_id"] for r in records}
    disturbed: dict[str, int] = {}
    for record in records:
        if record.get("status") == "ok" and DISTURBED.intersection(record.get("flags") or ()):
            disturbed[point_id(record)] = disturbed.get(point_id(record), 0) + 1
    wanted = []
    for pid, count in disturbed.items():
        cell = planned.get(pid)
        if cell is None or cell.group in searching or any(c.peak_cell == cell.cell_id for c in cells):
            continue        # a peak's launches set its open-loop cells' rates once, before them
        if any(c.point_id == pid and c.cell_id not in finished for c in cells):
            continue        # a launch of it still to run
        again = launched[pid] - rounds
        if again < min(count, rounds):
            wanted.append(cell.launch(launched[pid] + 1))
    if run.shuffle and wanted:
        random.Random(round_seed(run.shuffle_seed, max(c.repetition for c in wanted))).shuffle(wanted)
    return wanted

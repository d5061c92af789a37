"""The precision target (`--precision P`), by Stein's two-stage rule: every point gets at least three launches
(stats.MIN_LAUNCHES, the first stage); the spread of those three sets once how many launches its headline figure
needs for a 95 % interval within P (stats.launches_needed), and the point is launched a round at a time until it
has them or max_launches (a launch the host disturbed does not count against it: launch_cap). The count is never
revised from later launches: stopping when an interval happens to look narrow stops exactly when the launches
happen to agree, and such intervals cover less than they say (the simulation test, runner/tests/test_coverage.py,
shows both). A point whose final interval is still wider than P keeps it and the flag `imprecise`.

Decided from the records alone, so an interrupted run resumes where it stopped: a launch is a cell id
(point_id-rN), never run twice, never lost.
"""

from __future__ import annotations

import random

from crossbench import stats
from crossbench.decide.disturbed import longer, too_short
from crossbench.figures import points
from crossbench.flags import WINDOW_TOO_SHORT
from crossbench.plan.cellplan import CellPlan, launches_so_far
from crossbench.plan.experiment_expand import round_seed
from crossbench.plan.experiment_schema import RunSettings


def next_round(cells: list[CellPlan], records: list[dict], run: RunSettings) -> list[CellPlan]:
    """The launches still wanted: one more of each point with fewer counted launches than its first stage asks
    for, or whose every launch had a window too short (shuffled like a round); none for a point out of launches or
    with no launch that counted. A point with a window too short is launched with a longer one (disturbed.longer)."""
    precision = run.precision
    if not precision:
        return []
    planned, launched = launches_so_far(cells)
    short = too_short(cells, records)
    wanted = []
    for point in points.aggregate(records):
        pid = point["point_id"]
        if pid not in planned or point["n"] == 0 or launched[pid] >= launch_cap(point, run.max_launches):
            continue
        if planned[pid].peak_cell is None and is_peak(planned[pid], cells):
            continue  # a peak only sets the rates of its open-loop cells; its shares are the points
        if point["n"] < needed(point, precision) or WINDOW_TOO_SHORT in point["flags"]:
            launch = planned[pid].launch(launched[pid] + 1)
            wanted.append(longer(launch, short[pid]) if pid in short else launch)
    if run.shuffle and wanted:
        random.Random(round_seed(run.shuffle_seed, max(c.repetition for c in wanted))).shuffle(wanted)
    return wanted


def launch_cap(point: dict, max_launches: int) -> int:
    """max_launches counts the launches that count: a launch the host disturbed (left out of the point) does not
    use one up, so a point keeps its stage on a VM with occasional steal (disturbed.py's rule, which runs without a
    precision target); never past twice max_launches."""
    return min(max_launches + len(point.get("disturbed_cells") or ()), 2 * max_launches)


def needed(point: dict, precision: float) -> int:
    """The launches the point's headline figure needs, from its first stage (its first counted launches)."""
    figure = point["figures"].get(point["headline"]) or {}
    return stats.launches_needed(figure.get("launches") or [], precision)


def is_peak(cell: CellPlan, cells: list[CellPlan]) -> bool:
    return any(other.peak_cell == cell.cell_id for other in cells)


def summary(point_records: list[dict], precision: float) -> str:
    """One line for the end of a run: how many points reached the target."""
    measured = [p for p in point_records if p["n"]]
    reached = [p for p in measured if points.IMPRECISE not in p["flags"]]
    launches = sum(p["n"] + p["failed"] + len(p.get("disturbed_cells", [])) for p in point_records)
    return f"precision {precision:g}: {len(reached)} of {len(measured)} points within it, {launches} launches in all"

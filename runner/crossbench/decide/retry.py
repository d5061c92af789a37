"""`--resume DIR --retry-failed`: launch again every point none of whose launches counted (each one failed),
once all the launches planned for it have run: as many new launches as the run's first rounds, numbered after
its last. For a run resumed after a fix (of a tool, the harness, the machine) that failed those points; a plain
resume only finishes the launches planned, and the precision target never relaunches a point that has no figure
to judge. The failed launches stay on the record beside the new ones (points.jsonl counts them as failed), and
the new launches come on top of max_launches.
"""

from __future__ import annotations

import random

from crossbench.plan.cellplan import CellPlan
from crossbench.plan.experiment_expand import first_rounds, round_seed
from crossbench.plan.experiment_schema import RunSettings
from crossbench.record.record import point_of


def retries(cells: list[CellPlan], records: list[dict], run: RunSettings) -> list[CellPlan]:
    """The new launches, in run order: a peak point's first (open-loop shares take their rate from its launches
    that counted), the others shuffled like a round."""
    finished = {record["cell_id"] for record in records}
    counted = {
        record.get("point_id") or point_of(record["cell_id"]) for record in records if record.get("status") == "ok"
    }
    planned: dict[str, list[CellPlan]] = {}
    for cell in cells:
        planned.setdefault(cell.point_id, []).append(cell)
    rounds = first_rounds(run)
    peaks = {point_of(cell.peak_cell) for cell in cells if cell.peak_cell}
    wanted = []
    for pid, launches in planned.items():
        if pid in counted or any(cell.cell_id not in finished for cell in launches):
            continue
        last = max(cell.repetition for cell in launches)
        wanted += [launches[0].launch(last + number) for number in range(1, rounds + 1)]
    first = [cell for cell in wanted if cell.point_id in peaks]
    rest = [cell for cell in wanted if cell.point_id not in peaks]
    if run.shuffle:
        random.Random(round_seed(run.shuffle_seed, max((c.repetition for c in rest), default=0))).shuffle(rest)
    return first + rest


def point_ids(new: list[CellPlan]) -> list[str]:
    return list(dict.fromkeys(cell.point_id for cell in new))


def summary(new: list[CellPlan]) -> str:
    """One line for the plan: how many failed points are launched again."""
    pids = point_ids(new)
    launches = f"{len(new)} launch" + ("es" if len(new) != 1 else "")
    return (
        f"--retry-failed: {len(pids)} point(s) with no launch that counted, launched again ({launches}): "
        f"{', '.join(pids)}"
        if pids
        else "--retry-failed: every point has a launch that counted; nothing to launch again"
    )


def hint(new: list[CellPlan]) -> str:
    """For a plain --resume of a run that has such points: what --retry-failed would do."""
    return (
        f"run_all: {len(point_ids(new))} point(s) have no launch that counted (every one failed); add "
        "--retry-failed to launch them again"
    )

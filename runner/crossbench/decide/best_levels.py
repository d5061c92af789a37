"""TechEmpower's best levels launched again (`[run] best_level_launches = N`, the tfb experiment). TechEmpower runs
each level once and quotes each stack's best; a ratio between two stacks' best levels needs launches to have an
interval. After the plan's cells, each stack's best level in each group (the point whose plan launch had the
highest throughput, whatever its worker count: points.best_throughput) is launched until it has N. Its figure
then rests on the N - 1 launches after the one that picked it (the analysis' confirmed_best_levels): the best of
many single launches reads high, the winner's curse (docs/methods.md measures by how much). The other levels
keep TechEmpower's one launch.

Decided from the records alone, so an interrupted run resumes where it stopped."""

from __future__ import annotations

import random

from crossbench.figures import points
from crossbench.plan.cellplan import CellPlan, launches_so_far
from crossbench.plan.experiment_expand import round_seed
from crossbench.plan.experiment_schema import RunSettings


def next_launches(cells: list[CellPlan], records: list[dict], run: RunSettings) -> list[CellPlan]:
    """One more launch of each best level with fewer than best_level_launches; none without the setting. Called
    once the plan's cells have run (a worker sweep's steps after its stop never do, and block nothing)."""
    wanted_n = run.best_level_launches
    if wanted_n < 2:
        return []
    planned, launched = launches_so_far(cells)
    wanted = [
        planned[pid].launch(launched[pid] + 1)
        for pid in best_points(records)
        if pid in planned and launched[pid] < wanted_n
    ]
    if run.shuffle and wanted:
        random.Random(round_seed(run.shuffle_seed, len(cells))).shuffle(wanted)
    return wanted


def best_points(records: list[dict]) -> list[str]:
    """The point id of each (group, server)'s best level (points.best_throughput) among the closed-loop points that
    ran and may be stated as one (points.may_be_best: what TechEmpower's reference picks among)."""
    ran = [point for point in points.aggregate(records) if point.get("rate") is None and points.may_be_best(point)]
    best = points.best_throughput(ran, lambda point: (point.get("group"), point.get("server")))
    return [point["point_id"] for point in best.values()]

"""TechEmpower's best levels launched again (best_level_launches): which launches the run adds, from the records
alone, until each stack's best level in each group has its launches."""

import pytest

from crossbench import stats
from crossbench.decide import best_levels
from crossbench.figures import points
from crossbench.plan import experiment
from crossbench.plan.experiment_schema import ExperimentError


def config(**run):
    loaded = experiment.load("tfb-quick")
    loaded["run"].update({"best_level_launches": 3, **run})
    return experiment.apply_overrides(loaded, {"shuffle": False})


def record(cell, rps):
    return {**cell.to_dict(), "status": "ok", "flags": [], "rps": rps, "latency_ms": {"p99": 1.0}}


def rps_of(cell):
    """Throughput that rises with the worker count and differs by server: one clear best per group and server."""
    return 1000.0 * (1 + (cell.sweep_step or 1)) * (2 if cell.server == "uvicorn" else 1) + cell.repetition


def run_to_the_end(conf):
    cells = experiment.expand(conf)
    records = [record(c, rps_of(c)) for c in cells]
    added = []
    for _ in range(50):
        more = best_levels.next_launches(cells, records, experiment.recorded(conf).run)
        if not more:
            return cells, records, added
        cells += more
        added += more
        records += [record(c, rps_of(c)) for c in more]
    raise AssertionError("best levels never ended")


def test_each_stacks_best_level_in_each_group_gets_three_launches_and_nothing_else_does():
    cells, records, added = run_to_the_end(config())
    stacks = {(c.group, c.server) for c in experiment.expand(config())}
    assert {(c.group, c.server) for c in added} == stacks
    by_point = {}
    for c in cells:
        by_point.setdefault(c.point_id, []).append(c.repetition)
    relaunched = {pid for pid, reps in by_point.items() if len(reps) > 1}
    assert len(relaunched) == len(stacks)
    for pid in relaunched:
        assert sorted(by_point[pid]) == [1, 2, 3]
    for group, server in stacks:  # the relaunched point is the one with the most workers (the highest rps)
        here = [c for c in cells if (c.group, c.server) == (group, server)]
        top = max(here, key=lambda c: c.sweep_step or 1)
        assert top.point_id in relaunched


def test_the_pick_is_the_plans_launch_and_launches_after_it_never_move_it():
    """Launched again, a lucky best level (here a worker count) reads lower; under a mean over launches the best
    would move to the next one. The pick reads each level's first launch only."""
    conf = config()
    cells = [c for c in experiment.expand(conf) if c.server == "tornado" and c.group == "json"]
    first = {c.point_id: 10_000.0 + c.sweep_step for c in cells}  # the most workers read best ...
    top = max(cells, key=lambda c: c.sweep_step)
    records = [record(c, first[c.point_id]) for c in cells]
    added = []
    for _ in range(5):
        more = best_levels.next_launches(cells, records, experiment.recorded(conf).run)
        cells += more
        added += more
        records += [record(c, 1_000.0) for c in more]  # ... and far less when launched again
    assert [(c.point_id, c.repetition) for c in added] == [(top.point_id, 2), (top.point_id, 3)]


def test_a_best_level_is_stated_from_the_launches_after_the_one_that_picked_it():
    """Known answer: launches 12,600 (the pick), 12,000, 12,400, 12,200: the figure is the geometric mean of the
    last three, 12,199, with their interval; a level of one launch is left as it is."""
    cells = [f"p-r{n}" for n in (1, 2, 3, 4)]
    records = [
        {"cell_id": cell, "point_id": "p", "repetition": n, "status": "ok", "flags": [], "rps": rps, "latency_ms": {}}
        for n, (cell, rps) in enumerate(zip(cells, (12600, 12000, 12400, 12200)), 1)
    ]
    [point] = points.aggregate(records)
    assert points.picking_rps(point) == 12600
    again = points.confirming(point, records)
    assert again["cells"] == cells[1:] and again["n"] == 3 and again["picked_by"] == "p-r1"
    assert again["figures"]["rps"] == stats.estimate([12000, 12400, 12200]).as_figure()
    assert again["figures"]["rps"]["value"] == pytest.approx(12199, abs=1)
    [alone] = points.aggregate(records[:1])
    assert points.confirming(alone, records[:1]) is alone


@pytest.mark.parametrize(
    "flag, picked", [("few_completions", "next"), ("loadgen_saturated", "top"), ("server_closed_connections", "top")]
)
def test_a_level_the_analysis_cannot_state_is_not_launched_again(flag, picked):
    """The highest level's launch is flagged: a flag the reference leaves out (too few round trips) moves the
    launches to the next level, the one the analysis then states; the generator's ceiling and a caveat do not."""
    conf = config()
    cells = [c for c in experiment.expand(conf) if c.server == "tornado" and c.group == "json"]
    top = max(cells, key=lambda c: c.sweep_step)
    following = max((c for c in cells if c is not top), key=lambda c: c.sweep_step)
    records = [{**record(c, 1000.0 * c.sweep_step), "flags": [flag] if c is top else []} for c in cells]
    more = best_levels.next_launches(cells, records, experiment.recorded(conf).run)
    assert [c.point_id for c in more] == [(following if picked == "next" else top).point_id]


def test_nothing_is_added_without_the_setting():
    conf = config(best_level_launches=0)
    cells = experiment.expand(conf)
    records = [record(c, rps_of(c)) for c in cells]
    assert best_levels.next_launches(cells, records, experiment.recorded(conf).run) == []


def test_the_steps_a_stopped_sweep_never_ran_block_nothing():
    """A worker sweep stops after two drops: its later steps are planned and never recorded."""
    conf = config()
    cells = experiment.expand(conf)
    ran = [c for c in cells if not (c.sweep and c.sweep_step and c.sweep_step > 2)]
    assert len(ran) < len(cells)
    more = best_levels.next_launches(cells, [record(c, rps_of(c)) for c in ran], experiment.recorded(conf).run)
    assert more and all(c.repetition == 2 for c in more)


@pytest.mark.parametrize("bad", [1, -1, "3", True])
def test_a_best_level_count_it_cannot_use_is_refused(bad):
    with pytest.raises(ExperimentError, match="best_level_launches"):
        config(best_level_launches=bad)

"""The plan line and the progress line: a cell that runs to a request count (ab -n) is not shown against a window
it does not keep, and the plan says how many such cells its estimate counts as their window."""

from __future__ import annotations

import io

from crossbench.plan import experiment, experiment_expand
from crossbench.run.progress import Progress
from crossbench.run.run import plan_summary


def plan(name: str):
    config = experiment.apply_overrides(experiment.load(name), {"shuffle": False})
    return experiment.recorded(config), experiment.expand(config)


def test_the_plan_line_says_which_cells_run_to_a_request_count():
    config, cells = plan("seed000")
    counted = [c for c in cells if c.kind == "fixed_count"]
    assert counted and len(counted) < len(cells)
    line = plan_summary(config, cells, cells, Progress(len(cells), 60.0, stream=io.StringIO()))
    assert f"({len(counted)} of them run to a request count, not a window" in line
    config, cells = plan("seed002")
    assert "request count" not in plan_summary(config, cells, cells, Progress(len(cells), 15.0, io.StringIO()))


def test_the_plan_line_counts_the_first_rounds_and_the_launches_decided_after_them_apart():
    config, cells = plan("quick")
    rounds = experiment_expand.first_rounds(config.run)
    relaunch = cells[0].launch(rounds + 1)
    line = plan_summary(config, cells + [relaunch], [relaunch], Progress(len(cells) + 1, 15.0, io.StringIO()))
    assert f"points x {rounds} rounds and 1 launch decided after them" in line
    line = plan_summary(config, cells, cells, Progress(len(cells), 15.0, io.StringIO()))
    assert f"points x {rounds} rounds" in line and "decided after them" not in line


def test_a_request_count_phase_shows_its_time_without_a_window():
    progress = Progress(3, 20.0, stream=io.StringIO())
    progress.start_cell(1, "tornado /delay/sync C=40")
    progress.phase("measure", None, None)
    assert "measure 0 s, to its request count" in progress.line()
    progress.phase("measure", None, 15.0)
    assert "measure 0/15 s" in progress.line()
    progress.close()


def test_the_plan_line_of_tfb_says_its_best_levels_are_launched_again():
    config, cells = plan("tfb")
    line = plan_summary(config, cells, cells, Progress(len(cells), 20.0, io.StringIO()))
    assert "; then each stack's best level in each group up to 4 launches" in line

"""The run's loop: the cells in order, each record appended as soon as it is measured (a stopped worker sweep
skipped, an open-loop rate taken from its measured peak), then the launches decided from what was measured (more
rounds of the points not yet precise enough, capacity searches' steps, best levels launched again); a fault of
the environment ends it with one line (faults.py)."""

from __future__ import annotations

import sys
from dataclasses import replace

from crossbench.cell import faults
from crossbench.cell.cell import run_cell
from crossbench.cell.cell_context import CellContext
from crossbench.cell.cell_record import failed_record
from crossbench.database.stack import RunDatabase
from crossbench.decide import best_levels, capacity, disturbed, precision
from crossbench.decide.between_cells import PeakMissing, sweep_stopped, with_rate_from_peak
from crossbench.drivers import DRIVERS
from crossbench.plan.cellplan import CellPlan
from crossbench.plan.experiment_schema import Experiment, RunSettings
from crossbench.record.record import now_iso
from crossbench.record.rundir import RunDir

from .open_placement import Placement
from .progress import Progress


def execute(
    run_dir: RunDir,
    todo: list[CellPlan],
    progress: Progress,
    database: RunDatabase | None,
    placement: Placement,
    keep_up_s: float = 0.0,
    measured_once: bool = False,
) -> int:
    """Runs the cells in order, each record appended as it ends; returns how many were run. `measured_once`:
    the run launches each point once (a worker sweep then stops by the article's plain rule)."""
    first_index = progress.total - len(todo) + 1
    launched = 0
    for offset, plan in enumerate(todo):
        stopped = sweep_stopped(plan, measured(run_dir), single_launch=measured_once)
        if stopped:
            print(f"run_all: not running {plan.cell_id}: its worker sweep stopped: {stopped}", file=sys.stderr)
            continue
        launched += 1
        progress.start_cell(first_index + offset, plan.describe())
        driver = DRIVERS[plan.kind]
        # a held window's one process runs its load before, through and after the window: its whole length shows
        measure_s = driver.planned_s(plan) if driver.holds(plan) else plan.duration_s
        length = {"warmup": plan.warmup_s, "measure": measure_s if driver.ends_at_window else None}
        ctx = CellContext(
            cell_dir=run_dir.cell_dir(plan.cell_id),
            database=database,
            on_progress=lambda phase, sampler: progress.phase(phase, sampler, length[phase]),
            placement=placement,
            keep_up_s=keep_up_s,
        )
        try:
            record = run_cell(with_rate_from_peak(plan, measured(run_dir)), ctx)
        except PeakMissing as e:
            record = failed_record(plan, now_iso(), e)
        run_dir.append(record)
        progress.end_cell(cell_summary(record))
    return launched


def launched_once(run: RunSettings) -> bool:
    """A run without a precision target that launches each point once (the seeds' own protocols)."""
    return not run.precision and run.repetitions == 1


def execute_decided(
    run_dir: RunDir,
    cells: list[CellPlan],
    progress: Progress,
    database: RunDatabase | None,
    placement: Placement,
    keep_up_s: float,
    decide,
    say,
) -> int:
    """Launches decided from what the run measured so far: `decide(cells, records)` gives the next ones (already
    in their order) until it gives none; each batch joins plan.json before it runs, so --resume keeps it, and
    `say(batch)` tells the terminal why. Returns the launches run."""
    launched = 0
    while more := decide(cells, run_dir.records()):
        more = [replace(cell, index=len(cells) + position) for position, cell in enumerate(more, 1)]
        run_dir.extend_plan([cell.to_dict() for cell in more])
        cells += more
        progress.total += len(more)
        print(f"run_all: {say(more)}", file=sys.stderr)
        launched += execute(run_dir, more, progress, database, placement, keep_up_s)
    return launched


def execute_rest(
    run_dir: RunDir,
    cells: list[CellPlan],
    experiment: Experiment,
    progress: Progress,
    database: RunDatabase | None,
    placement: Placement,
    keep_up_s: float = 0.0,
) -> int:
    """After the plan's cells: the precision target's rounds (crossbench.decide.precision), the capacity searches'
    steps (crossbench.decide.capacity) and TechEmpower's best levels launched again (crossbench.decide.best_levels)."""
    run = experiment.run
    searching = capacity.search_groups(experiment)
    steps = (
        (
            lambda c, r: disturbed.relaunches(c, r, run, searching),
            lambda more: (
                f"{len(more)} launches the host disturbed (noisy_host), cut too short (window_too_short: "
                "launched again with a longer window) or far outside their siblings: launching them again once"
            ),
        ),
        (
            lambda c, r: precision.next_round(c, r, run),
            lambda more: f"{len(more)} points not yet within {run.precision:g}: launching them again",
        ),
        (
            lambda c, r: capacity.next_launches(c, r, experiment),
            lambda more: (
                f"capacity search: {len(more)} launches at "
                f"{', '.join(sorted({f'{cell.rate:g}' for cell in more}, key=float))} req/s"
            ),
        ),
        (
            lambda c, r: best_levels.next_launches(c, r, run),
            lambda more: f"{len(more)} best levels launched again (best_level_launches = {run.best_level_launches})",
        ),
    )
    return sum(
        execute_decided(run_dir, cells, progress, database, placement, keep_up_s, decide, say) for decide, say in steps
    )


def measured(run_dir: RunDir) -> dict[str, dict]:
    """The run's records so far by cell id (the last one of a cell that was run again)."""
    return {record["cell_id"]: record for record in run_dir.records()}


def cell_summary(record: dict) -> str:
    if record["status"] != "ok":
        return f"FAILED ({record.get('error', '')[:160]})"
    mean = record["latency_ms"]["mean"]
    text = f"{record['rps']:.1f} req/s, " + (
        f"mean {mean:.1f} ms" if mean is not None else f"max {record['latency_ms']['max']} ms (no valid mean)"
    )
    if record.get("efficiency_ratio") is not None:
        text += f", ratio {record['efficiency_ratio']:.2f} (latency ratio {record['latency_ratio']:.2f})"
    if record.get("threads_peak") is not None:
        text += f", threads peak {record['threads_peak']}"
    return text + (f"  flags: {','.join(record['flags'])}" if record["flags"] else "")


def stopped_by_environment(error: Exception, run_dir: RunDir, total: int) -> int:
    """A full or read-only results disk, a tool gone: one line, the finished records kept (faults.py)."""
    message = faults.stop_message(error, run_dir.path, len(run_dir.finished_ids()), total)
    if message is None:
        raise error
    print(f"\n{message}", file=sys.stderr)
    return faults.EXIT_CODE

"""The run's loop: the cells in order, each record appended as soon as it is measured (a stopped worker sweep
skipped, an open-loop rate taken from its measured peak), then more rounds of the points not yet precise
enough; a fault of the environment ends it with one line (faults.py)."""
from __future__ import annotations

import sys
from dataclasses import replace

from . import experiment, faults, metadata, precision
from .cell import CellContext, failed_record, run_cell
from .drivers import DRIVERS
from .experiment import CellPlan
from .placement import Placement
from .progress import Progress
from .rundir import RunDir
from .stack import RunDatabase


def execute(run_dir: RunDir, todo: list[CellPlan], progress: Progress, database: RunDatabase | None,
            placement: Placement, hold_s: float = 0.0, measured_once: bool = False) -> int:
    """Runs the cells in order, each record appended as it ends; returns how many were run. `measured_once`:
    the run launches each point once (a worker sweep then stops by the article's plain rule)."""
    first_index = progress.total - len(todo) + 1
    launched = 0
    for offset, plan in enumerate(todo):
        stopped = experiment.sweep_stopped(plan, measured(run_dir), single_launch=measured_once)
        if stopped:
            print(f"run_all: not running {plan.cell_id}: its worker sweep stopped: {stopped}", file=sys.stderr)
            continue
        launched += 1
        progress.start_cell(first_index + offset, plan.describe())
        length = {"warmup": plan.warmup_s, "measure": plan.duration_s if DRIVERS[plan.kind].ends_at_window else None}
        ctx = CellContext(cell_dir=run_dir.cell_dir(plan.cell_id), database=database,
                          on_progress=lambda phase, sampler: progress.phase(phase, sampler, length[phase]),
                          placement=placement, hold_s=hold_s)
        try:
            record = run_cell(experiment.with_rate_from_peak(plan, measured(run_dir)), ctx)
        except experiment.PeakMissing as e:
            record = failed_record(plan, metadata.now_iso(), e)
        run_dir.append(record)
        progress.end_cell(cell_summary(record))
    return launched


def launched_once(run: dict) -> bool:
    """A run without a precision target that launches each point once (the seeds' own protocols)."""
    return not run.get("precision") and int(run.get("repetitions") or 1) == 1


def execute_precision(run_dir: RunDir, cells: list[CellPlan], run: dict, progress: Progress,
                      database: RunDatabase | None, placement: Placement, hold_s: float = 0.0) -> int:
    """With a precision target: more rounds of the points not yet precise enough (crossbench.precision); each
    round's launches join plan.json before they run. Returns the launches run."""
    launched = 0
    while more := precision.next_round(cells, run_dir.records(), run):
        more = [replace(cell, index=len(cells) + position) for position, cell in enumerate(more, 1)]
        run_dir.extend_plan([cell.to_dict() for cell in more])
        cells += more
        progress.total += len(more)
        print(f"run_all: {len(more)} points not yet within {run['precision']:g}: launching them again",
              file=sys.stderr)
        launched += execute(run_dir, more, progress, database, placement, hold_s)
    return launched


def measured(run_dir: RunDir) -> dict[str, dict]:
    """The run's records so far by cell id (the last one of a cell that was run again)."""
    return {record["cell_id"]: record for record in run_dir.records()}


def cell_summary(record: dict) -> str:
    if record["status"] != "ok":
        return f"FAILED ({record.get('error', '')[:160]})"
    mean = record["latency_ms"]["mean"]
    text = f"{record['rps']:.1f} req/s, " + (f"mean {mean:.1f} ms" if mean is not None else
                                              f"max {record['latency_ms']['max']} ms (no valid mean)")
    if record.get("efficiency_ratio") is not None:
        text += f", ratio {record['efficiency_ratio']:.2f} (latency ratio {record['latency_ratio']:.2f})"
    text += f", threads peak {record['threads_peak']}"
    return text + (f"  flags: {','.join(record['flags'])}" if record["flags"] else "")


def stopped_by_environment(error: Exception, run_dir: RunDir, total: int) -> int:
    """A full or read-only results disk, a tool gone: one line, the finished records kept (faults.py)."""
    message = faults.stop_message(error, run_dir.path, len(run_dir.finished_ids()), total)
    if message is None:
        raise error
    print(f"\n{message}", file=sys.stderr)
    return faults.EXIT_CODE

"""The run: plans (or resumes) an experiment, checks it before the first cell, opens its hosts and database, runs
its cells into a run directory, then writes points.jsonl and draws the charts. The command line is run_args.py
(run_all.sh's --help), the checks before the first cell run_checks.py, the loop over the cells run_loop.py. A run
is plan(), execute_planned() and finish(); a refusal before the first cell is a Refusal (crossbench.refusal) with
its exit status."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import datetime

from crossbench import oskit, paths
from crossbench.advice_load import Workload
from crossbench.cell import faults
from crossbench.database.stack import RunDatabase
from crossbench.decide import capacity, capacity_answer, capacity_words, precision, retry, slo
from crossbench.drivers import DRIVERS
from crossbench.figures import points
from crossbench.hosts.placement import Placement
from crossbench.plan import experiment, experiment_expand
from crossbench.plan.cellplan import CellPlan, plan_from_dict
from crossbench.plan.experiment_schema import Experiment, RunSettings
from crossbench.record.record import now_iso
from crossbench.record.rundir import RunDir
from crossbench.refusal import Refusal
from crossbench.sampling import noise
from crossbench.version import git_revision

from . import dry_run, metadata, target_args
from .answer_checks import check_answers
from .open_placement import open_placement
from .plan_notes import held_note, threads_note
from .progress import Progress, fmt_duration
from .run_args import parse_args
from .run_checks import pin_runner, preflight, prime_servers, run_database, without_unrunnable
from .run_loop import execute, execute_rest, launched_once, stopped_by_environment

ANALYSIS = "crossbench_analysis"  # the package whose command draws a finished run (analysis/)


def resolve_config(args) -> dict:
    overrides = {k: v for k, v in vars(args).items() if v is not None}
    return experiment.apply_overrides(experiment.load(args.experiment, tuple(args.server_files)), overrides)


def new_run_dir(args, config: dict) -> RunDir:
    run_id = f"{datetime.now():%Y%m%d-%H%M%S}-{config['name']}"
    return RunDir(args.out or paths.RESULTS / run_id)


def plan_summary(resolved: Experiment, cells: list[CellPlan], todo: list[CellPlan], progress: Progress) -> str:
    run = resolved.run
    windows = sorted({c.duration_s for c in cells})
    window = f"{windows[0]:g} s" if len(windows) == 1 else f"{windows[0]:g}-{windows[-1]:g} s"
    rounds = experiment_expand.first_rounds(run)
    searching = capacity.search_groups(resolved)
    # launched past the first rounds: --retry-failed's, disturbed launches again, best levels, precision's rounds
    relaunched = sum(c.repetition > rounds and c.group not in searching for c in cells)
    retry_note = f" and {relaunched} launch{'es' * (relaunched != 1)} decided after them" if relaunched else ""
    if run.best_level_launches:
        retry_note += f"; then each stack's best level in each group up to {run.best_level_launches} launches"
    if searching:
        retry_note += "; capacity searches: three launches at each start rate, then as many as the search asks"
    precision_note = (
        f" (then as many more as the first {rounds} launches' spread asks for an interval within "
        f"{run.precision:g}, up to {run.max_launches})"
        if run.precision and run.max_launches > rounds
        else ""
    )
    counted = sum(not DRIVERS[c.kind].ends_at_window for c in todo)
    count_note = (
        f" ({counted} of them run to a request count, not a window, and are counted here as "
        "their window: the run takes longer)"
        if counted
        else ""
    )
    return (
        f"{resolved.name}: {len(cells)} cells ({len({c.point_id for c in cells})} points x {rounds} "
        f"rounds{retry_note}{precision_note}), {len(todo)} to run, {run.warmup_s:g} s warm-up + "
        f"{window} window each{held_note(cells)}; about {fmt_duration(progress.eta_s(len(todo)))}"
        f"{count_note}; "
        f"server on cores {list(run.server_cpus) or 'any'}, {run.loadgen} on cores {list(run.loadgen_cpus) or 'any'}"
        f"{target_args.shared_process_note(cells)}"
    )


def retried(cells: list[CellPlan], run_dir: RunDir, run: RunSettings) -> list[CellPlan]:
    """--retry-failed: new launches of the points whose launches all failed, numbered after the plan's cells."""
    return [
        replace(cell, index=len(cells) + position)
        for position, cell in enumerate(retry.retries(cells, run_dir.records(), run), 1)
    ]


def timing(run_dir: RunDir, wall_s: float, planned_s: float) -> dict:
    """The run's wall time and its windows' and warm-ups' time, added to what earlier sittings of a resumed run
    recorded (a resume that runs nothing leaves them as they were), and the harness's overhead over both."""
    before, _ = run_dir.load()
    wall_s += before.get("wall_s") or 0.0
    planned_s += before.get("planned_s") or 0.0
    return {
        "wall_s": round(wall_s, 1),
        "planned_s": round(planned_s, 1),
        "overhead_percent": round(100 * (wall_s / planned_s - 1), 2) if planned_s else None,
    }


def write_points(run_dir: RunDir, run: RunSettings) -> list[dict]:
    """points.jsonl: every point's figures with their intervals (the records stay the raw data, so a failure
    here loses nothing: ./analysis/analyze.sh computes them again)."""
    try:
        return points.write(run_dir.path, run_dir.records(), run.precision)
    except OSError as e:
        print(f"run_all: points.jsonl not written ({e}); the records are intact", file=sys.stderr)
        return []


def analyse(run_dir: RunDir, workload: Workload | None = None) -> None:
    """The analysis's last words on the run, by its command (crossbench_analysis.at_end): the runner imports
    nothing of the analysis, and a run without the analysis package still records."""
    if importlib.util.find_spec(ANALYSIS) is None:
        print(f"run_all: no charts drawn (no {ANALYSIS} package in this Python environment)", file=sys.stderr)
        return
    command = [sys.executable, "-m", ANALYSIS, "at-end", str(run_dir.path)]
    if workload:
        command += ["--rate", repr(workload.rate), "--hold-ms", repr(workload.hold_ms)]
        command += ["--p99-ms", repr(workload.p99_ms)] if workload.p99_ms is not None else []
    done = subprocess.run(command, check=False)
    if done.returncode != 0:
        print(
            f"run_all: the analysis stopped (exit {done.returncode}); run ./analysis/analyze.sh {run_dir.path}",
            file=sys.stderr,
        )


def main(argv=None) -> int:
    args = parse_args(argv)
    oskit.interrupt_on_signals()
    with ExitStack() as remote:  # the hosts' SSH masters: closed last, whatever happens
        try:
            return run(args, remote)
        except OSError as e:  # the run directory unwritable outside a cell (faults.py)
            line = faults.write_error_line(e)
            if line is None:
                raise
            print(line, file=sys.stderr)
            return faults.EXIT_CODE


@dataclass
class Planned:
    """A run ready for its first cell: what plan() found and opened."""

    experiment: Experiment  # the configuration metadata.json records, typed: what the run and its decisions read
    cells: list[CellPlan]
    todo: list[CellPlan]
    run_dir: RunDir
    placement: Placement
    database: RunDatabase | None
    progress: Progress
    cell_s: float  # a cell's mean warm-up and window
    kept_before: int  # cells a resumed run had already


def run(args, remote: ExitStack) -> int:
    """Plan (or resume), execute, finish; a refusal before the first cell is one line and its exit status."""
    try:
        if args.dry_run:  # the plan and what is missing, nothing run
            _, resolved, cells, run_dir, _ = planned_cells(args)
            return dry_run.show(resolved.run, summarised(resolved, cells, run_dir)[0])
        planned = plan(args, remote)
    except Refusal as e:
        print(f"run_all: {e}", file=sys.stderr)
        return e.exit_code
    pin_runner(planned.experiment.run)
    started = time.monotonic()
    try:
        launched = execute_planned(planned, args.keep_up_s)
    except KeyboardInterrupt:
        return interrupted(planned, time.monotonic() - started)
    except (faults.EnvironmentFault, OSError) as e:
        planned.progress.close()
        return stopped_by_environment(e, planned.run_dir, len(planned.cells))
    finally:
        if planned.database:
            planned.database.stop()
    return finish(planned, args, launched, time.monotonic() - started)


def planned_cells(args) -> tuple[dict, Experiment, list[CellPlan], RunDir, list[CellPlan]]:
    """A new run's plan, or a resumed one's with --retry-failed's relaunches (planned_anew, resumed), its --slo
    targets checked against its delays and its running servers' URLs against where load may go."""
    config, resolved, cells, run_dir, again = resumed(args) if args.resume else planned_anew(args)
    slo.check_reachable(args.slo, {c.delay_ms for c in cells})
    target_args.check_hosts(cells, args.hosts)
    if args.retry_failed:
        print(f"run_all: {retry.summary(again)}", file=sys.stderr)
    return config, resolved, cells, run_dir, again


def plan(args, remote: ExitStack) -> Planned:
    """The cells to run, checked before the first cell, with their hosts and database opened and the run directory
    written. Raises a Refusal for anything known wrong before the first cell."""
    config, resolved, cells, run_dir, again = planned_cells(args)
    preflight(resolved.run, cells)
    placement = open_placement(args.hosts, cells, min(c.duration_s for c in cells), remote)
    check_answers(cells, placement)  # the user's paths (--path) answer 2xx, their server deployed
    database = run_database(resolved.run, cells, run_dir, placement)
    todo, progress = summarised(resolved, cells, run_dir)
    if not args.resume:
        run_dir.create(metadata.collect(run_dir.path.name, config, sys.argv, cells), [c.to_dict() for c in cells])
        run_dir.update_metadata(noise_floor=noise.floor())  # the machine's own noise, before any load
    else:
        record_raise(run_dir, config)
    if again:
        run_dir.extend_plan([c.to_dict() for c in again])
    if placement.checks:
        run_dir.update_metadata(hosts=placement.checks)
    print(f"run directory: {run_dir.path}", file=sys.stderr)
    finished = len(cells) - len(todo)
    return Planned(resolved, cells, todo, run_dir, placement, database, progress, cell_mean_s(cells), finished)


def cell_mean_s(cells: list[CellPlan]) -> float:
    """A cell's mean warm-up and window (windows may grow with the delay)."""
    return sum(DRIVERS[c.kind].planned_s(c) for c in cells) / len(cells)


def summarised(resolved: Experiment, cells: list[CellPlan], run_dir: RunDir) -> tuple[list[CellPlan], Progress]:
    """The cells still to run (a resumed run's finished ones left out) and the progress line's count, the plan's
    line printed."""
    finished = run_dir.finished_ids()
    todo = [c for c in cells if c.cell_id not in finished]
    progress = Progress(len(cells), cell_mean_s(cells))
    progress.done = len(cells) - len(todo)
    print(plan_summary(resolved, cells, todo, progress), file=sys.stderr)
    note = threads_note(cells)
    if note:
        print(f"run_all: {note}", file=sys.stderr)
    return todo, progress


def planned_anew(args) -> tuple[dict, Experiment, list[CellPlan], RunDir, list[CellPlan]]:
    """A new run: the configuration as metadata.json will record it, typed, its cells and run directory."""
    config = resolve_config(args)
    cells = without_unrunnable(experiment.expand(config), keep_refused=args.dry_run)
    return config, experiment.recorded(config), cells, new_run_dir(args, config), []


def resumed(args) -> tuple[dict, Experiment, list[CellPlan], RunDir, list[CellPlan]]:
    """--resume DIR: its configuration and plan, and with --retry-failed the relaunches of failed points (else a
    hint that there are some)."""
    run_dir = RunDir(args.resume)
    meta, plan_dicts = run_dir.load()
    config = raised_best_levels(run_dir, meta["config"], args.best_level_launches)
    resolved = experiment.recorded(config)
    cells = [plan_from_dict(d) for d in plan_dicts]
    again = retried(cells, run_dir, resolved.run)
    if again and not args.retry_failed:
        print(retry.hint(again), file=sys.stderr)
        again = []
    return config, resolved, cells + again, run_dir, again


def raised_best_levels(run_dir: RunDir, config: dict, wanted: int | None) -> dict:
    """--resume DIR --best-level-launches N: the run's configuration with the count raised to N; a Refusal to
    lower it (launches already made stay on the record)."""
    had = config.get("run", {}).get("best_level_launches", 0)
    if wanted is None or wanted == had:
        return config
    if wanted < max(had, 2):
        raise Refusal(
            f"--best-level-launches {wanted}: a resume raises a run's count ({had} in {run_dir.path}) to 2 "
            "or more, never lowers it (launches already made stay on the record)"
        )
    return {**config, "run": {**config["run"], "best_level_launches": wanted}}


def record_raise(run_dir: RunDir, config: dict) -> None:
    """A raised count written into the run's metadata before any launch (the next resume keeps it), the change
    listed under `amended`."""
    metadata = json.loads(run_dir.metadata_file.read_text())
    had = metadata["config"].get("run", {}).get("best_level_launches", 0)
    wanted = config["run"].get("best_level_launches", 0)
    if wanted != had:
        amended = [
            *metadata.get("amended", []),
            {"at": now_iso(), "git_revision": git_revision(), "best_level_launches": {"from": had, "to": wanted}},
        ]
        run_dir.update_metadata(config=config, amended=amended)


def execute_planned(planned: Planned, keep_up_s: float) -> int:
    """The servers primed, the plan's cells, then the launches decided after them; how many were launched."""
    for made in prime_servers(planned.todo, planned.placement):
        print(f"run_all: {made}", file=sys.stderr)
    common = (planned.progress, planned.database, planned.placement, keep_up_s)
    launched = execute(planned.run_dir, planned.todo, *common, launched_once(planned.experiment.run))
    return launched + execute_rest(planned.run_dir, planned.cells, planned.experiment, *common)


def interrupted(planned: Planned, wall_s: float) -> int:
    """Ctrl-C (or SIGTERM, SIGHUP): every cell kept, points written, how to finish; exit status 130."""
    run_dir = planned.run_dir
    planned.progress.close()
    launched = len(run_dir.finished_ids()) - planned.kept_before  # the cells this sitting kept
    run_dir.update_metadata(**timing(run_dir, wall_s, launched * planned.cell_s))
    write_points(run_dir, planned.experiment.run)
    print(
        f"\nrun_all: interrupted; {len(run_dir.finished_ids())} cells kept in {run_dir.path}; "
        f"finish with: ./runner/run_all.sh --resume {run_dir.path}",
        file=sys.stderr,
    )
    return 130


def finish(planned: Planned, args, launched: int, wall_s: float) -> int:
    """After the last cell: timing, points.jsonl, capacity.json, the analysis, and --slo's verdict (the exit
    status)."""
    run_dir, run = planned.run_dir, planned.experiment.run
    planned.progress.close()
    run_dir.update_metadata(ended_at=now_iso(), **timing(run_dir, wall_s, launched * planned.cell_s))
    print(
        f"run_all: {launched} cells in {fmt_duration(wall_s)} (windows and warm-ups "
        f"{fmt_duration(launched * planned.cell_s)}); results in {run_dir.path}",
        file=sys.stderr,
    )
    point_records = write_points(run_dir, run)
    if run.precision:
        print(f"run_all: {precision.summary(point_records, run.precision)}", file=sys.stderr)
    found = write_capacity(run_dir, planned.experiment)
    if not args.no_analysis:
        analyse(run_dir, args.workload)
    if found and args.no_analysis:  # else the findings, printed last, say it with the rest
        print(capacity_words.summary(found), file=sys.stderr)
    return judged(run_dir, point_records, args.slo)


def write_capacity(run_dir: RunDir, resolved: Experiment) -> list[dict]:
    """capacity.json: each capacity search's answer, its cost and the rates it tried (none without searches)."""
    found = capacity_answer.outcomes(run_dir.records(), resolved)
    if found:
        (run_dir.path / capacity.FILE).write_text(json.dumps(found, indent=1) + "\n")
    return found


def judged(run_dir: RunDir, point_records: list[dict], targets: list[slo.Target]) -> int:
    """--slo: every point against every target, printed last and kept in slo.json; the exit status a pipeline
    gates on (slo.EXIT_FAILED when a point fails)."""
    if not targets:
        return 0
    judgements = slo.evaluate(point_records, run_dir.records(), targets)
    (run_dir.path / "slo.json").write_text(json.dumps(slo.as_records(judgements), indent=1) + "\n")
    print(slo.summary(judgements), file=sys.stderr)
    if slo.failed(judgements):
        print(
            f"run_all: a point failed its target (slo.json in {run_dir.path}): exit status {slo.EXIT_FAILED}",
            file=sys.stderr,
        )
        return slo.EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())

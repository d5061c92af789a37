"""`./runner/run_all.sh [options]`: runs an experiment into a run directory, cell by cell, resumable.

Checks everything it can before the first cell (options, tools, build, ports, file limits); then each cell
gets a fresh server and its record is appended as soon as it is measured.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from . import experiment, faults, loadgen, metadata, oskit, paths, points, precision, servers, stack
from .cell import CellContext, failed_record, run_cell
from .database import DatabaseError
from .stack import RunDatabase, needs_database
from .drivers import DRIVERS, DriverRefused
from .hosts import HostsError
from .placement import Placement, open_placement
from .experiment import CellPlan, ExperimentError
from .progress import Progress, fmt_duration
from .serve import interrupt_on_signals, knob_argument
from .rundir import RunDir, RunDirError
from .sampling import noise


DEFAULT_EXPERIMENT = "seed002"


class Refused(RuntimeError):
    """A clear reason not to start, given before anything runs."""


def int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers separated by commas, not {text!r}") from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected non-negative integers, not {text!r}")
    return values


def rate_list(text: str) -> list[int] | str:
    """--rates 50,100,200, or --rates auto (shares of each cell's closed-loop peak, measured first)."""
    return experiment.AUTO_RATES if text.strip() == experiment.AUTO_RATES else int_list(text)


def share(text: str) -> float | bool:
    """--precision 0.03, or --precision off (one launch a point unless --repetitions says more)."""
    if text.strip() == "off":
        return False
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, not {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1 (0.03 = within 3 %), not {text}")
    return value


def name_list(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def parse_args(argv):
    p = argparse.ArgumentParser(prog="run_all.sh", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--experiment", default=DEFAULT_EXPERIMENT, help="name under runner/experiments/ or a .toml path")
    p.add_argument("--quick", action="store_true", help="the quick profile (experiment 'quick')")
    p.add_argument("--out", type=Path, help="run directory (default results/<run-id>/)")
    p.add_argument("--resume", type=Path, metavar="DIR", help="finish an interrupted run: only missing cells")
    p.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    p.add_argument("--no-analysis", action="store_true", help="do not draw charts at the end")
    p.add_argument("--hold-s", type=float, default=0.0, metavar="S", help="keep each cell's server up S seconds "
                   "after its window, its pid printed (attach VisualVM to the JVM that was measured)")
    p.add_argument("--hosts", type=Path, metavar="FILE", help="roles on other machines over SSH (TOML: README, "
                   "\"Running on several machines\"); without it every role runs here")
    m = p.add_argument_group("matrix overrides (replace the experiment file's values)")
    m.add_argument("--servers", type=name_list)
    m.add_argument("--groups", type=name_list, help="only these groups of the experiment (e.g. static,delay)")
    m.add_argument("--concurrency", type=int_list, help="closed loop: connections; open loop: most in flight")
    m.add_argument("--rates", type=rate_list, help="open loop (--loadgen oha or k6): offered requests per second, "
                   "or 'auto' (10%% to 120%% of the closed-loop peak, measured first)")
    m.add_argument("--delays", type=int_list, dest="delays_ms", help="delays in ms, e.g. 1000,3000")
    m.add_argument("--db-url", help="database cells: use this PostgreSQL (holding the tables, ./runner/db.sh load) "
                   "instead of the run's own cluster")
    m.add_argument("--duration", type=float, dest="duration_s", help="measured window per cell, seconds")
    m.add_argument("--warmup", type=float, dest="warmup_s", help="unrecorded warm-up per cell, seconds")
    m.add_argument("--repetitions", type=int, help="launches of every point, in rounds (every point once, then again)")
    m.add_argument("--precision", type=share, help="launch each point until its headline figure's 95%% interval "
                   "is within this share of its mean (e.g. 0.03), between --min-launches and --max-launches; "
                   "off: the experiment's repetitions only (the seeds' own protocols)")
    m.add_argument("--min-launches", type=int, dest="min_launches", help="with --precision: first rounds (default 2)")
    m.add_argument("--max-launches", type=int, dest="max_launches", help="with --precision: at most (default 6)")
    m.add_argument("--shuffle", action="store_true", default=None, help="shuffle each round's order (the default)")
    m.add_argument("--no-shuffle", dest="shuffle", action="store_false", help="run each round in plan order")
    m.add_argument("--loadgen", choices=sorted(loadgen.ADAPTERS))
    m.add_argument("--connection-close", dest="keepalive", action="store_false", default=None,
                   help="one connection per request (as http_load) instead of keep-alive")
    for name, knob in server_knobs().items():
        knob_argument(m, knob, sweep=True, help_prefix=f"[{', '.join(knob_owners(name))}] ")
    m.add_argument("--server-cpus", type=int_list)
    m.add_argument("--loadgen-cpus", type=int_list)
    m.add_argument("--loadgen-threads", type=int)
    a = p.add_argument_group("maxThreads advice at the end (the maxthreads experiments; also ./analysis/advise.sh)")
    a.add_argument("--advise-rate", type=float, metavar="REQ_PER_S", help="your arrival rate, requests per second")
    a.add_argument("--advise-hold-ms", type=float, metavar="MS", help="how long one request holds a thread, ms")
    a.add_argument("--advise-p99-ms", type=float, metavar="MS", help="optional: your p99 latency target, ms")
    args = p.parse_args(argv)
    try:
        args.workload = advice_workload(args)
    except ValueError as e:          # the analysis' WorkloadRefused: refused before anything runs
        p.exit(2, f"run_all: {e}\n")
    if args.quick:
        args.experiment = quick_variant(p, args.experiment)
    if args.resume and args.out:
        p.error("--resume DIR continues that directory; --out does not go with it")
    return args


def advice_workload(args):
    """The --advise-* workload checked by the analysis (crossbench_analysis.workload), or None when not given."""
    given = (args.advise_rate, args.advise_hold_ms, args.advise_p99_ms)
    if all(v is None for v in given):
        return None
    sys.path.insert(0, str(paths.REPO / "analysis"))
    from crossbench_analysis.workload import checked
    return checked(*given, names=("--advise-rate", "--advise-hold-ms", "--advise-p99-ms"))


def server_knobs() -> dict:
    """Every server knob by name (a name several servers share is one option that sets it on each)."""
    return {knob.name: knob for plugin in servers.PLUGINS.values() for knob in plugin.knobs}


def knob_owners(name: str) -> list[str]:
    return [p.name for p in servers.PLUGINS.values() if any(k.name == name for k in p.knobs)]


def quick_variant(parser, name: str) -> str:
    """--quick alone is the quick profile; with --experiment X it is X's quick variant, X-quick."""
    if name == DEFAULT_EXPERIMENT:
        return "quick"
    if name.endswith("-quick") or name == "quick":
        return name
    if (paths.EXPERIMENTS / f"{name}-quick.toml").is_file():
        return f"{name}-quick"
    parser.error(f"--quick: experiment {name} has no quick variant ({name}-quick.toml); run it without --quick "
                 f"or shorten it with --duration")


def resolve_config(args) -> dict:
    overrides = {k: v for k, v in vars(args).items() if v is not None}
    return experiment.apply_overrides(experiment.load(args.experiment), overrides)


def preflight(config: dict, cells: list[CellPlan]) -> None:
    """Everything that can be known wrong before the first cell."""
    run = config["run"]
    for cell in cells:
        DRIVERS[cell.kind].preflight(cell)
    for plugin, settings in {(c.server, repr(c.settings)): (c.plugin, c.settings) for c in cells}.values():
        plugin.preflight(settings)
    usable = os.sched_getaffinity(0)
    for key in ("server_cpus", "loadgen_cpus"):
        missing = set(run[key]) - usable
        if missing:
            raise Refused(f"{key} {run[key]}: cores {sorted(missing)} are not available here "
                          f"(usable: {sorted(usable)})")
    # RLIMIT_NOFILE is per process: the client and the server are separate processes and each holds one end
    # of a connection; both inherit the runner's limit.
    oskit.raise_open_files(max(c.concurrency for c in cells))
    stack.preflight(cells, run.get("db_url"))


def without_unrunnable(cells: list[CellPlan]) -> list[CellPlan]:
    """Cells a server cannot run on this machine (virtual threads without JDK 21+): say so and run the rest."""
    runnable, reasons = [], {}
    for cell in cells:
        try:
            cell.plugin.preflight(cell.settings)
            runnable.append(cell)
        except servers.CannotRunHere as e:
            reasons[str(e)] = reasons.get(str(e), 0) + 1
    if not runnable:
        raise Refused("; ".join(reasons))
    for reason, count in reasons.items():
        print(f"run_all: skipping {count} cells: {reason}", file=sys.stderr)
    return runnable


def new_run_dir(args, config: dict) -> RunDir:
    run_id = f"{datetime.now():%Y%m%d-%H%M%S}-{config['name']}"
    return RunDir(args.out or paths.RESULTS / run_id)


def pin_runner(run: dict) -> None:
    """The runner (sampler, progress) shares the load generator's cores, never the server's."""
    if run["loadgen_cpus"] and run["server_cpus"]:
        os.sched_setaffinity(0, set(run["loadgen_cpus"]))


def plan_summary(config: dict, cells: list[CellPlan], todo: list[CellPlan], progress: Progress) -> str:
    run = config["run"]
    windows = sorted({c.duration_s for c in cells})
    window = f"{windows[0]:g} s" if len(windows) == 1 else f"{windows[0]:g}-{windows[-1]:g} s"
    rounds = max(c.repetition for c in cells)
    precision_note = f" (then more launches of points not within {run['precision']:g}, up to " \
                     f"{run['max_launches']})" if run.get("precision") else ""
    return (f"{config['name']}: {len(cells)} cells ({len({c.point_id for c in cells})} points x {rounds} "
            f"rounds{precision_note}), {len(todo)} to run, {run['warmup_s']:g} s warm-up + "
            f"{window} window each; about {fmt_duration(progress.eta_s(len(todo)))}; "
            f"server on cores {run['server_cpus'] or 'any'}, {run['loadgen']} on cores {run['loadgen_cpus'] or 'any'}")


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


def run_database(config: dict, cells: list[CellPlan], run_dir: RunDir, placement: Placement):
    """The database for the run's database cells: --db-url's (checked now), the db host's, else a cluster of
    its own here."""
    wanted = [c for c in cells if needs_database(c)]
    if not wanted:
        return None
    pools = max((c.settings.get("db_pool") or 0) * c.plugin.process_count(c.settings) for c in wanted)
    database = placement.db_host.database(run_dir.path, placement.db_clients, pools, config["run"].get("db_url"),
                                          tuple(config["run"]["server_cpus"]))
    database.check_existing()
    return database


def execute(run_dir: RunDir, todo: list[CellPlan], progress: Progress, database: RunDatabase | None,
            placement: Placement, hold_s: float = 0.0) -> int:
    """Runs the cells in order, each record appended as it ends; returns how many were run."""
    first_index = progress.total - len(todo) + 1
    launched = 0
    for offset, plan in enumerate(todo):
        stopped = experiment.sweep_stopped(plan, measured(run_dir))
        if stopped:
            print(f"run_all: not running {plan.cell_id}: its worker sweep stopped: {stopped}", file=sys.stderr)
            continue
        launched += 1
        progress.start_cell(first_index + offset, plan.describe())
        length = {"warmup": plan.warmup_s, "measure": plan.duration_s}
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


def write_points(run_dir: RunDir, config: dict) -> list[dict]:
    """points.jsonl: every point's figures with their intervals (the records stay the raw data, so a failure
    here loses nothing: ./analysis/analyze.sh computes them again)."""
    try:
        return points.write(run_dir.path, run_dir.records(), config["run"].get("precision"))
    except OSError as e:
        print(f"run_all: points.jsonl not written ({e}); the records are intact", file=sys.stderr)
        return []


def stopped_by_environment(error: Exception, run_dir: RunDir, total: int) -> int:
    """A full or read-only results disk, a tool gone: one line, the finished records kept (faults.py)."""
    message = faults.stop_message(error, run_dir.path, len(run_dir.finished_ids()), total)
    if message is None:
        raise error
    print(f"\n{message}", file=sys.stderr)
    return faults.EXIT_CODE


def measured(run_dir: RunDir) -> dict[str, dict]:
    """The run's records so far by cell id (the last one of a cell that was run again)."""
    return {record["cell_id"]: record for record in run_dir.records()}


def analyse(run_dir: RunDir, config: dict, workload=None) -> None:
    sys.path.insert(0, str(paths.REPO / "analysis"))
    try:
        import crossbench_analysis
        from crossbench_analysis import findings, knees
    except ImportError as e:
        print(f"run_all: no charts drawn ({e})", file=sys.stderr)
        return
    try:
        crossbench_analysis.analyze(run_dir.path)
    except crossbench_analysis.AnalysisError as e:   # the measurements are safe; only drawing failed
        print(f"run_all: charts incomplete: {e}\nredraw with ./analysis/analyze.sh {run_dir.path}", file=sys.stderr)
    if config.get("analysis", {}).get("knees"):     # the experiment asks to hear its knees at the end
        print(knees.summary(knees.read_jsonl(run_dir.path / "charts" / "data" / knees.KNEES_FILE)), file=sys.stderr)
    if config.get("analysis", {}).get("advise") or workload:    # maxThreads advice (advice.md, advice.json)
        from crossbench_analysis import advice
        print(advice.at_end(run_dir.path, workload), file=sys.stderr)
    found = findings.text(run_dir.path)     # the run's findings (findings.md), last before the report's path
    if found:
        print(found, file=sys.stderr)
    print(f"charts and report: {run_dir.path / 'report.html'}", file=sys.stderr)


def main(argv=None) -> int:
    args = parse_args(argv)
    interrupt_on_signals()
    with ExitStack() as remote:      # the hosts' SSH masters: closed last, whatever happens
        try:
            return run(args, remote)
        except OSError as e:          # the run directory unwritable outside a cell (faults.py)
            line = faults.write_error_line(e)
            if line is None:
                raise
            print(line, file=sys.stderr)
            return faults.EXIT_CODE


def run(args, remote: ExitStack) -> int:
    try:
        if args.resume:
            run_dir = RunDir(args.resume)
            meta, plan_dicts = run_dir.load()
            config = meta["config"]
            cells = [experiment.plan_from_dict(d) for d in plan_dicts]
        else:
            config = resolve_config(args)
            cells = without_unrunnable(experiment.expand(config))
            run_dir = new_run_dir(args, config)
        preflight(config, cells)
        placement = open_placement(args.hosts, cells, min(c.duration_s for c in cells), remote)
        database = run_database(config, cells, run_dir, placement)
        finished = run_dir.finished_ids()
        todo = [c for c in cells if c.cell_id not in finished]
        cell_s = sum(c.warmup_s + c.duration_s for c in cells) / len(cells)     # windows may grow with the delay
        progress = Progress(len(cells), cell_s)
        progress.done = len(cells) - len(todo)
        print(plan_summary(config, cells, todo, progress), file=sys.stderr)
        if args.dry_run:
            for cell in todo:
                print(f"  {cell.cell_id}: {cell.describe()}")
            return 0
        if not args.resume:
            run_dir.create(metadata.collect(run_dir.path.name, config, sys.argv), [c.to_dict() for c in cells])
            run_dir.update_metadata(noise_floor=noise.floor())     # the machine's own noise, before any load
        if placement.checks:
            run_dir.update_metadata(hosts=placement.checks)
        print(f"run directory: {run_dir.path}", file=sys.stderr)
    except (ExperimentError, Refused, RunDirError, servers.CannotRunHere, paths.BuildMissing, loadgen.LoadgenError,
            DriverRefused, servers.ToolMissing, servers.SettingsError, oskit.LimitTooLow, DatabaseError,
            HostsError) as e:
        print(f"run_all: {e}", file=sys.stderr)
        return 2
    pin_runner(config["run"])
    started = time.monotonic()
    try:
        launched = execute(run_dir, todo, progress, database, placement, args.hold_s)
        launched += execute_precision(run_dir, cells, config["run"], progress, database, placement, args.hold_s)
    except KeyboardInterrupt:
        progress.close()
        write_points(run_dir, config)
        print(f"\nrun_all: interrupted; {len(run_dir.finished_ids())} cells kept in {run_dir.path}; "
              f"finish with: ./runner/run_all.sh --resume {run_dir.path}", file=sys.stderr)
        return 130
    except (faults.EnvironmentFault, OSError) as e:
        progress.close()
        return stopped_by_environment(e, run_dir, len(cells))
    finally:
        if database:
            database.stop()
    progress.close()
    wall = time.monotonic() - started
    run_dir.update_metadata(ended_at=metadata.now_iso(), wall_s=round(wall, 1),
                            planned_s=round(launched * cell_s, 1),
                            overhead_percent=round(100 * (wall / (launched * cell_s) - 1), 2) if launched else None)
    print(f"run_all: {launched} cells in {fmt_duration(wall)} "
          f"(windows and warm-ups {fmt_duration(launched * cell_s)}); results in {run_dir.path}", file=sys.stderr)
    point_records = write_points(run_dir, config)
    if config["run"].get("precision"):
        print(f"run_all: {precision.summary(point_records, config['run']['precision'])}", file=sys.stderr)
    if not args.no_analysis:
        analyse(run_dir, config, args.workload)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`./runner/run_all.sh [options]`: runs an experiment into a run directory, cell by cell, resumable.

Checks everything it can before the first cell (options, tools, build, ports, file limits); then each cell
gets a fresh server and its record is appended as soon as it is measured.

Times take their unit as wrk and k6 take them (500ms, 1.5s, 30s, 2m, 1h, 1m30s): --duration, --warmup,
--keep-up and --delays refuse a bare number (its unit would be a guess), except 0 where none is meant.
Defaults are those of the experiment that will run (--experiment, --quick), shown below for it.
An option given twice with different values is refused.
"""

# This docstring is run_all.sh's --help: this module is its command line (options, their checks, --quick);
# the run itself is run.py.
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from crossbench import advice_load, loadgen, paths, servers, version
from crossbench.decide import slo
from crossbench.options import refuse_repeated
from crossbench.refusal import Refusal

from . import run_help, server_files, user_forms
from .arg_types import (
    count,
    delay_list,
    int_list,
    name_list,
    positive_int,
    positive_list,
    rate_list,
    share,
    span,
    user_path,
    window,
)
from .serve import knob_argument
from .target_args import external_target

DEFAULT_EXPERIMENT = "seed002"


def sends_on_schedule(adapter) -> bool:
    """A load generator that sends on a schedule (its LoadGenerator's open_loop, loadgen/base.py)."""
    return adapter.open_loop


def closes_connections(adapter) -> bool:
    """A load generator that opens one connection per request whatever it is asked (its keepalive=False)."""
    return not adapter.keepalive


def tools_that(kind) -> str:
    """The registered load generators of a kind, for the help: "oha or k6"."""
    return " or ".join(name for name, adapter in loadgen.ADAPTERS.items() if kind(adapter))


def build_parser(name: str = DEFAULT_EXPERIMENT) -> argparse.ArgumentParser:
    """run_all.sh's options, the matrix overrides' defaults shown as experiment `name` sets them."""
    shown = run_help.defaults(name)

    def default(dest: str) -> str:
        return run_help.note(shown, name, dest).replace("%", "%%")

    p = argparse.ArgumentParser(
        prog="run_all.sh", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--experiment", default=DEFAULT_EXPERIMENT, help="name under runner/experiments/ or a .toml path")
    p.add_argument(
        "--server-file",
        action="append",
        default=[],
        metavar="PATH",
        dest="server_files",
        help="a TOML file declaring servers as data ([server.NAME]: command, ready, stop, knobs; "
        "examples/tornado-declared.toml), added to the experiment's; repeatable",
    )
    p.add_argument("--quick", action="store_true", help="the quick profile (experiment 'quick')")
    p.add_argument("--out", type=Path, help="run directory (default results/<run-id>/)")
    p.add_argument("--resume", type=Path, metavar="DIR", help="finish an interrupted run: only missing cells")
    p.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --resume: launch again the points whose "
        "launches all failed (after a fix), as many launches as the first rounds; the failed ones stay "
        "on the record",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan and what this machine lacks to run it, "
        "each with the command that installs it; installs, builds and writes nothing",
    )
    p.add_argument("--no-analysis", action="store_true", help="do not draw charts at the end")
    p.add_argument(
        "--keep-up",
        type=span,
        default=0.0,
        dest="keep_up_s",
        metavar="TIME",
        help="keep each cell's server up this long after its window, its pid printed (attach VisualVM to "
        "the JVM that was measured), e.g. 5m (default 0: stopped at once)",
    )
    p.add_argument("--hold-s", type=span, dest="keep_up_s", help=argparse.SUPPRESS)  # another name of --keep-up
    version.add_option(p)
    p.add_argument(
        "--hosts",
        type=Path,
        metavar="FILE",
        help="roles on other machines over SSH (TOML: README, "
        "\"Running on several machines\"); without it every role runs here",
    )
    m = p.add_argument_group("matrix overrides (replace the experiment file's values)")
    m.add_argument(
        "--servers",
        type=name_list,
        help=f"only these servers, comma-separated: {', '.join(servers.PLUGINS)}{default('servers')}",
    )
    m.add_argument("--groups", type=name_list, help="only these groups of the experiment (e.g. static,delay)")
    m.add_argument(
        "--concurrency",
        type=positive_list,
        help=f"closed loop: connections; open loop: most in flight{default('concurrency')}",
    )
    m.add_argument(
        "--rates",
        type=rate_list,
        help=f"open loop (--loadgen {tools_that(sends_on_schedule)}): offered "
        "requests per second, or 'auto' (10%% to 120%% of the closed-loop peak, measured first)"
        f"{default('rates')}",
    )
    m.add_argument(
        "--delays",
        type=delay_list,
        dest="delays_ms",
        help=f"the endpoints' delays, comma-separated, each with its unit (1s,3s or 250ms){default('delays_ms')}",
    )
    m.add_argument(
        "--path",
        action="append",
        type=user_path,
        dest="paths",
        metavar="PATH",
        help="your own request (a GET of this path, e.g. /api/orders?id=7) as the workload instead of the "
        "experiment's groups: one group per path (repeatable), swept over the experiment's "
        "concurrency and C=1, whose latency is the path's service time (its ratios' 1.0); each path "
        "must answer 2xx once before load",
    )
    m.add_argument(
        "--workload",
        dest="workload_file",
        metavar="FILE",
        help="your own requests as the workload: a TOML file of [[request]] tables (method, path, headers, body or "
        "json, weight, expect; docs/your-server.md): one group per request kind and one, mix, sending them all "
        "by weight; each must answer as declared once before load. Not with --path",
    )
    m.add_argument(
        "--db-url",
        help="database cells: use this PostgreSQL (holding the tables, ./runner/db.sh load) "
        "instead of the run's own cluster",
    )
    m.add_argument(
        "--duration",
        type=window,
        dest="duration_s",
        metavar="TIME",
        help=f"measured window per cell, above 0: 500ms, 30s, 2m, 1m30s{default('duration_s')}",
    )
    m.add_argument(
        "--warmup",
        type=span,
        dest="warmup_s",
        metavar="TIME",
        help="unrecorded warm-up per cell (held windows: the least held before the window), e.g. 5s or 0"
        f"{default('warmup_s')}",
    )
    m.add_argument(
        "--repetitions",
        type=positive_int,
        help=f"launches of every point, in rounds (every point once, then again){default('repetitions')}",
    )
    m.add_argument(
        "--precision",
        type=share,
        help="launch each point as often as the spread of its first "
        "--min-launches launches says its headline figure's 95%% interval needs to be within this share "
        "(e.g. 0.03; Stein's two-stage rule), at most --max-launches; "
        "off: the experiment's repetitions only (the seeds' own protocols)"
        f"{default('precision')}",
    )
    m.add_argument(
        "--min-launches",
        type=positive_int,
        dest="min_launches",
        help=f"with --precision: first rounds, at least 3{default('min_launches')}",
    )
    m.add_argument(
        "--max-launches",
        type=positive_int,
        dest="max_launches",
        help=f"with --precision: at most{default('max_launches')}",
    )
    m.add_argument(
        "--best-level-launches",
        type=count,
        dest="best_level_launches",
        metavar="N",
        help="TechEmpower's experiments: launch each stack's best level to N launches, the one that "
        "picked it included, and state it from the others (0: off); with --resume, raises a run's "
        "count (a tfb run of 3 brought to 4)" + default("best_level_launches"),
    )
    m.add_argument("--shuffle", action="store_true", default=None, help="shuffle each round's order (the default)")
    m.add_argument("--no-shuffle", dest="shuffle", action="store_false", help="run each round in plan order")
    m.add_argument(
        "--loadgen",
        choices=sorted(loadgen.ADAPTERS),
        help="the load generator of every cell "
        f"{default('loadgen')}; delayed closed-loop cells of held_windows experiments go to the generator it "
        "names (true: oha)",
    )
    m.add_argument(
        "--connection-close",
        dest="keepalive",
        action="store_false",
        default=None,
        help=f"one connection per request (as {tools_that(closes_connections)}) instead of keep-alive",
    )
    in_file = run_help.knob_defaults(name, servers.PLUGINS.values())
    for knob_name, knob in server_knobs().items():
        knob_argument(
            m,
            knob,
            sweep=True,
            help_prefix=f"[{', '.join(knob_owners(knob_name))}] ",
            default_note=defaults_note(knob_name, name, in_file.get(knob_name)),
        )
    m.add_argument(
        "--server-cpus",
        type=int_list,
        metavar="CORES",
        help=f"pin the server to these cores, e.g. 1 or 2,3{default('server_cpus')}",
    )
    m.add_argument(
        "--loadgen-cpus",
        type=int_list,
        metavar="CORES",
        help=f"pin the load generator to these cores{default('loadgen_cpus')}",
    )
    m.add_argument(
        "--loadgen-threads",
        type=positive_int,
        metavar="N",
        help=f"the load generator's threads (wrk -t, oha's runtime){default('loadgen_threads')}",
    )
    t = p.add_argument_group("service-level targets (any experiment)")
    t.add_argument(
        "--slo",
        action="append",
        default=[],
        metavar="TARGET",
        help="judge every point against a target, e.g. 'p99<300ms', 'rps>500', 'errors<0.1%%' (again for "
        "more): pass / fail / undecided by its 95%% interval; exit status 99 when a point fails",
    )
    a = p.add_argument_group("maxThreads advice at the end (the maxthreads experiments; also ./analysis/advise.sh)")
    a.add_argument("--advise-rate", type=float, metavar="REQ_PER_S", help="your arrival rate, requests per second")
    a.add_argument("--advise-hold-ms", type=float, metavar="MS", help="how long one request holds a thread, ms")
    a.add_argument("--advise-p99-ms", type=float, metavar="MS", help="optional: your p99 latency target, ms")
    return p


def parse_args(argv):
    given = sys.argv[1:] if argv is None else list(argv)
    try:  # --server-file's servers first: their knobs are options of the parser below
        server_files.declare(given)
    except Refusal as e:
        print(f"run_all: {e}", file=sys.stderr)
        raise SystemExit(e.exit_code) from None
    p = build_parser(run_help.experiment_named(given, DEFAULT_EXPERIMENT))
    refuse_repeated(p, given, allowed={"slo", "server_files", "paths"})
    args = p.parse_args(argv)
    if args.paths and args.workload_file:
        p.error("--path and --workload both name the requests to measure: keep one (a workload file can list GETs)")
    user_forms.war_experiment(p, args, given)
    user_forms.app_experiment(p, args, given)
    external_target(p, args, given)
    try:
        args.workload = advice_workload(args)
        args.slo = [slo.parse(text) for text in args.slo]
    except ValueError as e:  # advice_load.WorkloadRefused, slo.SloError: refused before anything runs
        p.exit(2, f"run_all: {e}\n")
    if args.quick:
        args.experiment = quick_variant(p, args.experiment)
    if args.resume and args.out:
        p.error("--resume DIR continues that directory; --out does not go with it")
    if args.resume and (given := matrix_given(p, args) - {"--best-level-launches"}):
        p.error(
            f"--resume DIR continues that run as it was planned; {', '.join(sorted(given))} does not go with it "
            "(only --best-level-launches, to raise its count)"
        )
    if args.resume and args.server_files:
        p.error(
            "--resume DIR continues that run with the declared servers it recorded; --server-file does not go with it"
        )
    if args.retry_failed and not args.resume:
        p.error("--retry-failed goes with --resume DIR: it launches again that run's points whose launches all failed")
    return args


def matrix_given(p: argparse.ArgumentParser, args) -> set[str]:
    """The matrix overrides given on the command line, by their option names (those sharing a destination, as
    --shuffle and --no-shuffle, named together)."""
    [matrix] = [g for g in p._action_groups if g.title and g.title.startswith("matrix overrides")]
    names: dict[str, list[str]] = {}
    unset: dict[str, object] = {}  # a destination's value when no option of it is given: its first one's default
    for action in matrix._group_actions:
        names.setdefault(action.dest, []).append(action.option_strings[0])
        unset.setdefault(action.dest, action.default)
    return {"/".join(options) for dest, options in names.items() if getattr(args, dest) != unset[dest]}


def advice_workload(args):
    """The --advise-* load (crossbench.advice_load), checked, or None when not given."""
    given = (args.advise_rate, args.advise_hold_ms, args.advise_p99_ms)
    if all(v is None for v in given):
        return None
    return advice_load.checked(*given, names=("--advise-rate", "--advise-hold-ms", "--advise-p99-ms"))


def server_knobs() -> dict:
    """Every server knob by name (a name several servers share is one option that sets it on each)."""
    return {knob.name: knob for plugin in servers.PLUGINS.values() for knob in plugin.knobs}


def defaults_note(name: str, experiment_name: str, in_file: str | None) -> str:
    """A knob's defaults as run_all sees them: the experiment file's value when it sets one, else each server's
    own; nothing when no server has one of its own and its help says what unset means (--app-dir)."""
    knobs = [k for p in servers.PLUGINS.values() for k in p.knobs if k.name == name]
    if not in_file and all(k.default is None and "default" in k.help for k in knobs):
        return ""
    own = "; ".join(f"{p.name} {knob_default(k)}" for p in servers.PLUGINS.values() for k in p.knobs if k.name == name)
    if in_file:
        return f"(default: {experiment_name}'s {in_file}; else the server's own: {own})".replace("%", "%%")
    return f"(default: the server's own: {own})"


def knob_default(knob) -> str:
    text = str(knob.default)
    return "its own" if knob.default in (None, (), "") else text


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
    parser.error(
        f"--quick: experiment {name} has no quick variant ({name}-quick.toml); run it without --quick "
        f"or shorten it with --duration"
    )

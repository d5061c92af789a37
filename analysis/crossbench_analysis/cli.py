"""Command line: python -m crossbench_analysis analyze RUN_DIR | at-end RUN_DIR [--rate R --hold-ms H] | compare RUN_A RUN_B [--out DIR] [--force]
| compare RUN --within VARIANT_A VARIANT_B [--out DIR]
| export RUN_DIR | plot RUN_DIR | report RUN_DIR | aa RUN RUN [RUN ...] [--plant 0.10] | aa --holdout RUN RUN RUN ...
| advise RUN_DIR --rate R --hold-ms H [--p99-ms T] [--capacity RUN] | findings RUN_DIR | reference [--check]
| tfb-reference RUN_DIR | capacity-aa RUN RUN [RUN ...] | noise-study RUN [RUN ...] [--json FILE]
| pictures [--out DIR].

Exit status: 0 done, 1 an error (not a run directory, gnuplot missing or failing; reference --check: the README's
measured section differs from docs/results), 2 compare refused, advice
refused (a workload that makes no sense, a run without a maxThreads sweep), tfb-reference asked of a run without
TechEmpower cells."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from crossbench import version
from crossbench.advice_load import WorkloadRefused, checked
from crossbench.options import refuse_repeated
from crossbench_analysis.compare.compare import CompareRefused, compare
from crossbench_analysis.compare.compare_within import compare_in_run
from crossbench_analysis.findings.finding import load_points
from crossbench_analysis.read.runinfo import AnalysisError, load_run

from . import at_end, pictures
from .advice import advice, model
from .charts import export, plot
from .compare import aa, capacity_aa, holdout, noise_study
from .findings import findings, tfb_reference
from .pipeline import analyze, write_report
from .read import points_run
from .report import reference

REPO = Path(__file__).resolve().parents[2]


def command_parser(sub, name: str, text: str):
    """A sub-command whose --help leads with what it does, and which answers --version."""
    parser = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
    version.add_option(parser)
    return parser


def load_options(parser, required: bool, hold_help: str = "how long one request holds a thread, ms") -> None:
    """The load maxThreads advice sizes a pool for (crossbench.advice_load): --rate, --hold-ms, --p99-ms."""
    parser.add_argument("--rate", type=float, required=required, help="arrivals, requests per second")
    parser.add_argument("--hold-ms", type=float, help=hold_help)
    parser.add_argument("--p99-ms", type=float, help="the latency 99 %% of requests must stay under, ms")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="crossbench_analysis", description=__doc__.splitlines()[0])
    version.add_option(p)
    sub = p.add_subparsers(dest="command", required=True)
    a = command_parser(sub, "analyze", "export, draw every chart, write report.html")
    a.add_argument("run_dir", type=Path, help="the run directory (results/<run id>)")
    e = command_parser(
        sub,
        "at-end",
        "what run_all.sh prints after its last cell: analyze, then the knees and the "
        "advice the experiment asks for, the findings and the report's path",
    )
    e.add_argument("run_dir", type=Path, help="the run directory (results/<run id>)")
    load_options(e, required=False)  # run_all.sh's --advise-rate, --advise-hold-ms, --advise-p99-ms
    for name, text in (
        ("export", "write charts/data/*.dat and manifest.json only"),
        ("plot", "draw the charts from charts/data/ (after export)"),
        ("report", "write report.html from what charts/ holds"),
    ):
        command_parser(sub, name, text).add_argument("run_dir", type=Path, help="the run directory")
    w = command_parser(
        sub,
        "findings",
        "write findings.json and findings.md again on today's rules (a reference "
        "run kept as points.jsonl: its summary from the points, its stored findings merged)",
    )
    w.add_argument("run_dir", type=Path, help="a run directory, or a reference run under docs/results/*/runs/")
    r = command_parser(sub, "reference", "write the README's measured section from docs/results (reference.py)")
    r.add_argument("--check", action="store_true", help="only check it: exit 1 when the README differs")
    r.add_argument("--repo", type=Path, default=REPO, help="whose README.md and docs/*.md (default this one)")
    r.add_argument(
        "--results", type=Path, default=REPO / "docs" / "results", help="the reference runs (default docs/results)"
    )
    g = command_parser(
        sub,
        "pictures",
        "draw the README's and docs' pictures again from the committed quick run "
        "(pictures.py): its charts and a screenshot of its report",
    )
    g.add_argument("--out", type=Path, default=REPO / "docs" / "images", help="where they go (default docs/images)")
    g.add_argument(
        "--results", type=Path, default=REPO / "docs" / "results", help="the reference runs (default docs/results)"
    )
    f = command_parser(
        sub,
        "tfb-reference",
        "our ratios between stacks beside TechEmpower's published ones "
        "(tfb_reference.py): tfb-reference.md and .json in the run directory",
    )
    f.add_argument("run_dir", type=Path, help="a run of the tfb experiments")
    c = command_parser(sub, "compare", "compare two runs point by point, with intervals")
    c.add_argument("run_a", type=Path, help="the baseline run directory (A)")
    c.add_argument("run_b", type=Path, nargs="?", help="the run compared with it (B); none with --within")
    c.add_argument(
        "--within",
        nargs=2,
        metavar=("VARIANT_A", "VARIANT_B"),
        help="compare two server variants "
        "inside RUN_A, launches paired by round (a setting such as 'tomcat maxThreads=20', or a server)",
    )
    c.add_argument("--out", type=Path, help="where compare.html etc. go (default RUN_B/compare-<run id of A>)")
    c.add_argument("--force", action="store_true", help="compare the common points even when the sets differ")
    c.add_argument(
        "--noise-floor",
        type=float,
        dest="noise_floor",
        metavar="SD",
        help="the run-to-run spread sigma_run on logs, overriding noise_floor.toml's for this machine",
    )
    c.add_argument(
        "--margin",
        type=float,
        default=0.05,
        help="the equivalence margin, a share in (0, 1): "
        "faster or slower beyond it, 'same within' inside it (default 0.05)",
    )
    v = command_parser(
        sub,
        "advise",
        "maxThreads advice for a workload: from a maxthreads run (a local one or a "
        "committed reference under docs/results), or from the model alone when no run is given",
    )
    v.add_argument(
        "run_dir",
        type=Path,
        nargs="?",
        help="a run of the maxthreads experiments (read, never "
        "written), e.g. docs/results/maxthreads/runs/maxthreads-delay; none: the model alone",
    )
    load_options(
        v,
        required=True,
        hold_help="how long one request holds a thread, ms (default with a run of one --path of yours: its "
        "service time, the latency it had at C=1 in that run; without a run: required)",
    )
    v.add_argument(
        "--capacity",
        type=Path,
        metavar="CAPACITY_RUN",
        help="a capacity run (--experiment "
        "capacity) whose measured capacity per Tomcat setting goes beside the model's",
    )
    v.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where advice.md and advice.json go (default: "
        "RUN_DIR/advice-<rate>rps-<hold>ms, a folder of its own; --out RUN_DIR writes into the run; "
        "for the model alone or a committed reference run: printed only)",
    )
    t = command_parser(
        sub,
        "aa",
        "compare's false-alarm rate (runs of one configuration, pairwise) and power "
        "(the same pairs with a planted change)",
    )
    t.add_argument(
        "runs",
        type=Path,
        nargs="+",
        help="two or more runs of the same experiment and settings (with --within: one or more runs of many rounds)",
    )
    t.add_argument(
        "--within",
        action="store_true",
        help="inside each run: odd rounds against even rounds, paired, by compare --within's test",
    )
    t.add_argument("--plant", type=float, default=0.10, help="the planted slowdown of B (default 0.10)")
    t.add_argument(
        "--noise-floor",
        type=float,
        dest="noise_floor",
        metavar="SD",
        help="the run-to-run spread sigma_run on logs, overriding noise_floor.toml's",
    )
    t.add_argument("--margin", type=float, default=0.05, help="the equivalence margin (default 0.05)")
    t.add_argument(
        "--spreads",
        type=Path,
        help="judge by the run-to-run spreads in this file (the JSON "
        "--observe-floor printed for other runs): A/A held out from the spreads it uses",
    )
    t.add_argument("--json", type=Path, help="also write the result here")
    t.add_argument(
        "--holdout",
        action="store_true",
        help="each run held out in turn: the noise model fitted on "
        "the others, compare's A/A and a planted 5 %% and 10 %% change on the pairs that hold it, per "
        "kind of figure, with the false-change rate's binomial interval",
    )
    t.add_argument(
        "--observe-floor",
        action="store_true",
        help="print each figure's run-to-run spread over these "
        "runs (sigma_run on logs, per kind of point): the values noise_floor.toml should hold",
    )
    c = command_parser(
        sub,
        "capacity-aa",
        "how far each setting's held rate moves between sittings: "
        "independent runs of one capacity experiment, per setting",
    )
    c.add_argument("runs", type=Path, nargs="+", help="two or more runs of one capacity experiment on this machine")
    n = command_parser(
        sub,
        "noise-study",
        "how the noise figures read a planted load of known size: runs of one experiment, quiet and beside "
        "crossbench.sampling.planted_load (its planted.json in the run directory)",
    )
    n.add_argument("runs", type=Path, nargs="+", help="the study's runs, quiet and planted, on this machine")
    n.add_argument("--json", type=Path, help="write the study's launches, summary and limits here too")
    return p


def parse_args(argv):
    p = build_parser()
    given = sys.argv[1:] if argv is None else list(argv)
    commands = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices
    if given and given[0] in commands:
        refuse_repeated(commands[given[0]], given[1:], allowed=set())
    return p.parse_args(argv)


def compare_command(args):
    """compare RUN_A RUN_B, or compare RUN --within VARIANT_A VARIANT_B."""
    if args.within:
        if args.run_b or args.force or args.noise_floor is not None:
            raise CompareRefused(
                "--within compares two variants inside one run: give one run directory, and "
                "neither --force nor --noise-floor (one run has no run-to-run floor)"
            )
        return compare_in_run(args.run_a, *args.within, out=args.out, margin=args.margin)
    if args.run_b is None:
        raise CompareRefused("compare takes two run directories, or one with --within VARIANT_A VARIANT_B")
    return compare(
        args.run_a, args.run_b, out=args.out, force=args.force, noise_floor=args.noise_floor, margin=args.margin
    )


def advise_command(args) -> None:
    """advise: from the run given, or the model alone; written to --out, or into a local run's own folder."""
    if args.run_dir is None:
        if args.capacity:
            raise advice.AdviceRefused("--capacity goes beside a maxthreads run's advice: give RUN_DIR too")
        workload = checked(args.rate, args.hold_ms, args.p99_ms)
        found, render = model.advise(workload), model.render
    else:
        run, hold_from = points_run.load_any(args.run_dir), None
        if args.hold_ms is None and args.rate is not None:  # a run of a user's path: its own service time
            hold_from = advice.measured_hold(run)
        hold_ms = hold_from["value_ms"] if hold_from else args.hold_ms
        workload = checked(args.rate, hold_ms, args.p99_ms)
        found, render = advice.advise(run, workload, args.capacity, hold_from), None
    out = args.out or (advice.default_out(args.run_dir, workload) if found["source"]["kind"] == "run" else None)
    print(advice.write(found, out, render), end="")
    if out:
        print(f"advice: {out / 'advice.md'}, {out / 'advice.json'}")


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        return command(args)
    except CompareRefused as e:
        print(f"compare refused: {e}", file=sys.stderr)
        return 2
    except (WorkloadRefused, advice.AdviceRefused, advice.NoCapacity) as e:
        print(f"advise: {e}", file=sys.stderr)
        return 2
    except tfb_reference.NoTfbCells as e:
        print(f"tfb-reference: {args.run_dir} {e}", file=sys.stderr)
        return 2
    except (AnalysisError, FileNotFoundError, pictures.PicturesError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def command(args) -> int:
    if args.command == "analyze":
        result = analyze(args.run_dir)
        for warning in result.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if findings.text(args.run_dir):
            print(findings.text(args.run_dir))
        print(f"{len(result.charts)} charts in {args.run_dir / 'charts'}; report: {result.report}")
    elif args.command == "at-end":
        given = (args.rate, args.hold_ms, args.p99_ms)
        at_end.at_end(args.run_dir, None if given == (None, None, None) else checked(*given))
    elif args.command == "export":
        jobs = export.export(load_run(args.run_dir), args.run_dir / "charts")
        print(f"{len(jobs)} charts' data in {args.run_dir / 'charts' / 'data'}")
    elif args.command == "plot":
        charts_dir = args.run_dir / "charts"
        footer, jobs = export.read_manifest(charts_dir / "data")
        failed = [r for r in plot.plot_all(jobs, charts_dir, footer) if not r.ok]
        for r in failed:
            print(f"error: {r.name}: {r.error}", file=sys.stderr)
        return 1 if failed else 0
    elif args.command == "report":
        run = load_run(args.run_dir)
        charts_dir = args.run_dir / "charts"
        _, jobs = export.read_manifest(charts_dir / "data")
        results = [
            plot.PlotResult(j.name, [charts_dir / f"{j.name}.png"])
            if (charts_dir / f"{j.name}.png").is_file()
            else plot.PlotResult(j.name, error="not drawn")
            for j in jobs
        ]
        print(write_report(run, jobs, results))
    elif args.command == "compare":
        _, html, text = compare_command(args)
        sys.stdout.write(text)
        print(f"\ncompare report: {html}")
    elif args.command == "advise":
        advise_command(args)
    elif args.command == "tfb-reference":
        run = load_run(args.run_dir)
        result = tfb_reference.write(run.path, run.run_id, load_points(run))
        print(tfb_reference.markdown(run.run_id, result), end="")
        print(f"written: {run.path / tfb_reference.MD_FILE}, {run.path / tfb_reference.JSON_FILE}")
    elif args.command == "findings":
        findings.write_again(args.run_dir)
        print(f"written: {args.run_dir / findings.FILE_MD}, {args.run_dir / findings.FILE_JSON}")
    elif args.command == "reference":
        stale = reference.update_all(args.repo, args.results, check=args.check)
        if stale:
            print(
                f"{', '.join(str(doc) for doc in stale)}: measured sections differ from {args.results}; write "
                "them with python -m crossbench_analysis reference",
                file=sys.stderr,
            )
            return 1
    elif args.command == "pictures":
        for picture in pictures.make(args.results, args.out):
            print(picture)
    elif args.command == "capacity-aa":
        print(capacity_aa.text(capacity_aa.spread(args.runs)))
    elif args.command == "noise-study":
        result = noise_study.study(args.runs)
        if args.json:
            noise_study.write(result, args.json)
        print(noise_study.text(result), end="")
    elif args.command == "aa" and args.within:
        result = aa.study_within(args.runs, args.plant)
        print(aa.text_within(result))
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
    elif args.command == "aa" and args.holdout:
        result = holdout.study_of(args.runs, args.margin)
        print(holdout.text(result))
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
    elif args.command == "aa" and args.observe_floor:
        print(json.dumps(aa.observed_floor(args.runs), indent=2))
    elif args.command == "aa":
        spreads = json.loads(args.spreads.read_text()) if args.spreads else None
        result = aa.study(args.runs, args.plant, args.noise_floor, args.margin, spreads)
        print(aa.text(result))
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0

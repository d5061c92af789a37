"""The run's findings, computed from its points every time analysis runs (never written by hand): one function
per experiment family, each a list of the finding makers of findings_knees.py, findings_sweeps.py and findings_seeds.py. Written as
findings.json (machine-readable) and findings.md in the run directory; report.html shows them first and run_all.sh
prints them last (`text`).

An experiment is matched to its family by name (seed002, seed002-quick, ...); a run of an experiment no family
knows gets every maker that finds cells of its kind."""

from __future__ import annotations

import json
import re
from pathlib import Path

from crossbench_analysis.read import points_run
from crossbench_analysis.read.runinfo import Run, load_run

from ..report import tables
from . import findings_capacity, findings_interpreters, findings_tfb, findings_workload, merge, not_read, summary
from . import findings_knees as knees
from . import findings_seeds as seeds
from . import findings_sweeps as sweeps
from .finding import Finding, load_points

WORDED = {f for f in Finding.__dataclass_fields__}  # a record's fields a Finding is made from

FILE_JSON, FILE_MD = "findings.json", "findings.md"


def seed000(points):
    return seeds.sync_async("seed000", points) + seeds.head_of_line("seed000", points)


def seed001(points):
    return seeds.pipelined("seed001", points)


def seed002(points, family="seed002"):
    return (
        knees.bends(family, points)
        + sweeps.ratio_at_top(family, points)
        + sweeps.thread_plateaus(family, points)
        + sweeps.static_throughput(family, points)
    )


def quick(points):
    return seed002(points, "quick")


def seed003(points):
    return seeds.held("seed003", points)


def seed004(points):
    f = "seed004"
    return (
        seeds.table_ranking(f, points)
        + seeds.pools(f, points)
        + seeds.pgbouncer(f, points)
        + seeds.worker_sweeps(f, points)
        + findings_tfb.ranking(f, points)
    )


def tfb(points):
    return findings_tfb.ranking("tfb", points) + findings_tfb.against_reference("tfb", points)


def maxthreads(points):
    f = "maxthreads"
    return (
        knees.bends(f, points, "maxthreads_knees")
        + sweeps.ratio_at_top(f, points, "maxthreads_knees")
        + sweeps.thread_plateaus(f, points, "maxthreads_threads")
        + sweeps.thread_cost(f, points)
        + sweeps.static_throughput(f, points, "maxthreads_static")
    )


def openloop(points):
    return sweeps.open_loop("openloop", points)


def servers(points):
    f = "servers"
    return sweeps.static_throughput(f, points) + knees.bends(f, points) + sweeps.ratio_at_top(f, points)


FAMILIES = {
    "seed000": seed000,
    "seed001": seed001,
    "seed002": seed002,
    "quick": quick,
    "seed003": seed003,
    "seed004": seed004,
    "maxthreads": maxthreads,
    "openloop": openloop,
    "servers": servers,
    "tfb": tfb,
}
# Families read from the whole run (its configuration too), not from its points alone.
RUN_FAMILIES = {findings_capacity.FAMILY: findings_capacity.findings}
RUN_SUMMARIES = {findings_capacity.FAMILY: findings_capacity.summary}
# Families read from the whole run and its points, summarised as a sweep is.
WITH_RUN = {findings_interpreters.FAMILY: findings_interpreters.findings}
ANY = (seed000, seed001, seed002, seed003, seed004, openloop)  # for an experiment no family knows


def family_of(experiment: str | None) -> str | None:
    name = str(experiment or "")
    return next(
        (
            f
            for f in sorted({*FAMILIES, *RUN_FAMILIES, *WITH_RUN}, key=len, reverse=True)
            if name == f or name.startswith(f + "-")
        ),
        None,
    )


def compute(run: Run, points: list[dict] | None = None) -> list[Finding]:
    """The family's findings, then what the run could not read of a server it did not start (not_read.py)."""
    return by_family(run, points) + not_read.findings(run)


def by_family(run: Run, points: list[dict] | None) -> list[Finding]:
    family = family_of(run.experiment)
    if family in RUN_FAMILIES:
        return RUN_FAMILIES[family](run)
    points = load_points(run) if points is None else points
    if family in WITH_RUN:
        return WITH_RUN[family](run, points) + findings_workload.kinds_in_mix(family, points)
    if family:
        return FAMILIES[family](points) + findings_workload.kinds_in_mix(family, points)
    found = [f for make in ANY for f in make(points)] + findings_workload.kinds_in_mix("", points)
    for f in found:
        f.family = str(run.experiment or "run")
    return found


def sections(records: list[dict]) -> list[dict]:
    """findings.json's records as the report's sections: [{"title", "items"}] in order of first appearance."""
    out: dict[str, list[dict]] = {}
    for i, r in enumerate(records, 1):
        out.setdefault(r["family"], []).append({**r, "id": i})
    return [{"title": title, "items": items} for title, items in out.items()]


def summarize(run: Run, points: list[dict]) -> dict:
    """The summary table: a sweep's (summary.py) from its points, a family read from the whole run its own."""
    family = family_of(run.experiment)
    if family in RUN_FAMILIES:
        return RUN_SUMMARIES[family](run) if family in RUN_SUMMARIES else tables.EMPTY
    return summary.compute(points)


def markdown(run: Run, records: list[dict], table: dict = tables.EMPTY) -> str:
    lines = [
        f"# Findings of run {run.run_id}",
        "",
        "Computed from cells.jsonl by the analysis (crossbench_analysis/findings/findings.py); flagged cells "
        "feed none.",
        "",
        *tables.markdown(table, width=tables.WIDTH),
    ]
    for section in sections(records):
        lines += [f"## {section['title']}", ""]
        for f in section["items"]:
            lines.append(f"- {f['sentence']}" + (f" **{f['figure_text']}**" if tables.shows_figure(f) else ""))
            how = tables.how_computed(f)
            if how:
                lines.append(f"  <details><summary>how this was computed</summary>{how}</details>")
        lines.append("")
    if not records:
        lines.append("No finding: this run has no cells any finding reads.")
    return "\n".join(lines).rstrip() + "\n"


def write(run: Run, charts: set[str]) -> list[dict]:
    """Computes the findings, writes findings.json and findings.md; returns findings.json's records. `charts`
    are the chart names the run has: a finding's chart outside them is written as null."""
    points = [] if family_of(run.experiment) in RUN_FAMILIES else load_points(run)
    return written(run, merge.merged([f.to_dict(charts) for f in compute(run, points)]), summarize(run, points))


def written(run: Run, records: list[dict], table: dict) -> list[dict]:
    """Writes findings.json and findings.md of `records` under `table` (the summary); returns the records."""
    (run.path / FILE_JSON).write_text(
        json.dumps(
            {"run_id": run.run_id, "experiment": run.experiment, "summary": table, "findings": records}, indent=2
        )
        + "\n"
    )
    (run.path / FILE_MD).write_text(markdown(run, records, table))
    return records


def write_again(run_dir: Path) -> list[dict]:
    """findings.json and findings.md written again on today's rules: from the run's cells.jsonl when it has one,
    else (a committed reference run, kept as points.jsonl) the summary from its points and its stored findings
    merged (merge.py) and their figures worded again (Finding.figure_text): their sentences read raw records it
    no longer has. A stored findings.json of the format before the summary table (no "summary") is computed
    again from the points: its sentences are worded as that format worded them."""
    run_dir = Path(run_dir)
    stored = json.loads((run_dir / FILE_JSON).read_text()) if (run_dir / FILE_JSON).is_file() else {}
    charts = {p.stem for p in (run_dir / "charts").glob("*.png")}  # the charts it has, and those its findings named
    charts |= {r.get("chart_name") for r in stored.get("findings", [])} - {None}
    if not points_run.has_points_only(run_dir):
        return write(load_run(run_dir), charts)
    run = points_run.load(run_dir)
    if "summary" not in stored:
        return write(run, charts)
    records = merge.merged([reworded(r) for r in stored.get("findings", [])])
    if family_of(run.experiment) in RUN_FAMILIES:  # their summary reads files beside the points: kept
        return written(run, records, stored.get("summary") or tables.EMPTY)
    return written(run, records, summarize(run, load_points(run)))


# A stored sentence's wording and today's, for the same figures (a pool's busy peak read 'of 200 busy at once'
# beside a thread count that also holds idle threads: the fold now says what each counts)
REWORDED = [
    (
        re.compile(r"never filled its pool \((\d+) of (\d+) busy at once\)"),
        r"never filled its pool (at most \1 of \2 busy)",
        sweeps.THREADS_WORDS,
    )
]


def reworded(record: dict) -> dict:
    """A stored record as today's findings word it: its sentence (REWORDED, with the fold's words), and its figure
    text as today's Finding says it."""
    out = dict(record)
    for old, new, fold in REWORDED:
        if old.search(out["sentence"]):
            out["sentence"] = old.sub(new, out["sentence"])
            out["detail"] = "; ".join(d for d in (out.get("detail"), fold) if d)
    if out.get("figure") is None:
        return out
    return {**out, "figure_text": Finding(**{k: v for k, v in out.items() if k in WORDED and k != "chart"}).figure_text}


def written_summary(run_dir: Path) -> dict:
    """The summary table findings.json holds (none before findings were written)."""
    path = Path(run_dir) / FILE_JSON
    return (json.loads(path.read_text()).get("summary") if path.is_file() else None) or tables.EMPTY


def text(run_dir: Path) -> str:
    """The findings as terminal lines within tables.WIDTH columns (run_all.sh's last lines before the report's
    path); '' when none."""
    path = Path(run_dir) / FILE_JSON
    return tables.terminal(json.loads(path.read_text())) if path.is_file() else ""

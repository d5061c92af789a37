"""The measured sections of the README and docs/, produced from committed reference results (docs/results/), so
every figure they state traces to a file a reader can audit: runs' points.jsonl, findings.json and metadata.json, and the JSON
`aa` printed for them. Nothing in the section is typed by hand.

python -m crossbench_analysis reference [--check]   rewrites every measured section of README.md and docs/*.md
                                                     (--check: exit 1 when one differs from the results)

Each reference set is a folder of docs/results/ with a README.md saying how it was made:
- quick-aa/: the quick profile several times in a row (runs/<run id>/), the run-to-run spreads aa --observe-floor
  measured on each half of them (observed-<half>.json) and the A/A and planted-change study of the other half
  judged by them (study-<half>.json): held out from the spreads it uses; and each run held out in turn
  (holdout.json, `aa --holdout`);
- quick-hours/: quick runs made hours apart, across sessions (runs/<run id>/, each with its cells.jsonl, which
  `aa` reads launch by launch), the run-to-run spreads `aa --observe-floor` measured over all of them
  (observed.json, for the machine's entry in compare/noise_floor.toml) and the model judged on runs it was not
  fitted on, each run held out in turn (holdout.json, `aa --holdout`; reference_noise.py);
- quick-disturbed/: one quick run with a `yes` loop on the server's core during every other launch
  (runs/<run id>/, with launches.jsonl: each launch's flags and noise figures, and disturbed.txt: which launches
  the loop ran beside);
- <experiment>/ (seed002, capacity, ...): that experiment's reference run (runs/<run id>/, with capacity.json for a
  capacity search), or one run per sitting where its groups were measured apart (`--groups`), rendered into the
  section between that experiment's own markers in a document (`<!-- measured <experiment>: ... -->`): its
  findings, each with its figure and interval, and what `aa --within` found on it when the folder holds its
  aa-within.json (aa-static).
"""

from __future__ import annotations

import json
from pathlib import Path

from crossbench.figures import points

from . import front, tables
from .reference_noise import HOURS, holdout_lines, hours_lines, spreads_line

MEASURED_BEGIN = "<!-- measured: produced by `python -m crossbench_analysis reference`; do not edit by hand -->"
MEASURED_END = "<!-- measured: end -->"
KNEE_SETTING = "tomcat maxThreads=200 (/delay/sync"
EDGE_POINT = "delay-tomcat-mt200-delay_sync-c1-d250"
TFB_REFERENCE = "tfb-reference.md"  # what findings/tfb_reference.py writes into a run directory
AA_WITHIN = "aa-within.json"  # what `aa --within RUN --json` wrote, beside an experiment's runs/


def read_json(path: Path):
    return json.loads(path.read_text())


def runs_of(folder: Path) -> list[Path]:
    return sorted(p for p in (folder / "runs").iterdir() if p.is_dir())


# reference sets rendered by sections of their own (the noise model's, the README's quick run), not as one experiment
OWN_SECTIONS = ("quick-aa", "quick-disturbed", HOURS, front.QUICK_SET)


def experiment_sets(results: Path) -> list[str]:
    """The folders of docs/results holding one experiment's reference run, by name."""
    return sorted(p.name for p in results.iterdir() if (p / "runs").is_dir() and p.name not in OWN_SECTIONS)


def run_points_of(runs: list[Path]) -> list[dict]:
    return [p for r in runs for p in points.read_jsonl(r / points.POINTS_FILE)]


def launch_count(run_points: list[dict]) -> int:
    """Every launch the points hold: counted, failed and left out as disturbed."""
    return sum(p["n"] + p["failed"] + len(p.get("disturbed_cells", [])) for p in run_points)


def provenance(runs: list[Path]) -> str:
    metas = [read_json(r / "metadata.json") for r in runs]
    run_points = run_points_of(runs)
    launches = launch_count(run_points)
    revisions = sorted({revision(m.get("git_revision")) for m in metas})
    machine = metas[0].get("machine") or {}
    return (
        f"{len(runs)} run{'s' * (len(runs) != 1)} of `{metas[0].get('experiment')}` ({launches} launches in all) on "
        f"{machine.get('cpu_model', 'an unnamed CPU')}, {machine.get('cores', '?')} cores, from main at "
        f"{', '.join(revisions)}, {metas[0].get('started_at', '')[:10]}; {disturbed_words(run_points)}"
    )


def disturbed_words(run_points: list[dict]) -> str:
    """How many launches the host disturbed or cut too short (points.DISTURBED: noisy_host, window_too_short; left
    out of their points, or kept where every launch of a point was), so a reader sees how quiet the run was."""
    left_out = sum(len(p.get("disturbed_cells", [])) for p in run_points)
    kept = sum(p["n"] for p in run_points if set(p.get("flags", [])) & points.DISTURBED)
    if not left_out and not kept:
        return f"no launch flagged {' or '.join(sorted(points.DISTURBED))}"
    flagged = left_out + kept
    return (
        f"{flagged} launch{'es' * (flagged != 1)} flagged {' or '.join(sorted(points.DISTURBED))} "
        f"({left_out} left out of their points, {kept} kept where every launch of a point was)"
    )


def revision(text) -> str:
    """'61aa261' of a git revision; 'uncommitted' said when the tree had changes (metadata's '+uncommitted')."""
    text = str(text or "unknown")
    return text[:7] + (" with uncommitted changes" if "uncommitted" in text else "")


def intervals_line(runs: list[Path]) -> str:
    """How many figures state an interval, that none goes below zero, and which estimators named them."""
    figures = [f for r in runs for p in points.read_jsonl(r / points.POINTS_FILE) for f in p["figures"].values()]
    stated = [f for f in figures if f.get("ci95_low") is not None]
    lowest = min((f["ci95_low"] / f["value"] for f in stated if f["value"]), default=None)
    estimators = sorted({f.get("estimator", "none named") for f in figures})
    below = sum(f["ci95_low"] < 0 for f in stated)
    return (
        f"{len(figures)} figures in their points.jsonl, each naming its estimator ({'; '.join(estimators)}); "
        f"{len(stated)} state a 95 % interval, {below} of them below zero"
        + (f" (the lowest bound {lowest:.2f} of its value)" if lowest is not None else "")
    )


def study_line(studies: list[dict], kind: str) -> str:
    """A/A and the planted change of one kind of point, over every held-out study."""
    parts = [study["by_kind"][kind] for study in studies if kind in study["by_kind"]]
    aa = {k: sum(part["aa"][k] for part in parts) for k in ("points", "changed", "same", "inconclusive", "cannot_tell")}
    found = {k: sum(part["planted"][k] for part in parts) for k in ("points", "slower")}
    if not aa["points"]:
        return f"{kind} points: none compared"
    kept = aa["same"] + aa["inconclusive"] + aa["cannot_tell"]
    return (
        f"{kind} points: A/A {aa['changed']} of {aa['points']} comparisons called a change, {kept} "
        f"({kept / aa['points']:.0%}) same or inconclusive or cannot tell, of which {aa['same']} "
        f"({aa['same'] / aa['points']:.0%}) same within {studies[0]['margin']:.0%}; a planted "
        f"{studies[0]['plant']:.0%} slowdown found in {found['slower']} of {found['points']}"
    )


def knee_lines(runs: list[Path]) -> list[str]:
    """Each run's knee sentence for Tomcat maxThreads=200 ('Knee between C=100 and C=400: tomcat ... bends
    there'), runs that say the same together."""
    said: dict[str, list[str]] = {}
    for run in runs:
        for finding in read_json(run / "findings.json").get("findings", []):
            lead, _, rest = finding.get("sentence", "").partition(": ")
            if lead.startswith("Knee") and rest.startswith(KNEE_SETTING):
                said.setdefault(f"{lead}: {rest}".rstrip("."), []).append(run.name)
                break
    return [f"{', '.join(names)}: \"{words}\"" for words, names in said.items()]


def disturbed_lines(folder: Path) -> list[str]:
    run = runs_of(folder)[0]
    launches = [json.loads(line) for line in (run / "launches.jsonl").read_text().splitlines() if line.strip()]
    marks = dict(
        line.split(" ", 2)[1:]
        for line in (run / "disturbed.txt").read_text().splitlines()
        if line.startswith("launch ")
    )
    by_index = {str(r["index"]): r for r in launches}
    disturbed = {i for i, word in marks.items() if word == "disturbed" and i in by_index}
    quiet = set(by_index) - disturbed
    flagged = {i for i, r in by_index.items() if "noisy_host" in (r.get("flags") or [])}
    missed = sorted(disturbed - flagged, key=int)
    quiet_impact = [by_index[i].get("noise_impact_percent") or 0 for i in quiet]
    line = (
        f"{run.name}: `yes` on the server's core beside {len(disturbed)} of {len(launches)} launches; "
        f"{len(flagged & disturbed)} of those {len(disturbed)} flagged `noisy_host`, and {len(flagged & quiet)} "
        f"of the {len(quiet)} quiet ones (their noise impact at most {max(quiet_impact, default=0):.1f} %)"
    )
    if missed:
        line += (
            "; the disturbed launches not flagged were waiting cells whose server used "
            + ", ".join(f"{by_index[i]['cpu_percent']:.1f} %" for i in missed)
            + " of its core, so the loop could move their figures by at most "
            + ", ".join(f"{by_index[i]['noise_impact_percent']:.1f} %" for i in missed)
        )
    return [line]


def window_edge_line(runs: list[Path]) -> str:
    """The seed's efficiency ratio against the latency ratio at C=1, where the window's edge shows most."""
    parts = []
    for run in runs:
        for point in points.read_jsonl(run / points.POINTS_FILE):
            if point["point_id"] == EDGE_POINT:
                figures = point["figures"]
                parts.append(
                    f"{run.name} {points.fmt_interval(figures['efficiency_ratio'])} against "
                    f"{points.fmt_interval(figures['latency_ratio'])}"
                )
    return "; ".join(parts)


def render(results: Path) -> str:
    """The README's measured section, from docs/results."""
    aa_dir, disturbed_dir = results / "quick-aa", results / "quick-disturbed"
    runs = runs_of(aa_dir)
    halves = sorted(p.stem.split("-", 1)[1] for p in aa_dir.glob("study-*.json"))
    studies = [read_json(aa_dir / f"study-{half}.json") for half in halves]
    lines = [
        MEASURED_BEGIN,
        f"From `docs/results/quick-aa/`: {provenance(runs)}.",
        "",
        f"- **Every figure with its estimator:** {intervals_line(runs)}.",
        "- **Run-to-run spread** (sigma_run on logs, `aa --observe-floor`): "
        + "; ".join(spreads_line(read_json(aa_dir / f"observed-{half}.json"), f"runs {half}") for half in halves)
        + ".",
        f"- **compare between runs, held out** (each half's pairs judged by the spreads of the other half; "
        f"margin {studies[0]['margin']:.0%}): "
        + "; ".join(study_line(studies, kind) for kind in ("delayed", "static"))
        + ".",
        *holdout_lines(aa_dir),
        *hours_lines(results),
        "- **Knee of Tomcat maxThreads=200** (C = 1, 100, 400; the findings' sentence): "
        + "; ".join(knee_lines(runs))
        + ".",
        "- **The window's edge** (Tomcat, 250 ms delay, C=1, 4 s windows: the seed's efficiency ratio against "
        "the latency ratio, 95 %): " + window_edge_line(runs) + ".",
    ]
    if disturbed_dir.is_dir():
        lines.append(
            f"- **Noise flags** (`docs/results/quick-disturbed/`): {'; '.join(disturbed_lines(disturbed_dir))}."
        )
    return "\n".join(lines + [MEASURED_END])


def run_begin(name: str) -> str:
    return f"<!-- measured {name}: produced by `python -m crossbench_analysis reference`; do not edit by hand -->"


def run_end(name: str) -> str:
    return f"<!-- measured {name}: end -->"


def groups_words(run: Path, runs: list[Path]) -> str:
    """' (groups delay, static)': which of the experiment's groups a run measured, said only where its reference
    set holds more than one run (one per sitting)."""
    if len(runs) < 2:
        return ""
    groups = [g.get("name", "?") for g in (read_json(run / "metadata.json").get("config") or {}).get("group", [])]
    return f" (group{'s' * (len(groups) != 1)} {', '.join(groups)})" if groups else ""


def run_source(name: str, run: Path, runs: list[Path]) -> str:
    """'From `docs/results/NAME/runs/RUN/`: ...', naming the run's groups when the set has more than one run."""
    return f"From `docs/results/{name}/runs/{run.name}/`{groups_words(run, runs)}: {provenance([run])}."


def render_run(results: Path, name: str) -> str:
    """An experiment's section: where each of its runs came from, then its findings (capacity searches: their
    brackets)."""
    runs = runs_of(results / name)
    lines = [run_begin(name)]
    for run in runs:
        lines += [*([""] if len(lines) > 1 else []), run_source(name, run, runs), ""]
        written = read_json(run / "findings.json")
        lines += tables.markdown(written.get("summary") or tables.EMPTY, heading="**Summary**", note=False)
        for finding in written.get("findings", []):
            shown = f" **{finding['figure_text']}**" if tables.shows_figure(finding) else ""
            lines.append(f"- {finding['sentence']}{shown}")
        lines += tfb_reference_tables(run)
    return "\n".join(lines + within_lines(results / name) + [run_end(name)])


def within_lines(folder: Path) -> list[str]:
    """What `aa --within` found on the run (its AA_WITHIN file, when the folder has one): each point's odd rounds
    against its even rounds, paired as compare --within pairs them, and with a planted slowdown."""
    written = folder / AA_WITHIN
    if not written.is_file():
        return []
    result = read_json(written)
    lines = [
        "",
        f"compare's own check on this run (`aa --within`, `{AA_WITHIN}`): each point's odd rounds against "
        f"its even rounds, round 2k-1 paired with 2k, and again with the even rounds made "
        f"{result['plant']:.0%} slower:",
    ]
    for test, name in (
        ("paired", "paired t on the logs (compare --within)"),
        ("welch", "Welch's t on the same halves, unpaired"),
    ):
        tally = result["tests"][test]
        lines.append(
            f"- {name}: A/A called a change at {tally['aa_changed']} of {tally['points']} points, "
            f"could not tell at {tally['aa_cannot_tell']}; the planted slowdown found at "
            f"{tally['planted_found']} of {tally['points']}."
        )
    for point in result["points"]:
        interval = (
            "n/a" if point["aa_low"] is None else points.fmt_range(point["aa_ratio"], point["aa_low"], point["aa_high"])
        )
        lines.append(
            f"- {point['point_id']} ({point['figure']}, {point['pairs']} pairs): even / odd rounds "
            f"{interval}, {point['aa_verdict']}; planted: {point['planted_verdict']} (Welch: "
            f"{point['welch_planted_verdict']})."
        )
    return lines


def tfb_reference_tables(run: Path) -> list[str]:
    """A TechEmpower run's comparison with the published figures (its tfb-reference.md, as the analysis wrote it),
    each test type's heading one level down so that it sits under the document's own section."""
    written = run / TFB_REFERENCE
    if not written.is_file():
        return []
    text = written.read_text()
    body = text[text.index("\n## ") :] if "\n## " in text else ""
    return [""] + ["#" + line if line.startswith("## ") else line for line in body.strip("\n").splitlines()]


FOUND_BEGIN = "<!-- measured found: produced by `python -m crossbench_analysis reference`; do not edit by hand -->"
FOUND_END = "<!-- measured found: end -->"
FOUND_SENTENCES = 3  # a reference run without a summary table shows its first findings


def render_found(results: Path) -> str:
    """The README's "What it found": per experiment with a committed reference run, where it was measured and its
    summary table (or, for a run analysed before the table, its first findings)."""
    lines = [FOUND_BEGIN]
    for name in experiment_sets(results):
        runs = runs_of(results / name)
        for run in runs:
            written = read_json(run / "findings.json")
            lines += ["", f"**{name}**{groups_words(run, runs)} (`docs/results/{name}/`): {provenance([run])}.", ""]
            table = written.get("summary") or tables.EMPTY
            if table["rows"]:
                lines += tables.markdown(table, heading="", note=False)[2:]
            else:
                lines += [f"- {f['sentence']}" for f in written.get("findings", [])[:FOUND_SENTENCES]]
    return "\n".join(lines + ["", FOUND_END])


INDEX_BEGIN = (
    "<!-- measured experiments: produced by `python -m crossbench_analysis reference`; do not edit by hand -->"
)
INDEX_END = "<!-- measured experiments: end -->"


def wall_text(seconds) -> str:
    if not seconds:
        return "wall time not recorded"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def lead_sentence(run: Path) -> str:
    """The run's leading finding (the first that leads with its number, else the first)."""
    found = read_json(run / "findings.json").get("findings", [])
    lead = next((f for f in found if f.get("leads")), found[0] if found else None)
    return lead["sentence"] if lead else "no finding"


def rendered_in(repo: Path, name: str) -> str:
    """The document (relative to docs/) whose measured section renders the experiment's reference run."""
    for doc in documents(repo):
        if doc.is_file() and run_begin(name) in doc.read_text():
            return f"[{doc.name}]({doc.name})" if doc.parent.name == "docs" else f"[{doc.name}](../{doc.name})"
    return "none"


def render_index(results: Path) -> str:
    """docs/methods.md's table of the experiments measured here: each one's question (its file's description),
    its reference run and the document that states what it found, with its leading finding."""
    lines = [
        INDEX_BEGIN,
        "| experiment | what it asks | its reference run | leading finding | all of it in |",
        "|---|---|---|---|---|",
    ]
    for name in experiment_sets(results):
        runs = runs_of(results / name)
        metas = [read_json(run / "metadata.json") for run in runs]
        sittings = f" in {len(runs)} runs" if len(runs) > 1 else ""
        cell = (
            f"{launch_count(run_points_of(runs))} launches{sittings}, "
            f"{wall_text(sum(m.get('wall_s') or 0 for m in metas))}, "
            f"{', '.join(sorted({m.get('started_at', '')[:10] for m in metas}))}, "
            f"main at {', '.join(sorted({revision(m.get('git_revision')) for m in metas}))}"
        )
        lines.append(
            f"| `{name}` | {(metas[0].get('config') or {}).get('description', '')} | {cell} | "
            f"{lead_sentence(runs[0])} | {rendered_in(results.parents[1], name)} |"
        )
    return "\n".join(lines + [INDEX_END])


def sections(text: str, results: Path) -> list[tuple[str, str, str]]:
    """(begin marker, end marker, fresh text) of every measured section a document has."""
    fixed = (
        (MEASURED_BEGIN, MEASURED_END, render),
        (FOUND_BEGIN, FOUND_END, render_found),
        (INDEX_BEGIN, INDEX_END, render_index),
        *front.SECTIONS,
    )
    found = [(begin, end, rendered(results)) for begin, end, rendered in fixed if begin in text]
    return found + [
        (run_begin(name), run_end(name), render_run(results, name))
        for name in experiment_sets(results)
        if run_begin(name) in text
    ]


def documents(repo: Path) -> list[Path]:
    """The documents that may hold measured sections: the README and every file of docs/."""
    return [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]


def update_all(repo: Path, results: Path, check: bool = False) -> list[Path]:
    """Every document's measured sections written (check=True: only compared); returns the documents that did
    not hold what the results say."""
    return [doc for doc in documents(repo) if doc.is_file() and not update(doc, results, check)]


def update(readme: Path, results: Path, check: bool = False) -> bool:
    """Writes a document's measured sections (or, check=True, says whether they are current): True when it
    holds what the results say."""
    text = readme.read_text()
    fresh = text
    for begin, end, rendered in sections(text, results):
        start, stop = fresh.index(begin), fresh.index(end) + len(end)
        fresh = fresh[:start] + rendered + fresh[stop:]
    if check:
        return fresh == text
    readme.write_text(fresh)
    return True

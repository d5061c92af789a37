"""The measured sections of each experiment's reference runs: its own section between its markers (where each run
came from, its summary and findings, what `aa --within` found on it, TechEmpower's tables), the README's "What it
found" and docs/methods.md's index of the experiments measured here."""

from __future__ import annotations

from pathlib import Path

from crossbench.figures import points

from . import tables
from .reference_sets import (
    documents,
    experiment_sets,
    launch_count,
    provenance,
    read_json,
    revision,
    run_points_of,
    runs_of,
)

TFB_REFERENCE = "tfb-reference.md"  # what findings/tfb_reference.py writes into a run directory


AA_WITHIN = "aa-within.json"  # what `aa --within RUN --json` wrote, beside an experiment's runs/


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

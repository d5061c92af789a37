"""The README's measured section of the quick profile, from docs/results/quick-aa/ (and quick-hours/,
quick-disturbed/): every figure's estimator, the run-to-run spreads, compare's held-out study, the knee of Tomcat
maxThreads=200, the window's edge and the noise flags, each traced to a committed file."""

from __future__ import annotations

import json
from pathlib import Path

from crossbench.figures import points

from .reference_noise import holdout_lines, hours_lines, spreads_line
from .reference_sets import provenance, read_json, runs_of

MEASURED_BEGIN = "<!-- measured: produced by `python -m crossbench_analysis reference`; do not edit by hand -->"


MEASURED_END = "<!-- measured: end -->"


KNEE_SETTING = "tomcat maxThreads=200 (/delay/sync"


EDGE_POINT = "delay-tomcat-mt200-delay_sync-c1-d250"


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

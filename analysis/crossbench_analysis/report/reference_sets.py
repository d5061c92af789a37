"""The committed reference results as the measured sections read them: the reference sets of docs/results/, each
set's runs and their points, where a run came from (provenance), and the documents that may hold measured
sections."""

from __future__ import annotations

import json
from pathlib import Path

from crossbench.figures import points

from . import front
from .reference_noise import HOURS, OTHER_DAYS


def read_json(path: Path):
    return json.loads(path.read_text())


def runs_of(folder: Path) -> list[Path]:
    return sorted(p for p in (folder / "runs").iterdir() if p.is_dir())


# reference sets rendered by sections of their own (the noise model's, the README's quick run), not as one experiment
OWN_SECTIONS = ("quick-aa", "quick-disturbed", HOURS, *OTHER_DAYS, front.QUICK_SET)


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


def documents(repo: Path) -> list[Path]:
    """The documents that may hold measured sections: the README and every file of docs/."""
    return [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]

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

This module finds and writes the sections; the quick profile's is rendered by reference_quick.py (its noise
lines by reference_noise.py), each experiment's, the README's findings and the index by reference_experiments.py,
from the reference sets as reference_sets.py reads them.
"""

from __future__ import annotations

from pathlib import Path

from . import front
from .reference_experiments import (
    FOUND_BEGIN,
    FOUND_END,
    INDEX_BEGIN,
    INDEX_END,
    render_found,
    render_index,
    render_run,
    run_begin,
    run_end,
)
from .reference_quick import MEASURED_BEGIN, MEASURED_END, render
from .reference_sets import documents, experiment_sets


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

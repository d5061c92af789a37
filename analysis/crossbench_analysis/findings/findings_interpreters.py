"""The interpreter experiment's findings: for each Python server's setting measured on more than one interpreter,
each newer interpreter's point against the oldest one's, B/A of the headline figure paired by round with its 95 %
interval (compare_within, held to the false discovery rate across the points of one pair), and whether that moved
the figure beyond its interval and the margin, or kept it within the margin, or the launches cannot say. One more
line says whether a free-threaded build was here, and so whether the cells it would matter to could be measured."""

from __future__ import annotations

import re

from crossbench import pyenvs
from crossbench_analysis.compare import compare_stats
from crossbench_analysis.compare.compare import CompareRefused
from crossbench_analysis.compare.compare_within import compare_within
from crossbench_analysis.compare.comparison import Row
from crossbench_analysis.read.runinfo import Run

from .finding import Finding, sig

FAMILY = "interpreters"
# The interpreter's part of a Python server's setting (python_runtime.words): " Python 3.13", " Python 3.13t free-threaded"
IN_SETTING = re.compile(r" Python (\d+)\.(\d+)(t?)( free-threaded)?$")
FIGURE_WORDS = {"rps": "req/s", "latency_ratio": "latency ratio", "efficiency_ratio": "efficiency ratio"}
VERDICT_WORDS = {
    compare_stats.FASTER: "moved it: better beyond its interval and the {margin} margin",
    compare_stats.SLOWER: "moved it: worse beyond its interval and the {margin} margin",
    compare_stats.SAME: "did not move it: within {margin}",
}


def findings(run: Run, points: list[dict]) -> list[Finding]:
    return [*moved(run, points), free_threaded(run, points)]


def by_setting(points: list[dict]) -> dict[str, dict[str, str]]:
    """{the setting without its interpreter: {interpreter: the setting}} for the points that name one."""
    out: dict[str, dict[str, str]] = {}
    for point in points:
        setting = str(point.get("setting") or "")
        found = IN_SETTING.search(setting)
        if found:
            out.setdefault(setting[: found.start()], {})[f"{found[1]}.{found[2]}{found[3]}"] = setting
    return out


def version_key(label: str) -> tuple:
    major, minor = label.rstrip("t").split(".")
    return int(major), int(minor), label.endswith("t")


def moved(run: Run, points: list[dict]) -> list[Finding]:
    """Each newer interpreter against the oldest, point by point, for every setting measured on two or more."""
    out = []
    for base, settings in by_setting(points).items():
        labels = sorted(settings, key=version_key)
        for newer in labels[1:]:
            try:
                pair = compare_within(run, settings[labels[0]], settings[newer])
            except CompareRefused:
                continue  # never measured under the same load: nothing to set side by side
            out += [row_finding(row, base, labels[0], newer, pair.margin) for row in pair.rows]
    return out


def row_finding(row: Row, base: str, oldest: str, newer: str, margin: float) -> Finding:
    verdict = row.verdict
    figure = FIGURE_WORDS.get(row.headline, row.headline)
    low, high = verdict.test.interval() if verdict.test is not None else (None, None)
    ratio = "no value" if verdict.ratio is None else f"{sig(verdict.ratio)}x"
    if low is not None:
        ratio = f"{sig(verdict.ratio)}x [{sig(low)}, {sig(high)}]"
    words = VERDICT_WORDS.get(verdict.word, "").format(margin=compare_stats.pct(margin)) or (
        f"cannot say it moved: {verdict.said}"
    )
    flagged = " (a side flagged)" if row.flagged else ""
    sentence = f"{ratio} {figure}: {base} on Python {newer} against {oldest}, {row.label}: {words}{flagged}."
    return Finding(
        FAMILY,
        sentence,
        label=f"{figure}, Python {newer} / {oldest}",
        figure=verdict.ratio,
        unit="x",
        interval=[low, high] if low is not None else None,
        n=min(row.launches),
        basis=f"{min(row.launches)} rounds paired",
        method="B/A of the launches paired by round (compare --within), Benjamini-Hochberg across the pair's points",
        leads=True,
        detail=f"{oldest}: {sig(verdict.a)}, {newer}: {sig(verdict.b)} {figure}; {verdict.said}",
    )


def free_threaded(run: Run, points: list[dict]) -> Finding:
    """Whether a free-threaded build was here (metadata's interpreters found), and the threaded points it matters
    to: those on one, marked, or how many could not be measured on one."""
    found = (run.metadata.get("pythons") or {}).get("found") or []
    builds = [entry.split()[0] for entry in found if entry.split() and entry.split()[0].endswith("t")]
    threaded = {str(p.get("setting")) for p in points if p.get("worker_class") == "gthread"}
    on_free = sorted(s for s in threaded if s.endswith("free-threaded"))
    if not builds:
        sentence = pyenvs.no_free_threaded(len({p["point_id"] for p in points if p.get("worker_class") == "gthread"}))
    elif on_free:
        sentence = (
            f"{len(on_free)} threaded setting(s) ran on a free-threaded build ({', '.join(builds)}), marked "
            f"'free-threaded': {pyenvs.FREE_THREADED_MATTERS}."
        )
    else:
        sentence = f"A free-threaded build was here ({', '.join(builds)}) but no threaded point ran on it."
    return Finding(FAMILY, sentence[0].upper() + sentence[1:].rstrip(".") + ".")

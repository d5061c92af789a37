"""Compare two server variants inside one run: for every load both were measured under, B/A of their launches
paired by round (compare_stats.judge_paired), with its 95 % interval and a verdict (the same words as between
runs), the headline verdicts held to the false discovery rate across the points.

Between runs, a CPU-bound figure moves with the machine (this VM's cores change speed over minutes), so compare
between runs carries the run-to-run variance and cannot resolve a small change of the static mix. Two variants in
one run were launched in the same shuffled rounds: each round's launch of A and of B saw nearly the same machine,
and the paired test takes the round's state out. A variant is named by its `setting` ("tomcat maxThreads=20") or, when
the run has one variant of it, its server ("tornado"). Points match when everything but the variant is equal
(MATCH_FIELDS: group, concurrency, delay, rate, load generator, ...); a rates = "auto" point matches by its
share of its own server's peak.
"""

from __future__ import annotations

from pathlib import Path

from crossbench.figures import points as point_data
from crossbench_analysis.read.runinfo import Run, load_run
from crossbench_analysis.read.setting import where_of

from . import compare_render, compare_stats
from .compare import CompareRefused, checked_margin, fdr_controlled, judged_figures, launch_more
from .comparison import Comparison, Row

# What a variant is; every other identity field says where it was measured, and must match.
VARIANT_FIELDS = {"point_id", "server", "setting", "endpoint", "parallel_limit", "processes", "sweep"}
MATCH_FIELDS = tuple(f for f in point_data.IDENTITY if f not in VARIANT_FIELDS)


def names(point: dict) -> set[str]:
    return {str(point.get("setting")), str(point.get("server"))}


def where_key(point: dict) -> tuple:
    """What the point's load was; a rates = "auto" point's by its share of its own server's peak, not the rate."""
    shared = point.get("rate_share") is not None
    return tuple(repr(point.get(f)) for f in MATCH_FIELDS if not (shared and f == "rate"))


def side(points: list[dict], variant: str) -> dict[tuple, dict]:
    """The points of one variant by where they were measured; refused when the name is unknown or ambiguous."""
    chosen = [p for p in points if variant in names(p)]
    if not chosen:
        known = sorted({str(p.get("setting") or p.get("server")) for p in points})
        raise CompareRefused(f"no point of {variant!r} in this run; its variants: {', '.join(known)}")
    by_where: dict[tuple, dict] = {}
    for point in chosen:
        key = where_key(point)
        if key in by_where:
            raise CompareRefused(
                f"{variant!r} names more than one variant ({by_where[key].get('setting')!r}, "
                f"{point.get('setting')!r}); name one by its setting"
            )
        by_where[key] = point
    return by_where


def round_values(run: Run, point: dict, figure: str) -> dict[int, float]:
    """The figure of each counted launch of the point, by its round (the record's repetition)."""
    values = {}
    for cell_id in point["cells"]:
        cell = run.cell_by_id.get(cell_id, {})
        value = point_data.value_at(cell, figure)
        if isinstance(value, (int, float)) and isinstance(cell.get("repetition"), int):
            values[cell["repetition"]] = float(value)
    return values


def paired(run: Run, a: dict, b: dict, figure: str) -> list[tuple[float, float]]:
    va, vb = round_values(run, a, figure), round_values(run, b, figure)
    return [(va[r], vb[r]) for r in sorted(va) if r in vb]


ONE_RUN = {
    compare_stats.STATIC: {},
    compare_stats.DELAYED: {},
    "default": 0.0,
    "measured": True,
    "source": "one run: no run-to-run variance",
}


def compare_within(
    run: Run, variant_a: str, variant_b: str, margin: float = compare_stats.DEFAULT_MARGIN
) -> Comparison:
    margin = checked_margin(margin)
    all_points = point_data.load(run.path)
    side_a, side_b = side(all_points, variant_a), side(all_points, variant_b)
    if {p["point_id"] for p in side_a.values()} & {p["point_id"] for p in side_b.values()}:
        raise CompareRefused(f"{variant_a!r} and {variant_b!r} name the same variant")
    common = [key for key in side_a if key in side_b]
    if not common:
        raise CompareRefused(f"{variant_a!r} and {variant_b!r} were never measured under the same load in this run")
    rows = fdr_controlled([row(run, side_a[key], side_b[key], margin) for key in common])
    notes = launch_more(rows)
    left_out = len(side_a) + len(side_b) - 2 * len(common)
    if left_out:
        notes.append(f"{left_out} point(s) of one variant had no match in the other and are left out")
    names = (str(side_a[common[0]].get("setting") or variant_a), str(side_b[common[0]].get("setting") or variant_b))
    return Comparison(run, run, rows, ONE_RUN, margin, notes=notes, within=names)


def row(run: Run, a: dict, b: dict, margin: float) -> Row:
    headline = a.get("headline") or "rps"
    verdicts = {}
    for figure in judged_figures(headline, a, b):
        fa, fb = a["figures"].get(figure) or {}, b["figures"].get(figure) or {}
        verdicts[figure] = compare_stats.judge_paired(
            figure, paired(run, a, b, figure), fa.get("value"), fb.get("value"), margin
        )
    label = where_of(a if a.get("endpoint") == b.get("endpoint") else {**a, "endpoint": ""})  # else its group
    return Row(
        a["point_id"] + " / " + b["point_id"],
        label,
        headline,
        verdicts,
        not (a.get("valid") and b.get("valid")),
        (a["n"], b["n"]),
    )


def compare_in_run(
    run_dir: Path,
    variant_a: str,
    variant_b: str,
    out: Path | None = None,
    charts: bool = True,
    margin: float = compare_stats.DEFAULT_MARGIN,
) -> tuple[Comparison, Path, str]:
    """compare_within on a run directory; writes OUT/compare.html, compare.txt and the chart (OUT defaults to
    RUN/compare-within-<A>-<B>). Returns (comparison, html path, text table)."""
    cmp = compare_within(load_run(run_dir), variant_a, variant_b, margin)
    slug = "-".join("".join(c if c.isalnum() else "_" for c in v) for v in (variant_a, variant_b))
    out = Path(out) if out else Path(run_dir) / f"compare-within-{slug}"
    return cmp, *compare_render.write(cmp, out, charts)

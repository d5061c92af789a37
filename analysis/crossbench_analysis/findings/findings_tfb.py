"""Findings of TechEmpower's protocol (the tfb experiment; seed 004's techempower group): per test type, each stack
at its best level, as TechEmpower quotes it, ranked, with the ratio to the leader. A best level is picked by each
level's first launch and stated from the launches after it (finding.confirmed_best_levels: the best of many single launches
reads high); a stack whose best cannot be told from the leader's (their ratio's 95 % interval holds 1) is named
as a tie."""

from __future__ import annotations

from crossbench_analysis.charts.tfb import is_tfb
from crossbench_analysis.read.runinfo import offered_rate

from . import tfb_reference
from .finding import (
    Finding,
    all_flagged,
    comparison,
    confirmed_best_levels,
    most_rps,
    ratio_text,
    separated,
    sig,
    split,
    value,
    who,
)


def type_words(group: str | None) -> str:
    """A group named after its TechEmpower type (tfb's json, db, queries-5) as "TechEmpower db"; seed004's group
    named techempower (its /db sweep) as "TechEmpower's protocol", not "TechEmpower techempower"."""
    return "TechEmpower's protocol" if str(group).lower() == "techempower" else f"TechEmpower {group}"


def ranking(family: str, points: list[dict], chart: str = "tfb_rps") -> list[Finding]:
    tfb = [p for p in points if p["records"] and is_tfb(p["records"][0]) and not offered_rate(p)]
    out = []
    for group in dict.fromkeys(p.get("group") for p in tfb):
        good, left = split([p for p in tfb if p.get("group") == group])
        good = [p for p in good if value(p, "rps") is not None]
        if not good:
            out.append(all_flagged(family, type_words(group), left, chart))
            continue
        best = confirmed_best_levels(good, lambda p: str(p.get("server")))  # each server at its best level and workers
        ranked = sorted(best.values(), key=lambda p: value(p, "rps"), reverse=True)
        top = ranked[0]
        parts = [
            f"{who(p)} at C={p.get('concurrency')}: {sig(value(p, 'rps'), 3)} req/s"
            + ("" if p is top else f" (x{value(p, 'rps') / value(top, 'rps'):.2f}{tie(p, top)})")
            for p in ranked
        ]
        claim = (
            f"{who(top)} at C={top.get('concurrency')}, the most on {type_words(group)} ({top.get('endpoint')}) "
            f"of {len(ranked)} stacks at their best levels"
        )
        detail = "each stack at its best level, against the leader only (the order among the others is untested): "
        out.append(most_rps(family, chart, ranked, left, claim, detail + "; ".join(parts), f"{who(top)}, best level"))
    return out


def tie(point: dict, top: dict) -> str:
    """', not told apart: 1.000 [0.951, 1.05]' when the ratio to the leader's 95 % interval (Welch's t on the
    launches' logs) holds 1; ', indicative' when a side has fewer than three launches (no comparison)."""
    test = comparison(top, point, "rps")
    if test is None:
        return ", indicative"
    return "" if separated(test) else f", not told apart: {ratio_text(test)}"


def against_reference(family: str, points: list[dict]) -> list[Finding]:
    """Per test type, how our ratios between stacks stand against TechEmpower's published ones (tfb_reference:
    same order, reversed, within our noise, not read), one sentence a type; tfb-reference.md has the table."""
    try:
        result = tfb_reference.compare(points)
    except tfb_reference.NoTfbCells:
        return []
    out = [Finding(family, f"TechEmpower's reference data: {problem}") for problem in result["problems"]]
    for te_type, said in tfb_reference.counts(result).items():
        words = ", ".join(f"{n} {verdict}" for verdict, n in sorted(said.items(), key=lambda kv: -kv[1]))
        reversed_pairs = sorted(
            {
                f"{each['b']}/{each['a']}"
                for t in result["types"]
                if t["type"] == te_type
                for each in t["pairs"]
                for run in each["runs"]
                if run["verdict"] == tfb_reference.REVERSED
            }
        )
        note = f"; reversed: {', '.join(reversed_pairs)}" if reversed_pairs else ""
        out.append(
            Finding(
                family,
                f"{te_type} against TechEmpower's published runs, ratio by ratio between our "
                f"stacks at their best levels: {words} (tfb-reference.md)",
                chart="tfb_rps",
                detail=note.lstrip("; "),
            )
        )
    return out

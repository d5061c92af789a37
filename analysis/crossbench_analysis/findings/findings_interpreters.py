"""The interpreter experiment's findings: for each Python server's setting measured on more than one interpreter,
each newer interpreter's point against the oldest one's, B/A of the headline figure paired by round with its 95 %
interval (compare_within, held to the false discovery rate across the points of one pair), and whether that moved
the figure beyond its interval and the margin, or kept it within the margin, or the launches cannot say. One more
line says whether a free-threaded build was here, and so whether the cells it would matter to could be measured."""

from __future__ import annotations

import math
import re

from crossbench import pyenvs
from crossbench.figures import changes
from crossbench.figures import points as point_data
from crossbench.stats import MIN_LAUNCHES, PAIRED_METHOD, WELCH_METHOD
from crossbench_analysis.read.runinfo import Run
from crossbench_analysis.read.setting import where_of

from . import findings_seeds as seeds
from .finding import Finding, sig

FAMILY = "interpreters"
MARGIN = 0.05  # compare's default: a change within 5 % is "the same"
FDR_Q = 0.05  # compare's: Benjamini-Hochberg across the points of one pair of interpreters
# The interpreter's part of a Python server's setting (python_runtime.words): " Python 3.13", " Python 3.13t free-threaded"
IN_SETTING = re.compile(r" Python (\d+)\.(\d+)(t?)( free-threaded)?$")
LOWER_IS_BETTER = ("latency_ms.", "latency_ratio", "efficiency_ratio")  # as compare judges them
FIGURE_WORDS = {"rps": "req/s", "latency_ratio": "latency ratio", "efficiency_ratio": "efficiency ratio"}
# Where two points were measured: everything but the server's setting.
WHERE = ("group", "kind", "endpoint", "concurrency", "delay_ms", "rate", "loadgen", "proxy", "pooler")


def findings(run: Run, points: list[dict]) -> list[Finding]:
    """Seed 000's question on each interpreter (a setting each), then each interpreter against the oldest."""
    by_interpreter = sorted(points, key=lambda p: version_key(interpreter_of(p)[1]) if interpreter_of(p) else (0, 0))
    return [*seeds.sync_async(FAMILY, by_interpreter), *moved(points), free_threaded(run, points)]


def interpreter_of(point: dict) -> tuple[str, str] | None:
    """(the setting without its interpreter, the interpreter: "3.13", "3.13t"), or None for a point on none named."""
    setting = str(point.get("setting") or "")
    found = IN_SETTING.search(setting)
    return (setting[: found.start()], f"{found[1]}.{found[2]}{found[3]}") if found else None


def version_key(label: str) -> tuple:
    major, minor = label.rstrip("t").split(".")
    return int(major), int(minor), label.endswith("t")


def moved(points: list[dict]) -> list[Finding]:
    """Each newer interpreter against the oldest, point by point, for every setting measured on two or more; the
    calls of one pair of interpreters held to the false discovery rate across its points."""
    by_where: dict[tuple, dict[str, dict]] = {}
    for point in points:
        named = interpreter_of(point)
        if named and point.get("valid"):
            key = (named[0], *(repr(point.get(f)) for f in WHERE))
            by_where.setdefault(key, {})[named[1]] = point
    pairs: dict[tuple, list] = {}
    for key, on in by_where.items():
        labels = sorted(on, key=version_key)
        for newer in labels[1:]:
            pairs.setdefault((key[0], labels[0], newer), []).append((on[labels[0]], on[newer]))
    out = [left_out(points)] if any(interpreter_of(p) and not p.get("valid") for p in points) else []
    for (base, oldest, newer), matched in pairs.items():
        judged = [judge(a, b) for a, b in matched]
        for (a, b), (figure, test, call) in zip(matched, held_to_fdr(judged)):
            out.append(finding(base, oldest, newer, a, b, figure, test, call))
    return out


def left_out(points: list[dict]) -> Finding:
    """The points no comparison reads: flagged beyond what a point keeps (every launch disturbed, errors)."""
    flagged = [p for p in points if interpreter_of(p) and not p.get("valid")]
    flags = sorted({f for p in flagged for f in p.get("flags") or []})
    return Finding(
        FAMILY,
        f"{len(flagged)} point(s) left out of the comparisons, flagged {', '.join(flags) or 'or failed'}: "
        + "; ".join(f"{p.get('setting')} {where_of(p)}" for p in flagged[:4])
        + ("; ..." if len(flagged) > 4 else "")
        + ".",
        cells=[c for p in flagged for c in p.get("cells") or []],
    )


def by_round(point: dict, figure: str) -> dict[int, float]:
    """The figure of each counted launch of the point, by its round (the record's repetition)."""
    counted = set(point.get("cells") or [])
    return {
        r["repetition"]: float(v)
        for r in point.get("records") or []
        if r.get("cell_id") in counted
        and isinstance(v := point_data.value_at(r, figure), (int, float))
        and v > 0
        and isinstance(r.get("repetition"), int)
    }


def judge(a: dict, b: dict) -> tuple[str, changes.ChangeTest | None, str]:
    """(the headline figure, B/A's test or None, the call against MARGIN or why none can be made). Paired by round
    where MIN_LAUNCHES rounds hold a counted launch of both; else (a disturbed launch left out and launched again
    in a later round) Welch's t on each side's counted launches, unpaired."""
    figure = a.get("headline") or "rps"
    va, vb = by_round(a, figure), by_round(b, figure)
    pairs = [(va[r], vb[r]) for r in sorted(va) if r in vb]
    if len(pairs) >= MIN_LAUNCHES and len({math.log(y / x) for x, y in pairs}) > 1:
        test = changes.paired_change(pairs)
    elif not changes.untestable(list(va.values()), list(vb.values())):
        test = changes.run_log_ratio(list(va.values()), list(vb.values()))
    else:
        return figure, None, f"fewer than {MIN_LAUNCHES} launches on a side"
    return figure, test, changes.change_call(test, MARGIN)


def held_to_fdr(judged: list[tuple]) -> list[tuple]:
    """A change or a same whose Benjamini-Hochberg adjusted p (among the pair's points) is above FDR_Q reads
    inconclusive, as compare's verdicts do."""
    tested = [i for i, (_, test, _) in enumerate(judged) if test is not None]
    p_change = changes.benjamini_hochberg([judged[i][1].p_change(MARGIN) for i in tested])
    p_same = changes.benjamini_hochberg([judged[i][1].p_same(MARGIN) for i in tested])
    out = list(judged)
    for i, pc, ps in zip(tested, p_change, p_same):
        figure, test, call = judged[i]
        if (ps if call == changes.EQUIVALENT else pc) > FDR_Q and call != changes.INCONCLUSIVE:
            out[i] = (figure, test, changes.INCONCLUSIVE)
    return out


def verdict_words(figure: str, test: changes.ChangeTest | None, call: str) -> str:
    """Whether the interpreter moved the figure: beyond its 95 % interval (it leaves 1), and beyond the margin (a
    change), within it (a same) or neither surely; or that the launches cannot say."""
    margin = f"{MARGIN * 100:g} %"
    if test is None:
        return f"cannot tell ({call})"
    low, high = test.interval()
    better = (high < 1) == figure.startswith(LOWER_IS_BETTER)
    way = "better" if better else "worse"
    if call in (changes.INCREASE, changes.DECREASE):
        return f"moved it: {way} beyond its interval and the {margin} margin"
    if low <= 1 <= high:
        if call == changes.EQUIVALENT:
            return f"did not move it: within {margin}"
        return f"cannot say whether it moved it (interval +-{(high / test.ratio - 1) * 100:.0f} %)"
    if call == changes.EQUIVALENT:
        return f"moved it ({way}) beyond its interval, by less than the {margin} margin"
    return f"moved it ({way}) beyond its interval, not surely beyond the {margin} margin"


def finding(base: str, oldest: str, newer: str, a: dict, b: dict, figure: str, test, call: str) -> Finding:
    words = FIGURE_WORDS.get(figure, figure)
    if test is None:  # the points' own figures, side by side: indicative, no interval
        va, vb = point_value(a, figure), point_value(b, figure)
        ratio, interval = (vb / va if va and vb else None), None
        lead = f"{sig(ratio)}x (indicative, {a['n']} and {b['n']} launches)" if ratio else "no figure"
    else:
        ratio, interval = test.ratio, list(test.interval())
        lead = f"{sig(ratio)}x [{sig(interval[0])}, {sig(interval[1])}]"
    sentence = f"{lead} {words}: {base} on Python {newer} against {oldest}, {where_of(a)}: {verdict_words(figure, test, call)}."
    return Finding(
        FAMILY,
        sentence,
        label=f"{words}, Python {newer} / {oldest}",
        figure=ratio,
        unit="x",
        interval=interval,
        n=min(test.n_a, test.n_b) if test else None,
        basis=basis(test),
        method=f"B/A of the launches paired by round ({PAIRED_METHOD}; {WELCH_METHOD} where fewer rounds hold both), "
        f"Benjamini-Hochberg at q = {FDR_Q:g} across the pair's points, as compare --within",
        cells=[*a["cells"], *b["cells"]],
        leads=True,
        detail=f"{oldest}: {sig(point_value(a, figure))}, {newer}: {sig(point_value(b, figure))} {words}",
    )


def basis(test: changes.ChangeTest | None) -> str:
    if test is None:
        return ""
    if test.method == PAIRED_METHOD:
        return f"{test.n_a} rounds paired"
    return f"{test.n_a} and {test.n_b} launches, unpaired"


def point_value(point: dict, figure: str) -> float | None:
    return ((point.get("figures") or {}).get(figure) or {}).get("value")


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

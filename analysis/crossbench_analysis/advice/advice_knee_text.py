"""advice.md's knees in sentences: where each delay's ratio bends as the hinge fit places it (a number with its
interval, or the bracket of measured concurrencies), the points it rests on and those left out, flagged."""

from __future__ import annotations

from .advice_run import TRACK_SHARE
from .words import ids, n

FAR_APART = 2.5  # a knee bracket wider than this factor is placed only that closely


def knee_lines(bends: dict) -> list[str]:
    """Per setting one line, what was measured first (the ratio at each C against C / maxThreads), then what the
    hinge made of it; the conclusion from the measurements, the model's verdict beside it."""
    lines = ["## Does the knee follow maxThreads here?", ""]
    for bend in bends["knees"]:
        verdict = {True: "at maxThreads", False: "NOT at maxThreads", None: "cannot tell"}[bend["follows_max_threads"]]
        lines.append(
            f"- {bend['setting']}, {bend['held']}: measured {bend['ratio'].replace('_', ' ')} "
            f"{measured_text(bend)}; the hinge {where(bend)} ({verdict})"
            + (f"; left out: {flagged_by_c(bend['left_out'])}" if bend["left_out"] else "")
            + past_note(bend)
            + "."
        )
    tracking, observed = bends.get("observed_tracking", []), bends.get("observed_judged", [])
    if observed:
        lines.append(
            f"- Measured: past maxThreads the ratio tracked C / maxThreads (within "
            f"{100 * TRACK_SHARE:.0f} %, and stayed near 1 below it) in {len(tracking)} of {len(observed)} "
            "settings"
            + (
                ": here the pool is what bends it, each request past it waiting its turn."
                if len(tracking) == len(observed)
                else "."
            )
        )
    if bends["follows"] is False:
        lines.append(
            f"- The hinge says something other than the pool bent the ratio first "
            f"({', '.join(bends['settings_not_following'])}, by C={bends['machine_limit_concurrency']}): "
            "the CPU or a busy machine."
        )
    elif bends["follows"] is None and not observed:
        lines.append("- No valid points past any maxThreads: the run cannot tell where the knee sits.")
    return lines + [""]


def measured_text(bend: dict) -> str:
    """'1.00 at C=25, 1.97 at C=100 (C / maxThreads 2.0)': each valid point's ratio, past the pool beside C / N."""
    limit = bend.get("max_threads")
    shown = []
    for c, ratio in bend.get("measured") or []:
        beside = f" (C / maxThreads {n(c / limit)})" if limit and c > limit else ""
        shown.append(f"{n(ratio)} at C={c:g}{beside}")
    return ", ".join(shown) or "no valid point"


def flagged_by_c(items: list[dict]) -> str:
    """'C=800, 1000 (few_completions)': the left-out points by concurrency, per reason."""
    by_reason: dict[str, list[str]] = {}
    for x in items:
        c = f"{x['concurrency']:g}" if x.get("concurrency") is not None else f"`{x['point']}`"
        by_reason.setdefault(", ".join(x["flags"]), []).append(c)
    return "; ".join(f"C={', '.join(cs)} ({reason})" for reason, cs in by_reason.items())


def where(bend: dict) -> str:
    """The knee as the fit places it (knees.judge's words): 'bends at C=204 [196, 212]', 'bends between C=100
    and C=400 (points far apart: placed no closer)', 'stays flat up to C=400 (not reached)', ..."""
    if not bend["points"]:
        return "has no valid point to judge"
    text = bend["text"].rsplit(" (predicted", 1)[0]
    if bend["status"] == "bracket":
        low, high = bend["knee_between"]
        fit = (
            (f" (the hinge's own fit, C={n(bend['knee_concurrency'])}, is indicative: fewer than 3 launches past it)")
            if bend["indicative"]
            else ""
        )
        return f"bends {text}" + (" (points far apart: placed no closer)" if high / low > FAR_APART else "") + fit
    if bend["status"] == "fitted":
        return (
            f"bends at C={n(bend['knee_concurrency'])} (95 % interval {n(bend['knee_low'])} to {n(bend['knee_high'])})"
        )
    if bend["status"] == "poor_fit":
        return f"does not fit (a caveat on the model, not on the ratios measured): {text}"
    return f"says: {text}"


def past_note(bend: dict) -> str:
    if not bend["flagged_but_past"]:
        return ""
    return (
        f"; {ids(bend['flagged_but_past'])} counted though flagged ratio_disagreement: both ratios are above "
        f"1.1 there, past the knee either way"
    )


def ratios(by_point: dict) -> str:
    return ", ".join(f"`{p}` {v}" for p, v in by_point.items()) or "none valid"


def flagged(items: list[dict]) -> str:
    return ", ".join(f"`{x['point']}` ({', '.join(x['flags'])})" for x in items)

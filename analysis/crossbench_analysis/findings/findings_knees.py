"""Findings of where each delay sweep bends (seed 002, quick, servers, maxthreads): per server setting, the knee the
hinge fitted over every launch of its ratio places, with its interval or the bracket of measured concurrencies, in
words; and, where a fitted knee sits just off its pool, the overheads measured either side of the pool that put it
there. The sweeps' other findings (findings_sweeps.py) and the refitted knees of a reference run (refit.py) read
the sweeps as this module groups them."""

from __future__ import annotations

from collections import defaultdict

from crossbench.endpoints import family
from crossbench.figures import service_time
from crossbench_analysis.judge import hinge
from crossbench_analysis.judge.knee_rule import Knee, c_text, figure_launches, fitted_c_text, judge
from crossbench_analysis.judge.knees import Overheads, overheads, predicted_knee
from crossbench_analysis.read.runinfo import by_default_driver, num
from crossbench_analysis.read.setting import setting_order

from .finding import (
    THRESHOLD,
    Finding,
    all_flagged,
    caveat_note,
    cells_of,
    figure,
    figure_of,
    left_note,
    ratio_words,
    sig,
    split,
    sweep_name,
    sweep_ratio,
    value,
    who,
    with_figure,
)

OFFSET_EXPLAINED = 0.02  # a fitted knee this close to its pool, its interval missing it: the overheads say why


def delay_sweeps(points: list[dict]) -> list[tuple[str, list[dict]]]:
    """Closed-loop delay points per server setting (group, endpoint, delay, setting), by concurrency, each named
    'tomcat maxThreads=200 (/delay/sync, 1 s)' (with its group when two groups share that name); groups and
    endpoints in the order the points first name them, delays by length, settings in reading order
    (maxThreads=50 before 200, whatever order the shuffled run measured them in)."""
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for p in points:
        if (
            by_default_driver(p)
            and ((num(p.get("delay_ms")) or 0) > 0 or served_once(p))
            and p.get("endpoint") not in family("db")
        ):
            grouped[(p.get("group"), p.get("endpoint"), p.get("delay_ms"), who(p))].append(p)
    groups, endpoints = list(dict.fromkeys(k[0] for k in grouped)), list(dict.fromkeys(k[1] for k in grouped))
    ordered = sorted(
        grouped.items(),
        key=lambda kv: (groups.index(kv[0][0]), endpoints.index(kv[0][1]), num(kv[0][2]) or 0, setting_order(kv[0][3])),
    )
    names = [sweep_name(pts[0]) for _, pts in ordered]
    return [
        (
            name if names.count(name) == 1 else f"{name[:-1]}, group {key[0]})",
            sorted(pts, key=lambda p: num(p.get("concurrency")) or 0),
        )
        for name, (key, pts) in zip(names, ordered)
    ]


def served_once(point: dict) -> bool:
    """A user's request (--path): its ratios are taken against its C=1 service time, as a delay's against the delay."""
    return value(point, service_time.FIELD) is not None


def counted(pts: list[dict]) -> tuple[list[dict], list[dict], str, Knee]:
    """(valid points with a ratio, left-out records, the ratio they are judged by, the knee the hinge fitted over
    every launch of those points says: knees.judge, the rule the knees file and the advice use)."""
    good, left = split(pts)
    ratio = sweep_ratio(good)
    good = [p for p in good if value(p, ratio) is not None]
    return good, left, ratio, judge(figure_launches([(num(p.get("concurrency")), figure(p, ratio)) for p in good]))


def bend_point(good: list[dict], knee: Knee) -> dict:
    """The point a bend's sentence quotes: the first past the knee (the bracket's upper end), the lowest when
    every one is bent, else the highest."""
    if knee.status == "below_range":
        return good[0]
    if knee.status in ("fitted", "bracket"):
        edge = knee.bracket[1] if knee.bracket else knee.concurrency
        return next((p for p in good if (num(p.get("concurrency")) or 0) >= edge), good[-1])
    return good[-1]


def bends(family: str, points: list[dict], chart: str = "efficiency") -> list[Finding]:
    """Per setting: where the hinge fitted over every launch of its ratio (sweep_ratio: the knees' own) places
    the knee, as a number with its interval or the bracket of measured concurrencies, the sentence leading with
    it (or with the ratio where there is no knee); why, when the first point past it is the highest counted."""
    out = []
    for name, pts in delay_sweeps(points):
        good, left, ratio, knee = counted(pts)
        if not good:
            out.append(all_flagged(family, f"Where {name} bends", left, chart))
            continue
        point = bend_point(good, knee)
        measured = measured_overheads(good, ratio)
        text = resolution(name, knee, ratio, point) + offset_clause(knee, measured)
        finding = with_figure(
            Finding(
                family,
                text + caveat_note(good) + "." + left_note(left),
                chart=chart,
                cells=cells_of(good),
                left_out=left,
                leads=True,
                detail=fit_detail(knee, ratio_words(ratio, point))
                + offset_detail(measured)
                + (seed_ratio_note(point, ratio) if knee.status in ("fitted", "bracket") else ""),
            ),
            point,
            ratio,
            digits=4,
            label=f"{ratio.replace('_', ' ')} at C={point['concurrency']}",
        )
        out.append(with_knee(finding, knee))
    return out


def resolution(name: str, knee: Knee, ratio: str, point: dict) -> str:
    """The bend in words from the fit (knees.judge), its figure first: 'Knee at C=204 [196, 212]: ...', 'Knee
    between C=100 and C=400: ...', 'Latency ratio 1.09 [1.06, 1.13] at C=1000: ... does not bend up to C=1000'
    only when the fit puts N above it; otherwise no knee stated, and why."""
    fit, short = knee.fit, ratio.replace("_", " ")
    at = f"{both_ratios(point, ratio)} at C={num(point.get('concurrency')):g}"
    if knee.status == "fitted":
        return f"Knee at {fitted_c_text(knee)}: {name} bends there, its {short} growing as C / N past it"
    if knee.status == "bracket":
        return f"Knee between C={knee.bracket[0]:g} and C={knee.bracket[1]:g}: {name} bends there"
    if knee.status == "not_reached":
        low = fit.low if fit.low is not None else fit.n_best
        return f"{at}: {name} does not bend up to C={knee.top:g} (fit: N ≥ {c_text(low)})"
    if knee.status == "below_range":
        return f"{at}: {name} bends at or below C={knee.bottom:g}, the lowest C counted"
    if knee.status == "poor_fit":
        return f"{at}: no knee stated for {name}, its {short} does not rise as a pool's C / N"
    return f"{at}: where {name} bends is {knee.words()}"


def measured_overheads(good: list[dict], ratio: str) -> Overheads | None:
    """The overheads (judge.knees.Overheads) of a pool's sweep, from its valid points' ratios."""
    pool = num(predicted_knee(good[0])) if good else None
    return overheads(pool, [(num(p.get("concurrency")), value(p, ratio)) for p in good])


def offset_clause(knee: Knee, found: Overheads | None) -> str:
    """Where a fitted knee's interval misses its pool by less than OFFSET_EXPLAINED and holds pool x a / a' (the
    overheads measured on either side of the pool, `found`): by how much, and that the fit estimates that quantity:
    one a fitted on both sides puts N where a, paid once below the pool, meets a', paid per round of the queue."""
    if knee.status != "fitted" or knee.low is None or found is None or knee.low <= found.pool <= knee.high:
        return ""
    off = knee.concurrency / found.pool - 1
    if abs(off) > OFFSET_EXPLAINED or not knee.low <= found.predicted <= knee.high:
        return ""  # an offset the overheads do not explain is not explained by them
    pool = f"{found.pool:g}"
    return (
        f", {100 * abs(off):.2f} % {'above' if off > 0 else 'below'} its pool of {pool}: the fit estimates "
        f"{pool} x a / a' = {sig(found.predicted, 5)}"
    )


def offset_detail(found: Overheads | None) -> str:
    if found is None:
        return ""
    pool = found.pool
    return (
        f"; the ratio at C <= {pool:g}, a = {found.a:.5f}, and per C / {pool:g} past it, a' = "
        f"{found.a_past:.5f} (geometric means): {pool:g} x a / a' = {found.predicted:.2f}"
    )


def fit_detail(knee: Knee, words: str) -> str:
    """How the knee was fitted, for the fold under the sentence."""
    fit = knee.fit
    if fit is None:
        return f"no hinge fitted to the {words}"
    detail = f"the hinge {words} = a max(1, C / N) fitted over {fit.launches} launches, a = {fit.a:.3f}; {knee.words()}"
    if knee.status == "not_reached":
        detail += f"; under a {100 * (THRESHOLD - 1):.0f} % bend at C={knee.top:g}"
    if fit.widened > 1 and knee.status in ("fitted", "bracket"):
        detail += (
            f"; its interval widened for the lack of fit (p = {fit.lack_of_fit_p:.2g}: the concurrencies' "
            f"means stray from the hinge {fit.widened:.3g} times as much as their launches from each other)"
        )
    return detail + knee.note()


def with_knee(finding: Finding, knee: Knee) -> Finding:
    """A fitted knee is the finding's figure: N, its 95 % interval, the launches it rests on."""
    if knee.status != "fitted":
        return finding
    finding.label, finding.figure, finding.unit, finding.digits = "fitted knee N", knee.concurrency, "clients", 3
    finding.interval, finding.n, finding.method = [knee.low, knee.high], knee.fit.launches, hinge.METHOD
    finding.launches = None
    return finding


def both_ratios(point: dict, ratio: str) -> str:
    """The ratio a sweep is judged by and, beside a latency ratio, the seed's own efficiency ratio, both first-class
    figures of the point: 'Latency ratio 5.003 [4.99, 5.01] and efficiency ratio 5.007 [5.00, 5.02]'."""
    said = [f"{ratio.replace('_', ' ')} {figure_of(point, ratio)}"]
    if ratio != "efficiency_ratio" and value(point, "efficiency_ratio") is not None:
        said.append(f"efficiency ratio {figure_of(point, 'efficiency_ratio')}")
    note = said[0][said[0].rfind(" (") :] if said[0].endswith(")") and " (" in said[0] else None
    if note and len(said) == 2 and said[1].endswith(note):  # '(1 launch)' said once, after both
        said[0] = said[0][: -len(note)]
    text = " and ".join(said)
    return text[0].upper() + text[1:]


def seed_ratio_note(point: dict, ratio: str) -> str:
    """The seed's own figure beside the latency ratio the sweep is judged by, for the fold of a knee's sentence:
    '; the seed's efficiency ratio at C=1000: 5.007 [4.998, 5.016]'."""
    if ratio == "efficiency_ratio" or value(point, "efficiency_ratio") is None:
        return ""
    return f"; the seed's efficiency ratio at C={point['concurrency']:g}: {figure_of(point, 'efficiency_ratio')}"

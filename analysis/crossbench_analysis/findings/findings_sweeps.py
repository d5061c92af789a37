"""Findings of the concurrency sweeps and the open loop (seed 002, quick, servers, maxthreads, openloop): where
each server setting bends, its ratio at the highest concurrency and why, its threads against maxThreads, what a
thread costs, static throughput and whether the load generator was the limit, the highest sustainable rate.
Each function takes (family, points) and returns findings; none when the run has no such cells."""
from __future__ import annotations

from collections import defaultdict

from crossbench.endpoints import family, is_static
from crossbench_analysis.judge import hinge
from crossbench_analysis.judge.knee_rule import Knee, c_text, figure_launches, judge
from crossbench_analysis.judge.knees import predicted_knee
from crossbench_analysis.read.runinfo import by_default_driver, num, offered_rate
from crossbench_analysis.read.setting import pool_size, sweeps_pool

from .finding import (
    RATIO_WORDS,
    THRESHOLD,
    Finding,
    all_flagged,
    caveat_note,
    cells_of,
    comparison,
    delay_text,
    figure,
    left_note,
    quoted,
    ratio_text,
    separated,
    sig,
    split,
    sweep_ratio,
    value,
    who,
    with_figure,
)

MIN_COST_SETTINGS = 3
SATURATED_PCT = 90.0       # the runner's loadgen_saturated threshold (runner/crossbench/record/metrics.py)


def delay_sweeps(points: list[dict]) -> list[tuple[str, list[dict]]]:
    """Closed-loop delay points per server setting (group, endpoint, delay, setting), by concurrency."""
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for p in points:
        if by_default_driver(p) and (num(p.get("delay_ms")) or 0) > 0 \
                and p.get("endpoint") not in family("db"):
            grouped[(p.get("group"), p.get("endpoint"), p.get("delay_ms"), who(p))].append(p)
    return [(f"{key[3]} ({key[1]}, {delay_text(pts[0])} delay, group {key[0]})",
             sorted(pts, key=lambda p: num(p.get("concurrency")) or 0)) for key, pts in grouped.items()]


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
    the knee, as a number with its interval or the bracket of measured concurrencies; why, when the first point
    past it is the highest concurrency counted."""
    out = []
    for name, pts in delay_sweeps(points):
        good, left, ratio, knee = counted(pts)
        if not good:
            out.append(all_flagged(family, f"Where {name} bends", left, chart))
            continue
        point = bend_point(good, knee)
        text = resolution(name, knee, RATIO_WORDS[ratio])
        if point is good[-1] and knee.status in ("fitted", "bracket"):
            text += f"; {why_ratio(point)}"
        text += seed_ratio_note(point, ratio) + caveat_note(good) + "."
        finding = with_figure(Finding(family, text + left_note(left), chart=chart, cells=cells_of(good),
                                      left_out=left),
                              point, ratio, digits=4, label=f"{ratio.replace('_', ' ')} at C={point['concurrency']}")
        out.append(with_knee(finding, knee))
    return out


def resolution(name: str, knee: Knee, words: str) -> str:
    """The bend in words from the fit (knees.judge): 'bends at C=204 (95 % interval 196 to 212)', 'bends between
    C=100 and C=400', 'does not bend up to C=400' only when the fit puts N above it, otherwise 'not resolved'."""
    fit = knee.fit
    over = f"{fit.launches} launches" if fit else ""
    if knee.status == "fitted":
        return (f"{name} bends at C={c_text(knee.concurrency)} (95 % interval {c_text(knee.low)} to "
                f"{c_text(knee.high)}): a pool's hinge, {words} = a max(1, C / N), fitted over {over}, "
                f"a = {fit.a:.3f}")
    if knee.status == "bracket":
        return (f"{name} bends between C={knee.bracket[0]:g} and C={knee.bracket[1]:g}: the hinge fitted to its "
                f"{words} over {over} places the knee no closer{knee.note()}")
    if knee.status == "not_reached":
        low = fit.low if fit.low is not None else fit.n_best
        return (f"{name} does not bend up to C={knee.top:g}: the hinge fitted to its {words} over {over} puts N "
                f"at C={c_text(low)} or above, less than a {100 * (THRESHOLD - 1):.0f} % bend at C={knee.top:g}")
    if knee.status == "below_range":
        return f"{name} is bent already at C={knee.bottom:g}: its {words} rises as C / N from the lowest C counted"
    if knee.status == "poor_fit":
        return f"Where {name} bends: {knee.words()}, so no knee is stated"
    if knee.status == "too_few":
        return f"Where {name} bends: {knee.words()}"
    return f"Where {name} bends is {knee.words()}, fitted to its {words} over {over}"


def with_knee(finding: Finding, knee: Knee) -> Finding:
    """A fitted knee is the finding's figure: N, its profile interval, the launches it rests on."""
    if knee.status != "fitted":
        return finding
    finding.label, finding.figure, finding.unit, finding.digits = "fitted knee N", knee.concurrency, "clients", 3
    finding.interval, finding.n, finding.method = [knee.low, knee.high], knee.fit.launches, hinge.METHOD
    finding.launches = None
    return finding


def seed_ratio_note(point: dict, ratio: str) -> str:
    """The seed's own figure beside the latency ratio the sweep is judged by: '; the seed's efficiency ratio
    there: 1.48 ± 0.02'."""
    if ratio == "efficiency_ratio" or value(point, "efficiency_ratio") is None:
        return ""
    return f"; the seed's efficiency ratio there: {quoted(point, 'efficiency_ratio')}"


def why_ratio(point: dict) -> str:
    c, limit = num(point.get("concurrency")) or 0, num(predicted_knee(point["records"][0]))
    cpu = value(point, "cpu_percent")
    busy = f"; the server's CPU was {sig(cpu, 2)} % of one core" if cpu is not None else ""
    if limit and c > limit:
        return (f"C / parallel limit = {c:g} / {limit:g} = {sig(c / limit, 2)}: {limit:g} requests are served at "
                f"once (maxThreads or workers) and the rest wait for one{busy}")
    if limit:
        return f"C={c:g} is within the parallel limit of {limit:g}, so the pool is not what holds it back{busy}"
    return f"nothing limits how many wait at once here (an event loop or virtual threads){busy}"


def ratio_at_top(family: str, points: list[dict], chart: str = "efficiency") -> list[Finding]:
    """Per setting whose knee (the fit) lies before its highest counted concurrency: the ratio there, and why
    (C / parallel limit, or CPU)."""
    out = []
    for name, pts in delay_sweeps(points):
        good, left, ratio, knee = counted(pts)
        if not good or knee.status not in ("fitted", "bracket", "below_range") or bend_point(good, knee) is good[-1]:
            continue                                # no knee, or the first point past it is the top: bends() says
        top = good[-1]
        words = RATIO_WORDS[ratio]
        finding = Finding(family, f"At C={top['concurrency']}, the highest counted, past the knee, the {words} of "
                                  f"{name} is {sig(value(top, ratio), 3)}: {why_ratio(top)}." + left_note(left),
                          chart=chart, cells=top["cells"], left_out=left)
        out.append(with_figure(finding, top, ratio, digits=4,
                               label=f"{ratio.replace('_', ' ')} at C={top['concurrency']}"))
    return out


def thread_plateaus(family: str, points: list[dict], chart: str = "threads_peak") -> list[Finding]:
    """Per Tomcat setting: its most threads in a counted delay cell, against maxThreads."""
    out = []
    for name, pts in delay_sweeps(points):
        first = pts[0]["records"][0]
        if not sweeps_pool(first):
            continue
        good, left = split(pts)
        good = [p for p in good if value(p, "threads_peak") is not None]
        if not good:
            out.append(all_flagged(family, f"Threads of {name}", left, chart))
            continue
        peak = max(good, key=lambda p: value(p, "threads_peak"))
        threads, limit = value(peak, "threads_peak"), num(pool_size(first))
        if limit is None:
            text = (f"{name} peaked at {threads:.0f} JVM threads (C={peak['concurrency']}): virtual threads need "
                    "no pool, the count is the carriers and the JVM's own")
        else:
            busy = value(peak, "pool_busy_peak")
            text = f"{name} peaked at {threads:.0f} threads at C={peak['concurrency']}"
            if busy is None or not limit:
                text += f" (maxThreads {limit:g}; the pool's busy count was not sampled)"
            elif busy >= limit:
                text += (f": its pool filled ({busy:.0f} of {limit:g} busy at once), the other {threads - limit:.0f} "
                         "are the JVM's and Tomcat's own")
            else:
                text += f": its pool never filled ({busy:.0f} of {limit:g} busy at once)"
        out.append(with_figure(Finding(family, text + "." + left_note(left), chart=chart, cells=peak["cells"],
                                       left_out=left), peak, "threads_peak", "threads",
                                   f"peak threads at C={peak['concurrency']}", 2))
    return out


def thread_cost(family: str, points: list[dict], chart: str = "maxthreads_cost") -> list[Finding]:
    """Memory per thread: the least-squares slope of peak RSS against peak threads over the platform settings'
    highest counted delay cells (at least three settings: a line through two has no error to show)."""
    tops, left_all = [], []
    for _, pts in delay_sweeps(points):
        if pool_size(pts[0]["records"][0]) is None:
            continue
        good, left = split(pts)
        left_all += left
        good = [p for p in good if value(p, "threads_peak") is not None and value(p, "rss_peak_mb") is not None]
        if good:
            tops.append(good[-1])
    if len(tops) < MIN_COST_SETTINGS:
        return []
    xs, ys = [value(p, "threads_peak") for p in tops], [value(p, "rss_peak_mb") for p in tops]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if not sxx:
        return []
    slope_kb = 1024 * sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return [Finding(family, f"A thread costs about {sig(slope_kb, 2)} KB of resident memory here: the slope of "
                            f"peak RSS against peak threads over {len(tops)} maxThreads settings' highest counted "
                            "cells (the heap's growth is in it too)." + left_note(left_all),
                    label="memory per thread", figure=slope_kb, unit="KB", n=len(tops), method="least squares",
                    basis=f"least squares over {len(tops)} settings, no interval", chart=chart, cells=cells_of(tops),
                    left_out=left_all)]


def loadgen_words(point: dict) -> str:
    record = point["records"][0]
    cores = len(record.get("loadgen_cpus") or []) or num(record.get("loadgen_threads")) or 1
    cpu = value(point, "loadgen_cpu_percent")
    if cpu is None:
        return "the load generator's CPU was not measured"
    limit = "was" if cpu >= SATURATED_PCT * cores else "was not"
    return f"the load generator {limit} the limit ({record.get('loadgen')} at {sig(cpu, 2)} % of its {cores:g} core" \
           + ("s" if cores > 1 else "") + ")"


def static_throughput(family: str, points: list[dict], chart: str = "static_rps") -> list[Finding]:
    """Per server, the static mix at the highest concurrency: responses per second, and whether the load
    generator was the limit; then which server answered most."""
    static = [p for p in points if is_static(p.get("endpoint")) and not num(p.get("delay_ms"))]
    if not static:
        return []
    top_c = max(num(p.get("concurrency")) or 0 for p in static)
    here = [p for p in static if (num(p.get("concurrency")) or 0) == top_c]
    good, left = split(here)
    out = []
    for p in sorted(good, key=lambda p: -(value(p, "rps") or 0)):
        finding = Finding(family, f"{who(p)} on the static mix at C={top_c:g}: {loadgen_words(p)}{caveat_note([p])}.",
                          chart=chart, cells=p["cells"])
        out.append(with_figure(finding, p, "rps", "req/s", f"{who(p)}, static mix, C={top_c:g}"))
    if len(good) >= 2:
        ranked = sorted(good, key=lambda p: -(value(p, "rps") or 0))
        out.append(with_figure(Finding(family, ranking_text(ranked[0], ranked[1], top_c) + left_note(left),
                                       chart=chart, cells=cells_of(ranked), left_out=left),
                               ranked[0], "rps", "req/s", f"{who(ranked[0])}"))
    elif left and good:
        out.append(Finding(family, f"No ranking of the servers on the static mix at C={top_c:g}: only {who(good[0])} "
                                   "counted." + left_note(left), chart=chart, cells=cells_of(good), left_out=left))
    elif left:
        out.append(all_flagged(family, f"Static mix at C={top_c:g}", left, chart))
    return out


def ranking_text(a: dict, b: dict, top_c: float) -> str:
    """Which server answered the most on the static mix, only when the ratio's 95 % interval (Welch's t on the
    launches' logs) leaves 1; otherwise a tie within the noise, or no ranking from indicative figures."""
    test = comparison(b, a, "rps")
    where = f"on the static mix at C={top_c:g}"
    if test is None:
        return (f"No ranking of {who(a)} and {who(b)} {where}: fewer than 3 launches on a side, so their figures "
                f"are indicative ({quoted(a, 'rps', 'req/s')} against {quoted(b, 'rps', 'req/s')}).")
    if not separated(test):
        return (f"{who(a)} and {who(b)} tie within the noise {where}: {who(a)} / {who(b)} = {ratio_text(test)} "
                "(95 %, Welch's t on the launches' logs), an interval that holds 1.")
    return (f"{who(a)} answered the most {where}, {ratio_text(test)} times {who(b)}'s "
            f"{quoted(b, 'rps', 'req/s')} (95 %, Welch's t on the launches' logs).")


def open_loop(family: str, points: list[dict], chart: str = "openloop_latency") -> list[Finding]:
    """Per setting and delay: the highest offered rate it sustained (valid up to there), against what its
    parallel limit predicts."""
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for p in points:
        if offered_rate(p) and num(p.get("rate")):
            grouped[(p.get("group"), p.get("endpoint"), p.get("delay_ms"), who(p))].append(p)
    out = []
    for (group, endpoint, delay, name), pts in grouped.items():
        pts.sort(key=lambda p: num(p.get("rate")))
        good, left = split(pts)
        sustained = []
        for p in pts:
            if not p["valid"]:
                break
            sustained.append(p)
        where = f"{name} ({endpoint}, {delay_text(pts[0])} delay, group {group})"
        limit, d = num(predicted_knee(pts[0]["records"][0])), num(delay) or 0
        predicted = f"; its parallel limit predicts {sig(limit * 1000 / d, 2)} req/s" if limit and d else ""
        if not sustained:
            out.append(all_flagged(family, f"The highest rate {where} sustained", left, chart))
            continue
        best = sustained[-1]
        beyond = pts[len(sustained)] if len(sustained) < len(pts) else None
        then = (f", not {num(beyond['rate']):g} req/s ({', '.join(beyond['flags']) or 'failed'})" if beyond
                else ", the highest offered")
        finding = Finding(family, f"{where} sustained {num(best['rate']):g} req/s offered{then}{predicted}."
                                  + left_note(left), chart=chart, cells=cells_of(sustained),
                          left_out=left)
        out.append(with_figure(finding, best, "latency_ms.p99", "ms", f"p99 at {num(best['rate']):g} req/s"))
    return out

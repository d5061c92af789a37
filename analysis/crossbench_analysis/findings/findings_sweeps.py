"""Findings of the concurrency sweeps and the open loop (seed 002, quick, servers, maxthreads, openloop): where
each server setting bends, its ratio at the highest concurrency and why, its threads against maxThreads, what a
thread costs, static throughput and whether the load generator was the limit, the highest sustainable rate.
Each function takes (family, points) and returns findings; none when the run has no such cells."""

from __future__ import annotations

from collections import defaultdict

from crossbench import stats
from crossbench.endpoints import family, is_static
from crossbench.figures import service_time
from crossbench.figures.points import fmt_interval
from crossbench_analysis.charts.maxthreads import sweep_cells
from crossbench_analysis.judge import hinge
from crossbench_analysis.judge.knee_rule import Knee, c_text, figure_launches, fitted_c_text, judge
from crossbench_analysis.judge.knees import Overheads, overheads, predicted_knee
from crossbench_analysis.read.runinfo import by_default_driver, num, offered_rate
from crossbench_analysis.read.setting import pool_size, setting_order, sweeps_pool

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
    figure_of,
    left_note,
    ratio_text,
    separated,
    sig,
    split,
    sweep_name,
    sweep_ratio,
    value,
    who,
    with_figure,
)

MIN_COST_SETTINGS = 3
OFFSET_EXPLAINED = 0.02  # a fitted knee this close to its pool, its interval missing it: the overheads say why
SATURATED_PCT = 90.0  # the runner's loadgen_saturated threshold (runner/crossbench/record/metrics.py)


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
                detail=fit_detail(knee, RATIO_WORDS[ratio])
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


def why_ratio(point: dict) -> str:
    """Why a point past the knee waits: 'the pool serves 200 at once, so C / 200 = 5.0 rounds of the delay'."""
    c, limit = num(point.get("concurrency")) or 0, num(predicted_knee(point["records"][0]))
    if limit and c > limit:
        return f"the pool serves {limit:g} at once, so C / {limit:g} = {sig(c / limit, 2)} rounds of the delay"
    if limit:
        return f"C is within the pool of {limit:g}, so the pool is not what holds it back"
    return "nothing caps how many are served at once (no pool)"


def cpu_words(point: dict) -> str:
    cpu = value(point, "cpu_percent")
    return f"the server's core at {sig(cpu, 2)} % CPU" if cpu is not None else ""


def ratio_at_top(family: str, points: list[dict], chart: str = "efficiency") -> list[Finding]:
    """Per setting with a knee (the fit) before its highest counted concurrency: both of the seed's ratios there,
    and why (C / parallel limit; the server's CPU in the fold)."""
    out = []
    for name, pts in delay_sweeps(points):
        good, left, ratio, knee = counted(pts)
        if not good or knee.status not in ("fitted", "bracket", "below_range"):
            continue  # no knee: bends() says the ratio at the top
        top = good[-1]
        finding = Finding(
            family,
            f"{both_ratios(top, ratio)} at C={top['concurrency']:g}: {name}, {why_ratio(top)}." + left_note(left),
            chart=chart,
            cells=top["cells"],
            left_out=left,
            leads=True,
            detail=cpu_words(top),
        )
        out.append(
            with_figure(finding, top, ratio, digits=4, label=f"{ratio.replace('_', ' ')} at C={top['concurrency']}")
        )
    return out


THREADS_WORDS = (
    "threads: every thread of the server's JVM at its peak (the pool's, busy or idle, and the JVM's "
    "and Tomcat's own); busy: the pool's busy count at its sampled peak"
)


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
        most = f"{figure_of(peak, 'threads_peak', 'threads')} at most, at C={peak['concurrency']:g}: {name}"
        if limit is None:
            text = f"{most} needs no pool (the carriers' and the JVM's own threads)"
        else:
            busy = value(peak, "pool_busy_peak")
            if busy is None or not limit:
                text = f"{most}, maxThreads {limit:g} (the pool's busy count is not in the records)"
            elif busy >= limit:
                text = (
                    f"{most} filled its pool ({busy:.0f} of {limit:g} busy); the other {threads - limit:.0f} "
                    "are the JVM's and Tomcat's own"
                )
            else:
                text = f"{most} never filled its pool (at most {busy:.0f} of {limit:g} busy)"
        out.append(
            with_figure(
                Finding(
                    family,
                    text + "." + left_note(left),
                    chart=chart,
                    cells=peak["cells"],
                    left_out=left,
                    leads=True,
                    detail=THREADS_WORDS if limit else "",
                ),
                peak,
                "threads_peak",
                "threads",
                f"peak threads at C={peak['concurrency']}",
                2,
            )
        )
    return out


def thread_cost(family: str, points: list[dict], chart: str = "maxthreads_cost") -> list[Finding]:
    """Memory per thread: the least-squares slope of peak RSS against peak threads over every valid point of the
    platform settings' sweep (charts.maxthreads.sweep_cells: what advise.sh fits, so the two say one figure),
    with its 95 % interval; at least three settings (a line through two has no error to show)."""
    sweep = {c["cell_id"] for c in sweep_cells([r for p in points for r in p["records"]])}
    used, left_all = [], []
    for _, pts in delay_sweeps(points):
        if pool_size(pts[0]["records"][0]) is None or not sweep & set(pts[0]["cells"]):
            continue
        good, left = split(pts)
        left_all += left
        used += [p for p in good if value(p, "threads_peak") is not None and value(p, "rss_peak_mb") is not None]
    if len({pool_size(p["records"][0]) for p in used}) < MIN_COST_SETTINGS:
        return []
    fit = stats.least_squares([value(p, "threads_peak") for p in used], [value(p, "rss_peak_mb") for p in used])
    if fit is None:
        return []
    kb = {
        "value": 1024 * fit.slope,
        "n": len(used),
        "ci95_low": None if fit.slope_low is None else 1024 * fit.slope_low,
        "ci95_high": None if fit.slope_high is None else 1024 * fit.slope_high,
    }
    settings = len({pool_size(p["records"][0]) for p in used})
    return [
        Finding(
            family,
            f"{fmt_interval(kb, 'KB')} of resident memory per thread here: the slope of peak RSS "
            f"against peak threads over {len(used)} points of {settings} maxThreads settings (the "
            "heap's growth is in it too)." + left_note(left_all),
            leads=True,
            label="memory per thread",
            figure=kb["value"],
            unit="KB",
            n=len(used),
            interval=[kb["ci95_low"], kb["ci95_high"]] if kb["ci95_low"] is not None else None,
            method="least squares, slope +- t x its standard error",
            basis=f"least squares over {len(used)} points",
            chart=chart,
            cells=cells_of(used),
            left_out=left_all,
        )
    ]


def load_words(point: dict) -> str:
    """Where the static mix's load sat: 'the server at 97 % of its core (its limit), wrk at 15 % of its 1 core'."""
    record = point["records"][0]
    cores = len(record.get("loadgen_cpus") or []) or num(record.get("loadgen_threads")) or 1
    server_cores = len(record.get("server_cpus") or []) or 1
    cpu, loadgen_cpu = value(point, "cpu_percent"), value(point, "loadgen_cpu_percent")
    server = (
        "the server's CPU is not in the records"
        if cpu is None
        else f"the server at {sig(cpu, 2)} % of its {server_cores:g} core{'s' if server_cores > 1 else ''}"
        + (" (its limit)" if cpu >= SATURATED_PCT * server_cores else "")
    )
    loadgen = (
        "the load generator's CPU is not in the records"
        if loadgen_cpu is None
        else f"{record.get('loadgen')} at {sig(loadgen_cpu, 2)} % of its {cores:g} core{'s' if cores > 1 else ''}"
        + (" (its limit)" if loadgen_cpu >= SATURATED_PCT * cores else "")
    )
    return f"{server}, {loadgen}"


def static_throughput(family: str, points: list[dict], chart: str = "static_rps") -> list[Finding]:
    """Per server, the static mix at the highest concurrency: responses per second, and where the load sat (the
    server's core, the load generator's); then which server answered most, tested."""
    static = [p for p in points if is_static(p.get("endpoint")) and not num(p.get("delay_ms"))]
    if not static:
        return []
    top_c = max(num(p.get("concurrency")) or 0 for p in static)
    here = [p for p in static if (num(p.get("concurrency")) or 0) == top_c]
    good, left = split(here)
    out = []
    for p in sorted(good, key=lambda p: -(value(p, "rps") or 0)):
        finding = Finding(
            family,
            f"{figure_of(p, 'rps', 'req/s')}: {who(p)} on the static mix at C={top_c:g}; "
            f"{load_words(p)}{caveat_note([p])}.",
            chart=chart,
            cells=p["cells"],
            leads=True,
        )
        out.append(with_figure(finding, p, "rps", "req/s", f"{who(p)}, static mix, C={top_c:g}"))
    if len(good) >= 2:
        ranked = sorted(good, key=lambda p: -(value(p, "rps") or 0))
        out.append(
            with_figure(
                Finding(
                    family,
                    ranking_text(ranked[0], ranked[1], top_c) + left_note(left),
                    chart=chart,
                    cells=cells_of(ranked),
                    left_out=left,
                    leads=True,
                    detail=RANK_METHOD,
                ),
                ranked[0],
                "rps",
                "req/s",
                f"{who(ranked[0])}",
            )
        )
    elif left and good:
        out.append(
            Finding(
                family,
                f"No ranking on the static mix at C={top_c:g}: only {who(good[0])} counted." + left_note(left),
                chart=chart,
                cells=cells_of(good),
                left_out=left,
            )
        )
    elif left:
        out.append(all_flagged(family, f"Static mix at C={top_c:g}", left, chart))
    return out


RANK_METHOD = "Welch's t on the launches' logs, 95 %"


def ranking_text(a: dict, b: dict, top_c: float) -> str:
    """Which server answered the most on the static mix, only when the ratio's 95 % interval (Welch's t on the
    launches' logs) leaves 1; otherwise not told apart, or no ranking from indicative figures."""
    test = comparison(b, a, "rps")
    where = f"on the static mix at C={top_c:g}"
    if test is None:
        return f"No ranking of {who(a)} and {who(b)} {where}: under 3 launches on a side, no interval to rank by."
    if not separated(test):
        return f"{who(a)} / {who(b)} = {ratio_text(test)} {where}: not told apart (the interval holds 1)."
    return f"{ratio_text(test)} times {who(b)}'s rate: {who(a)} answered the most {where}."


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
        where = f"{name} ({endpoint}, {delay_text(pts[0])}, group {group})"
        limit, d = num(predicted_knee(pts[0]["records"][0])), num(delay) or 0
        predicted = f"; its parallel limit predicts {sig(limit * 1000 / d, 2)} req/s" if limit and d else ""
        if not sustained:
            out.append(all_flagged(family, f"The highest rate {where} sustained", left, chart))
            continue
        best = sustained[-1]
        beyond = pts[len(sustained)] if len(sustained) < len(pts) else None
        then = (
            f", not {num(beyond['rate']):g} req/s ({', '.join(beyond['flags']) or 'failed'})"
            if beyond
            else ", the highest offered"
        )
        finding = Finding(
            family,
            f"{num(best['rate']):g} req/s offered and sustained: {where}{then}{predicted}." + left_note(left),
            chart=chart,
            cells=cells_of(sustained),
            left_out=left,
        )
        out.append(with_figure(finding, best, "latency_ms.p99", "ms", f"p99 at {num(best['rate']):g} req/s"))
    return out

"""Findings of the concurrency sweeps and the open loop (seed 002, quick, servers, maxthreads, openloop): each
server setting's ratio at the highest concurrency and why, its threads against maxThreads, what a thread costs,
static throughput and whether the load generator was the limit, the highest sustainable rate (where each setting
bends is findings_knees.py). Each function takes (family, points) and returns findings; none when the run has no
such cells."""

from __future__ import annotations

from collections import defaultdict

from crossbench import stats
from crossbench.endpoints import is_static
from crossbench.figures.points import fmt_interval
from crossbench_analysis.charts.kit_pools import sweep_cells
from crossbench_analysis.judge.knees import predicted_knee
from crossbench_analysis.read.runinfo import num, offered_rate
from crossbench_analysis.read.setting import pool_size, sweeps_pool, workers_at_once

from .finding import (
    Finding,
    all_flagged,
    caveat_note,
    cells_of,
    comparison,
    delay_text,
    figure_of,
    left_note,
    ratio_text,
    separated,
    sig,
    split,
    value,
    who,
    with_figure,
)
from .findings_knees import both_ratios, counted, delay_sweeps

MIN_COST_SETTINGS = 3
SATURATED_PCT = 90.0  # the runner's loadgen_saturated threshold (runner/crossbench/record/metrics.py)


def why_ratio(point: dict) -> str:
    """Why a point past the knee waits: 'the pool serves 200 at once, so C / 200 = 5.0 rounds of the delay'. A
    user's path has a pool but no predicted knee (its service time may be CPU, which the pool does not cap): its
    pool (or what gunicorn's WSGI workers serve at once) is said with the rounds it alone would make."""
    record = point["records"][0]
    c, limit = num(point.get("concurrency")) or 0, num(predicted_knee(record))
    if limit and c > limit:
        return f"the pool serves {limit:g} at once, so C / {limit:g} = {sig(c / limit, 2)} rounds of the delay"
    pool = limit or num(pool_size(record))
    if pool and c <= pool:
        return f"C is within the pool of {pool:g}, so the pool is not what holds it back"
    if pool:
        return f"past its pool of {pool:g}, which alone would make C / {pool:g} = {sig(c / pool, 2)} rounds"
    workers = workers_at_once(record)
    if workers and c <= workers:
        return f"C is within the {workers:g} its workers serve at once, so they are not what holds it back"
    if workers:
        return (
            f"past the {workers:g} its workers serve at once, which alone would make C / {workers:g} = "
            f"{sig(c / workers, 2)} rounds"
        )
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
    platform settings' sweep (charts.kit_pools.sweep_cells: what advise.sh fits, so the two say one figure),
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

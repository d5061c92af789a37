"""Findings of the seeds that are not concurrency sweeps: seed 000 (sync against async on one loop, the
head-of-line probe), seed 001 (pipelined hello world), seed 003 (held connections, memory per connection,
maxConnections) and seed 004 (the article's table by p99, pools, PgBouncer, worker sweeps). Each function takes
(family, points) and returns findings; none when the run has no such cells."""

from __future__ import annotations

from collections import defaultdict

from crossbench.endpoints import SEED004
from crossbench.figures.points import fmt_range
from crossbench_analysis.charts.hold import KIND as HOLD_KIND
from crossbench_analysis.charts.seed004 import stack_label, table_groups
from crossbench_analysis.charts.seeds import AB_KIND, HOL_KIND, PIPELINED_KIND
from crossbench_analysis.judge.decisions import best_of_sweeps, tied_steps
from crossbench_analysis.read.runinfo import num, offered_rate

from .finding import (
    Finding,
    against_second,
    all_flagged,
    cells_of,
    comparison,
    delay_text,
    interval_verdict,
    left_note,
    most_rps,
    ratio_text,
    separated,
    sig,
    split,
    value,
    who,
    with_figure,
)


def of_kind(points: list[dict], kind: str) -> list[dict]:
    return [p for p in points if p.get("kind") == kind]


def by_server(points: list[dict]) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = defaultdict(list)
    for p in points:
        grouped[who(p)].append(p)
    return grouped


def sync_async(family: str, points: list[dict], chart: str = "seed000_ab") -> list[Finding]:
    """ab -n -c on /delay/sync and /delay/async per server: how much the blocking handler costs."""
    out = []
    for name, pts in by_server(
        [p for p in of_kind(points, AB_KIND) if p.get("endpoint") in ("/delay/sync", "/delay/async")]
    ).items():
        good, left = split(pts)
        ends = {p["endpoint"]: p for p in good}
        if len(ends) < 2:
            if left:
                out.append(all_flagged(family, f"{name}: /delay/sync against /delay/async", left, chart))
            continue
        sync, nosync = ends["/delay/sync"], ends["/delay/async"]
        ratio, test = value(nosync, "rps") / value(sync, "rps"), comparison(sync, nosync, "rps")
        c, d = num(sync.get("concurrency")), num(sync.get("delay_ms"))
        text = (
            f"{times_text(ratio, test)}: {name}'s /delay/async against its /delay/sync under "
            f"ab -c {c:g} at {delay_text(sync)} ({sig(value(nosync, 'rps'))} against {sig(value(sync, 'rps'))} "
            f"req/s); {blocking_verdict(test)}." + left_note(left)
        )
        out.append(
            with_figure(
                Finding(
                    family,
                    text,
                    chart=chart,
                    cells=cells_of([sync, nosync]),
                    left_out=left,
                    leads=True,
                    detail=f"all {c:g} at once would be {sig(c * 1000 / d)} req/s, one at a time {sig(1000 / d, 2)}",
                ),
                sync,
                "rps",
                "req/s",
                f"{name} /delay/sync",
            )
        )
    return out


def head_of_line(family: str, points: list[dict], chart: str = "seed000_hol") -> list[Finding]:
    """The /now probe's p99 while a delay endpoint keeps the server busy, per server and endpoint."""
    out = []
    for p in of_kind(points, HOL_KIND):
        good, left = split([p])
        what = f"/now on {who(p)} while {p.get('concurrency')} clients keep {p.get('endpoint')} busy"
        if not good:
            out.append(all_flagged(family, what, left, chart))
            continue
        sent, planned = value(p, "probes_sent"), value(p, "probes_planned")
        text = f"{what}: {count_text(sent)} of {count_text(planned)} probes were answered."
        out.append(
            with_figure(Finding(family, text, chart=chart, cells=p["cells"]), p, "latency_ms.p99", "ms", "probe p99")
        )
    return out


def count_text(mean: float) -> str:
    """A count over launches: "1,200" when they agree on a whole number, else its mean ("5.3")."""
    return f"{mean:,.0f}" if float(mean).is_integer() else sig(mean, 2)


LOOP_HELD = 2.0  # async over sync past this: the blocking handler serialised the loop (one at a time)


def blocking_verdict(test) -> str:
    """What the async / sync ratio's interval claims: the loop held (all of it above LOOP_HELD), little cost (all of
    it below), or nothing."""
    return interval_verdict(
        test, LOOP_HELD, "a blocking handler holds its one loop", "the blocking handler costs it little", "either way"
    )


def times_text(ratio: float, test) -> str:
    """A ratio of two points in the suite's one notation, to the digits its 95 % interval supports ("33.03 [32.95,
    33.10] times"), or "3.1 times (indicative)" when a point has fewer than 3 launches."""
    if test is None or test.low is None:
        return f"{sig(ratio, 2)} times (indicative)"
    return fmt_range(ratio, test.low, test.high, "times")


def by_rps(family: str, pts: list[dict], what: str, chart: str) -> tuple[list[dict], list[dict], list[Finding]]:
    """The valid points by req/s, highest first; those left out; and what to say instead when there is no valid
    point (the all-flagged finding, or nothing when there were no points)."""
    good, left = split(pts)
    instead = [all_flagged(family, what, left, chart)] if pts and not good else []
    return sorted(good, key=lambda p: -(value(p, "rps") or 0)), left, instead


def pipelined(family: str, points: list[dict], chart: str = "seed001_pipelined") -> list[Finding]:
    ranked, left, instead = by_rps(family, of_kind(points, PIPELINED_KIND), "Pipelined hello world", chart)
    if not ranked:
        return instead
    depth = ranked[0]["records"][0].get("pipeline")
    where = f"on pipelined /hello (C={ranked[0].get('concurrency')}, {depth} deep)"
    claim = f"{who(ranked[0])}, the most {where}"
    return [most_rps(family, chart, ranked, left, claim, "by req/s: " + order_of(ranked, "rps", who))]


def order_of(ranked: list[dict], name: str, label) -> str:
    """'tornado: 2,058; tomcat: 1,982': the whole order, for the fold."""
    return "; ".join(f"{label(p)}: {sig(value(p, name), 2 if name.startswith('latency') else 3)}" for p in ranked)


def held(family: str, points: list[dict]) -> list[Finding]:
    """Per held-connections cell: how many it held, what each cost, and a connection limit biting."""
    out = []
    for p in of_kind(points, HOLD_KIND):
        record = p["records"][0]
        limit = record.get("max_connections")
        name = who(p) + (f" with maxConnections={limit}" if limit and limit < (p.get("concurrency") or 0) else "")
        good, left = split([p])
        if not good and limit and limit < (p.get("concurrency") or 0):
            out.append(limit_bit(family, name, p, left))
            continue
        if not good:
            out.append(all_flagged(family, f"{name}, {p.get('concurrency')} connections held", left, "hold_limit"))
            continue
        held_n, target = value(p, "connections_held_peak"), value(p, "connections_target")
        text = f"{name} held {sig(held_n)} of {sig(target)} keep-alive connections at once"
        text += ("." if held_n >= target else f": past {sig(held_n)} the others got no answer.") + left_note(left)
        out.append(
            with_figure(
                Finding(family, text, chart="hold_server", cells=p["cells"]),
                p,
                "rss_per_connection_kb",
                "KB",
                "server memory per connection",
            )
        )
    return out


def limit_bit(family: str, name: str, point: dict, left: list[dict]) -> Finding:
    """A connection limit under the connections asked for: its launches are flagged (the connections past the
    limit failed), and that failure is what the seed asks about: how many were held, and how the rest failed."""
    records = [r for r in point["records"] if r.get("status") == "ok"]
    peaks = sorted({int(num(r.get("connections_held_peak")) or 0) for r in records})
    held_text = f"{sig(peaks[0])}" if len(peaks) == 1 else f"{sig(peaks[0])}-{sig(peaks[-1])}"
    kinds: dict = {}
    for r in records:
        for kind, count in (r.get("errors") or {}).items():
            kinds[kind] = kinds.get(kind, 0) + (count or 0)
    failed = ", ".join(f"{kind} {sig(count / len(records))}" for kind, count in sorted(kinds.items()) if count)
    text = (
        f"{name} held {held_text} of {sig(point.get('concurrency'))} keep-alive connections at once in "
        f"{'all ' if len(records) > 1 else ''}{len(records)} launch{'es' if len(records) != 1 else ''}: its limit; "
        f"the other connections' requests failed ({failed or 'none counted'} a launch)."
    )
    return Finding(family, text, chart="hold_limit", cells=[r["cell_id"] for r in records], left_out=left)


def stack(point: dict) -> str:
    return stack_label(point["records"][0])


def order_caveat(ranked: list[dict]) -> str:
    """What the p99 order can claim: neighbours whose ratio's 95 % interval holds 1 are a tie within the noise,
    and an order of indicative figures (fewer than 3 launches) ranks nothing."""
    tests = [(a, b, comparison(a, b, "latency_ms.p99")) for a, b in zip(ranked, ranked[1:])]
    if any(test is None for _, _, test in tests):
        return "; an order of indicative figures (fewer than 3 launches a point): no ranking is claimed"
    ties = [f"{stack(a)} and {stack(b)} ({ratio_text(test)})" for a, b, test in tests if not separated(test)]
    return f"; not told apart: {', '.join(ties)}" if ties else ""


def table_ranking(family: str, points: list[dict]) -> list[Finding]:
    """Seed 004's table: per group and concurrency, the stacks by p99 (a worker sweep by its best step)."""
    db = [p for p in points if p.get("endpoint") in SEED004 and not offered_rate(p)]
    if not db:
        return []
    records = [r for p in db for r in p["records"] if r.get("status") == "ok"]
    _, best = best_of_sweeps(records)
    keep = {r["cell_id"] for r in records if not r.get("sweep") or best[r["sweep"]] is r}
    out = []
    for key, cells in table_groups([r for r in records if r["cell_id"] in keep]):
        ids = {c["cell_id"] for c in cells}
        pts = [p for p in db if set(p["cells"]) & ids]
        good, left = split(pts)
        good = [p for p in good if value(p, "latency_ms.p99") is not None]
        if not good:
            out.append(all_flagged(family, f"Table {key}", left, f"seed004_table_{key}"))
            continue
        ranked = sorted(good, key=lambda p: value(p, "latency_ms.p99"))
        text = (
            f"{sig(value(ranked[0], 'latency_ms.p99'), 2)} ms p99: {stack(ranked[0])}, the lowest of "
            f"{len(ranked)} on {key} ({ranked[0].get('endpoint')}, C={ranked[0].get('concurrency')})"
            + against_second(ranked, "latency_ms.p99", stack)
            + "."
            + left_note(left)
        )
        out.append(
            with_figure(
                Finding(
                    family,
                    text,
                    chart=f"seed004_table_{key}",
                    cells=cells_of(ranked),
                    left_out=left,
                    leads=True,
                    detail="by p99, best first (ms): "
                    + order_of(ranked, "latency_ms.p99", stack)
                    + order_caveat(ranked),
                ),
                ranked[0],
                "latency_ms.p99",
                "ms",
                f"{stack(ranked[0])}, p99",
            )
        )
    return out


def pools(family: str, points: list[dict], chart: str = "seed004_pool_waiting") -> list[Finding]:
    """Per server: /db/slow req/s with the pool as large as the clients against a pool of 2."""
    slow = [p for p in points if p.get("endpoint") == "/db/slow"]
    out = []
    for name, pts in by_server(slow).items():
        good, left = split(pts)
        sized = sorted(
            (p for p in good if num(p["records"][0].get("db_connections_total"))),
            key=lambda p: num(p["records"][0]["db_connections_total"]),
        )
        if len(sized) < 2:
            if left:
                out.append(all_flagged(family, f"{name}: pool sizes on /db/slow", left, chart))
            continue
        small, large = sized[0], sized[-1]
        n_small, n_large = (int(num(p["records"][0]["db_connections_total"])) for p in (small, large))
        gain, test = value(large, "rps") / value(small, "rps"), comparison(small, large, "rps")
        text = (
            f"{times_text(gain, test)}: {name} on /db/slow with {n_large} pooled connections "
            f"against {n_small} ({sig(value(small, 'rps'))} req/s); {pool_verdict(test)}." + left_note(left)
        )
        out.append(
            with_figure(
                Finding(family, text, chart=chart, cells=cells_of([small, large]), left_out=left, leads=True),
                large,
                "rps",
                "req/s",
                f"{name}, pool {n_large}",
            )
        )
    return out


POOL_BOUND = 1.5  # more connections answered this much more: the pool was the limit


def pool_verdict(test) -> str:
    return interval_verdict(
        test,
        POOL_BOUND,
        "the pool was its limit",
        "something else (its workers, or the CPU) limits it before the pool",
        "on what limits it",
    )


def pgbouncer(family: str, points: list[dict], chart: str = "seed004_table_db-pgbouncer") -> list[Finding]:
    pts = [p for p in points if p["records"][0].get("pooler") == "pgbouncer"]
    ranked, left, instead = by_rps(family, pts, "Through PgBouncer", chart)
    if not ranked:
        return instead
    claim = (
        f"{who(ranked[0])}, the most through PgBouncer ({ranked[0].get('endpoint')}, C={ranked[0].get('concurrency')})"
    )
    return [most_rps(family, chart, ranked, left, claim, "by req/s: " + order_of(ranked, "rps", stack))]


def worker_sweeps(family: str, points: list[dict], chart: str = "seed004_workers") -> list[Finding]:
    sweeps: dict[str, list[dict]] = defaultdict(list)
    for p in points:
        if p["records"][0].get("sweep"):
            sweeps[p["records"][0]["sweep"]].append(p)
    out = []
    for sweep, pts in sweeps.items():
        good, left = split(pts)
        if not good:
            out.append(all_flagged(family, f"Worker sweep {sweep}", left, chart))
            continue
        best = max(good, key=lambda p: value(p, "rps") or 0)
        step = best["records"][0].get("sweep_step")
        steps = sorted(int(num(p["records"][0].get("sweep_step")) or 0) for p in good)
        ties = tied_steps([r for p in good for r in p["records"] if r.get("status") == "ok"], sweep)
        tie = f"; not told apart from {', '.join(map(str, ties))}" if ties else ""
        processes = f"{step} process{'es' * (num(step) != 1)}"
        text = (
            f"{processes}: {best.get('server')}'s best count on {best.get('endpoint')} (of "
            f"{', '.join(map(str, steps))} tried){tie}." + left_note(left)
        )
        out.append(
            with_figure(
                Finding(
                    family,
                    text,
                    chart=chart,
                    cells=cells_of(good),
                    left_out=left,
                    leads=True,
                    detail="not told apart: the throughput ratio's 95 % interval holds 1, or "
                    "fewer than 3 launches on a side"
                    if ties
                    else "",
                ),
                best,
                "rps",
                "req/s",
                f"{best.get('server')} x{step}",
            )
        )
    return out

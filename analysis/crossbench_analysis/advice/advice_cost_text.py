"""advice.md's sections on what the run measured beside the pool, in sentences: what a busy thread costs (memory and
CPU, fitted over the points), what the connector's queues (acceptCount, maxConnections) did to clients past the pool,
and what virtual threads did instead. advice_text.py renders the rest and places these."""

from __future__ import annotations

from .advice_knee_text import ratios, where
from .advice_run import RUN_IT
from .words import count, n, pm

CPU_BUSY = 0.8  # above this share of its cores a server's CPU queue grows fast


def cost_lines(got: dict, pool: dict | None, w: dict | None) -> list[str]:
    rss, cpu = got["rss"], got["cpu"]
    lines = ["## What the threads cost here", ""]
    if rss["fit"]:
        lines.append(
            f"- Memory: {pm(rss['kb_per_thread'], rss['kb_per_thread_ci95'], 'KB', rss['fit']['method'])}"
            f" of RSS per busy platform thread: the slope of rss_peak_mb against threads_peak, least "
            f"squares over {len(rss['points'])} points (advice.json lists them)."
            + (
                f" {pool['value']} threads: {pm(rss['pool_mb'], rss['pool_mb_ci95'], 'MB')}; the whole "
                f"server about {n(rss['total_mb'])} MB with the JVM's own threads."
                if pool
                else ""
            )
        )
    else:
        lines.append(f"- Memory per thread: not fitted ({rss['why_not']}).")
    if cpu["fit"]:
        lines.append(
            f"- CPU: {pm(cpu['ms_per_request'], cpu['ms_per_request_ci95'], 'ms', cpu['fit']['method'])}"
            + (
                f" of server CPU per request ({cpu['fit']['method']}): your path's handler and the "
                "container together, as each request cost at the loads measured."
                if cpu.get("per_point")
                else f" of server CPU per request (slope of cpu_percent against rps over {len(cpu['points'])} "
                "points),"
                f" {n(cpu['idle_percent'])} % of a core at no load. That is the container's own cost: the "
                f"run's handler only sleeps, so your handler's CPU comes on top."
            )
        )
        if w:
            share = cpu["share_of_cores"]
            fits = (
                "within"
                if share < CPU_BUSY
                else "CLOSE TO (queueing for the CPU starts before the pool's)"
                if share < 1
                else "MORE than (the CPU, not the pool, will limit)"
            )
            at_rate = pm(cpu["at_rate_percent"], cpu["at_rate_percent_ci95"], "% of a core")
            lines.append(
                f"- At {n(w['rate'])} requests/s: {at_rate},"
                f" {fits} the {count(cpu['server_cores'], 'core')} the run gave Tomcat."
            )
    else:
        lines.append(f"- CPU per request: not fitted ({cpu['why_not']}).")
    return lines + [""]


def connection_lines(got: dict, w: dict | None) -> list[str]:
    lines = ["## acceptCount and maxConnections", ""]
    by_pool: dict = {}
    for row in got["queueing"]:
        by_pool.setdefault(row["max_threads"], []).append(row)
    for pool, rows in by_pool.items():
        held = [r["connections_held"] for r in rows if r["connections_held"] is not None]
        lines.append(
            f"- maxThreads={pool} past its pool, C={listed(rows, 'concurrency')}: ratio "
            f"{listed(rows, 'ratio')} against C / maxThreads {listed(rows, 'predicted')}; p50 "
            f"{listed(rows, 'p50_ms', 1000)} s, p99 {listed(rows, 'p99_ms', 1000)} s"
            + (f"; up to {max(held):g} connections held" if held else "")
            + " (waiting is unfair: the tail waits several turns)."
        )
    by_limits: dict = {}
    for row in got["queue_limits"]:
        by_limits.setdefault((row["max_threads"], row["accept_count"], row["max_connections"]), []).append(row)
    for (pool, accept, most), rows in by_limits.items():
        held = [r["connections_held"] for r in rows if r["connections_held"] is not None]
        errors = sum(r["errors"] or 0 for r in rows)
        rates = [r["rps"] for r in rows if r["rps"] is not None]
        cs = sorted({r["concurrency"] for r in rows})
        lines.append(
            f"- Past the connector's limits (maxThreads {pool}, acceptCount {accept}, maxConnections "
            f"{most}; C={', '.join(f'{c:g}' for c in cs)}, {len(rows)} launches): Tomcat held at most "
            f"{max(held, default=0):g} connections, the client counted {errors:g} errors, "
            f"{n(min(rates, default=0))} to {n(max(rates, default=0))} requests/s: the rest got silence, "
            "not an error."
        )
    if w and "max_connections" in got:
        queue = got["queue_within_target"]
        lines.append(
            f"- maxConnections = {got['max_connections']}: the connections Tomcat accepts and holds, "
            f"waiting or served; past it clients get silence (their connection waits in the kernel's "
            f"backlog, then SYN cookies), not an error."
            + (
                f" Your target can absorb a queue of {queue} requests ({n(w['p99_ms'])} ms target: the pool "
                f"hands out its threads once per holding time), so at least maxThreads + {queue}."
                if queue is not None
                else ""
            )
            + " Keep it above the connections your clients keep open (keep-alive pools); 8192 is "
            "Tomcat's default."
        )
        lines.append(
            f"- acceptCount = {got['accept_count']}: the kernel's backlog of connections Tomcat has not "
            f"accepted yet (full only past maxConnections or while the acceptor stalls); "
            f"{got['accept_count_wanted']} holds one second of your arrivals as new connections"
            + (
                f", cut to net.core.somaxconn = {n(got['somaxconn'])} on the run's machine"
                if got["accept_count"] < got["accept_count_wanted"]
                else ""
            )
            + "; 100 is Tomcat's default."
        )
    return lines + [""]


def listed(rows: list[dict], key: str, per: float = 1) -> str:
    """One field of several rows: '2, 4, 8'; '?' where a row lacks it."""
    return ", ".join(n(r[key] / per) if r[key] is not None else "?" for r in rows)


def virtual_lines(v: dict, w: dict | None) -> list[str]:
    lines = ["## Would virtual threads remove the knee here?", ""]
    if not v["measured"]:
        return lines + [
            f"- The run has no virtual-thread cells: add them with `--executor platform,virtual` "
            f"(JDK 21+), or run `{RUN_IT}`, which has them.",
            "",
        ]
    for one in v["knees"]:
        state = (
            "no valid point: cannot tell"
            if not one["points"]
            else "no knee up to C=" + str(one["max_concurrency"])
            if one["status"] == "not_reached"
            else f"the ratio {where(one)}"
        )
        lines.append(f"- {one['held']}: {state} (points {ratios(one['ratios'])}).")
    if v["removes_knee"]:
        lines.append(
            f"- Yes, for blocking waits in this run: the highest ratio was {v['max_ratio']}."
            + (
                ""
                if not w
                else " Your load"
                + (" is within" if v["covers_workload"] else " is BEYOND")
                + f" what it measured ({n(w['rate'] * w['hold_ms'] / 1000)} busy requests)."
            )
            + " What limits them instead: the cores and maxConnections; a handler that pins its carrier "
            "(synchronized blocking before JDK 24, native calls) brings a knee back."
        )
    elif v["removes_knee"] is None:
        lines.append("- The run cannot tell: its virtual-thread points are all flagged.")
    elif v["removes_knee"] is False:
        lines.append("- No: virtual threads bent too here, so not the pool but the cores (or the machine) limit.")
    return lines + [""]

"""advice.md: the maxThreads advice (advice.py's dict) in sentences, each number with the points it comes from,
and the list of what the run could not tell (the capacity run beside it: advice_capacity_text.py)."""

from __future__ import annotations

from crossbench.figures.points import NOISY_HOST, fmt_interval, fmt_range

from .advice_capacity_text import capacity_lines, event_loop_lines
from .advice_run import RUN_IT, TRACK_SHARE
from .words import count, n

ASK = "./analysis/advise.sh {run} --rate R --hold-ms H [--p99-ms T]"
CPU_BUSY = 0.8  # above this share of its cores a server's CPU queue grows fast
FAR_APART = 2.5  # a knee bracket wider than this factor is placed only that closely


def pm(x, ci, unit: str = "", why: str = "") -> str:
    """A fitted figure and its 95 % interval as every figure is printed (points.fmt_interval: "570 [300, 840] KB"),
    or the value and why it has no interval."""
    if ci:
        return fmt_range(x, ci[0], ci[1], unit)
    return f"{n(x)}{' ' + unit if unit else ''} ({why or 'no interval'})"


def ids(points) -> str:
    return ", ".join(f"`{p}`" for p in points) if points else "none"


def render(a: dict) -> str:
    run_info, w = a["run"], a["workload"]
    lines = [
        f"# maxThreads advice from run {run_info['run_id']}",
        "",
        f"Measured on {run_info['machine']}, JDK {run_info['jdk'] or '?'}, Tomcat on "
        f"{count(run_info['server_cores'], 'core')}; the run (experiment {run_info['experiment']}): maxThreads "
        f"{', '.join(map(str, run_info['max_threads_measured']))}"
        f"{' and virtual threads' if a['virtual_threads']['measured'] else ''}, each request holding its "
        f"thread {', '.join(n(d) for d in run_info['delays_ms'])} ms, up to "
        f"C={run_info['max_concurrency']} clients, "
        f"{'/'.join(map(str, run_info['launches']))} launch{'' if run_info['launches'] == [1] else 'es'} "
        "per point.",
    ]
    if a.get("source"):
        lines.append(f"Read from {a['source']['words']}.")
    lines.append("")
    if w:
        lines += pool_lines(a, w)
    else:
        lines += ["No workload stated: for a maxThreads value, run `" + ASK.format(run=run_info["run_dir"]) + "`.", ""]
    lines += knee_lines(a["knee_check"]) + cost_lines(a["cost"], a["max_threads"], w)
    lines += connection_lines(a["connections"], w) + virtual_lines(a["virtual_threads"], w)
    lines += capacity_lines(a.get("capacity"), a["max_threads"])
    lines += event_loop_lines(a.get("capacity"), a["max_threads"], w)
    lines += ["## What this run could not tell", ""] + [f"- {x}" for x in a["could_not_tell"] or ["nothing noted"]]
    return "\n".join(lines) + "\n"


def pool_lines(a: dict, w: dict) -> list[str]:
    pool = a["max_threads"]
    target = f", p99 under {n(w['p99_ms'])} ms" if w["p99_ms"] is not None else ""
    lines = [
        f"## maxThreads = {pool['value']}",
        "",
        f"- Workload: {n(w['rate'])} requests/s, each holding a thread {n(w['hold_ms'])} ms{target}. Little's "
        f"law: {n(w['rate'])} x {n(w['hold_ms'] / 1000)} s = {n(pool['busy'])} threads busy on average.",
        f"- Headroom: arrivals at random make the number of busy requests vary (Poisson, mean {n(pool['busy'])});"
        f" {pool['for_headroom']} threads leave the pool full at most {n(100 * pool['full_share'])} % of the "
        f"time. "
        f"maxThreads {pool['value']} is {n(pool['headroom_threads'])} threads above the mean"
        f" ({n(pool['headroom_percent'])} %).",
    ]
    if not pool["checked"]:
        lines.append(
            "- Not checked against this machine: the run has no valid platform-thread point (all flagged, "
            "see the end). The value comes from your workload alone; measure again on a quiet machine."
        )
    if w["p99_ms"] is not None:
        if pool["p99_reachable"]:
            lines.append(
                f"- The p99 target leaves {n(pool['wait_budget_ms'])} ms of waiting for a thread "
                f"({n(w['p99_ms'])}"
                f" - {n(w['hold_ms'])} held - {n(pool['p99_overhead_ms'])} ms the run's requests paid beyond "
                + (
                    f"their holding time at p99 with no queue, point `{pool['from']}`: p99 "
                    f"{fmt_interval(pool['p99_figure'], 'ms')}"
                    if pool["from"]
                    else "their holding time: no valid unqueued point measured it, so taken as 0"
                )
                + "). Erlang C (M/M/N, on the "
                f"safe side for fixed holding times): {pool['for_p99']} threads keep at most "
                f"{n(100 * pool['p99_share'])} % of requests waiting longer"
                + (
                    ": the headroom asks more and decides."
                    if pool["for_headroom"] >= pool["for_p99"]
                    else ": the target asks more than the headroom and decides."
                )
            )
        else:
            lines.append(
                f"- The p99 target cannot be met here with any pool: with no queue at all the run's "
                f"requests already paid {n(pool['p99_overhead_ms'])} ms beyond their holding time at p99 "
                f"(point `{pool['from']}`), and {n(w['hold_ms'])} + {n(pool['p99_overhead_ms'])} > "
                f"{n(w['p99_ms'])} ms. maxThreads {pool['value']} is sized for the headroom alone."
            )
    return lines + [""]


def knee_lines(bends: dict) -> list[str]:
    """Per setting one line, what was measured first (the ratio at each C against C / maxThreads), then what the
    hinge made of it; the conclusion from the measurements, the model's verdict beside it."""
    lines = ["## Does the knee follow maxThreads here?", ""]
    for bend in bends["knees"]:
        verdict = {True: "at maxThreads", False: "NOT at maxThreads", None: "cannot tell"}[bend["follows_max_threads"]]
        lines.append(
            f"- {bend['setting']}, {n(bend['delay_ms'])} ms: measured {bend['ratio'].replace('_', ' ')} "
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
            f" of server CPU per request (slope of cpu_percent against rps over {len(cpu['points'])} "
            "points),"
            f" {n(cpu['idle_percent'])} % of a core at no load. That is the container's own cost: the "
            f"run's handler only sleeps, so your handler's CPU comes on top."
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
        lines.append(f"- {n(one['delay_ms'])} ms: {state} (points {ratios(one['ratios'])}).")
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


def limits(meas: dict, a: dict, w) -> list[str]:
    out = []
    if meas["left_out"]:
        out.append(f"Flagged points were left out of every figure: {flagged(meas['left_out'])}.")
    for flag, cells in sorted(meas["busy_machine"].items()):
        more = f" and {len(cells) - 6} more" if len(cells) > 6 else ""
        foreign = (
            f"; other processes took up to {n(meas['foreign_cpu_max'])} % of a core on the run's cores"
            if flag == NOISY_HOST and meas["foreign_cpu_max"] is not None
            else ""
        )
        out.append(
            f"{count(len(cells), 'cell')} flagged {flag} (the machine, not the server, may have decided): "
            f"{ids(cells[:6])}{more}{foreign}."
        )
    if meas["launches"] == [1]:
        out.append(
            "Every point is one launch: no figure has a confidence interval over launches (the fits' "
            "intervals are over points); `--repetitions 3` gives them."
        )
    for name, fit in (("memory per thread", meas["rss_per_thread"]), ("CPU per request", meas["cpu_per_request"])):
        if not fit["fit"]:
            out.append(f"No {name}: {fit['why_not']}.")
        elif fit["fit"]["slope"] <= 0:
            out.append(f"The {name} fit has a slope of {n(fit['fit']['slope'])}: it did not grow in this run.")
        elif fit["fit"]["slope_ci95"] and fit["fit"]["slope_ci95"][0] <= 0:
            out.append(
                f"The {name}'s 95 % interval reaches 0 or below: this run cannot tell it from nothing "
                f"(more settings, a fixed heap or more launches narrow it)."
            )
    if "None" in meas["heap"]:
        out.append(
            "The heap was not fixed (the experiment's `heap`): RSS follows the heap the JVM grows as "
            "much as the threads; the full maxthreads experiment pre-touches a 512 MB heap."
        )
    if not meas["queue_limits"]:
        out.append(
            f"No cells past maxConnections or maxThreads + acceptCount: the full experiment's group "
            f"`queues` shows them ({RUN_IT} --groups queues)."
        )
    if not a["virtual_threads"]["measured"]:
        out.append("No virtual-thread cells (`--executor platform,virtual`).")
    limit = a["knee_check"]["machine_limit_concurrency"]
    if w and limit and a["max_threads"]["value"] > limit:
        out.append(
            f"maxThreads {a['max_threads']['value']} is above C={limit}, where this machine bent without "
            f"the pool being full: more threads would not serve more at once here."
        )
    if w:
        top = max(meas["max_threads_measured"])
        if a["max_threads"]["value"] > top:
            out.append(
                f"maxThreads {a['max_threads']['value']} is above the largest setting measured ({top}): "
                f"the knee check and the costs are extrapolated; `{RUN_IT} --max-threads "
                f"{top},{a['max_threads']['value']}` measures it."
            )
        if w["hold_ms"] not in meas["delays_ms"]:
            held = ", ".join(n(d) for d in meas["delays_ms"])
            out.append(
                f"The run held threads {held} ms, you {n(w['hold_ms'])} ms:"
                f" where the knee sits depends on the threads, not the holding time, but the costs were "
                f"measured at the run's; `--delays {n(w['hold_ms'])}ms` measures yours."
            )
    return out

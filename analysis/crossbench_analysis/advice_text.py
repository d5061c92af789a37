"""advice.md: the maxThreads advice (advice.py's dict) in sentences, each number with the points it comes from,
and the list of what the run could not tell."""
from __future__ import annotations

from .advice_run import RUN_IT

ASK = "./analysis/advise.sh {run} --rate R --hold-ms H [--p99-ms T]"
CPU_BUSY = 0.8            # above this share of its cores a server's CPU queue grows fast
FAR_APART = 2.5           # a knee bracket wider than this factor is placed only that closely


def n(x, digits: int = 3) -> str:
    """A number as a reader quotes it: integers whole, others to `digits` significant figures."""
    if x is None:
        return "?"
    if float(x).is_integer() and abs(x) < 1e6:
        return str(int(x))
    text = f"{x:.{digits}g}"
    return str(int(float(text))) if "e" in text else text


def pm(x, ci, unit: str = "", why: str = "") -> str:
    """"570 KB (95 % interval 300 to 840)", or the value and why it has no interval."""
    head = f"{n(x)}{' ' + unit if unit else ''}"
    if ci:
        return f"{head} (95 % interval {n(ci[0])} to {n(ci[1])})"
    return f"{head} ({why or 'no interval'})"


def ids(points) -> str:
    return ", ".join(f"`{p}`" for p in points) if points else "none"


def render(a: dict) -> str:
    r, w = a["run"], a["workload"]
    lines = [f"# maxThreads advice from run {r['run_id']}", "",
             f"Measured on {r['machine']}, JDK {r['jdk'] or '?'}, Tomcat on {r['server_cores']} core(s); the run "
             f"(experiment {r['experiment']}): maxThreads {', '.join(map(str, r['max_threads_measured']))}"
             f"{' and virtual threads' if a['virtual_threads']['measured'] else ''}, each request holding its "
             f"thread {', '.join(n(d) for d in r['delays_ms'])} ms, up to C={r['max_concurrency']} clients, "
             f"{'/'.join(map(str, r['launches']))} launch(es) per point.", ""]
    if w:
        lines += pool_lines(a, w)
    else:
        lines += ["No workload stated: for a maxThreads value, run `" + ASK.format(run=r["run_dir"]) + "`.", ""]
    lines += knee_lines(a["knee_check"]) + cost_lines(a["cost"], a["max_threads"], w)
    lines += connection_lines(a["connections"], w) + virtual_lines(a["virtual_threads"], w)
    lines += ["## What this run could not tell", ""] + [f"- {x}" for x in a["could_not_tell"] or ["nothing noted"]]
    return "\n".join(lines) + "\n"


def pool_lines(a: dict, w: dict) -> list[str]:
    p = a["max_threads"]
    target = f", p99 under {n(w['p99_ms'])} ms" if w["p99_ms"] is not None else ""
    lines = [f"## maxThreads = {p['value']}", "",
             f"- Workload: {n(w['rate'])} requests/s, each holding a thread {n(w['hold_ms'])} ms{target}. Little's "
             f"law: {n(w['rate'])} x {n(w['hold_ms'] / 1000)} s = {n(p['busy'])} threads busy on average.",
             f"- Headroom: arrivals at random make the number of busy requests vary (Poisson, mean {n(p['busy'])});"
             f" {p['for_headroom']} threads leave the pool full at most {n(100 * p['full_share'])} % of the time. "
             f"maxThreads {p['value']} is {n(p['headroom_threads'])} threads above the mean"
             f" ({n(p['headroom_percent'])} %)."]
    if w["p99_ms"] is not None:
        if p["p99_reachable"]:
            lines.append(f"- The p99 target leaves {n(p['wait_budget_ms'])} ms of waiting for a thread ({n(w['p99_ms'])}"
                         f" - {n(w['hold_ms'])} held - {n(p['p99_overhead_ms'])} ms the run's requests paid beyond "
                         f"their holding time at p99 with no queue, point `{p['from']}`). Erlang C (M/M/N, on the "
                         f"safe side for fixed holding times): {p['for_p99']} threads keep at most "
                         f"{n(100 * p['p99_share'])} % of requests waiting longer.")
        else:
            lines.append(f"- The p99 target cannot be met here with any pool: with no queue at all the run's "
                         f"requests already paid {n(p['p99_overhead_ms'])} ms beyond their holding time at p99 "
                         f"(point `{p['from']}`), and {n(w['hold_ms'])} + {n(p['p99_overhead_ms'])} > "
                         f"{n(w['p99_ms'])} ms. maxThreads {p['value']} is sized for the headroom alone.")
    return lines + [""]


def knee_lines(k: dict) -> list[str]:
    lines = ["## Does the knee follow maxThreads here?", ""]
    for knee in k["knees"]:
        between = knee["knee_between"]
        where = (f"goes above 1.1 for good between C={between[0]} and C={between[1]}"
                 + (" (points far apart: placed no closer)" if between[1] / between[0] > FAR_APART else "")
                 if between else f"stays at or under 1.1 up to C={knee['max_concurrency']}"
                 if knee["status"] == "not_reached" else "is above 1.1 from its lowest C")
        verdict = {True: "at maxThreads", False: "NOT at maxThreads", None: "cannot tell"}[knee["follows_max_threads"]]
        lines.append(f"- {knee['setting']}, {n(knee['delay_ms'])} ms: {knee['ratio']} {where} "
                     f"({verdict}; a pool alone bends at 1.1 x {knee['max_threads']}); points "
                     f"{ratios(knee['ratios'])}" + (f"; left out (flagged): {flagged(knee['left_out'])}"
                                                    if knee["left_out"] else "") + ".")
    if k["follows"] is True:
        lines.append("- So here the pool is what bends the ratio: up to maxThreads requests are served at once, "
                     "past it each waits its turn (ratio about C / maxThreads).")
    elif k["follows"] is False:
        lines.append(f"- So here something other than the pool bent the ratio first ({', '.join(k['settings_not_following'])}"
                     f", by C={k['machine_limit_concurrency']}): the CPU or a busy machine; a pool above that "
                     f"would not have served more at once in this run.")
    else:
        lines.append("- No valid points past any maxThreads: the run cannot tell where the knee sits.")
    return lines + [""]


def ratios(r: dict) -> str:
    return ", ".join(f"`{p}` {v}" for p, v in r.items()) or "none valid"


def flagged(items: list[dict]) -> str:
    return ", ".join(f"`{x['point']}` ({', '.join(x['flags'])})" for x in items)


def cost_lines(c: dict, pool: dict | None, w: dict | None) -> list[str]:
    rss, cpu = c["rss"], c["cpu"]
    lines = ["## What the threads cost here", ""]
    if rss["fit"]:
        lines.append(f"- Memory: {pm(rss['kb_per_thread'], rss['kb_per_thread_ci95'], 'KB', rss['fit']['method'])}"
                     f" of RSS per busy platform thread: the slope of rss_peak_mb against threads_peak, least "
                     f"squares over points {ids(rss['points'])}." + (
                         f" {pool['value']} threads: {pm(rss['pool_mb'], rss['pool_mb_ci95'], 'MB')}; the whole "
                         f"server about {n(rss['total_mb'])} MB with the JVM's own threads." if pool else ""))
    else:
        lines.append(f"- Memory per thread: not fitted ({rss['why_not']}).")
    if cpu["fit"]:
        lines.append(f"- CPU: {pm(cpu['ms_per_request'], cpu['ms_per_request_ci95'], 'ms', cpu['fit']['method'])}"
                     f" of server CPU per request (slope of cpu_percent against rps, points {ids(cpu['points'])}),"
                     f" {n(cpu['idle_percent'])} % of a core at no load. That is the container's own cost: the "
                     f"run's handler only sleeps, so your handler's CPU comes on top.")
        if w:
            share = cpu["share_of_cores"]
            fits = ("within" if share < CPU_BUSY else "CLOSE TO (queueing for the CPU starts before the pool's)"
                    if share < 1 else "MORE than (the CPU, not the pool, will limit)")
            lines.append(f"- At {n(w['rate'])} requests/s: {pm(cpu['at_rate_percent'], cpu['at_rate_percent_ci95'], '% of a core')},"
                         f" {fits} the {cpu['server_cores']} core(s) the run gave Tomcat.")
    else:
        lines.append(f"- CPU per request: not fitted ({cpu['why_not']}).")
    return lines + [""]


def connection_lines(c: dict, w: dict | None) -> list[str]:
    lines = ["## acceptCount and maxConnections", ""]
    for q in c["queueing"]:
        lines.append(f"- Past maxThreads the run's requests queued inside Tomcat: `{q['point']}`: C={q['concurrency']} "
                     f"on {q['max_threads']} threads, {q['pool_busy_peak']} busy, {q['connections_held']} connections "
                     f"held; ratio {q['ratio']} against C / maxThreads = {q['predicted']}; p50 {n(q['p50_ms'])} ms, "
                     f"p99 {n(q['p99_ms'])} ms (waiting is unfair: the tail waits several turns).")
    for q in c["queue_limits"]:
        lines.append(f"- Past the connector's limits (`{q['cell']}`: C={q['concurrency']}, maxThreads "
                     f"{q['max_threads']}, acceptCount {q['accept_count']}, maxConnections {q['max_connections']}): "
                     f"Tomcat held {q['connections_held']} connections, the client counted {q['errors']} errors, "
                     f"{n(q['rps'])} requests/s: the rest got silence, not an error.")
    if w and "max_connections" in c:
        queue = c["queue_within_target"]
        lines.append(f"- maxConnections = {c['max_connections']}: the connections Tomcat accepts and holds, "
                     f"waiting or served; past it clients get silence (their connection waits in the kernel's "
                     f"backlog, then SYN cookies), not an error."
                     + (f" Your target can absorb a queue of {queue} requests ({n(w['p99_ms'])} ms target: the pool "
                        f"hands out its threads once per holding time), so at least maxThreads + {queue}."
                        if queue is not None else "")
                     + " Keep it above the connections your clients keep open (keep-alive pools); 8192 is "
                       "Tomcat's default.")
        lines.append(f"- acceptCount = {c['accept_count']}: the kernel's backlog of connections Tomcat has not "
                     f"accepted yet (full only past maxConnections or while the acceptor stalls); "
                     f"{c['accept_count_wanted']} holds one second of your arrivals as new connections"
                     + (f", cut to net.core.somaxconn = {n(c['somaxconn'])} on the run's machine"
                        if c["accept_count"] < c["accept_count_wanted"] else "") + "; 100 is Tomcat's default.")
    return lines + [""]


def virtual_lines(v: dict, w: dict | None) -> list[str]:
    lines = ["## Would virtual threads remove the knee here?", ""]
    if not v["measured"]:
        return lines + [f"- The run has no virtual-thread cells: add them with `--executor platform,virtual` "
                        f"(JDK 21+), or run `{RUN_IT}`, which has them.", ""]
    for k in v["knees"]:
        state = ("no knee up to C=" + str(k["max_concurrency"]) if k["status"] == "not_reached" else
                 f"the ratio bent between C={k['knee_between'][0]} and C={k['knee_between'][1]}"
                 if k["knee_between"] else "above 1.1 from the lowest C")
        lines.append(f"- {n(k['delay_ms'])} ms: {state} (points {ratios(k['ratios'])}).")
    if v["removes_knee"]:
        lines.append(f"- Yes, for blocking waits in this run: the highest ratio was {v['max_ratio']}."
                     + ("" if not w else " Your load" + (" is within" if v["covers_workload"] else " is BEYOND")
                        + f" what it measured ({n(w['rate'] * w['hold_ms'] / 1000)} busy requests).")
                     + " What limits them instead: the cores and maxConnections; a handler that pins its carrier "
                       "(synchronized blocking before JDK 24, native calls) brings a knee back.")
    elif v["removes_knee"] is False:
        lines.append("- No: virtual threads bent too here, so not the pool but the core(s) (or the machine) limit.")
    return lines + [""]


def limits(m: dict, a: dict, w) -> list[str]:
    out = []
    if m["left_out"]:
        out.append(f"Flagged points were left out of every figure: {flagged(m['left_out'])}.")
    for flag, cells in sorted(m["busy_machine"].items()):
        out.append(f"{len(cells)} cell(s) flagged {flag} (the machine, not the server, may have decided): "
                   f"{ids(cells)}.")
    if m["launches"] == [1]:
        out.append("Every point is one launch: no figure has a confidence interval over launches (the fits' "
                   "intervals are over points); `--repetitions 3` gives them.")
    for name, fit in (("memory per thread", m["rss_per_thread"]), ("CPU per request", m["cpu_per_request"])):
        if not fit["fit"]:
            out.append(f"No {name}: {fit['why_not']}.")
        elif fit["fit"]["slope"] <= 0:
            out.append(f"The {name} fit has a slope of {n(fit['fit']['slope'])}: it did not grow in this run.")
    if "None" in m["heap"]:
        out.append("The heap was not fixed (the experiment's `heap`): RSS follows the heap the JVM grows as "
                   "much as the threads; the full maxthreads experiment pre-touches a 512 MB heap.")
    if not m["queue_limits"]:
        out.append(f"No cells past maxConnections or maxThreads + acceptCount: the full experiment's group "
                   f"`queues` shows them ({RUN_IT} --groups queues).")
    if not a["virtual_threads"]["measured"]:
        out.append("No virtual-thread cells (`--executor platform,virtual`).")
    limit = a["knee_check"]["machine_limit_concurrency"]
    if w and limit and a["max_threads"]["value"] > limit:
        out.append(f"maxThreads {a['max_threads']['value']} is above C={limit}, where this machine bent without "
                   f"the pool being full: more threads would not serve more at once here.")
    if w:
        top = max(m["max_threads_measured"])
        if a["max_threads"]["value"] > top:
            out.append(f"maxThreads {a['max_threads']['value']} is above the largest setting measured ({top}): "
                       f"the knee check and the costs are extrapolated; `{RUN_IT} --max-threads "
                       f"{top},{a['max_threads']['value']}` measures it.")
        if w["hold_ms"] not in m["delays_ms"]:
            out.append(f"The run held threads {', '.join(n(d) for d in m['delays_ms'])} ms, you {n(w['hold_ms'])} ms:"
                       f" where the knee sits depends on the threads, not the holding time, but the costs were "
                       f"measured at the run's; `--delays {n(w['hold_ms'])}` measures yours.")
    return out

"""advice.md: the maxThreads advice (advice.py's dict) in sentences, each number with the points it comes from,
and the list of what the run could not tell. Its sections on the knees are advice_knee_text.py's, on what threads
and queues cost advice_cost_text.py's, on the capacity run beside it advice_capacity_text.py's."""

from __future__ import annotations

from crossbench.figures.points import fmt_interval
from crossbench.flags import NOISY_HOST

from .advice_capacity_text import capacity_lines, event_loop_lines
from .advice_cost_text import connection_lines, cost_lines, virtual_lines
from .advice_knee_text import flagged, knee_lines
from .advice_run import RUN_IT
from .words import count, ids, n

ASK = "./analysis/advise.sh {run} --rate R --hold-ms H [--p99-ms T]"


def render(a: dict) -> str:
    run_info, w = a["run"], a["workload"]
    lines = [
        f"# maxThreads advice from run {run_info['run_id']}",
        "",
        f"Measured on {run_info['machine']}, JDK {run_info['jdk'] or '?'}, Tomcat on "
        f"{count(run_info['server_cores'], 'core')}; the run (experiment {run_info['experiment']}): maxThreads "
        f"{', '.join(map(str, run_info['max_threads_measured']))}"
        f"{' and virtual threads' if a['virtual_threads']['measured'] else ''}, {held_words(run_info)}, up to "
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


def held_words(run_info: dict) -> str:
    """'each request holding its thread 50, 200 ms', or for a user's path its measured service time."""
    words = []
    if run_info["delays_ms"]:
        words.append(f"each request holding its thread {', '.join(n(d) for d in run_info['delays_ms'])} ms")
    for path in sorted({t["path"] for t in run_info.get("service_times") or []}):
        times = [t for t in run_info["service_times"] if t["path"] == path]
        words.append(
            f"requests to {path}, whose service time at C=1 was "
            + ", ".join(f"{fmt_interval(t['figure'], 'ms')} ({t['setting']})" for t in times)
        )
    return "; ".join(words) or "no request held a thread for a known time"


def pool_lines(a: dict, w: dict) -> list[str]:
    pool = a["max_threads"]
    target = f", p99 under {n(w['p99_ms'])} ms" if w["p99_ms"] is not None else ""
    source = f" ({a['hold_from']['words']})" if a.get("hold_from") else ""
    lines = [
        f"## maxThreads = {pool['value']}",
        "",
        f"- Workload: {n(w['rate'])} requests/s, each holding a thread {n(w['hold_ms'])} ms{source}{target}. Little's "
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
        if meas["delays_ms"] and w["hold_ms"] not in meas["delays_ms"]:
            held = ", ".join(n(d) for d in meas["delays_ms"])
            out.append(
                f"The run held threads {held} ms, you {n(w['hold_ms'])} ms:"
                f" where the knee sits depends on the threads, not the holding time, but the costs were "
                f"measured at the run's; `--delays {n(w['hold_ms'])}ms` measures yours."
            )
    return out

"""advice.md's sections on a capacity run beside the advice (advice_capacity.py's figures): each Tomcat setting's
measured capacity beside Little's law and Erlang C, where they disagree and why, and whether an event loop would
carry the workload with less."""

from __future__ import annotations

from .advice_capacity import RUN_IT as CAPACITY_RUN_IT
from .words import n


def capacity_lines(capacity: dict | None, pool: dict | None) -> list[str]:
    """The measured capacity per setting beside Little's law and Erlang C (advice_capacity.py)."""
    lines = ["## Measured capacity beside the model", ""]
    if not capacity:
        return lines + [
            f"- No capacity run given: `{CAPACITY_RUN_IT}` measures each setting's capacity at a p99 "
            f"target; then `--capacity RUN` puts it here.",
            "",
        ]
    for found in capacity["rows"]:
        lines.append(f"- {capacity_row(found)}")
    lines += [f"- {x}" for x in model_verdict(capacity, pool)]
    return lines + [
        f"- From run `{capacity['run_id']}` ({capacity['run_dir']}): a rate held when three launches or "
        f"more all held p99 at the target, failed when as many all failed (launches per rate: see "
        f"capacity.json).",
        "",
    ]


def capacity_row(found: dict, wait: str = "hold") -> str:
    target = f"p99 <= {n(found['target_p99_ms'])} ms on a {n(found['delay_ms'])} ms {wait}"
    if found["passed_rps"] and found["failed_rps"]:
        held = f"held {n(found['passed_rps'])}-{n(found['failed_rps'])} req/s"
        if found.get("long_launch_rps"):
            span = f"for {n(found['long_launch_s'])} s" if found.get("long_launch_s") else "in a long launch"
            held += f" ({n(found['long_launch_rps'])} {span})"
    elif found["ceiling_rps"]:
        held = f"above the load generator's ceiling of {n(found['ceiling_rps'])} req/s"
    else:
        held = f"no bracket ({found['status']})"
    text = f"{found['setting']}, {target}: {held}"
    if found["little_rps"]:
        text += f"; Little's law {n(found['little_rps'])} req/s ({found['little_where']})"
    if found["erlang_rps"]:
        text += f"; Erlang C {n(found['erlang_rps'])} req/s ({found['erlang_where']})"
    if not found["max_threads"]:
        text += "; no thread pool, so no model's capacity"
    if found["cpu_share"] is not None:
        text += f"; CPU {n(100 * found['cpu_share'])} % of the server's cores at the rate that held"
    return text + "."


def event_loop_lines(capacity: dict | None, pool: dict | None, w: dict | None) -> list[str]:
    """The capacity run's event loops beside the pool: what each held on its one thread, and whether it would carry
    the stated workload with less (if the handler's wait is asynchronous)."""
    loops = (capacity or {}).get("event_loops") or []
    if not loops:
        return []
    lines = ["## Would an event loop serve it with less?", ""]
    for found in loops:
        lines.append(f"- {capacity_row(found, wait='wait')}")
    if w and pool:
        best = max(loops, key=lambda x: x["held_rps"] or 0.0)
        if (best["held_rps"] or 0.0) >= w["rate"]:
            lines.append(
                f"- Yes, if your handler's wait can be written asynchronously: {best['setting']} held "
                f"{n(best['held_rps'])} req/s on one thread, at or above your {n(w['rate'])} req/s, where "
                f"the pool needs {pool['value']} threads. An event loop holds no thread while a request "
                "waits, so its capacity is its CPU per request, not the holding time; a handler that "
                "blocks stops the whole loop (seed000, docs/methods.md)."
            )
        else:
            lines.append(
                f"- Not on one process: the most an event loop held here was {n(best['held_rps'])} req/s "
                f"({best['setting']}), under your {n(w['rate'])} req/s; more processes or cores would."
            )
    return lines + [""]


def model_verdict(capacity: dict, pool: dict | None) -> list[str]:
    """Where model and measurement agree, where they do not and why, and what that says of the advised pool."""
    out = []
    if capacity["model_held_at"]:
        held = ", ".join(map(str, capacity["model_held_at"]))
        out.append(
            f"Little's law held on this machine at maxThreads {held}: the measured capacity brackets maxThreads / hold."
        )
    for found in (x for x in capacity["rows"] if x["max_threads"] in capacity["model_missed_at"]):
        why = (
            f"the server's CPU was {n(100 * found['cpu_share'])} % busy there: the core, not the pool, sets the "
            "capacity"
            if found["cpu_bound"]
            else "not the CPU (under 80 % busy): look at the connector's queues and the machine's flags"
        )
        out.append(
            f"Model and measurement disagree at maxThreads {found['max_threads']}: Little's law says "
            f"{n(found['little_rps'])} req/s, the server held "
            f"{n(found['passed_rps'])}-{n(found['failed_rps'])} ({found['little_where']} the bracket); {why}."
        )
    mine = capacity.get("for_pool")
    if mine and pool:
        if mine["verdict"] == "within_held":
            out.append(
                f"Your maxThreads {pool['value']} is within the settings where the model held (up to "
                f"{mine['max_threads']}): its capacity should be about maxThreads / hold here."
            )
        elif mine["verdict"] == "past_a_miss":
            out.append(
                f"Your maxThreads {pool['value']} is at or past {mine['setting']}, where this machine held "
                f"{n(mine['passed_rps'])}-{n(mine['failed_rps'])} req/s against the model's "
                f"{n(mine['little_rps'])}: expect no more than the machine gave there, whatever the pool."
            )
        else:
            out.append(
                f"Your maxThreads {pool['value']} lies between the settings measured: the capacity run "
                "cannot say whether the model holds there; `--max-threads` in the capacity experiment "
                "measures it."
            )
    return out

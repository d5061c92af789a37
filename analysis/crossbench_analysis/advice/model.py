"""maxThreads from the workload alone, with no run read: the queueing arithmetic of workload.py, said with the rule
it used, so an operator has a value in a minute and knows what a run on their machine would add.

- threads busy on average = rate x hold time (Little's law);
- headroom for bursts: arrivals at random make the busy count Poisson with that mean (M/G/infinity, whatever the
  holding times' distribution); the pool is the smallest N that is full at most FULL_SHARE of the time;
- with a p99 target: Erlang C (M/M/N) for the pool that keeps at most P99_SHARE of requests waiting longer than
  the target leaves after the hold time (no run: the container's own p99 overhead taken as 0)."""

from __future__ import annotations

from crossbench.advice_load import Workload
from crossbench_analysis.judge.workload import FULL_SHARE, P99_SHARE, pool_for_headroom, pool_for_p99

from .words import n

REFERENCE = "docs/results/maxthreads/runs/maxthreads-delay"  # the committed maxthreads reference run
RATES = (100, 400, 1000, 4000)  # the quick table's arrival rates, req/s
HOLDS_MS = (10, 50, 200, 1000)  # and hold times, ms
RULE = (
    f"threads = rate x hold time (Little's law) plus headroom for bursts: the smallest pool full at most "
    f"{100 * FULL_SHARE:g} % of the time when arrivals are random (Poisson)"
)


def size(w: Workload) -> dict:
    """The pool for `w` by the model alone, as advice.json keeps it."""
    head = pool_for_headroom(w.busy)
    budget = w.p99_ms - w.hold_ms if w.p99_ms is not None else None
    for_p99 = pool_for_p99(w.busy, w.hold_ms, budget) if budget is not None else None
    value = max(head, for_p99 or 0)
    return {
        "value": value,
        "busy": round(w.busy, 3),
        "for_headroom": head,
        "for_p99": for_p99,
        "headroom_threads": round(value - w.busy, 3),
        "full_share": FULL_SHARE,
        "p99_share": P99_SHARE,
        "wait_budget_ms": budget,
        "rule": RULE,
    }


def advise(w: Workload) -> dict:
    """advice.json for the model alone: where it came from, the workload and the pool."""
    return {
        "source": {"kind": "model", "words": "the model alone: no run read"},
        "workload": w.to_dict(),
        "max_threads": size(w),
    }


def render(a: dict) -> str:
    """advice.md for the model alone: the value, how it was reached, and the command that checks it on a run."""
    w, pool = a["workload"], a["max_threads"]
    lines = [
        f"# maxThreads = {pool['value']} ({a['source']['words']})",
        "",
        f"- Workload: {n(w['rate'])} requests/s, each holding a thread {n(w['hold_ms'])} ms. Little's law: "
        f"{n(w['rate'])} x {n(w['hold_ms'] / 1000)} s = {n(pool['busy'])} threads busy on average.",
        f"- Headroom for bursts: random (Poisson) arrivals make the busy count vary around {n(pool['busy'])}; "
        f"{pool['for_headroom']} threads leave the pool full at most {n(100 * pool['full_share'])} % of the "
        f"time (the smallest N with P(Poisson({n(pool['busy'])}) >= N) <= {pool['full_share']:g}).",
    ]
    if w.get("p99_ms") is not None:
        lines.append(
            f"- p99 under {n(w['p99_ms'])} ms: Erlang C (M/M/N) for at most {n(100 * pool['p99_share'])} % "
            f"of requests waiting past {n(pool['wait_budget_ms'])} ms: "
            + (f"{pool['for_p99']} threads" if pool["for_p99"] else "no pool can, the target is below the hold time")
            + " (no run: the container's own p99 overhead taken as 0)."
        )
    lines += [
        "- Not checked against a machine: with a maxthreads run (or the committed reference) it is, and "
        "costed in memory and CPU:",
        f"  `./analysis/advise.sh {REFERENCE} --rate {n(w['rate'])} --hold-ms {n(w['hold_ms'])}`",
    ]
    return "\n".join(lines) + "\n"


def table(rates=RATES, holds_ms=HOLDS_MS) -> list[str]:
    """The quick table of docs/tuning-maxthreads.md: maxThreads by the model for each rate and hold time."""
    lines = [
        "| req/s \\ hold | " + " | ".join(f"{h:g} ms" for h in holds_ms) + " |",
        "|---:|" + "---:|" * len(holds_ms),
    ]
    for rate in rates:
        cells = [f"{size(Workload(float(rate), float(h)))['value']} ({n(rate * h / 1000)} busy)" for h in holds_ms]
        lines.append(f"| {rate:g} | " + " | ".join(cells) + " |")
    return lines

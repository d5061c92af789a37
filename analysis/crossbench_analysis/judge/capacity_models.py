"""What the queueing models predict for a measured capacity (crossbench.decide.capacity's outcome of one search) and
where the prediction sits against the bracket: Little's law (a pool of N threads each held the delay answers at
most N / delay) and Erlang C (the rate at which random arrivals keep 99 % of waits within the target), and the
share of the server's cores a request's CPU took at the rate that held. The capacity findings and the maxThreads
advice both read it, so they say the same thing of the same search."""

from __future__ import annotations

from crossbench.decide import capacity_answer
from crossbench.figures.points import sig

from .workload import rate_within_p99

INSIDE, ABOVE, BELOW, UNJUDGED = "inside", "above", "below", "not judged"
BUSY_CORES = 0.8  # at this share of its cores or more, the server's CPU, not its pool, limits it


def where(predicted: float | None, out: dict) -> str:
    """INSIDE, ABOVE or BELOW the bracket [held, the lowest rate shown to fail], or UNJUDGED without one."""
    low, high = capacity_answer.bracket(out)
    if predicted is None or not (low or high):
        return UNJUDGED
    if low and high and low <= predicted <= high:
        return INSIDE
    if high and predicted > high:
        return ABOVE
    if low and predicted < low:
        return BELOW
    return UNJUDGED


def in_words(predicted: float, out: dict) -> str:
    """Where a predicted capacity sits against the bracket, in words."""
    place = where(predicted, out)
    if place == INSIDE:
        return "inside the bracket"
    held, fails = capacity_answer.bracket(out)
    if place == ABOVE:
        return f"above it, {sig(predicted / fails, commas=True)}x the lowest rate shown not to hold"
    if place == BELOW:
        return f"below it, {sig(held / predicted, commas=True)}x under the highest rate shown to hold"
    return "not judged (no bracket)"


def cpu_share(out: dict, cores: int) -> float | None:
    """The share of the server's cores its CPU took at the rate that held: ms a request x requests a second."""
    cpu, held = (out.get("cost") or {}).get("cpu_ms_per_request"), capacity_answer.bracket(out)[0]
    if not cpu or not held or not cores:
        return None
    return cpu["value"] * held / 1000 / cores


def models(out: dict, cores: int = 1) -> dict:
    """The models' capacities for one search and where each sits against its bracket; None values where the
    server has no parallel limit (an event loop, virtual threads) or the target is below the delay."""
    limit, delay, target = out.get("parallel_limit"), out.get("delay_ms"), out.get("target_p99_ms")
    little = out.get("predicted_rps")
    erlang = rate_within_p99(int(limit), delay, target) if limit and delay and target else None
    share = cpu_share(out, cores)
    return {
        "little_rps": little,
        "little_where": where(little, out),
        "erlang_rps": erlang,
        "erlang_where": where(erlang, out),
        "cpu_share": share,
        "cpu_bound": share is not None and share >= BUSY_CORES,
    }


def sentence(out: dict) -> str:
    """'; Little's law predicts 100 req/s (20 / 200 ms): inside the bracket; Erlang C, ...', or '' without a
    parallel limit."""
    limit, delay = out.get("parallel_limit"), out.get("delay_ms")
    if not limit or not delay:
        return ""
    found = models(out)
    text = (
        f"; Little's law predicts {sig(found['little_rps'], commas=True)} req/s ({limit} / {delay} ms): "
        f"{in_words(found['little_rps'], out)}"
    )
    if found["erlang_rps"]:
        text += (
            f"; Erlang C, for arrivals at random, {sig(found['erlang_rps'], commas=True)} req/s: "
            f"{in_words(found['erlang_rps'], out)} (the generator sends on a fixed schedule, which queues less "
            "than random arrivals)"
        )
    return text

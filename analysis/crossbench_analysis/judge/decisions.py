"""The decisions charts and findings take from launches, each in one place: a worker sweep's best step (the best
mean, never the best launch) and the steps tied with it (Welch's t on logs; an indicative step ranks nothing).
Seed 004's charts and findings and the TechEmpower ranking import them from here."""

from __future__ import annotations

from crossbench import stats
from crossbench_analysis.read.runinfo import num


def best_of_sweeps(cells: list[dict]) -> tuple[list[dict], dict[str, dict]]:
    """The cells with each worker sweep reduced to its best step, and {sweep: the cell standing for it}: the step
    with the most req/s on the mean of its launches (never the best single launch), represented by its launch
    nearest that mean. tied_steps(...) says which steps cannot be told apart from it."""
    best: dict[str, dict] = {}
    for sweep, steps in sweep_steps(cells).items():
        step = max(steps, key=lambda s: step_mean(steps[s]))
        mean = step_mean(steps[step])
        best[sweep] = min(steps[step], key=lambda c: abs((num(c.get("rps")) or 0) - mean))
    return [c for c in cells if not c.get("sweep") or best[c["sweep"]] is c], best


def sweep_steps(cells: list[dict]) -> dict[str, dict[int, list[dict]]]:
    found: dict[str, dict[int, list[dict]]] = {}
    for c in cells:
        if c.get("sweep"):
            found.setdefault(c["sweep"], {}).setdefault(c.get("sweep_step"), []).append(c)
    return found


def step_mean(launches: list[dict]) -> float:
    values = [num(c.get("rps")) or 0.0 for c in launches]
    return sum(values) / len(values)


def tied_steps(cells: list[dict], sweep: str) -> list[int]:
    """The other steps of a sweep that the best cannot be told from: the 95 % interval of their throughput over
    the best's (Welch's t on the launches' logs) holds 1, or a side has fewer than three launches (an indicative
    figure ranks nothing)."""
    steps = sweep_steps(cells).get(sweep, {})
    if not steps:
        return []
    best = max(steps, key=lambda s: step_mean(steps[s]))
    top = [v for c in steps[best] if (v := num(c.get("rps")))]
    tied = []
    for step, launches in steps.items():
        other = [v for c in launches if (v := num(c.get("rps")))]
        if step == best:
            continue
        if min(len(top), len(other)) < stats.MIN_LAUNCHES:
            tied.append(step)
            continue
        test = stats.log_ratio(top, other)
        if test.low == test.high or test.low <= 1 <= test.high:
            tied.append(step)
    return sorted(tied)

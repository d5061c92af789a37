"""Decisions the run takes between cells from what it has measured so far: whether a worker sweep's next step
runs, and the rate a rates = "auto" cell offers (its share of its peak cell's throughput)."""
from __future__ import annotations

from dataclasses import replace

from .cellplan import CellPlan


def sweep_stopped(plan: CellPlan, records: dict[str, dict]) -> str | None:
    """Why a worker-sweep cell is not run (seed 004's rule: stop once throughput dropped two steps in a row),
    from the series' steps measured so far; None to run it."""
    if plan.sweep is None:
        return None
    by_step: dict[int, list[float]] = {}
    for record in records.values():
        if record.get("sweep") == plan.sweep and record.get("status") == "ok" and record["sweep_step"] < plan.sweep_step:
            by_step.setdefault(record["sweep_step"], []).append(record["rps"] or 0.0)
    rps = [sum(values) / len(values) for _, values in sorted(by_step.items())]
    drops = [later < earlier for earlier, later in zip(rps, rps[1:])]
    if len(drops) >= 2 and drops[-1] and drops[-2]:
        return f"throughput dropped two steps in a row ({', '.join(f'{r:.0f}' for r in rps[-3:])} req/s)"
    return None


class PeakMissing(RuntimeError):
    """An open-loop cell's peak cell has no usable throughput: the cell cannot know its rate."""


def with_rate_from_peak(plan: CellPlan, records: dict[str, dict]) -> CellPlan:
    """A rates = "auto" cell with its rate set: its share of the peak cell's measured throughput."""
    if plan.peak_cell is None:
        return plan
    peak = records.get(plan.peak_cell)
    if peak is None or peak.get("status") != "ok" or not peak.get("rps"):
        why = "was not measured" if peak is None else f"has no throughput ({peak.get('error') or peak.get('flags')})"
        raise PeakMissing(f"its peak cell {plan.peak_cell} {why}")
    return replace(plan, rate=round(plan.rate_share * peak["rps"], 1))

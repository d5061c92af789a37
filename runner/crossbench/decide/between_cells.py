"""Decisions the run takes between cells from what it has measured so far: whether a worker sweep's next step
runs, and the rate a rates = "auto" cell offers (its share of its peak cell's throughput)."""

from __future__ import annotations

from dataclasses import replace

from crossbench import stats
from crossbench.plan.cellplan import CellPlan
from crossbench.record.record import point_of


def sweep_stopped(plan: CellPlan, records: dict[str, dict], single_launch: bool = False) -> str | None:
    """Why a worker-sweep cell is not run (seed 004's rule: stop once throughput dropped two steps in a row),
    from the series' steps measured so far; None to run it. A drop counts only beyond the error (the later
    step's throughput over the earlier's, its 95 % interval wholly below 1), so a step launched once never drops:
    two launches of one static cell differ by 5 to 40 % on this machine (quick runs, measured). A run that
    measures each point once (`single_launch`, the seeds' own protocols) keeps the article's plain rule."""
    if plan.sweep is None:
        return None
    by_step: dict[int, list[float]] = {}
    for record in records.values():
        if (
            record.get("sweep") == plan.sweep
            and record.get("status") == "ok"
            and record["sweep_step"] < plan.sweep_step
        ):
            by_step.setdefault(record["sweep_step"], []).append(record["rps"] or 0.0)
    steps = [values for _, values in sorted(by_step.items())]
    below = plainly_below if single_launch else clearly_below
    drops = [below(later, earlier) for earlier, later in zip(steps, steps[1:])]
    if len(drops) >= 2 and drops[-1] and drops[-2]:
        means = ", ".join(f"{sum(v) / len(v):.0f}" for v in steps[-3:])
        how = "" if single_launch else " beyond their 95 % intervals"
        return f"throughput dropped{how} two steps in a row ({means} req/s)"
    return None


def plainly_below(later: list[float], earlier: list[float]) -> bool:
    return sum(later) / len(later) < sum(earlier) / len(earlier)


def clearly_below(later: list[float], earlier: list[float]) -> bool:
    """later / earlier has its 95 % interval wholly below 1 (Welch's t on log launch values, as compare judges);
    a step launched once has no interval, so it never counts as a drop."""
    test = stats.log_ratio(earlier, later)
    return test.high is not None and test.high < 1


class PeakMissing(RuntimeError):
    """An open-loop cell's peak cell has no usable throughput: the cell cannot know its rate."""


def with_rate_from_peak(plan: CellPlan, records: dict[str, dict]) -> CellPlan:
    """A rates = "auto" cell with its rate set: its share of the peak's measured throughput, the mean over the
    peak point's launches that counted (one launch is a coin's throw of the machine's drift; their mean is the
    best the run knows when the rate must be set)."""
    if plan.peak_cell is None:
        return plan
    peak_point = point_of(plan.peak_cell)
    throughputs = [
        r["rps"]
        for cell_id, r in records.items()
        if r.get("status") == "ok" and r.get("rps") and (r.get("point_id") or point_of(cell_id)) == peak_point
    ]
    if not throughputs:
        peak = records.get(plan.peak_cell)
        why = "was not measured" if peak is None else f"has no throughput ({peak.get('error') or peak.get('flags')})"
        raise PeakMissing(f"its peak cell {plan.peak_cell} {why}")
    return replace(plan, rate=round(plan.rate_share * sum(throughputs) / len(throughputs), 1))

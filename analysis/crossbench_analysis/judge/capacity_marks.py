"""A run's capacity searches as charts and findings read them (crossbench.decide.capacity over the run's records and
configuration), and the marks the open-loop latency chart draws for them: the target line and each bracket on it.
Not a chart family: the capacity family (capacity_charts.py), openloop.py and findings_capacity.py share it."""

from __future__ import annotations

from crossbench.decide import capacity, capacity_answer
from crossbench.plan import experiment
from crossbench.plan.search_spec import SEARCH_RATES
from crossbench_analysis.read.runinfo import Run

NAN = "NaN"


def outcomes(run: Run) -> list[dict]:
    """The run's capacity searches (crossbench.decide.capacity_answer.outcomes, with the spread measured on the
    run's machine), none for a run without them."""
    config = run.metadata.get("config")
    if not isinstance(config, dict) or not any(g.get("rates") == SEARCH_RATES for g in config.get("group", [])):
        return []  # a run without searches is not typed: a configuration older than the schema stays readable
    return capacity_answer.outcomes(run.cells, experiment.recorded(config), run.machine_name if run.machine else None)


def marks(found: list[dict]):
    """For openloop.per_panel: a panel's target (p99_ms) and, per series, its bracket (held, the lowest rate shown
    to fail)."""
    by_series = {out["series"]: out for out in found}

    def panel_marks(series_cells: list[list[dict]]) -> dict:
        outs = [
            next(
                (
                    by_series.get(capacity.series_of(c["point_id"], c["rate"]))
                    for c in cells
                    if c.get("point_id") and c.get("rate") is not None
                ),
                None,
            )
            for cells in series_cells
        ]
        targets = {out["target_p99_ms"] for out in outs if out}
        return {
            "target": f"{targets.pop():g}" if len(targets) == 1 else NAN,
            "passed": " ".join(shown(out and out["held_rps"]) for out in outs),
            "failed": " ".join(shown(out and (out["fails_rps"] or out["ceiling_rps"])) for out in outs),
        }

    return panel_marks


def shown(value) -> str:
    return f"{value:g}" if value else NAN

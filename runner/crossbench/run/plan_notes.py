"""What the plan's line adds about its cells beyond their count and length: the held windows (which generator holds
them and the load each runs) and, in a run whose Python servers name their interpreters, whether a free-threaded
build is here for the cells where threads could run Python at once."""

from __future__ import annotations

from crossbench import pyenvs
from crossbench.drivers import DRIVERS
from crossbench.plan.cellplan import CellPlan
from crossbench.servers import python_runtime


def held_note(cells: list[CellPlan]) -> str:
    """What the held windows add to the plan line: which generator holds them and the load each runs (closed-loop
    cells until the queue settles; open-loop ones at their rate, on a pool opened before the window)."""
    held = [c for c in cells if DRIVERS[c.kind].holds(c)]
    closed = [c for c in held if c.rate is None]
    offered = [c for c in held if c.rate is not None]
    notes = []
    if closed:
        over = [c for c in closed if DRIVERS[c.kind].over_budget(c)]
        warning = (
            (
                f"; {len(over)} of them wait on a queue longer than the held budget (e.g. {over[0].describe()}): "
                "their windows may open before it settles, flagged window_not_held if so"
            )
            if over
            else ""
        )
        notes.append(
            f"{len(closed)} delayed cells held by {closed[0].loadgen}: one process each, {span(closed)} of "
            f"load, the window opening once the queue has settled{warning}"
        )
    if offered:
        later = sum(c.rate_share is not None for c in cells)
        auto = f", and {later} more once their peak sets their rate" if later else ""
        notes.append(
            f"{len(offered)} open-loop cells held by {offered[0].loadgen}{auto}: one process each at its "
            f"rate, {span(offered)} of load, the window opening on the running load (a pool of connections "
            "opened before it)"
        )
    return f" ({'; '.join(notes)})" if notes else ""


def span(cells: list[CellPlan]) -> str:
    """The cells' planned load in whole seconds: '6 s', or '6-12 s' where they differ at that precision."""
    lengths = sorted(DRIVERS[c.kind].planned_s(c) for c in cells)
    low, high = f"{lengths[0]:.0f}", f"{lengths[-1]:.0f}"
    return f"{low} s" if low == high else f"{low}-{high} s"


def threads_note(cells: list[CellPlan]) -> str | None:
    """One line for a run whose Python cells name an interpreter (--python, or python = "all"): no free-threaded
    build here, and the points it would matter to; or the points that run on one; None otherwise."""
    named = [c for c in cells if isinstance(c.plugin, python_runtime.PythonServer) and c.settings.get("python")]
    if not named:
        return None
    threaded = {c.point_id for c in named if python_runtime.threaded(c.settings)}
    found = [i.label for i in pyenvs.installed() if i.free_threaded]
    if not found:
        return pyenvs.no_free_threaded(len(threaded))
    on_free = {
        c.point_id for c in named if python_runtime.threaded(c.settings) and python_runtime.free_threaded(c.settings)
    }
    if on_free:
        return (
            f"{len(on_free)} threaded point(s) run on a free-threaded build ({', '.join(found)}), marked "
            f"'free-threaded' in their setting: {pyenvs.FREE_THREADED_MATTERS}"
        )
    return (
        f"free-threaded build(s) here ({', '.join(found)}), but no threaded cell runs on one: "
        f"python = \"all\" or --python {found[0]} measures {pyenvs.FREE_THREADED_MATTERS}"
    )

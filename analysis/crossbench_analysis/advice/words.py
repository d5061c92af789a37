"""How the advice quotes a number, a fitted figure with its interval and a list of points, shared by its renderers
(advice_text.py, advice_knee_text.py, advice_cost_text.py, advice_capacity_text.py, model.py)."""

from __future__ import annotations

from crossbench.figures.points import fmt_range, short


def n(x) -> str:
    """A number as a reader quotes it: integers whole (a pool of 8192 threads is not 8,190), others to three
    significant figures (points.short); '?' for None."""
    if x is None:
        return "?"
    if float(x).is_integer() and abs(x) < 1e6:
        return str(int(x))
    return short(x)


def count(k, one: str, many: str | None = None) -> str:
    """A count and its noun that agree: '1 core', '2 cores', '3 launches' ('?' for an unknown count)."""
    return f"{n(k)} {one if k == 1 else many or one + 's'}"


def pm(x, ci, unit: str = "", why: str = "") -> str:
    """A fitted figure and its 95 % interval as every figure is printed (points.fmt_interval: "570 [300, 840] KB"),
    or the value and why it has no interval."""
    if ci:
        return fmt_range(x, ci[0], ci[1], unit)
    return f"{n(x)}{' ' + unit if unit else ''} ({why or 'no interval'})"


def ids(points) -> str:
    return ", ".join(f"`{p}`" for p in points) if points else "none"

"""How the advice quotes a number, shared by its renderers (advice_text.py, advice_capacity_text.py, model.py)."""

from __future__ import annotations

from crossbench.figures.points import short


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

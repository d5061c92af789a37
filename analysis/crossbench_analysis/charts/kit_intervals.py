"""The chart kit's intervals: a cell row's tail, and each figure's point value and 95 % interval beside it, from
the one estimator the points use (crossbench.figures.points.figure_of over the launches points.counted keeps), so a
chart's line and bar are the value and ± its finding prints; a point the findings leave out (a flag beyond
points.CAVEATS on a counted launch) has none, and its launches stand off the line as hollow marks; and the key
entry saying what a bar is."""

from __future__ import annotations

from crossbench.figures.points import CAVEATS, LaunchRule, counted, figure_of, point_id
from crossbench.stats import MIN_LAUNCHES
from crossbench_analysis.read.runinfo import is_valid, num

TAIL_COLUMNS = ("valid", "repetition", "cell_id")


def tail(cell: dict) -> list:
    return [is_valid(cell), cell.get("repetition"), cell["cell_id"]]


def interval_columns(columns: list[str], row_of, first: int = 1) -> list[str]:
    """For each figure column of a chart (every column row_of gives from `first` on; before it the x and any
    label), the names of its point's value and 95 % interval, appended after the tail so the existing columns keep
    their places."""
    figures = columns[first : len(columns) - len(TAIL_COLUMNS)]
    return [f"{name}_{part}" for name in figures for part in ("mean", "lo", "hi")]


def interval_of(values: list, rule: LaunchRule) -> list:
    """[value, low, high] of a point's launch values under the run's launch rule (points.figure_of: low and high
    None with fewer than three launches, all None with none)."""
    found = figure_of([float(x) for v in values if isinstance(x := num(v), float | int) and x == x], rule)
    return [found["value"], found["ci95_low"], found["ci95_high"]] if found else [None, None, None]


def stated(launches: list[dict]) -> list[dict]:
    """The launches a point's stated figures rest on: points.counted's, or none where one of them carries a flag
    beyond points.CAVEATS (the findings then leave the point out)."""
    kept = counted(launches)
    spoiled = {flag for r in kept for flag in r.get("flags") or ()} - CAVEATS
    return [] if spoiled else kept


def same_point(cells: list[dict], cell: dict) -> list[dict]:
    """The launches of cell's point among cells that its figures rest on (points.counted)."""
    return counted([c for c in cells if point_id(c) == point_id(cell)])


def point_interval(cells: list[dict], cell: dict, value_of, rule: LaunchRule) -> list:
    """[value, low, high] of value_of over the launches cell's point states its figures from (stated)."""
    return interval_of([value_of(c) for c in stated(same_point(cells, cell))], rule)


def with_intervals(cells: list[dict], row_of, rule: LaunchRule, first: int = 1) -> list[list]:
    """Each launch's row, followed by its point's value and 95 % interval for every figure column, over the
    launches the point counts: the chart draws the launches as points and the interval as a bar."""
    launches: dict[str, list[dict]] = {}
    for c in cells:
        launches.setdefault(point_id(c), []).append(c)
    own_rows = {pid: [row_of(c) for c in stated(group)] for pid, group in launches.items()}
    rows = []
    for c in cells:
        own = own_rows[point_id(c)]
        extra = []
        for i in range(first, len(row_of(c))):
            extra += interval_of([row[i] for row in own], rule)
        rows.append(row_of(c) + tail(c) + extra)
    return rows


def launches_per_point(cells: list[dict]) -> list[int]:
    """How many launches each point's figures rest on (failed and disturbed launches do not count)."""
    groups: dict[str, list[dict]] = {}
    for c in cells:
        groups.setdefault(point_id(c), []).append(c)
    return [len(counted(group)) for group in groups.values()]


def interval_key(cells: list[dict]) -> dict:
    """The chart's key entry for its interval bars (gnuplot `ikey`): what a bar is, and that a point of fewer than
    three launches has none."""
    counts = launches_per_point(cells)
    if counts and max(counts) < MIN_LAUNCHES:
        return {"ikey": f"under {MIN_LAUNCHES} launches a point: no interval"}
    if counts and min(counts) < MIN_LAUNCHES:
        return {"ikey": f"bar: 95% interval over launches (none: under {MIN_LAUNCHES})"}
    return {"ikey": "bar: 95% interval over launches"}

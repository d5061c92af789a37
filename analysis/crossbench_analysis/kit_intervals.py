"""The chart kit's intervals: a cell row's tail, and each figure's point mean and 95 % interval over the point's
launches (Student's t, crossbench.stats) beside it, and the key entry saying what a bar is."""
from __future__ import annotations

from .runinfo import is_valid, num

TAIL_COLUMNS = ("valid", "repetition", "cell_id")


def tail(cell: dict) -> list:
    return [is_valid(cell), cell.get("repetition"), cell["cell_id"]]


def interval_columns(columns: list[str], row_of, first: int = 1) -> list[str]:
    """For each figure column of a chart (every column row_of gives from `first` on; before it the x and any
    label), the names of its point's mean and 95 % interval, appended after the tail so the existing columns keep
    their places."""
    figures = columns[first:len(columns) - len(TAIL_COLUMNS)]
    return [f"{name}_{part}" for name in figures for part in ("mean", "lo", "hi")]


def interval_of(values: list) -> list:
    """[mean, low, high]: the 95 % interval of the values' mean (Student's t, crossbench.stats; low and high None
    with one value, all None with none)."""
    from crossbench import stats
    values = [float(x) for v in values if isinstance(x := num(v), float | int) and x == x]
    if not values:
        return [None, None, None]
    interval = stats.t_interval(values)
    return [interval.mean, interval.low, interval.high]


def same_point(cells: list[dict], cell: dict) -> list[dict]:
    """The launches of cell's point among cells."""
    from crossbench.points import point_id
    return [c for c in cells if point_id(c) == point_id(cell)]


def point_interval(cells: list[dict], cell: dict, value_of) -> list:
    """[mean, low, high] of value_of over the launches of cell's point among cells (as with_intervals)."""
    return interval_of([value_of(c) for c in same_point(cells, cell)])


def with_intervals(cells: list[dict], row_of, first: int = 1) -> list[list]:
    """Each launch's row, followed by its point's mean and 95 % interval (Student's t over the point's launches,
    crossbench.stats) for every figure column: the chart draws the launches as points and the interval as a bar."""
    from crossbench import stats
    from crossbench.points import point_id
    launches: dict[str, list[list]] = {}
    for c in cells:
        launches.setdefault(point_id(c), []).append(row_of(c))
    rows = []
    for c in cells:
        own = launches[point_id(c)]
        extra = []
        for i in range(first, len(own[0])):
            values = [v for row in own if isinstance(v := num(row[i]), float | int) and v == v]
            if not values:
                extra += [None, None, None]
                continue
            interval = stats.t_interval([float(v) for v in values])
            extra += [interval.mean, interval.low, interval.high]
        rows.append(row_of(c) + tail(c) + extra)
    return rows


def launches_per_point(cells: list[dict]) -> list[int]:
    """How many launches with a value each point of the cells has (failed launches do not count)."""
    from crossbench.points import point_id
    counted: dict[str, int] = {}
    for c in cells:
        counted[point_id(c)] = counted.get(point_id(c), 0) + (c.get("status", "ok") == "ok")
    return list(counted.values())


def interval_key(cells: list[dict]) -> dict:
    """The chart's key entry for its interval bars (gnuplot `ikey`): what a bar is, and that a point of one launch
    has none."""
    counts = launches_per_point(cells)
    if counts and max(counts) < 2:
        return {"ikey": "one launch a point: no interval"}
    if counts and min(counts) < 2:
        return {"ikey": "bar: 95% interval over launches (none: one launch)"}
    return {"ikey": "bar: 95% interval over launches"}

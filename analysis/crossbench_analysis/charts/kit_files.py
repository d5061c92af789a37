"""The chart kit's data files: a value as a gnuplot cell, one table with a header line, and blocks of series (the
format is in kit's docstring)."""

from __future__ import annotations

import re
from pathlib import Path


def fmt(value) -> str:
    if value is None:
        return "NaN"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "NaN" if value != value else f"{value:.6g}"
    text = re.sub(r"\s+", "_", str(value))
    return text or "-"


def write_table(path: Path, description: str, columns: list[str], rows: list[list]) -> int:
    """Writes one gnuplot data file of a single table whose first line names the columns (gnuplot:
    `set datafile columnheaders`, then column('name')); text cells are quoted. Returns the rows written."""

    def cell(value):
        return '"' + value.replace('"', "'") + '"' if isinstance(value, str) else fmt(value)

    lines = [
        f"# crossbench analysis export: {description}",
        f"# columns: {' '.join(columns)}",
        "# NaN = no value",
        " ".join(columns),
    ]
    lines += [" ".join(cell(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return len(rows)


def write_blocks(path: Path, description: str, columns: list[str], blocks: list[tuple[str, list[list]]]) -> int:
    """Writes one gnuplot data file; returns the number of data rows written (NaN placeholders excluded)."""
    lines = [
        f"# crossbench analysis export: {description}",
        f"# columns: {' '.join(columns)}",
        "# one block per series (gnuplot `index N`), blocks separated by two blank lines; a block's first",
        "# line is the series label then the column names. NaN = no value (failed cell or null figure).",
    ]
    written = 0
    for i, (label, rows) in enumerate(blocks):
        if i:
            lines += ["", ""]
        lines.append('"' + label.replace('"', "'") + '"\t' + "\t".join(columns[1:]))
        if not rows:
            rows = [["-" if name == "cell_id" else None for name in columns]]
        else:
            written += len(rows)
        lines += ["\t".join(fmt(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return written

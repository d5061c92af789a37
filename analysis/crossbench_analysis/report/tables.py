"""How a run's summary and findings read as text, wherever they are shown (findings.md, the terminal, the
reference docs): the summary (findings/summary.py, a capacity run's findings_capacity.py: each names its columns and
its rows' keys) as a Markdown table or aligned columns, whether a finding's figure text follows its sentence, and
the fold that says how a finding was computed."""

from __future__ import annotations

import textwrap

COLUMNS = (
    "server setting",
    "workload",
    "knee",
    "most req/s [95 %]",
    "at C",
    "p50 / p99 (ms)",
    "efficiency ratio at top C",
    "limited by",
)
KEYS = ("setting", "workload", "bends_at", "most_rps", "at_c", "latency_ms", "efficiency_top", "limited_by")
EMPTY = {"columns": list(COLUMNS), "rows": [], "note": ""}
WIDTH = 100  # the terminal's summary fits this many columns
INDENT = "  "
KEY = (
    "knee: C=N [95 %] is the hinge fitted over every launch, C a-b the measured C it lies between; "
    "efficiency ratio: (C / req/s) / delay"
)
USER_PATH_KEY = " (a path of yours: its service time at C=1)"


def columns(summary: dict) -> tuple[list[str], list[str]]:
    """(column titles, row keys): the summary's own, or for a findings.json written before tables said them, the
    sweep's columns its rows have."""
    if summary.get("keys"):
        return list(summary.get("columns") or COLUMNS), list(summary["keys"])
    first = summary["rows"][0] if summary.get("rows") else {}
    kept = [(t, k) for t, k in zip(COLUMNS, KEYS) if k in first] or list(zip(COLUMNS, KEYS))
    return [t for t, _ in kept], [k for _, k in kept]


def markdown(summary: dict, heading: str = "## Summary", note: bool = True, width: int | None = None) -> list[str]:
    """The summary as a Markdown table under `heading` (findings.md; the reference docs name it in bold and leave
    out its `note`, the pointer to advise.sh a run's reader needs once). Within `width` columns (findings.md's),
    the table holds the columns that fit from the left and a list under it the rest of each row, as the
    terminal's summary does (`plain`)."""
    if not summary["rows"]:
        return []
    titles, keys = columns(summary)
    table = [titles] + [[r.get(k, "") for k in keys] for r in summary["rows"]]
    shown = len(titles) if width is None else markdown_fit(table, width)
    lines = [heading, "", markdown_row(titles[:shown]), "|" + "---|" * shown]
    lines += [markdown_row(within(line[:shown], width)) for line in table[1:]]
    rest = [markdown_rest(titles, line, shown, width or 0) for line in table[1:]] if shown < len(titles) else []
    lines += [""] + [item for items in rest for item in items] if any(rest) else []
    return lines + ([""] + [summary["note"]] if summary["note"] and note else []) + [""]


def markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def within(cells: list[str], width: int | None) -> list[str]:
    """A row of the two columns every table keeps, its second cell (a workload: a user's long path) cut in the
    middle with an ellipsis so the row fits `width`; the list under the table gives it whole."""
    if width is None or len(cells) != 2 or len(markdown_row(cells)) <= width:
        return cells
    return [cells[0], cut_middle(cells[1], width - len(markdown_row([cells[0], ""])))]


def cut_middle(text: str, room: int) -> str:
    """`text` within `room` characters, its middle replaced by an ellipsis; whole when it fits or the room is too
    small to leave both ends readable."""
    if len(text) <= room or room < 9:
        return text
    head = (room - 1) // 2
    return text[:head] + "\u2026" + text[len(text) - (room - 1 - head) :]


def markdown_fit(table: list[list[str]], width: int) -> int:
    """How many columns from the left make Markdown rows within `width` (two at least: what a row is)."""
    fits = [n for n in range(2, len(table[0]) + 1) if all(len(markdown_row(line[:n])) <= width for line in table)]
    return max(fits, default=2)


def markdown_rest(titles: list[str], line: list[str], shown: int, width: int) -> list[str]:
    """A row's cells past the table as one list item, 'setting, workload: title: cell; ...' (none for n/a),
    wrapped within `width`."""
    said = [f"{t}: {cell}" for t, cell in zip(titles[shown:], line[shown:]) if cell not in ("", "n/a")]
    if not said:
        return []
    return textwrap.wrap(
        f"{', '.join(line[:2])}: {'; '.join(said)}",
        width,
        initial_indent="- ",
        subsequent_indent=INDENT,
        break_on_hyphens=False,
    )


def plain(summary: dict, width: int = WIDTH) -> list[str]:
    """The summary as aligned columns for the terminal, within `width` columns: the columns that fit side by side
    from the left, the rest under each row as 'title: cell' lines (none for a cell that is n/a), wrapped; then
    the key (for a sweep's table) and the note, wrapped too."""
    if not summary["rows"]:
        return []
    titles, keys = columns(summary)
    table = [titles] + [[r.get(k, "") for k in keys] for r in summary["rows"]]
    shown = side_by_side(table, width - len(INDENT))
    room = width - len(INDENT) - 2 - max(len(line[0]) for line in table)  # a user's long path: cut, said below
    widths = [max(len(line[i]) for line in table) for i in range(shown)]
    widths[1] = min(widths[1], max(room, len(titles[1])))
    out = ["summary:", INDENT + "  ".join(t.ljust(w) for t, w in zip(titles, widths)).rstrip()]
    for line in table[1:]:
        row = [line[0], cut_middle(line[1], widths[1]), *line[2:shown]]
        out.append(INDENT + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        whole = [f"{titles[1]}: {line[1]}"] if row[1] != line[1] else []
        rest = whole + [f"{t}: {cell}" for t, cell in zip(titles[shown:], line[shown:]) if cell not in ("", "n/a")]
        out += wrapped("; ".join(rest), width, INDENT * 3)
    key = KEY + USER_PATH_KEY if summary.get("user_paths") else KEY
    notes = ([key] if keys == list(KEYS) else []) + ([summary["note"]] if summary.get("note") else [])
    return out + [line for note in notes for line in wrapped(note, width, INDENT)]


def side_by_side(table: list[list[str]], width: int) -> int:
    """How many columns from the left fit in `width`, two spaces apart (two at least: what a row is)."""
    used = -2
    for i in range(len(table[0])):
        used += 2 + max(len(line[i]) for line in table)
        if used > width:
            return max(2, i)
    return len(table[0])


def wrapped(text: str, width: int, indent: str) -> list[str]:
    return (
        textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + INDENT, break_on_hyphens=False)
        if text
        else []
    )


def shows_figure(record: dict) -> bool:
    """The figure text goes after the sentence unless the sentence leads with the figure."""
    return bool(record.get("figure_text")) and not record.get("leads")


def how_computed(record: dict) -> str:
    """The fold under a finding: its figure with launches and method, how it was fitted, its chart and cells."""
    parts = (
        [record["figure_text"] + (f", {record['method']}" if record.get("method") else "")]
        if record.get("figure_text")
        else []
    )
    parts += [record["detail"].lstrip("; ")] if record.get("detail") else []
    parts += [f"chart `{record['chart']}`"] if record.get("chart") else []
    parts += [f"cells {', '.join(record['cells'])}"] if record.get("cells") else []
    return "; ".join(parts)


def terminal(written: dict) -> str:
    """A findings.json as the terminal shows it within WIDTH columns: the summary table, then each finding."""
    records = written.get("findings", [])
    lines = plain(written.get("summary") or EMPTY)
    if records:
        lines.append("findings:")
        for r in records:
            said = r["sentence"] + (f" [{r['figure_text']}]" if shows_figure(r) else "")
            lines += wrapped(said, WIDTH, INDENT)
    return "\n".join(lines)

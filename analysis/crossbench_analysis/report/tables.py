"""How a run's summary and findings read as text, wherever they are shown (findings.md, the terminal, the
reference docs): the summary (findings/summary.py, a capacity run's findings_capacity.py: each names its columns and
its rows' keys) as a Markdown table or aligned columns, whether a finding's figure text follows its sentence, and
the fold that says how a finding was computed."""
from __future__ import annotations

COLUMNS = ("server setting", "workload", "bends at", "most req/s [95 % interval]", "at C", "p50 / p99 there (ms)",
           "limited by")
KEYS = ("setting", "workload", "bends_at", "most_rps", "at_c", "latency_ms", "limited_by")
EMPTY = {"columns": list(COLUMNS), "rows": [], "note": ""}


def columns(summary: dict) -> tuple[list[str], list[str]]:
    """(column titles, row keys): the summary's own, a sweep's for a findings.json written before tables said them."""
    return list(summary.get("columns") or COLUMNS), list(summary.get("keys") or KEYS)


def markdown(summary: dict, heading: str = "## Summary") -> list[str]:
    """The summary as a Markdown table under `heading` (findings.md; the reference docs name it in bold)."""
    if not summary["rows"]:
        return []
    titles, keys = columns(summary)
    lines = [heading, "", "| " + " | ".join(titles) + " |", "|" + "---|" * len(titles)]
    lines += ["| " + " | ".join(r[k] for k in keys) + " |" for r in summary["rows"]]
    return lines + ([""] + [summary["note"]] if summary["note"] else []) + [""]


def plain(summary: dict) -> list[str]:
    """The summary as aligned columns for the terminal."""
    if not summary["rows"]:
        return []
    titles, keys = columns(summary)
    table = [titles] + [[r[k] for k in keys] for r in summary["rows"]]
    widths = [max(len(line[i]) for line in table) for i in range(len(titles))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table]
    return ["summary:"] + ["  " + line for line in lines] + ([f"  {summary['note']}"] if summary["note"] else [])


def shows_figure(record: dict) -> bool:
    """The figure text goes after the sentence unless the sentence leads with the figure."""
    return bool(record.get("figure_text")) and not record.get("leads")


def how_computed(record: dict) -> str:
    """The fold under a finding: its figure with launches and method, how it was fitted, its chart and cells."""
    parts = [record["figure_text"] + (f", {record['method']}" if record.get("method") else "")] \
        if record.get("figure_text") else []
    parts += [record["detail"].lstrip("; ")] if record.get("detail") else []
    parts += [f"chart `{record['chart']}`"] if record.get("chart") else []
    parts += [f"cells {', '.join(record['cells'])}"] if record.get("cells") else []
    return "; ".join(parts)


def terminal(written: dict) -> str:
    """A findings.json as the terminal shows it: the summary table, then one line per finding."""
    records = written.get("findings", [])
    lines = plain(written.get("summary") or EMPTY)
    if records:
        lines += ["findings:"] + [f"  {r['sentence']}" + (f" [{r['figure_text']}]" if shows_figure(r) else "")
                                  for r in records]
    return "\n".join(lines)

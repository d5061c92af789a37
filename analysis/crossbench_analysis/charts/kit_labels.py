"""The chart kit's series: the servers' palettes, the fields a series label may show, the series of a chart's
cells and their colours and dashes per panel."""

from __future__ import annotations

import json
from dataclasses import dataclass

from crossbench import known_servers
from crossbench_analysis.read.runinfo import num, server_rank
from crossbench_analysis.read.setting import setting, setting_order

# Colours: one family of shades per server, so a server looks the same in every chart and five stay apart; each
# plug-in names its own (ServerPlugin.palette: its colour, then a ramp from lighter to darker); a server without
# one gets this.
OTHER_PALETTE = ("#4d4d9f", "#9a9ad0", "#7373b8", "#4d4d9f", "#2f2f6b")


def palette(server) -> tuple[str, ...]:
    """A server's shades, from its facts (Tomcat's warm reds, Tornado's blues, ...)."""
    facts = known_servers.get(server)
    return tuple(facts.palette) if facts and facts.palette else OTHER_PALETTE


LABEL_FIELDS = [  # (field, how it reads in a label); the server's own knobs come between endpoint and processes
    ("endpoint", lambda v: str(v)),
    ("processes", lambda v: f"{v} proc"),
    ("loadgen", lambda v: str(v)),
    ("keepalive", lambda v: "keep-alive" if v else "Connection: close"),
]


def label_fields(server) -> list[tuple]:
    """The fields a server's series labels may show: its knobs (its facts') that say how they read in a label
    (Knob.label, e.g. Tomcat's "maxThreads={}"), in their order, among the shared ones."""
    facts = known_servers.get(server)
    knobs = [(k.name, k.label.format) for k in (facts.knobs if facts else ()) if k.label]
    return [LABEL_FIELDS[0], *knobs, *LABEL_FIELDS[1:]]


@dataclass
class Series:
    label: str
    server: str
    sort: tuple
    color: str = "#444444"
    dash: int = 1


def series_of(cells: list[dict], panel_of) -> tuple[list[Series], dict[str, Series]]:
    """Labels the cells' series: the server, plus each setting that varies among that server's cells within a
    panel (endpoint, executor, maxThreads, ...; the endpoint then for every server), plus the group when
    nothing else tells two cells apart. Series are ordered by server, then by setting in reading order
    ('maxThreads=20' before 'maxThreads=50' before 'virtual', as the maxthreads charts order them, so a setting
    keeps its shade from chart to chart and run to run), then by the run order of their first cell (so the
    experiment's main pairing comes first). Each series gets its server's shade for its rank (shade)."""
    varying: dict = {server: [] for server in {c.get("server") for c in cells}}
    for server in varying:
        for f, show in label_fields(server):
            values: dict = {}
            for c in cells:
                if c.get("server") == server:
                    values.setdefault(panel_of(c), set()).add(json.dumps(c.get(f), sort_keys=True))
            if any(len(v) > 1 for v in values.values()):
                varying[server].append((f, show))
    if any(f == "endpoint" for fields in varying.values() for f, _ in fields):
        for server, fields in varying.items():
            if not any(f == "endpoint" for f, _ in fields):
                fields.insert(0, LABEL_FIELDS[0])

    def label(cell, with_group):
        parts = [str(cell.get("server") or "?")]
        parts += [show(cell.get(f)) for f, show in varying[cell.get("server")] if cell.get(f) is not None]
        if with_group:
            parts.append(f"[{cell.get('group')}]")
        return " ".join(parts)

    seen: dict[tuple, set] = {}
    for c in cells:
        key = (label(c, False), panel_of(c), c.get("concurrency"), c.get("repetition"))
        seen.setdefault(key, set()).add(c.get("group"))
    with_group = any(len(groups) > 1 for groups in seen.values())

    by_label: dict[str, Series] = {}
    of_cell: dict[str, Series] = {}
    for position, c in enumerate(sorted(cells, key=lambda c: num(c.get("index")) or 0)):
        text = label(c, with_group)
        if text not in by_label:
            by_label[text] = Series(text, c.get("server"), (*series_order(c.get("server"), setting(c)), position))
        of_cell[c["cell_id"]] = by_label[text]
    ordered = sorted(by_label.values(), key=lambda s: s.sort)
    for server in {s.server for s in ordered}:
        own = [s for s in ordered if s.server == server]
        for rank, s in enumerate(own):
            s.color, s.dash = shade(server, rank, len(own))
    return ordered, of_cell


def series_order(server, setting_text: str) -> tuple:
    """Where a setting's series goes among a chart's: by server, then the setting in reading order
    ('maxThreads=20' before 'maxThreads=50' before 'virtual'); with shade, each setting keeps its colour."""
    return server_rank(server), str(server), setting_order(setting_text)


def shade(server, rank: int, count: int) -> tuple[str, int]:
    """The shade and dash of a server's rank-th series of `count` (in setting order): a lone series takes the
    palette's first colour (the server's own); several spread evenly along the rest of it, a ramp from lighter to
    darker, so a higher setting reads darker; past the ramp's length they wrap, dashed."""
    shades = palette(server)
    ramp = shades[1:] or shades
    if count <= 1:
        return shades[0], 1
    if count <= len(ramp):
        return ramp[round(rank * (len(ramp) - 1) / (count - 1))], 1
    return ramp[rank % len(ramp)], 1 + rank // len(ramp)


def shades_in_order(servers: list) -> list[tuple[str, int]]:
    """The shade and dash of each of a chart's series, given their servers in the chart's order: each server's
    series take its shades by their rank among that server's (shade)."""
    counts = {server: servers.count(server) for server in servers}
    seen: dict = {}
    styles = []
    for server in servers:
        styles.append(shade(server, seen.get(server, 0), counts[server]))
        seen[server] = seen.get(server, 0) + 1
    return styles


def panel_style(p: int, present: list[Series], keyed: dict) -> dict:
    """Per-panel gnuplot parameters: how many series blocks, their colours and dashes (series_of gave each its
    shade for the whole chart, so a setting looks the same in every panel), and whether the panel shows a key:
    the first does, and any with a series no earlier key showed."""
    show_key = p == 1 or any(keyed.get(s.label) != s.color for s in present)
    if show_key:
        keyed.update({s.label: s.color for s in present})
    return {
        f"nseries_{p}": len(present),
        f"colors_{p}": " ".join(s.color for s in present) or "#000000",
        f"dashes_{p}": " ".join(str(s.dash) for s in present) or "1",
        f"key_{p}": int(show_key),
    }

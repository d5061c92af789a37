"""The one export step: cells.jsonl and samples.csv -> whitespace-separated .dat files in charts/data/, plus
manifest.json saying which gnuplot script draws which chart from which files with which parameters.

Every .dat file opens with comment lines naming its columns. It holds one block per series (gnuplot's
`index N`), blocks separated by two blank lines; each block's first line is the quoted series label followed by
the column names (so `title columnheader(1)` names the line and `column('rps')` finds the column). Every chart
file has the same series blocks in the same order in every panel, so a series keeps its colour across panels; a
series a panel lacks is a block with one row of NaN. NaN marks a value that is not there (a failed cell, a null
figure). The last columns of a cell row are always `valid repetition cell_id`."""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .runinfo import SERVER_ORDER, Run, get, is_failed, is_valid, num

MANIFEST = "manifest.json"

# Colours: one family of shades per server, so a server looks the same in every chart and five stay apart:
# Tomcat warm oranges and reds, Tornado blues, gunicorn greens, uvicorn purples, nginx greys.
PALETTES = {
    "tomcat": ["#d95f02", "#a50f15", "#e6ab02", "#8c510a", "#e7298a", "#fb6a4a", "#bf812d", "#67000d"],
    "tornado": ["#1f78b4", "#4292c6", "#08306b", "#6baed6", "#2171b5", "#9ecae1", "#084594", "#35978f"],
    "gunicorn": ["#1b9e77", "#66a61e", "#00441b", "#41ab5d", "#238b45", "#a1d99b", "#006d2c", "#74c476"],
    "uvicorn": ["#6a3d9a", "#984ea3", "#3f007d", "#9e9ac8", "#54278f", "#bcbddc", "#756bb1", "#dadaeb"],
    "nginx": ["#444444", "#737373", "#000000", "#969696", "#252525", "#bdbdbd", "#525252", "#d9d9d9"],
    None: ["#984ea3", "#999999", "#4d9221", "#444444"],
}


HEADINGS = {"static_rps": "Static files: responses per second", "efficiency": "Efficiency ratio (seed 002)",
            "threads_peak": "Peak thread count", "threads_timeline": "Threads over time (VisualVM view)",
            "latency": "Latency p50 and p99"}


@dataclass
class ChartJob:
    """One chart: gnuplot/<script> draws charts/<name>.png and .svg from data files in charts/data/."""
    name: str
    script: str
    title: str
    caption: str
    params: dict = field(default_factory=dict)
    data_files: list[str] = field(default_factory=list)
    note: str = ""
    heading: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ChartJob":
        return cls(**{k: d[k] for k in ("name", "script", "title", "caption", "params", "data_files", "note", "heading")
                      if k in d})


# ---------------------------------------------------------------------------------------------- formatting

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


def write_blocks(path: Path, description: str, columns: list[str], blocks: list[tuple[str, list[list]]]) -> int:
    """Writes one gnuplot data file; returns the number of data rows written (NaN placeholders excluded)."""
    lines = [f"# crossbench analysis export: {description}",
             f"# columns: {' '.join(columns)}",
             "# one block per series (gnuplot `index N`), blocks separated by two blank lines; a block's first",
             "# line is the series label then the column names. NaN = no value (failed cell or null figure)."]
    written = 0
    for i, (label, rows) in enumerate(blocks):
        if i:
            lines += ["", ""]
        lines.append('"' + label.replace('"', "'") + '"\t' + "\t".join(columns[1:]))
        if not rows:
            rows = [[None] * (len(columns) - 1) + ["-"]]
        else:
            written += len(rows)
        lines += ["\t".join(fmt(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return written


# ---------------------------------------------------------------------------------------------- series, panels

def _setting(cell: dict, name: str):
    value = cell.get(name)
    if name == "max_threads" and cell.get("executor") == "virtual":
        return None  # a virtual-thread executor has no pool size worth telling apart
    return value


LABEL_FIELDS = [  # (field, how it reads in a label)
    ("endpoint", lambda v: str(v)),
    ("executor", lambda v: f"{v} threads"),
    ("max_threads", lambda v: f"maxThreads={v}"),
    ("accept_count", lambda v: f"acceptCount={v}"),
    ("max_connections", lambda v: f"maxConnections={v}"),
    ("processes", lambda v: f"{v} proc"),
    ("loadgen", lambda v: str(v)),
    ("keepalive", lambda v: "keep-alive" if v else "Connection: close"),
]


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
    nothing else tells two cells apart. Series are ordered by server, then by the run order of their first
    cell (so the experiment's main pairing comes first); panel_style colours them."""
    varying: dict = {server: [] for server in {c.get("server") for c in cells}}
    for f, show in LABEL_FIELDS:
        for server in varying:
            values: dict = {}
            for c in cells:
                if c.get("server") == server:
                    values.setdefault(panel_of(c), set()).add(json.dumps(_setting(c, f), sort_keys=True))
            if any(len(v) > 1 for v in values.values()):
                varying[server].append((f, show))
    if any(f == "endpoint" for fields in varying.values() for f, _ in fields):
        for server, fields in varying.items():
            if not any(f == "endpoint" for f, _ in fields):
                fields.insert(0, LABEL_FIELDS[0])

    def label(cell, with_group):
        parts = [str(cell.get("server") or "?")]
        parts += [show(_setting(cell, f)) for f, show in varying[cell.get("server")] if _setting(cell, f) is not None]
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
    for position, c in enumerate(sorted(cells, key=lambda c: (num(c.get("index")) or 0))):
        text = label(c, with_group)
        if text not in by_label:
            by_label[text] = Series(text, c.get("server"), (SERVER_ORDER.get(c.get("server"), 9),
                                                            str(c.get("server")), position))
        of_cell[c["cell_id"]] = by_label[text]
    return sorted(by_label.values(), key=lambda s: s.sort), of_cell


def panel_style(p: int, present: list[Series], keyed: dict) -> dict:
    """Per-panel gnuplot parameters: how many series blocks, their colours and dashes, and whether the panel
    shows a key. Colours go by rank within the panel: a server's first series takes its palette's first shade
    (Tomcat orange, Tornado blue), its k-th series the k-th shade. A panel shows a key when it is the first,
    or has a series no earlier key showed, or one whose colour differs from an earlier key's."""
    counters: dict = {}
    for s in present:
        palette_key = s.server if s.server in PALETTES else None
        k = counters.get(palette_key, 0)
        counters[palette_key] = k + 1
        palette = PALETTES[palette_key]
        s.color, s.dash = palette[k % len(palette)], 1 + k // len(palette)
    show_key = p == 1 or any(keyed.get(s.label) != s.color for s in present)
    if show_key:
        keyed.update({s.label: s.color for s in present})
    return {f"nseries_{p}": len(present), f"colors_{p}": " ".join(s.color for s in present) or "#000000",
            f"dashes_{p}": " ".join(str(s.dash) for s in present) or "1", f"key_{p}": int(show_key)}


def is_delay(cell: dict) -> bool:
    return (num(cell.get("delay_ms")) or 0) > 0


def panel_key(cell: dict) -> str:
    if is_delay(cell):
        return f"d{int(num(cell.get('delay_ms')))}"
    return re.sub(r"[^A-Za-z0-9_-]+", "_", str(cell.get("group") or "cells"))


def panel_order(cells: list[dict]) -> list[tuple[str, str]]:
    """[(key, title)]: groups without a delay first, then the delays in ascending order."""
    panels = {}
    for c in cells:
        key = panel_key(c)
        if key in panels:
            continue
        if is_delay(c):
            panels[key] = ((1, num(c.get("delay_ms")), ""), f"delay {num(c.get('delay_ms')) / 1000:g} s")
        else:
            endpoints = sorted({str(x.get("endpoint")) for x in cells if panel_key(x) == key})
            title = str(c.get("group") or key)
            if len(endpoints) == 1:
                title += f" ({endpoints[0]})"
            panels[key] = ((0, 0, title), title)
    return [(k, t) for k, (_, t) in sorted(panels.items(), key=lambda kv: kv[1][0])]


def count(cells: list[dict], *figures: str) -> int:
    """How many cells have a concurrency and a value for any of the figures: drawable points. A panel with
    none gets a notice instead of a plot."""
    return sum(1 for c in cells if num(c.get("concurrency")) is not None
               and any(num(get(c, f)) is not None for f in figures))


def _tail(cell: dict) -> list:
    return [is_valid(cell), cell.get("repetition"), cell["cell_id"]]


def _by_c(cells):
    return sorted(cells, key=lambda c: (num(c.get("concurrency")) or 0, num(c.get("repetition")) or 0))


# ---------------------------------------------------------------------------------------------- export

class Exporter:
    def __init__(self, run: Run, data_dir: Path):
        self.run = run
        self.data_dir = data_dir

    # helpers --------------------------------------------------------------------------------------------
    def how(self, cells: list[dict]) -> str:
        """'wrk, keep-alive, 60 s per cell' from whatever the cells agree on."""
        parts = []
        loadgens = {c.get("loadgen") for c in cells if c.get("loadgen")}
        if len(loadgens) == 1:
            parts.append(str(loadgens.pop()))
        keepalive = {c.get("keepalive") for c in cells if c.get("keepalive") is not None}
        if len(keepalive) == 1:
            parts.append("keep-alive" if keepalive.pop() else "Connection: close")
        durations = {num(c.get("duration_s")) for c in cells if num(c.get("duration_s"))}
        if len(durations) == 1:
            parts.append(f"{durations.pop():g} s per cell")
        return ", ".join(parts)

    @staticmethod
    def missing_note(cells: list[dict], *figures: str) -> str:
        """Which cells a chart cannot draw (no value for any of its figures), so none goes missing silently."""
        lost = [c for c in cells if num(c.get("concurrency")) is None or all(num(get(c, f)) is None for f in figures)]
        if not lost:
            return ""
        failed = sum(1 for c in lost if is_failed(c))
        ids = ", ".join(c["cell_id"] for c in lost[:3]) + (", ..." if len(lost) > 3 else "")
        kind = f"{failed} failed, " if failed else ""
        return f"not drawable (no value): {len(lost)} cell(s) ({kind}see report table): {ids}"

    def panel_files(self, chart: str, cells: list[dict], columns: list[str], row_of, figures: tuple,
                    extra=None) -> tuple[dict, list[str]]:
        """One data file per panel (group or delay) holding the blocks of the series present there."""
        series, of_cell = series_of(cells, panel_key)
        panels = panel_order(cells)
        params: dict = {"panels": len(panels)}
        files, keyed = [], {}
        for p, (key, title) in enumerate(panels, 1):
            here = [c for c in cells if panel_key(c) == key]
            present = [s for s in series if any(of_cell[c["cell_id"]] is s for c in here)]
            name = f"{chart}_{key}.dat" if len(panels) > 1 else f"{chart}.dat"
            blocks = [(s.label, [row_of(c) + _tail(c) for c in _by_c(here) if of_cell[c["cell_id"]] is s])
                      for s in present]
            write_blocks(self.data_dir / name, f"{chart}, panel '{title}' (run {self.run.run_id})", columns, blocks)
            files.append(name)
            params.update({f"file_{p}": name, f"title_{p}": title, **panel_style(p, present, keyed),
                           f"values_{p}": count(here, *figures)})
            if extra:
                params.update({f"{k}_{p}": v for k, v in extra(here).items()})
        return params, files

    @staticmethod
    def flagged(cells, *figures) -> int:
        """Flagged cells the chart can draw (a failed cell without figures is in the note instead)."""
        return sum(1 for c in cells if not is_valid(c) and any(num(get(c, f)) is not None for f in figures))

    @staticmethod
    def max_threads_of(cells) -> dict:
        values = sorted({int(num(c.get("max_threads"))) for c in cells
                         if c.get("executor") == "platform" and num(c.get("max_threads"))})
        return {"maxthreads": " ".join(str(v) for v in values)}

    # charts ---------------------------------------------------------------------------------------------
    def static_rps(self, cells) -> ChartJob | None:
        cells = [c for c in cells if str(c.get("endpoint") or "").startswith("/static") and not is_delay(c)]
        if not cells:
            return None
        params, files = self.panel_files(
            "static_rps", cells, ["concurrency", "rps", "rps_steady", "bytes_per_s", "valid", "repetition", "cell_id"],
            lambda c: [c.get("concurrency"), num(c.get("rps")), num(c.get("rps_steady")), num(c.get("bytes_per_s"))],
            ("rps",))
        params["nflagged"] = self.flagged(cells, "rps")
        return ChartJob("static_rps", "static_rps.gp",
                        f"Static files: responses per second vs concurrent clients ({self.how(cells)})",
                        "Responses per second over the measured window (requests / window, the seed's definition) "
                        "for the random static mix, one line per server (the mean of repetitions), against the "
                        "number of concurrent clients. Seed 002's first figure.",
                        params, files, self.missing_note(cells, "rps"))

    def efficiency(self, cells) -> ChartJob | None:
        cells = [c for c in cells if is_delay(c)]
        if not cells:
            return None
        params, files = self.panel_files(
            "efficiency", cells, ["concurrency", "efficiency_ratio", "latency_ratio", "valid", "repetition",
                                  "cell_id"],
            lambda c: [c.get("concurrency"), num(c.get("efficiency_ratio")), num(c.get("latency_ratio"))],
            ("efficiency_ratio", "latency_ratio"))
        params["nflagged"] = self.flagged(cells, "efficiency_ratio")
        return ChartJob("efficiency", "efficiency.gp",
                        f"Efficiency ratio (C / rps) / delay vs concurrent clients ({self.how(cells)})",
                        "Seed 002's efficiency ratio, (concurrency / responses per second) / delay: 1.0 (dashed "
                        "black) means every client waited only the delay; above 1 the server added waiting of its "
                        "own. Solid: the ratio from rps; thin dashed: mean latency / delay, the same idea measured "
                        "directly (the two disagree when the window is short against the delay). One panel per "
                        "delay.",
                        params, files, self.missing_note(cells, "efficiency_ratio", "latency_ratio"))

    def latency(self, cells) -> ChartJob | None:
        if not cells:
            return None
        params, files = self.panel_files(
            "latency", cells, ["concurrency", "p50_ms", "p99_ms", "mean_ms", "max_ms", "valid", "repetition", "cell_id"],
            lambda c: [c.get("concurrency"), num(get(c, "latency_ms.p50")), num(get(c, "latency_ms.p99")),
                       num(get(c, "latency_ms.mean")), num(get(c, "latency_ms.max"))],
            ("latency_ms.p50", "latency_ms.p99"))
        params["nflagged"] = self.flagged(cells, "latency_ms.p50", "latency_ms.p99")
        return ChartJob("latency", "latency.gp",
                        f"Latency p50 and p99 vs concurrent clients ({self.how(cells)})",
                        "Per-request latency reported by the load generator: median (p50, solid, circles) and "
                        "99th percentile (p99, dashed, squares), log scale, one panel per group or delay.",
                        params, files, self.missing_note(cells, "latency_ms.p50", "latency_ms.p99"))

    def threads_peak(self, cells) -> ChartJob | None:
        cells = [c for c in cells if is_delay(c)]
        if not cells:
            return None
        params, files = self.panel_files(
            "threads_peak", cells, ["concurrency", "threads_peak", "threads_mean", "pool_busy_peak", "valid",
                                    "repetition", "cell_id"],
            lambda c: [c.get("concurrency"), num(c.get("threads_peak")), num(c.get("threads_mean")),
                       num(c.get("pool_busy_peak"))],
            ("threads_peak",), extra=self.max_threads_of)
        params["nflagged"] = self.flagged(cells, "threads_peak")
        return ChartJob("threads_peak", "threads_peak.gp",
                        "Server threads: peak thread count in the measured window vs concurrent clients",
                        "The most threads the server process tree had at once while measured (all threads, JVM "
                        "housekeeping included), one panel per delay. Dotted grey: Tomcat's maxThreads; a "
                        "thread-per-request server stops just above it (seed 002 saw about 220 for 200), an "
                        "event loop stays flat.",
                        params, files, self.missing_note(cells, "threads_peak"))

    def threads_timeline(self, cells) -> ChartJob | None:
        cells = [c for c in cells if is_delay(c)]
        series, of_cell = series_of(cells, panel_key)
        # per delay and series: the highest-concurrency cell that has samples (its lowest repetition)
        chosen, samples = [], {}
        for key, _ in panel_order(cells):
            for s in series:
                mine = [c for c in cells if panel_key(c) == key and of_cell[c["cell_id"]] is s]
                for c in mine:
                    samples[c["cell_id"]] = self.run.samples(c)
                mine = [c for c in mine if samples[c["cell_id"]]]
                if mine:
                    chosen.append(max(mine, key=lambda c: (num(c.get("concurrency")) or 0,
                                                           -(num(c.get("repetition")) or 0))))
        if not chosen:
            return None
        columns = ["t_s", "threads", "pool_busy", "pool_current", "concurrency", "valid", "phase", "cell_id"]
        panels = panel_order(chosen)
        params: dict = {"panels": len(panels), "nflagged": self.flagged(chosen, "threads_peak", "rps")}
        files, keyed = [], {}
        for p, (key, title) in enumerate(panels, 1):
            here = [c for c in chosen if panel_key(c) == key]
            present = [s for s in series if any(of_cell[c["cell_id"]] is s for c in here)]
            blocks = []
            for s in present:
                c = next(c for c in here if of_cell[c["cell_id"]] is s)
                rows = samples[c["cell_id"]]
                measure = [r for r in rows if r.get("phase") == "measure"]
                t0 = (measure or rows)[0]["t_epoch"]
                blocks.append((f"{s.label}, C={c.get('concurrency')}" + ("" if is_valid(c) else " (flagged)"),
                               [[r["t_epoch"] - t0, r.get("threads"), r.get("pool_busy"), r.get("pool_current"),
                                 c.get("concurrency"), is_valid(c), r.get("phase") or "-", c["cell_id"]]
                                for r in rows]))
            name = f"threads_timeline_{key}.dat" if len(panels) > 1 else "threads_timeline.dat"
            write_blocks(self.data_dir / name, f"threads_timeline, panel '{title}' (run {self.run.run_id}); "
                         "t_s = seconds from the first sample of the measured window", columns, blocks)
            files.append(name)
            params.update({f"file_{p}": name, f"title_{p}": title, **panel_style(p, present, keyed),
                           f"values_{p}": sum(1 for _, rows in blocks for r in rows if num(r[1]) is not None),
                           **{f"{k}_{p}": v for k, v in self.max_threads_of(here).items()}})
        lost = [c for c in cells if c not in chosen and not samples.get(c["cell_id"])
                and num(c.get("concurrency")) == max(num(x.get("concurrency")) or 0 for x in cells)]
        note = (f"no samples.csv: {', '.join(c['cell_id'] for c in lost[:3])}" if lost else "")
        return ChartJob("threads_timeline", "threads_timeline.gp",
                        "Server threads over time at each server's highest concurrency (t = 0: measured window starts)",
                        "The server's thread count from samples.csv (4 a second) in each series' highest-"
                        "concurrency cell per delay: the VisualVM picture of seed 002. Thin lines: Tomcat's "
                        "connector pool busy threads where the JVM probe captured them. Dotted grey: maxThreads.",
                        params, files, note)

    def resources(self, cells) -> list[ChartJob]:
        jobs = []
        for key, title in panel_order(cells):
            here = [c for c in cells if panel_key(c) == key]
            series, of_cell = series_of(here, panel_key)
            name = f"resources_{key}"
            write_blocks(self.data_dir / f"{name}.dat", f"resources, '{title}' (run {self.run.run_id})",
                         ["concurrency", "cpu_percent", "loadgen_cpu_percent", "rss_peak_mb", "threads_peak",
                          "valid", "repetition", "cell_id"],
                         [(s.label, [[c.get("concurrency"), num(c.get("cpu_percent")),
                                      num(c.get("loadgen_cpu_percent")), num(c.get("rss_peak_mb")),
                                      num(c.get("threads_peak"))] + _tail(c)
                                     for c in _by_c(here) if of_cell[c["cell_id"]] is s]) for s in series])
            files = [f"{name}.dat"]
            params: dict = {"panels": 1, "file_1": f"{name}.dat", "title_1": title,
                            **panel_style(1, series, {}), "ncoreblocks": 0,
                            "nflagged": self.flagged(here, "cpu_percent", "rss_peak_mb"),
                            "values_cpu": count(here, "cpu_percent", "loadgen_cpu_percent"),
                            "values_rss": count(here, "rss_peak_mb"), "values_threads": count(here, "threads_peak"),
                            "values_cores": sum(1 for c in here for v in (c.get("cpu_per_core") or {}).values()
                                                if num(v) is not None and num(c.get("concurrency")) is not None)}
            cores = sorted({str(k) for c in here for k in (c.get("cpu_per_core") or {})},
                           key=lambda k: (num(k) is None, num(k) or 0, k))
            if cores:
                blocks, colors, dashes = [], [], []
                for s in series:
                    mine = [c for c in _by_c(here) if of_cell[c["cell_id"]] is s]
                    for i, core in enumerate(cores):
                        roles = sorted({role for c in mine for role, cpus in (("server", "server_cpus"),
                                                                               ("load generator", "loadgen_cpus"))
                                        if num(core) in [num(x) for x in c.get(cpus) or []]})
                        blocks.append((f"{s.label}: core {core}" + (f" ({', '.join(roles)})" if roles else ""),
                                       [[c.get("concurrency"), num((c.get("cpu_per_core") or {}).get(core))]
                                        + _tail(c) for c in mine]))
                        colors.append(s.color)
                        dashes.append(str(1 + i % 5))
                write_blocks(self.data_dir / f"{name}_cores.dat", f"resources per core, '{title}' "
                             f"(run {self.run.run_id}); system-wide CPU of each core, 100 = the whole core",
                             ["concurrency", "core_cpu_percent", "valid", "repetition", "cell_id"], blocks)
                files.append(f"{name}_cores.dat")
                params.update({"corefile": f"{name}_cores.dat", "ncoreblocks": len(blocks),
                               "corecolors": " ".join(colors), "coredashes": " ".join(dashes)})
            jobs.append(ChartJob(
                name, "resources.gp",
                f"Resources, {title}: server CPU, CPU per core, memory and threads vs concurrent clients",
                f"{title}: mean CPU of the server's process tree over the window (100 = one core; dashed: the "
                "load generator's), the system-wide CPU of each core (solid and dashed lines: the cores, named "
                "with their role), the server's peak resident memory and its peak thread count.",
                params, files, self.missing_note(here, "cpu_percent", "rss_peak_mb"), f"Resources: {title}"))
        return jobs

    def all(self) -> list[ChartJob]:
        cells = self.run.cells
        jobs = [self.static_rps(cells), self.efficiency(cells), self.threads_peak(cells),
                self.threads_timeline(cells), self.latency(cells)]
        jobs = [j for j in jobs if j is not None]
        for job in jobs:
            job.heading = HEADINGS[job.name]
        from . import maxthreads   # here, not at the top: maxthreads builds on this module
        for job in maxthreads.jobs(self):
            job.heading = maxthreads.HEADINGS[job.name]
            jobs.append(job)
        from . import hold   # here, not at the top: hold builds on this module
        for job in hold.hold_jobs(self.run, self.data_dir):
            job.heading = hold.HEADINGS[job.name]
            jobs.append(job)
        from . import seeds   # here, not at the top: seeds builds on this module
        for job in seeds.seed_jobs(self.run, self.data_dir):
            job.heading = seeds.HEADINGS[job.name]
            jobs.append(job)
        return jobs + self.resources(cells)


def export(run: Run, charts_dir: Path) -> list[ChartJob]:
    """Writes charts/data/*.dat and charts/data/manifest.json; returns the chart jobs."""
    data_dir = charts_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.glob("*.dat"):
        old.unlink()
    jobs = Exporter(run, data_dir).all()
    write_manifest(data_dir, run, jobs)
    return jobs


def write_manifest(data_dir: Path, run: Run, jobs: list[ChartJob]) -> None:
    manifest = {"run_id": run.run_id, "footer": run.footer(), "charts": [j.to_dict() for j in jobs]}
    (data_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def read_manifest(data_dir: Path) -> tuple[str, list[ChartJob]]:
    manifest = json.loads((data_dir / MANIFEST).read_text())
    return manifest["footer"], [ChartJob.from_dict(d) for d in manifest["charts"]]

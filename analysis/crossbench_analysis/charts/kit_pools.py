"""The chart kit's pool settings: which of a run's cells the maxthreads charts read (a connector pool setting of
Tomcat's, its blocking delay sweep, the groups driven beyond the connector's queues), each setting's label and
order, and its palette. The maxthreads findings and the advice read the sweep through the same functions, so
charts, findings and advice rest on the same cells."""

from __future__ import annotations

from collections import defaultdict

from crossbench_analysis.judge import knees as knee_finder
from crossbench_analysis.read.runinfo import num
from crossbench_analysis.read.setting import pool_size, setting_order, sweeps_pool

from .kit_labels import shades_in_order


def setting(cell: dict, with_jdk: bool = False) -> str:
    """'tomcat maxThreads=50' or 'tomcat virtual' (the record's setting); with ', JDK 25' when the run set JDKs
    against each other."""
    return knee_finder.setting_label(cell, with_jdk)


def setting_sort(cell: dict, with_jdk: bool = False) -> tuple:
    return setting_order(setting(cell, with_jdk))


def tomcat_ok(cells: list[dict]) -> list[dict]:
    """The cells with a connector pool setting (Tomcat's executor): what this experiment sweeps."""
    return [c for c in cells if sweeps_pool(c) and c.get("status") == "ok"]


def beyond_queues(cell: dict) -> bool:
    """More clients than the connector takes in: maxConnections, or maxThreads + acceptCount (platform)."""
    c = num(cell.get("concurrency")) or 0
    limits = [num(cell.get("max_connections"))]
    if num(pool_size(cell)) and num(cell.get("accept_count")):
        limits.append(num(pool_size(cell)) + num(cell["accept_count"]))
    return any(limit and c > limit for limit in limits)


def queue_groups(cells: list[dict]) -> set[str]:
    """Groups of delay cells driven beyond the queues: charted apart, left out of the sweep's charts."""
    return {c.get("group") for c in tomcat_ok(cells) if num(c.get("delay_ms")) and beyond_queues(c)}


def sweep_cells(cells: list[dict]) -> list[dict]:
    """The sweep: Tomcat's blocking delay cells (a thread held per request) outside the queue-limit groups."""
    queues = queue_groups(cells)
    return [
        c
        for c in tomcat_ok(cells)
        if c.get("endpoint") == "/delay/sync" and num(c.get("delay_ms")) and c.get("group") not in queues
    ]


def colors(n: int, cells: list[dict]) -> str:
    """n shades of the swept server's palette."""
    return " ".join(color for color, _ in shades_in_order([cells[0].get("server") if cells else None] * n))


def by_setting(cells: list[dict]) -> list[tuple[str, list[dict]]]:
    grouped: dict[str, list[dict]] = defaultdict(list)
    with_jdk = knee_finder.jdks_vary(cells)
    for c in sorted(cells, key=lambda c: (setting_sort(c, with_jdk), num(c.get("concurrency")) or 0)):
        grouped[setting(c, with_jdk)].append(c)
    return list(grouped.items())

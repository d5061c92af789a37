"""A record's server setting: the variant in words as its server plug-in wrote it (the record's `setting`, e.g.
'tomcat maxThreads=200', 'tomcat virtual', 'gunicorn 2 sync workers'), the order settings read in, and the one
knob the maxthreads family does arithmetic with (the connector pool it sweeps). Labels and series names come
from here, never from a server's knob fields; a point in words (label_of, where_of) too."""

from __future__ import annotations

import re

from crossbench import known_servers
from crossbench.endpoints import is_static

# The maxthreads family's swept variable: Tomcat's connector pool (platform threads) or virtual threads (none).
POOL_KNOB, EXECUTOR_KNOB, POOLED = "max_threads", "executor", "platform"


def setting(record: dict) -> str:
    """The record's `setting`; a record older than the field (schema 1, which knew Tomcat and Tornado alone) gets
    the words their plug-ins gave such a record then, an unknown server its name."""
    if record.get("setting"):
        return str(record["setting"])
    server = str(record.get("server") or "?")
    if server == "tomcat":
        pool = "virtual" if record.get(EXECUTOR_KNOB) == "virtual" else f"maxThreads={record.get(POOL_KNOB)}"
        return f"tomcat {pool}"
    processes = record.get("processes") or 1
    return f"tornado p{processes}" if server == "tornado" and processes != 1 else server


def setting_order(text: str) -> tuple:
    """Reading order of settings: numbers by value ('maxThreads=20' before 'maxThreads=200'), the rest by text."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text))


def sweeps_pool(record: dict) -> bool:
    """A cell of a server whose setting is a pool of threads or virtual threads (what maxthreads sweeps): Tomcat's
    executor, or a declared server's pool knob for its endpoint."""
    return record.get(EXECUTOR_KNOB) is not None or declared_pool(record) is not None


def pool_size(record: dict):
    """The pool's size (Tomcat's maxThreads, a declared server's pool knob), None without a pool (virtual threads,
    the other built-in servers)."""
    if record.get(EXECUTOR_KNOB) is not None:
        return record.get(POOL_KNOB) if record.get(EXECUTOR_KNOB) == POOLED else None
    return declared_pool(record)


def workers_at_once(record: dict) -> int | None:
    """How many requests gunicorn's WSGI workers serve at once, which caps any of its requests as a pool does: a
    sync worker one, a gthread worker one a thread; None for an event loop's worker or a record without workers."""
    workers, worker_class = record.get("workers"), record.get("worker_class")
    if not workers or worker_class not in ("sync", "gthread"):
        return None
    return workers * ((record.get("threads") or 1) if worker_class == "gthread" else 1)


def declared_pool(record: dict):
    """The value of the knob a declared server's `parallel` names for the record's endpoint; None otherwise."""
    facts = known_servers.get(record.get("server"))
    knob = facts.pools.get(str(record.get("endpoint"))) if facts else None
    return record.get(knob) if knob else None


def fixed_knobs(record: dict) -> list[str]:
    """The record's knobs its setting leaves out, as its server labels them (Knob.label: Tomcat's
    'acceptCount=100', 'maxConnections=8192'): what a chart of connector limits adds to a setting."""
    facts = known_servers.get(record.get("server"))
    return [k.label.format(record.get(k.name)) for k in (facts.knobs if facts else ()) if k.label and not k.sweep]


def label_of(point: dict) -> str:
    """The point in words: its setting, endpoint, delay, concurrency and offered rate."""
    return f"{point.get('setting') or point.get('server')} {where_of(point)}"


def where_of(point: dict) -> str:
    """The point's load in words, its server left out: endpoint, delay, concurrency and offered rate."""
    endpoint = str(point.get("endpoint") or "")
    parts = ["static" if is_static(endpoint) else endpoint.rstrip("/").split("/")[-1] or str(point.get("group"))]
    if point.get("delay_ms"):
        parts.append(f"{point['delay_ms'] / 1000:g}s")
    parts.append(f"C{point.get('concurrency')}")
    if point.get("rate_share") is not None:
        parts.append(f"{100 * point['rate_share']:g}% of peak")
    elif point.get("rate") is not None:
        parts.append(f"{point['rate']:g} req/s")
    return " ".join(parts)

"""The JVM probe's JSON lines read: the http connector pool's reading, a recorded probe's pool lines and counts
(connections, the webapp's database pool), and lines moved by a host's clock offset."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class PoolReading:
    t_epoch: float
    name: str | None  # connector pool name, e.g. "http-nio-8080"
    current: int | None  # threads in the pool (None when unknown, e.g. virtual threads)
    busy: int | None  # threads serving a request
    max: int | None
    connections: int | None
    jvm_threads: int | None  # java.lang:type=Threading ThreadCount (Java-visible threads)
    jvm_threads_peak: int | None
    raw: dict = field(default_factory=dict, repr=False, compare=False)


def _known(v) -> int | None:
    """Tomcat reports -1 for what it cannot tell (e.g. a virtual-thread executor)."""
    if v is None or not isinstance(v, (int, float)) or v < 0:
        return None
    return int(v)


def pick_pool(line: dict, match: str = "http") -> PoolReading | None:
    """The connector pool whose name contains `match` (first by name) from a pool line."""
    pools = [
        p
        for p in line.get("pools", [])
        if p.get("kind", "connector") == "connector" and match.lower() in str(p.get("name", "")).lower()
    ]
    if not pools:
        return None
    return reading_of(line, sorted(pools, key=lambda p: str(p.get("name")))[0])


def reading_of(line: dict, p: dict) -> PoolReading:
    """One pool or executor entry of a pool line as a reading, with the line's JVM thread counts."""
    return PoolReading(
        t_epoch=float(line["t_epoch"]),
        name=p.get("name"),
        current=_known(p.get("current")),
        busy=_known(p.get("busy")),
        max=_known(p.get("max")),
        connections=_known(p.get("connections")),
        jvm_threads=_known(line.get("jvm_threads")),
        jvm_threads_peak=_known(line.get("jvm_threads_peak")),
        raw=p,
    )


def pick_pool_or_executor(line: dict, match: str = "http") -> PoolReading | None:
    """The connector pool pick_pool reads where it knows its size; else the Executor MBean named like `match`, or
    the only one: a connector on a shared executor reports -1 for its threads, which the executor holds."""
    connector = pick_pool(line, match)
    if connector is not None and connector.max is not None:
        return connector
    executors = [p for p in line.get("pools", []) if p.get("kind") == "executor"]
    named = [p for p in executors if match.lower() in str(p.get("name", "")).lower()]
    chosen = named or (executors if len(executors) == 1 else [])
    if not chosen:
        return connector
    return reading_of(line, sorted(chosen, key=lambda p: str(p.get("name")))[0])


def pool_lines(probe_jsonl: Path) -> list[dict]:
    """The {"type": "pool"} lines of a probe's raw output; lines cut short or not JSON are skipped."""
    try:
        lines = Path(probe_jsonl).read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "pool":
            found.append(obj)
    return found


def connection_counts(probe_jsonl: Path) -> list[tuple[float, int]]:
    """(t_epoch, the http connector's connectionCount) from a probe's raw lines; [] when there are none."""
    counts = []
    for obj in pool_lines(probe_jsonl):
        try:
            reading = pick_pool(obj)
        except (ValueError, KeyError, AttributeError):
            continue
        if reading and reading.connections is not None:
            counts.append((reading.t_epoch, reading.connections))
    return counts


def db_pool_counts(probe_jsonl: Path) -> list[tuple[float, int | None, int | None, int | None]]:
    """(t_epoch, active, waiting, total) of the webapp's HikariCP pool (its MBean) from a probe's raw lines:
    connections in use, requests waiting for one, connections open; [] when the JVM has no such pool."""
    return [
        (float(obj["t_epoch"]), _known(pool.get("active")), _known(pool.get("waiting")), _known(pool.get("total")))
        for obj in pool_lines(probe_jsonl)
        for pool in obj.get("db_pools") or []
    ]


class ShiftedLines:
    """The probe's JSON lines with t_epoch moved by -offset (a line that is not JSON passes unchanged)."""

    def __init__(self, lines, offset_s: float):
        self.lines, self.offset_s = lines, offset_s

    def __iter__(self):
        for line in self.lines:
            yield shifted(line, self.offset_s)

    def close(self) -> None:
        self.lines.close()


def shifted(line: str, offset_s: float) -> str:
    if not offset_s:
        return line
    try:
        obj = json.loads(line)
    except ValueError:
        return line
    if isinstance(obj, dict) and isinstance(obj.get("t_epoch"), (int, float)):
        obj["t_epoch"] -= offset_s
        return json.dumps(obj) + "\n"
    return line

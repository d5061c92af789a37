"""Reading a run directory: metadata.json, cells.jsonl and the per-cell samples.csv series.

Tolerant by design: a failed cell may carry nulls almost everywhere, a field may be missing in an older or newer
record, and a crash may have cut the last line of cells.jsonl short. Nothing here raises on a null; the charts and
the report decide what to do with a missing value."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from crossbench import endpoints, kinds, known_servers, workload
from crossbench.declared_schema import DeclarationError
from crossbench.figures import points, service_time
from crossbench.record.record import SCHEMA_VERSION, upgrade

from .setting import setting, setting_order

SUPPORTED_SCHEMA = SCHEMA_VERSION  # the runner's own; older records are read through record.upgrade


class AnalysisError(RuntimeError):
    """Something the analysis cannot work around (not a run directory, gnuplot missing, a chart failed)."""


offered_rate = kinds.offered_rate  # a cell drawn against the rate it was offered, not against concurrency
by_default_driver = kinds.by_default_kind  # a cell of the closed-loop concurrency sweep: what the sweep findings read


def server_rank(server) -> int:
    """Where a server stands in legends and tables: its place among the known servers, unknown ones last."""
    return known_servers.rank(server)


def num(value) -> float | None:
    """A finite float, or None for null, missing, non-numeric, NaN and infinities."""
    if value is None or isinstance(value, bool):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def get(cell: dict, dotted: str):
    """cell["latency_ms"]["p99"] as get(cell, "latency_ms.p99"); None wherever a level is missing or null."""
    value = cell
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def is_valid(cell: dict) -> bool:
    valid = cell.get("valid")
    if isinstance(valid, bool):
        return valid
    return cell.get("status") == "ok" and not cell.get("flags")


def is_failed(cell: dict) -> bool:
    return cell.get("status") not in (None, "ok")


def sort_key(cell: dict, group_rank: dict | None = None):
    """Reading order: group (in the run's order), delay, server, endpoint, settings, concurrency, repetition."""
    return (
        (group_rank or {}).get(cell.get("group"), 0),
        str(cell.get("group") or ""),
        num(cell.get("delay_ms")) or 0,
        server_rank(cell.get("server")),
        str(cell.get("server") or ""),
        str(cell.get("endpoint") or ""),
        setting_order(setting(cell)),
        num(cell.get("concurrency")) or 0,
        num(cell.get("repetition")) or 0,
        str(cell.get("cell_id") or ""),
    )


@dataclass
class Run:
    path: Path
    metadata: dict
    cells: list[dict]
    warnings: list[str] = field(default_factory=list)

    @cached_property
    def cell_by_id(self) -> dict[str, dict]:
        """The run's records by cell_id (built once: compare reads it for every point and figure)."""
        return {c.get("cell_id"): c for c in self.cells}

    @property
    def run_id(self) -> str:
        return str(self.metadata.get("run_id") or self.path.name)

    @property
    def experiment(self) -> str | None:
        experiment = self.metadata.get("experiment")
        if experiment:
            return str(experiment)
        names = {c.get("experiment") for c in self.cells if c.get("experiment")}
        return names.pop() if len(names) == 1 else None

    @property
    def precision(self) -> float | None:
        """The run's precision target, None when it had none."""
        config = self.metadata.get("config") if isinstance(self.metadata.get("config"), dict) else {}
        return num((config.get("run") or {}).get("precision")) or None

    @property
    def launch_rule(self) -> points.LaunchRule:
        """How the run set its points' launch counts (the precision target or fixed in advance), which picks the
        estimator of every figure read from its launches (crossbench.figures.points.LaunchRule)."""
        return points.LaunchRule.of(self.precision)

    @property
    def machine(self) -> dict:
        machine = self.metadata.get("machine")
        return machine if isinstance(machine, dict) else {}

    @property
    def machine_name(self) -> str:
        """The run's machine as the per-machine spreads name one ('AMD EPYC, 2 cores'): compare's noise floor,
        a capacity search's run-to-run spread."""
        return f"{self.machine.get('cpu_model')}, {self.machine.get('cores')} cores"

    @property
    def core_speed_cv(self) -> float | None:
        """How much the cores' speed varied before the run (metadata noise_floor.core_speed: the largest
        coefficient of variation over the cores, percent); None for runs that did not measure it."""
        speed = (self.metadata.get("noise_floor") or {}).get("core_speed") or {}
        return num(speed.get("cv_percent")) if isinstance(speed, dict) else None

    @property
    def date(self) -> str:
        started = str(self.metadata.get("started_at") or "")
        return started[:10] if started else "date unknown"

    def machine_line(self) -> str:
        m = self.machine
        parts = [str(m.get("cpu_model") or "CPU unknown")]
        if m.get("cores"):
            parts.append(f"{m['cores']} cores")
        if num(m.get("memory_gb")):
            parts.append(f"{num(m['memory_gb']):.0f} GB")
        return ", ".join(parts)

    def footer(self) -> str:
        """The line under every chart: which run, on what machine, when."""
        text = f"run {self.run_id} | {self.machine_line()} | {self.date}"
        revision = self.metadata.get("git_revision")
        if revision:
            text += f" | git {str(revision)[:12]}"
        return text

    def samples(self, cell: dict) -> list[dict]:
        """The cell's samples.csv rows with numbers parsed (empty -> None); [] when there is none."""
        return self.table(cell.get("series") or f"cells/{cell.get('cell_id')}/samples.csv")

    def cell_table(self, cell: dict, name: str) -> list[dict]:
        """A CSV file of the cell's directory (db-pool.csv, db-samples.csv...) as rows, [] when there is none."""
        return self.table(f"cells/{cell.get('cell_id')}/{name}")

    def table(self, relative: str) -> list[dict]:
        """A sampler's CSV under the run directory: numbers parsed (empty -> None, `phase` kept as text), rows
        without a t_epoch skipped; [] when the file is missing, with a warning when it is unreadable."""
        path = self.path / relative
        if not path.is_file():
            return []
        rows = []
        try:
            with open(path, newline="") as f:
                for raw in csv.DictReader(f):
                    row = {k: (v if k == "phase" else num(v)) for k, v in raw.items() if k is not None}
                    if row.get("t_epoch") is not None:
                        rows.append(row)
        except (OSError, csv.Error, UnicodeDecodeError) as e:
            self.warnings.append(f"{path}: unreadable ({e})")
            return []
        return rows


def declare_recorded(metadata: dict, metadata_file: Path) -> list[str]:
    """Registers what a run's records name beyond the built-in servers and endpoints: its declared servers, by name
    like the built-in ones (their knobs, their labels; their paths need not exist where the run is read), and its
    user's requests (--path, a workload file), whose ratios the points take against their C=1 service time.
    Returns the warnings."""
    endpoints.declare_user(workload.user_endpoints((metadata.get("config") or {}).get("run") or {}))
    try:
        known_servers.declare_recorded(metadata.get("config") or {}, str(metadata_file))
    except DeclarationError as e:
        return [f"its declared servers unreadable ({e}); their records read without their knobs"]
    return []


def load_run(path: Path) -> Run:
    path = Path(path)
    cells_file = path / "cells.jsonl"
    if not cells_file.is_file():
        raise AnalysisError(f"{path} is not a crossbench run directory: no cells.jsonl")
    warnings: list[str] = []
    metadata: dict = {}
    metadata_file = path / "metadata.json"
    if metadata_file.is_file():
        try:
            metadata = json.loads(metadata_file.read_text())
        except json.JSONDecodeError as e:
            warnings.append(f"metadata.json unreadable ({e}); charts carry no machine line")
    else:
        warnings.append("no metadata.json; charts carry no machine line")
    warnings += declare_recorded(metadata, metadata_file)
    cells = []
    for number, line in enumerate(cells_file.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            warnings.append(f"cells.jsonl line {number} is cut short or not JSON; left out")
            continue
        if not isinstance(record, dict):
            warnings.append(f"cells.jsonl line {number} is not an object; left out")
            continue
        version = record.get("schema_version")
        if version is not None and num(version) is not None and num(version) > SUPPORTED_SCHEMA:
            warnings.append(
                f"cell {record.get('cell_id')}: schema_version {version} is newer than this "
                f"analysis knows ({SUPPORTED_SCHEMA}); read as version {SUPPORTED_SCHEMA}"
            )
        record.setdefault("cell_id", f"line{number}")
        cells.append(upgrade(record))
    cells = service_time.with_ratios(cells, points.IDENTITY, points.counted)  # a user's path's ratios
    group_rank: dict = {}
    for c in sorted(cells, key=lambda c: num(c.get("index")) or 0):
        group_rank.setdefault(c.get("group"), len(group_rank))
    cells.sort(key=lambda c: sort_key(c, group_rank))
    corrected = sum(c.get("latency_method") == "corrected" for c in cells)
    if corrected:
        warnings.append(
            f"{corrected} cell(s) measured with wrk before the runner undid its correction: their latency figures are wrk's "
            "own, its coordinated-omission correction's synthetic samples in them (static-mix latencies "
            "up to 2.2x what the requests had; docs/methods.md): measure again to read them"
        )
    return Run(path=path, metadata=metadata, cells=cells, warnings=warnings)

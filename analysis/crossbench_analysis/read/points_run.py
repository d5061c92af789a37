"""A run read from what a committed reference keeps of it: metadata.json and points.jsonl, without cells.jsonl.

Each point becomes one record per launch, carrying the point's settings and, for each figure, that launch's value
(a figure's `launches` are its counted launches, in the order of the point's `cells`). The summary and advise read
such a run as they read a full one; a field only the raw records held (a sampled peak, a tool's own counters) is
absent, and what reads it says it is not in the records."""

from __future__ import annotations

import json
from pathlib import Path

from crossbench.figures import points

from .runinfo import AnalysisError, Run, declare_recorded, load_run, sort_key

NOT_SETTINGS = {"figures", "cells", "failed_cells", "disturbed_cells", "n", "failed", "flags", "valid", "headline"}


def has_points_only(path: Path) -> bool:
    path = Path(path)
    return (path / points.POINTS_FILE).is_file() and not (path / "cells.jsonl").is_file()


def load_any(path: Path) -> Run:
    """A run directory as the analysis reads it: from its cells.jsonl, or from its points alone (a reference)."""
    return load(path) if has_points_only(path) else load_run(path)


def load(path: Path) -> Run:
    """The run at `path` from its points.jsonl and metadata.json (AnalysisError when it has no points.jsonl)."""
    path = Path(path)
    if not (path / points.POINTS_FILE).is_file():
        raise AnalysisError(f"{path} holds no {points.POINTS_FILE} (nor cells.jsonl): not a run or a reference run")
    meta_file = path / "metadata.json"
    metadata = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
    config = metadata.get("config") if isinstance(metadata.get("config"), dict) else {}
    warnings = declare_recorded(metadata, meta_file)
    cells = [record for point in points.read_jsonl(path / points.POINTS_FILE) for record in records(point, config)]
    cells.sort(key=sort_key)
    return Run(
        path=path,
        metadata=metadata,
        cells=cells,
        warnings=[f"{path.name}: read from {points.POINTS_FILE} alone (no cells.jsonl)", *warnings],
    )


def records(point: dict, config: dict | None = None) -> list[dict]:
    """The point's launches as records: counted ones with their figures, failed and disturbed ones without; the
    heap its server was given from the run's configuration (`config`, metadata.json's), as a record says it."""
    settings = {k: v for k, v in point.items() if k not in NOT_SETTINGS}
    heap = ((config or {}).get(str(point.get("server"))) or {}).get("heap")
    if heap:
        settings["server_settings"] = {"heap": heap}
    flags, valid = list(point.get("flags") or []), bool(point.get("valid"))
    out = []
    for i, cell_id in enumerate(point.get("cells") or []):
        record = {**settings, "cell_id": cell_id, "repetition": i + 1, "status": "ok", "flags": flags, "valid": valid}
        for name, figure in (point.get("figures") or {}).items():
            launches = figure.get("launches") or []
            put(record, name, launches[i] if len(launches) == len(point["cells"]) else figure.get("value"))
        out.append(record)
    out += [
        {**settings, "cell_id": c, "status": "failed", "flags": [], "valid": False}
        for c in point.get("failed_cells") or []
    ]
    out += [
        {**settings, "cell_id": c, "status": "ok", "flags": ["noisy_host"], "valid": False}
        for c in point.get("disturbed_cells") or []
    ]
    return out


def put(record: dict, dotted: str, value) -> None:
    """record["latency_ms"]["p99"] = value for "latency_ms.p99"."""
    *parents, last = dotted.split(".")
    for part in parents:
        record = record.setdefault(part, {})
    record[last] = value

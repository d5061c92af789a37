"""A run directory: metadata.json, plan.json (cell order), cells.jsonl (one record per finished cell, appended
and synced as each cell ends, so an interrupted run keeps every finished cell), cells/<id>/ raw outputs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from crossbench.refusal import Refusal

from .record import upgrade


class RunDirError(Refusal, RuntimeError):
    pass


class RunDir:
    def __init__(self, path: Path):
        self.path = Path(path)

    @property
    def metadata_file(self) -> Path:
        return self.path / "metadata.json"

    @property
    def cells_file(self) -> Path:
        return self.path / "cells.jsonl"

    @property
    def plan_file(self) -> Path:
        return self.path / "plan.json"

    def cell_dir(self, cell_id: str) -> Path:
        return self.path / "cells" / cell_id

    def create(self, metadata: dict, plan: list[dict]) -> None:
        if self.cells_file.exists():
            raise RunDirError(
                f"{self.path} already holds a run: continue it with --resume {self.path}, or give another --out"
            )
        self.path.mkdir(parents=True, exist_ok=True)
        write_json(self.metadata_file, metadata)
        write_json(self.plan_file, plan)
        self.cells_file.touch()

    def load(self) -> tuple[dict, list[dict]]:
        if not self.metadata_file.is_file() or not self.plan_file.is_file():
            raise RunDirError(f"{self.path} is not a crossbench run directory (no metadata.json / plan.json)")
        return json.loads(self.metadata_file.read_text()), json.loads(self.plan_file.read_text())

    def extend_plan(self, cells: list[dict]) -> None:
        """More launches decided during the run (a precision target): written before they run, so --resume
        knows them."""
        write_json(self.plan_file, json.loads(self.plan_file.read_text()) + cells)

    def update_metadata(self, **fields) -> None:
        metadata = json.loads(self.metadata_file.read_text())
        metadata.update(fields)
        write_json(self.metadata_file, metadata)

    def append(self, record: dict) -> None:
        with open(self.cells_file, "a+b") as out:
            out.seek(0, os.SEEK_END)
            if out.tell() and (out.seek(-1, os.SEEK_END), out.read(1))[1] != b"\n":
                out.write(b"\n")  # a line torn by a crash mid-write stays alone (and skipped), never joined
            out.write((json.dumps(record, sort_keys=True) + "\n").encode())
            out.flush()
            os.fsync(out.fileno())

    def records(self) -> list[dict]:
        if not self.cells_file.exists():
            return []
        records = []
        for line in self.cells_file.read_text().splitlines():
            try:
                records.append(upgrade(json.loads(line)))
            except json.JSONDecodeError:
                continue  # a line cut short by a crash mid-write: that cell is simply run again
        return records

    def finished_ids(self) -> set[str]:
        return {r["cell_id"] for r in self.records()}


def write_json(path: Path, data) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)

"""Where a cell's wall time goes, phase by phase (server start, verify, samplers, warm-up, probe attach, window,
stop, ...): written to the cell's phases.json, launched or failed, so a slow run or test can be read for what
its harness spends beside the windows. Not part of the record: the harness's time, not the server's."""

from __future__ import annotations

import json
import time
from pathlib import Path

FILE = "phases.json"


class Phases:
    """Seconds spent per phase: each mark() ends the phase named, from the previous mark (or the start)."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.spent: dict[str, float] = {}

    def mark(self, name: str) -> None:
        now = time.monotonic()
        self.spent[name] = round(self.spent.get(name, 0.0) + now - self.last, 3)
        self.last = now

    def write(self, cell_dir: Path) -> None:
        (cell_dir / FILE).write_text(json.dumps(self.spent, indent=1) + "\n")

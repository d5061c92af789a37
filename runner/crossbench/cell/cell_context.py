"""What a cell needs from the run beyond its plan: its folder, the run's database, the hosts of its roles. The
cell's lifecycle (cell.py), its checks (cell_checks.py) and its record (cell_record.py) all read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from crossbench.database import stack
from crossbench.hosts.placement import Placement


@dataclass
class CellContext:
    """What a cell needs from the run beyond its plan."""

    cell_dir: Path
    on_progress: callable = None  # called with (phase, sampler) while the cell runs
    database: stack.RunDatabase | None = None  # the run's database, for database cells
    placement: Placement = field(default_factory=Placement)  # the hosts of its roles (crossbench.hosts)
    keep_up_s: float = 0.0  # keep the server up this long after the window (--keep-up)

    def report(self, phase: str, sampler) -> None:
        if self.on_progress:
            self.on_progress(phase, sampler)

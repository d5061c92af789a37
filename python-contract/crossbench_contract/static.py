"""Which static files are served: the names in static-fixtures/SHA256SUMS, nothing else."""

from __future__ import annotations

import os
from pathlib import Path

STATIC_DIR = Path(os.environ.get("CROSSBENCH_STATIC_DIR", Path(__file__).resolve().parents[2] / "static-fixtures"))


def served_files(static_dir: Path = STATIC_DIR) -> frozenset[str]:
    manifest = static_dir / "SHA256SUMS"
    names = (line.split()[-1].lstrip("*") for line in manifest.read_text().splitlines() if line.strip())
    return frozenset(names)

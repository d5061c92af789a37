"""The chart families' shape: one signature each, no import of export.py or of each other (no cycle)."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

from crossbench_analysis import export

FAMILY_NAMES = {family.__name__.rsplit(".", 1)[1] for family in export.FAMILIES}


def imported_modules(module) -> set[str]:
    """Sibling modules a module imports (`from . import x`, `from .x import y`)."""
    found = set()
    for node in ast.walk(ast.parse(Path(module.__file__).read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {alias.name for alias in node.names}
    return found


def test_every_family_has_headings_and_jobs_of_run_and_data_dir():
    for family in export.FAMILIES:
        assert isinstance(family.HEADINGS, dict), family.__name__
        assert list(inspect.signature(family.jobs).parameters) == ["run", "data_dir"], family.__name__


def test_families_import_neither_export_nor_each_other():
    for family in export.FAMILIES:
        siblings = imported_modules(family)
        assert "export" not in siblings, family.__name__
        assert not siblings & (FAMILY_NAMES - {family.__name__.rsplit(".", 1)[1]}), (family.__name__, siblings)

"""The chart families' shape: one signature each, no import of export.py or of each other (no cycle)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from crossbench_analysis.charts import export

PACKAGE = "crossbench_analysis"
FAMILIES_PACKAGE = "crossbench_analysis.charts"  # where the families and export live
PACKAGES = {PACKAGE, FAMILIES_PACKAGE}
FAMILY_NAMES = {family.__name__.rsplit(".", 1)[1] for family in export.FAMILIES}


def imported_modules(source: str) -> set[str]:
    """The chart modules a source imports, relatively (`from . import x`, `from .x import y`) or by the package's
    name (`from crossbench_analysis.charts import x`, `import crossbench_analysis.charts.x`)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {
                alias.name.rsplit(".", 1)[1] for alias in node.names if alias.name.startswith(FAMILIES_PACKAGE + ".")
            }
        elif isinstance(node, ast.ImportFrom):
            parent = (FAMILIES_PACKAGE + "." if node.level else "") + (node.module or "")
            if parent.rstrip(".") in PACKAGES:
                found |= {alias.name for alias in node.names}
            elif parent.startswith(FAMILIES_PACKAGE + "."):
                found.add(parent.rsplit(".", 1)[1])
    return found


@pytest.mark.parametrize(
    "spelling",
    [
        "from . import export",
        "from .export import read_manifest",
        "import crossbench_analysis.charts.export",
        "from crossbench_analysis.charts import export",
        "from crossbench_analysis.charts.export import FAMILIES",
    ],
)
def test_the_import_check_sees_every_spelling(spelling):
    assert imported_modules(spelling) == {"export"}


def test_every_family_has_headings_and_jobs_of_run_and_data_dir():
    for family in export.FAMILIES:
        assert isinstance(family.HEADINGS, dict), family.__name__
        assert list(inspect.signature(family.jobs).parameters) == ["run", "data_dir"], family.__name__


def test_families_import_neither_export_nor_each_other():
    for family in export.FAMILIES:
        siblings = imported_modules(Path(family.__file__).read_text())
        assert "export" not in siblings, family.__name__
        assert not siblings & (FAMILY_NAMES - {family.__name__.rsplit(".", 1)[1]}), (family.__name__, siblings)

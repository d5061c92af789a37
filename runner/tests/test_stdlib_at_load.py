"""The modules the scripts' command lines load import only the standard library and the project's own packages at
module level: --help, --version and --dry-run then answer on python3 from the source tree, before any package is
installed or the Python environment made (runner/script-options.sh, crossbench_from_source). A third-party package
(psutil, scipy, Jinja2) is imported where it is used, inside the function.

The test reads the source with ast (nothing is imported): it follows the own imports from each script's module
(test_imports.py's edges) and fails on a module-level import of anything else."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from test_imports import PACKAGES, REPO, _imports, _module_files, import_graph

# the modules the scripts run with `python -m` (run_all.sh and its build at once, serve.sh, db.sh, hosts.sh,
# analysis/*.sh)
ENTRIES = (
    "crossbench.run.__main__",
    "crossbench.run.serve",
    "crossbench.run.unbuilt",
    "crossbench.database.__main__",
    "crossbench.hosts.setup",
    "crossbench_analysis.__main__",
)
OWN_PACKAGES = {**PACKAGES, "crossbench_contract": REPO / "python-contract" / "crossbench_contract"}


def reached(entries, modules: dict[str, Path]) -> set[str]:
    """Every own module that loading the entries loads (their own imports, followed)."""
    graph, _ = import_graph(modules)
    seen, todo = set(), list(entries)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += graph.get(name, ())
    return seen


def third_party_at_load(path: Path, own: set[str]) -> list[str]:
    """'line: name' for each import at module level (not inside a function nor a TYPE_CHECKING block) of a package
    that is neither the standard library's nor the project's."""
    found = []
    for node, hidden in _imports(ast.parse(path.read_text(), filename=str(path))):
        if hidden or (isinstance(node, ast.ImportFrom) and node.level):
            continue
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for name in names:
            top = name.split(".")[0]
            if top not in sys.stdlib_module_names and top not in own and top != "__future__":
                found.append(f"{node.lineno}: {name}")
    return found


def offenders(entries, packages) -> list[str]:
    modules = _module_files(packages)
    return [
        f"{modules[name].relative_to(REPO) if modules[name].is_relative_to(REPO) else modules[name]}:{line}"
        for name in sorted(reached(entries, modules))
        for line in third_party_at_load(modules[name], set(packages))
    ]


def test_the_check_sees_a_third_party_import_at_load_and_not_one_at_its_use(tmp_path):
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "cli.py").write_text("import argparse\nfrom . import plumbing\n")
    (root / "plumbing.py").write_text(
        "import os\nimport psutil\nfrom scipy.stats import t\n\n\ndef used():\n    import jinja2\n"
    )
    (root / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import psutil\n")
    (root / "unreached.py").write_text("import numpy\n")
    found = offenders(["pkg.cli", "pkg.typed"], {"pkg": root})
    assert [line.rpartition("/")[2] for line in found] == ["plumbing.py:2: psutil", "plumbing.py:3: scipy.stats"]


def test_the_scripts_modules_load_on_the_standard_library():
    modules = _module_files(OWN_PACKAGES)
    assert set(ENTRIES) <= set(modules)
    found = offenders(ENTRIES, OWN_PACKAGES)
    assert not found, (
        "third-party imports at module level in what the scripts' command lines load (import it "
        "inside the function that uses it):\n" + "\n".join(found)
    )

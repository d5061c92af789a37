"""No module of the project edits sys.path: the runner, the analysis and the contract are packages installed into
the project's environment (runner/python-env.sh), the apps' modules sit beside the script or are handed to the
server (--app-dir, --pythonpath), and the tests find their shared helpers through pytest's pythonpath option
(runner/pyproject.toml). A script a test writes out as a string is its fixture: ast does not look inside strings."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from crossbench import paths

SKIPPED_DIRS = {"__pycache__", "results", "target", "node_modules"}  # and every hidden folder (.venv, .git)
MUTATORS = {
    "insert",
    "append",
    "extend",
    "remove",
    "pop",
    "clear",
    "reverse",
    "sort",
    "__setitem__",
    "__delitem__",
    "__iadd__",
}


def project_sources(root: Path = paths.REPO) -> list[Path]:
    """Every .py file of the project's own: not the environment, caches, results or build output."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        found += [Path(folder) / name for name in files if name.endswith(".py")]
    return sorted(found)


def sys_path_edits(source: str) -> list[tuple[int, str]]:
    """(line, what) for every statement that changes sys.path: an assignment to it or to a slice or item of it,
    an augmented assignment, a del, a call of one of its list methods, site.addsitedir. Follows `import sys as s`
    and `from sys import path as p`."""
    tree = ast.parse(source)
    sys_names, path_names, site_names, addsitedir_names = {"sys"}, set(), {"site"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "sys":
                    sys_names.add(alias.asname or "sys")
                elif alias.name == "site":
                    site_names.add(alias.asname or "site")
        elif isinstance(node, ast.ImportFrom) and node.module in ("sys", "site"):
            for alias in node.names:
                if (node.module, alias.name) == ("sys", "path"):
                    path_names.add(alias.asname or "path")
                elif (node.module, alias.name) == ("site", "addsitedir"):
                    addsitedir_names.add(alias.asname or "addsitedir")

    def is_sys_path(node) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "path":
            return isinstance(node.value, ast.Name) and node.value.id in sys_names
        return isinstance(node, ast.Name) and node.id in path_names

    def touches(target) -> bool:
        """The target is sys.path itself, or an item or slice of it (sys.path[:0] = ...)."""
        return (
            is_sys_path(target)
            or (isinstance(target, ast.Subscript) and is_sys_path(target.value))
            or (isinstance(target, (ast.Tuple, ast.List)) and any(touches(t) for t in target.elts))
        )

    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(touches(t) for t in node.targets):
            edits.append((node.lineno, "assigns to sys.path"))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and touches(node.target):
            edits.append((node.lineno, "assigns to sys.path"))
        elif isinstance(node, ast.Delete) and any(touches(t) for t in node.targets):
            edits.append((node.lineno, "deletes from sys.path"))
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in MUTATORS and is_sys_path(func.value):
                edits.append((node.lineno, f"sys.path.{func.attr}"))
            elif (
                isinstance(func, ast.Attribute)
                and func.attr == "addsitedir"
                and isinstance(func.value, ast.Name)
                and func.value.id in site_names
            ) or (isinstance(func, ast.Name) and func.id in addsitedir_names):
                edits.append((node.lineno, "site.addsitedir"))
    return sorted(edits)


def test_the_check_sees_every_way_of_editing_sys_path_and_nothing_inside_a_string():
    source = '''
import sys
import sys as system
from sys import path as search_path
import site

sys.path.insert(0, "a")
sys.path.append("b")
system.path.extend(["c"])
sys.path[:0] = ["d"]
sys.path = ["e"]
sys.path += ["f"]
search_path.insert(0, "g")
del sys.path[0]
site.addsitedir("h")
print(sys.path, list(sys.path))
FIXTURE = """
import sys
sys.path.insert(0, sys.argv[1])
"""
'''
    assert [line for line, _ in sys_path_edits(source)] == list(range(7, 16))


def test_the_project_sources_include_every_part_and_leave_out_the_environment():
    sources = [p.relative_to(paths.REPO).parts for p in project_sources()]
    tops = {parts[0] for parts in sources}
    assert {"runner", "analysis", "python-contract", "tornado-app", "uvicorn-app", "gunicorn-app"} <= tops
    assert not any(part.startswith(".") or part == "__pycache__" for parts in sources for part in parts)
    assert ("runner", "tests", "test_no_sys_path.py") in sources


def test_no_project_module_edits_sys_path():
    found = []
    for path in project_sources():
        try:
            edits = sys_path_edits(path.read_text(encoding="utf-8"))
        except SyntaxError as e:  # cannot be read, so cannot be cleared
            edits = [(e.lineno, f"not checked, does not parse: {e.msg}")]
        found += [f"{path.relative_to(paths.REPO)}:{line}: {what}" for line, what in edits]
    assert found == [], (
        "sys.path edited (install the package instead, or for tests use pythonpath in "
        "runner/pyproject.toml):\n" + "\n".join(found)
    )

"""Plug-ins decide, not names: no server, load generator or driver kind is named in the runner's code outside its
own modules and the registries that list them. A string constant equal to a registered name anywhere else (a
comparison, a default, a dict key) is a decision the plug-in should make: it is reported as file:line. Docstrings,
comments and prose that merely mention a tool are not constants equal to its name, and a file mode such as
open(path, "ab") is not the ab generator."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import crossbench
from crossbench import drivers, loadgen, servers
from crossbench.loadgen.base import LoadGenerator

PACKAGE = Path(crossbench.__file__).resolve().parent
REGISTRIES = {
    PACKAGE / "servers" / "__init__.py",
    PACKAGE / "loadgen" / "__init__.py",
    PACKAGE / "drivers" / "__init__.py",
    PACKAGE / "kinds.py",  # the kinds of cell as data, one per driver
    PACKAGE / "builtin_servers.py",  # the built-in servers' facts as data, one per plug-in
}


def own_files(module_name: str) -> set[Path]:
    """The module defining a plug-in and its helpers beside it (tomcat.py: tomcat_config.py, tomcat_probe.py)."""
    path = Path(sys.modules[module_name].__file__).resolve()
    return {path, *path.parent.glob(f"{path.stem}_*.py")}


def owners() -> dict[str, set[Path]]:
    """Every registered plug-in name, from the registries, and the files that may name it."""
    found: dict[str, set[Path]] = {}
    registered = [
        *((name, type(plugin).__module__) for name, plugin in servers.PLUGINS.items()),
        *((name, generator.run.__module__) for name, generator in loadgen.ADAPTERS.items()),
        *((kind, type(driver).__module__) for kind, driver in drivers.DRIVERS.items()),
    ]
    for name, module_name in registered:
        found.setdefault(name, set()).update(own_files(module_name))
    return found


def skipped(tree: ast.AST) -> set[int]:
    """The constants that are not code: docstrings, and the mode argument of open()."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "open":
            ids.update(
                id(arg)
                for arg in [*node.args, *(k.value for k in node.keywords)]  # open(p, "ab"),
                if isinstance(arg, ast.Constant) and set(str(arg.value)) <= set("rwxabt+")
            )  # Path.open("ab")
    return ids


def named(source: str, names) -> list[tuple[int, str]]:
    """(line, name) for every string constant in code that equals one of `names`."""
    tree = ast.parse(source)
    ignore = skipped(tree)
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in names
        and id(node) not in ignore
    )


def test_no_plugin_is_named_outside_its_own_modules():
    allowed = owners()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.resolve() in REGISTRIES:
            continue
        for line, name in named(path.read_text(), allowed):
            if path.resolve() not in allowed[name]:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {name!r}")
    assert not found, "plug-in names outside their plug-ins (let the plug-in or its registry decide):\n" + "\n".join(
        found
    )


def test_every_kind_of_plugin_is_scanned_with_its_own_modules():
    allowed = owners()
    assert set(servers.PLUGINS) | set(loadgen.ADAPTERS) | set(drivers.DRIVERS) == set(allowed)
    assert PACKAGE / "servers" / "tomcat_config.py" in allowed["tomcat"]
    assert PACKAGE / "drivers" / "hold.py" in allowed["hold_connections"]
    assert PACKAGE / "loadgen" / "http_load.py" in allowed["http_load"]


@pytest.mark.parametrize(
    "source, expected",
    [
        ('if run["loadgen"] == "http_load":\n    run["keepalive"] = False\n', [(1, "http_load")]),
        ('def plan(group):\n    return group.get("kind", "closed_loop")\n', [(2, "closed_loop")]),
        ('RUN_DEFAULTS = {"servers": ["tomcat", "tornado"]}\n', [(1, "tomcat"), (1, "tornado")]),
        ('PROXIES = ("nginx",)\nTOOLS = {"loadgen": ["wrk"]}\n', [(1, "nginx"), (2, "wrk")]),
        ('"""tomcat"""\nclass A:\n    """oha"""\n    def f(self):\n        """k6"""\n', []),
        ('with open(path, "ab") as log:\n    pass\nlog = path.open(mode="ab")\nlog = path.open("ab")\n', []),
        ('via = " behind nginx"  # prose, not a name\n', []),
    ],
)
def test_the_scan_reports_a_planted_name_with_its_line(source, expected):
    assert named(source, owners()) == expected


def test_a_plugin_registered_later_is_looked_for_too(monkeypatch):
    def never(*args):
        raise AssertionError("a scan runs nothing")

    siege = LoadGenerator(
        name="siege", available=lambda: False, version=lambda: "0", build_command=never, run=never, parse=never
    )  # its functions are this module's: its own file
    monkeypatch.setitem(loadgen.ADAPTERS, "siege", siege)
    assert named('tool = "siege"\n', owners()) == [(1, "siege")]
    assert Path(__file__).resolve() in owners()["siege"]

"""The project's own imports form no circle, and none hides inside a function (issue 33, item 1).

The test reads the source with ast (nothing is imported): every `import` and `from ... import` of the project's own
packages, at module level and inside functions or `if TYPE_CHECKING:` blocks, is an edge module -> module. An import
of a package is an edge to its __init__; `from pkg import name` where name is a submodule is an edge to that submodule.
As Python runs it, importing pkg.sub from outside pkg first runs pkg/__init__.py, so that import is an edge to pkg
too. Any strongly connected component of more than one module (or a module importing itself) is a circle and fails.

An own import inside a function or a TYPE_CHECKING block is how a circle hides, so it fails too, unless its line
says `# optional: <reason>` (kept for imports that only a documented optional path needs)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# package name -> the folder that holds it
PACKAGES = {
    "crossbench": REPO / "runner" / "crossbench",
    "crossbench_analysis": REPO / "analysis" / "crossbench_analysis",
}

# The circles that remain, each named by the import that closes it (the arrow to cut), with why it remains. With
# these edges left out no circle is left; each must still close one, so the list can only shrink. None remains.
KNOWN_CLOSING_EDGES: dict[tuple[str, str], str] = {}

# The layers, bottom up (runner/README.md draws them): a module may import its own sub-package and the layers below
# it, never one above it nor a peer of the same rank. A package's top-level modules are its own layer, named by the
# package (the runner's foundation at the bottom; the analysis's command line and pipeline at its top).
LAYERS = {
    "crossbench": [
        "crossbench",
        "crossbench.sampling",
        "crossbench.servers",
        "crossbench.database",
        "crossbench.record",
        "crossbench.clients",
        "crossbench.loadgen",
        "crossbench.drivers",
        "crossbench.hosts",
        "crossbench.plan",
        "crossbench.figures",
        "crossbench.decide",
        "crossbench.cell",
        "crossbench.run",
    ],
    "crossbench_analysis": [
        "crossbench_analysis.read",
        "crossbench_analysis.judge",
        "crossbench_analysis.charts",
        "crossbench_analysis.report",
        ("crossbench_analysis.findings", "crossbench_analysis.compare", "crossbench_analysis.advice"),
        "crossbench_analysis",
    ],
}
# The analysis stands on every layer of the runner, its top floor included; the runner imports nothing of the
# analysis (it runs the analysis's command after a run: crossbench_analysis.at_end).


def _module_files(packages: dict[str, Path] = PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the packages (a package is its __init__)."""
    modules = {}
    for top, root in packages.items():
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([top, *parts])] = path
    return modules


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom, modules: dict[str, Path]) -> str:
    """The absolute name that `from <node.module>` names, in `module`'s file."""
    if not node.level:
        return node.module or ""
    package = module if _is_package(module, modules) else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _own(name: str, modules: dict[str, Path]) -> str | None:
    """The project module that an import of `name` loads last (its longest own prefix), or None if not own."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """(import node, hidden) for every import in the tree; hidden = inside a function or a TYPE_CHECKING block."""

    def walk(node, hidden):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, hidden
            inner = (
                hidden
                or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                or (isinstance(child, ast.If) and _is_type_checking(child.test))
            )
            yield from walk(child, inner)

    yield from walk(tree, False)


def import_edges(modules: dict[str, Path]):
    """(importer, imported, file, line, hidden) for every own import in the project's packages."""
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node, hidden in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [_own(alias.name, modules) for alias in node.names]
            else:
                base = _resolve(module, node, modules)
                targets = []
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else _own(base, modules))
            for target in dict.fromkeys(t for t in targets if t):
                yield module, target, path, node.lineno, hidden


def import_graph(modules: dict[str, Path]) -> tuple[dict[str, set[str]], dict[tuple[str, str], str]]:
    """module -> the modules its imports run (the module named, and each package around it that the importer is
    not inside), and each edge's first place (file:line)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    where: dict[tuple[str, str], str] = {}
    for a, b, path, line, _ in import_edges(modules):
        parts = b.split(".")
        packages = [".".join(parts[:i]) for i in range(1, len(parts))]
        for target in [b, *(p for p in packages if p in modules and not (a == p or a.startswith(p + ".")))]:
            graph[a].add(target)
            where.setdefault((a, target), f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}:{line}")
    return graph, where


def strongly_connected(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Tarjan's strongly connected components of more than one node, or of one node with an edge to itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    nodes = set(graph) | {b for targets in graph.values() for b in targets}

    for start in sorted(nodes):
        if start in index:
            continue
        # iterative depth-first search: (node, iterator over its successors)
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph.get(node, ()):
                        found.append(frozenset(component))
    return found


def test_the_circle_finder_on_a_small_graph():
    graph = {
        "a": {"b"},
        "b": {"c"},
        "c": {"a", "d"},  # a -> b -> c -> a
        "d": {"e"},
        "e": set(),  # a chain, no circle
        "f": {"f"},  # a module importing itself
        "g": {"h"},
        "h": {"g", "d"},  # a pair
    }
    assert set(strongly_connected(graph)) == {frozenset("abc"), frozenset("f"), frozenset("gh")}
    assert strongly_connected({"x": {"y"}, "y": {"z"}}) == []


def test_the_edges_resolve_relative_imports_and_submodules(tmp_path):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from . import b\nfrom .sub import c, NAME\nimport pkg.sub\n")
    (root / "b.py").write_text("def f():\n    from .a import x  # optional: a test of the marker\n")
    (root / "sub" / "__init__.py").write_text("NAME = 1\n")
    (root / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..b import f\n")
    modules = _module_files({"pkg": root})
    edges = {(a, b, hidden) for a, b, _, _, hidden in import_edges(modules)}
    assert edges == {
        ("pkg.a", "pkg.b", False),
        ("pkg.a", "pkg.sub.c", False),
        ("pkg.a", "pkg.sub", False),
        ("pkg.b", "pkg.a", True),
        ("pkg.sub.c", "pkg.b", True),
    }
    graph, _ = import_graph(modules)
    assert graph["pkg.a"] == {"pkg.b", "pkg.sub", "pkg.sub.c"}
    assert graph["pkg.sub.c"] == {"pkg.b"}  # inside pkg: importing pkg.b runs no pkg/__init__ again
    assert set(strongly_connected(graph)) == {frozenset({"pkg.a", "pkg.b", "pkg.sub.c"})}  # a -> b -> a, a -> c -> b


def test_importing_a_submodule_from_outside_runs_its_package_first(tmp_path):
    root = tmp_path / "pkg"
    for folder in ("gen", "hosts"):
        (root / folder).mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "gen" / "__init__.py").write_text("from . import tool\n")
    (root / "gen" / "base.py").write_text("")
    (root / "gen" / "tool.py").write_text("from ..hosts import local\n")
    (root / "hosts" / "__init__.py").write_text("")
    (root / "hosts" / "local.py").write_text("from ..gen.base import X\n")  # runs gen/__init__ first: a circle
    graph, _ = import_graph(_module_files({"pkg": root}))
    assert set(strongly_connected(graph)) == {frozenset({"pkg.gen", "pkg.gen.tool", "pkg.hosts.local"})}


def test_no_circle_among_the_projects_own_modules():
    graph, where = import_graph(_module_files())
    closing = [
        edge
        for edge in KNOWN_CLOSING_EDGES
        if edge in where and any(edge[0] in circle and edge[1] in circle for circle in strongly_connected(graph))
    ]
    message = [
        f"no longer closes a circle, so take it off KNOWN_CLOSING_EDGES: {a} -> {b}"
        for a, b in KNOWN_CLOSING_EDGES
        if (a, b) not in closing
    ]
    for a, b in KNOWN_CLOSING_EDGES:
        graph[a].discard(b)
    for circle in strongly_connected(graph):
        message.append("circle: " + ", ".join(sorted(circle)))
        message += [
            f"    {a} -> {b}  ({where[(a, b)]})" for a in sorted(circle) for b in sorted(graph[a]) if b in circle
        ]
    assert not message, "\n".join(message)


def test_no_own_import_hides_inside_a_function_or_type_checking():
    modules = _module_files()
    hidden = []
    for a, b, path, line, inside in import_edges(modules):
        if inside and "# optional:" not in path.read_text().splitlines()[line - 1]:
            hidden.append(f"{path.relative_to(REPO)}:{line}: {a} -> {b}")
    assert not hidden, (
        "own imports inside a function or TYPE_CHECKING (move them to the top; "
        "mark a documented optional dependency with `# optional: <reason>`):\n" + "\n".join(sorted(set(hidden)))
    )


@pytest.mark.parametrize("top", sorted(PACKAGES))
def test_the_packages_are_found(top):
    assert any(name == top for name in _module_files())


def layer_of(module: str) -> str:
    """The layer a module belongs to: its sub-package, or its package for a top-level module."""
    top, *rest = module.split(".")
    root = PACKAGES[top]
    return f"{top}.{rest[0]}" if rest and (root / rest[0]).is_dir() else top


def ranks() -> dict[str, int]:
    """Every layer's rank: the runner's first, the analysis's above them."""
    found, rank = {}, 0
    for top in ("crossbench", "crossbench_analysis"):
        for layer in LAYERS[top]:
            for name in layer if isinstance(layer, tuple) else (layer,):
                found[name] = rank
            rank += 1
    return found


def test_every_sub_package_has_its_layer():
    modules = _module_files()
    assert {layer_of(name) for name in modules} == set(ranks())


def test_no_import_points_up_or_sideways():
    rank = ranks()
    wrong = []
    for a, b, path, line, _ in import_edges(_module_files()):
        above, below = layer_of(a), layer_of(b)
        if above != below and rank[below] >= rank[above]:
            wrong.append(
                f"{path.relative_to(REPO)}:{line}: {above} (rank {rank[above]}) imports {b} "
                f"({below}, rank {rank[below]})"
            )
    assert not wrong, "imports up or sideways through the layers (LAYERS, runner/README.md):\n" + "\n".join(wrong)


def test_the_runner_imports_nothing_of_the_analysis():
    back = [
        f"{path.relative_to(REPO)}:{line}: {a} imports {b}"
        for a, b, path, line, _ in import_edges(_module_files())
        if a.startswith("crossbench.") and b.split(".")[0] == "crossbench_analysis"
    ]
    assert not back, "the runner hands a run to the analysis by its command, never by an import:\n" + "\n".join(back)


def test_the_layer_rule_sees_an_arrow_up():
    rank = ranks()
    assert rank[layer_of("crossbench.plan.cellplan")] > rank[layer_of("crossbench.record.record")]
    assert rank[layer_of("crossbench.oskit")] == 0
    assert rank[layer_of("crossbench_analysis.findings.finding")] == rank[layer_of("crossbench_analysis.advice.advice")]


def test_the_runner_readme_draws_every_layer():
    readme = (REPO / "runner" / "README.md").read_text()
    missing = [layer for layer in LAYERS["crossbench"][1:] if f"`{layer.split('.')[1]}/`" not in readme]
    assert not missing, f"runner/README.md's map lacks {missing}"


# No module of the two packages is longer than this: past it a module has usually grown a second job, which then
# gets a module of its own.
MAX_MODULE_LINES = 400
# Modules still over it, each with why it is not split yet; each must still be over it, so the list only shrinks.
KNOWN_LONG_MODULES: dict[str, str] = {}


def long_modules(modules: dict[str, Path], most: int = MAX_MODULE_LINES) -> dict[str, int]:
    """Module -> its line count, for every module longer than `most` lines."""
    counts = {name: len(path.read_text().splitlines()) for name, path in modules.items()}
    return {name: lines for name, lines in counts.items() if lines > most}


def test_the_length_check_sees_a_long_module(tmp_path):
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "short.py").write_text("x = 1\n" * 400)
    (root / "long.py").write_text("x = 1\n" * 401)
    assert long_modules(_module_files({"pkg": root})) == {"pkg.long": 401}


def test_no_module_is_over_400_lines():
    found = long_modules(_module_files())
    message = [
        f"{name}: {lines} lines (at most {MAX_MODULE_LINES}): split it by its separate jobs"
        for name, lines in sorted(found.items())
        if name not in KNOWN_LONG_MODULES
    ]
    message += [
        f"{name} is no longer over {MAX_MODULE_LINES} lines, so take it off KNOWN_LONG_MODULES"
        for name in KNOWN_LONG_MODULES
        if name not in found
    ]
    assert not message, "\n".join(message)


# The runner's packages that start processes (servers, load, hosts, databases) or plan and run cells: reading a run
# needs none of them. What it needs of a server is its facts (known_servers.py), on the runner's ground floor.
LAUNCHING = {
    "crossbench.cell",
    "crossbench.clients",
    "crossbench.database",
    "crossbench.decide",
    "crossbench.drivers",
    "crossbench.hosts",
    "crossbench.loadgen",
    "crossbench.plan",
    "crossbench.run",
    "crossbench.sampling",
    "crossbench.servers",
}


def reached_from(start: list[str], graph: dict[str, set[str]]) -> set[str]:
    """Every module the modules `start` import, directly or through others."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_reading_a_run_loads_nothing_that_launches():
    modules = _module_files()
    graph, _ = import_graph(modules)
    read = [name for name in modules if name.startswith("crossbench_analysis.read")]
    reached = {layer_of(name) for name in reached_from(read, graph)} & LAUNCHING
    assert not reached, f"the analysis's read layer loads {sorted(reached)}"


def test_the_launch_check_sees_a_read_module_that_reaches_a_server(tmp_path):
    for package, files in {
        "crossbench": {"__init__.py": "", "servers/__init__.py": "", "record.py": "from crossbench import servers\n"},
        "crossbench_analysis": {
            "__init__.py": "",
            "read/__init__.py": "",
            "read/run.py": "from crossbench import record\n",
        },
    }.items():
        for name, text in files.items():
            (tmp_path / package / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / package / name).write_text(text)
    modules = _module_files({p: tmp_path / p for p in ("crossbench", "crossbench_analysis")})
    graph, _ = import_graph(modules)
    assert "crossbench.servers" in reached_from(["crossbench_analysis.read.run"], graph)

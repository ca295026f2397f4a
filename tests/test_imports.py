"""The package's import graph: no import cycles, and Qt only in ``inspector/gui/``.

The graph is read from the source with ``ast``, not by importing: an edge is a module-level
import (absolute or relative, ``import a.b`` and ``from a import b`` where ``b`` may be a
submodule), including those in a module-level ``try``/``if``/``with`` and in class bodies,
since all of them run when the module is imported. Not edges: imports inside a function (they run
when it is called, the usual way to keep a command light or to break a cycle on purpose) and
imports under ``if TYPE_CHECKING:`` (never run). Importing ``a.b.c`` also runs ``a`` and ``a.b``
(the packages' ``__init__``): edges to those are added too, except to the importer's own
packages, which are already imported whenever the importer is.

Rules pinned:
* no cycle among the modules of ``inspector`` (a cycle makes the import order matter: whichever
  module is imported first sees the other half-initialised);
* no module outside ``inspector/gui/`` imports ``inspector.gui`` or ``PySide6`` at module level or
  inside a function (the command line, the child processes and the tests run without Qt).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent / "inspector"
PACKAGE = "inspector"

# Cycles known to exist when imports inside functions are counted too, each as the set of modules
# of its strongly connected component; the lead deletes an entry when the branch that removes it
# lands. An entry that no longer matches a component fails the test (so the list only shrinks).
KNOWN_DEFERRED_CYCLES: set[frozenset[str]] = (
    set()
)  # (jobs15 removed the last: gui/session_jobs <-> offload <-> session_data)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE_ROOT.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(body: list[ast.stmt], *, in_functions: bool) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run with ``body``: module level (and class bodies, and the
    branches of try/if/with/for/while), never under ``if TYPE_CHECKING``; inside functions too
    when ``in_functions``."""
    out: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if in_functions:
                out.extend(_import_nodes(node.body, in_functions=True))
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            out.extend(_import_nodes(node.orelse, in_functions=in_functions))
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(node, field, None)
                if isinstance(block, list):
                    out.extend(
                        _import_nodes(
                            [b for b in block if isinstance(b, ast.stmt)]
                            + [s for h in block if isinstance(h, ast.excepthandler) for s in h.body],
                            in_functions=in_functions,
                        )
                    )
            if isinstance(node, ast.Match):
                for case in node.cases:
                    out.extend(_import_nodes(case.body, in_functions=in_functions))
    return out


def imported_names(name: str, path: Path, *, in_functions: bool = False) -> set[str]:
    """Every dotted module name the module ``name`` (at ``path``) imports, as written, resolved
    for relative imports; ``from a import b`` gives both ``a`` and ``a.b`` (``b`` may be a
    submodule: :func:`import_graph` keeps the names that are modules)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in _import_nodes(tree.body, in_functions=in_functions):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
            continue
        if node.level:
            base = name.split(".") if is_package else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        out.add(target)
        out.update(f"{target}.{alias.name}" for alias in node.names if alias.name != "*")
    return out


def import_graph(*, in_functions: bool = False) -> dict[str, set[str]]:
    """module -> the modules of ``inspector`` that importing it imports directly (and, with
    ``in_functions``, that calling its functions may import)."""
    modules = all_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        own_packages = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        edges: set[str] = set()
        for target in imported_names(name, path, in_functions=in_functions):
            if target not in modules:
                continue
            parts = target.split(".")
            for i in range(1, len(parts) + 1):  # the target and the packages above it run
                dep = ".".join(parts[:i])
                if dep in modules and dep not in own_packages and dep != name:
                    edges.add(dep)
        graph[name] = edges
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[tuple[frozenset[str], list[str]]]:
    """Every strongly connected component of more than one module (or a module importing
    itself), with one cycle through it in import order (Tarjan, then a shortest path back)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    counter = 0

    def strongconnect(v: str) -> None:  # recursion depth is bounded by the number of modules
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                components.append(comp)

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return [(frozenset(comp), _one_cycle(graph, comp)) for comp in components]


def _one_cycle(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A path from the component's first module back to itself, within the component."""
    start = min(comp)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if v != start else [start, start]
                if w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"not a cycle: {sorted(comp)}")


def test_the_cycle_finder_finds_a_cycle_and_prints_it_in_import_order():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert sorted(cycle for _, cycle in find_cycles(graph)) == [["a", "b", "c", "a"], ["e", "e"]]
    assert {comp for comp, _ in find_cycles(graph)} == {frozenset("abc"), frozenset("e")}
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_relative_absolute_and_guarded_imports(tmp_path):
    src = tmp_path / "mod.py"
    src.write_text(
        "from __future__ import annotations\n"
        "import inspector.store.files\n"
        "from . import plan\n"
        "from .store import jsonfmt\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from inspector import catalogue\n"
        "try:\n"
        "    from inspector import home\n"
        "except ImportError:\n"
        "    from inspector import portable\n"
        "def f():\n"
        "    from inspector import cli\n"
        "class C:\n"
        "    from inspector import textsafe\n"
    )
    names = imported_names("inspector.mod", src)
    for expected in (
        "inspector.store.files",
        "inspector.plan",
        "inspector.store.jsonfmt",
        "inspector.home",
        "inspector.portable",
        "inspector.textsafe",
    ):
        assert expected in names
    assert "inspector.catalogue" not in names and "inspector.cli" not in names
    assert "inspector.cli" in imported_names("inspector.mod", src, in_functions=True)


def _said(cycles: list[tuple[frozenset[str], list[str]]]) -> str:
    return "\n".join(f"  {' -> '.join(cycle)}  (all of: {', '.join(sorted(comp))})" for comp, cycle in cycles)


def test_no_import_cycles():
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles (module-level imports):\n" + _said(cycles)


def test_no_cycles_hidden_in_function_level_imports():
    """A cycle broken by moving one import into a function is still a cycle of responsibilities
    (store/statedb <-> store/backup was one): counted here too, with the known exceptions."""
    cycles = find_cycles(import_graph(in_functions=True))
    unexpected = [(comp, cycle) for comp, cycle in cycles if comp not in KNOWN_DEFERRED_CYCLES]
    assert not unexpected, "import cycles (counting imports inside functions):\n" + _said(unexpected)
    gone = [sorted(c) for c in KNOWN_DEFERRED_CYCLES if c not in {comp for comp, _ in cycles}]
    assert not gone, f"a known cycle is gone or changed: update KNOWN_DEFERRED_CYCLES: {gone}"


# Imports of the window from outside gui/, inside a function, that are allowed: the entry point
# that starts it. Each with the reason; an entry no longer used fails the test.
ALLOWED_GUI_IMPORTS = {
    ("inspector.cli", "inspector.gui.app"): "the gui command starts the window",
}


def test_only_gui_imports_qt_or_the_gui_package():
    modules = all_modules()
    offenders, used = [], set()
    for name, path in modules.items():
        if name == "inspector.gui" or name.startswith("inspector.gui."):
            continue
        module_level = imported_names(name, path)
        for target in imported_names(name, path, in_functions=True):
            if target.split(".")[0] == "PySide6":
                offenders.append(f"{name} imports {target}")
            elif target == "inspector.gui" or target.startswith("inspector.gui."):
                if target not in modules:
                    continue  # a name imported from a gui module: the module itself is listed too
                if target not in module_level and (name, target) in ALLOWED_GUI_IMPORTS:
                    used.add((name, target))
                else:
                    offenders.append(f"{name} imports {target}")
    assert not offenders, "Qt or the window imported outside inspector/gui/:\n" + "\n".join(sorted(offenders))
    assert used == set(ALLOWED_GUI_IMPORTS), f"unused ALLOWED_GUI_IMPORTS: {set(ALLOWED_GUI_IMPORTS) - used}"

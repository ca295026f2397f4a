"""The window <-> worker boundary, read from the source (issue 15): Qt only in ``inspector/gui/``,
and nothing but Qt code there; no module outside ``gui/`` imports it; no import cycle through the
window's packages (``gui``, ``jobs``, ``present``)."""

from __future__ import annotations

import ast
from pathlib import Path

import inspector

ROOT = Path(inspector.__file__).parent

# The one way into the window from outside it: the command line starts it (lazily, in a function).
WINDOW_ENTRY = {("inspector.cli", "inspector.gui.app")}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at module level or inside a function (a lazy import is an
    import all the same: it only moves the cycle to run time), but not for type checkers only
    (``if TYPE_CHECKING:``: never imported when the program runs)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    typing_only = {
        id(n)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and _is_type_checking(block.test)
        for stmt in block.body
        for n in ast.walk(stmt)
    }
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)  # "from pkg import module"
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    return {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}


def _qt(path: Path) -> bool:
    return any(m == "PySide6" or m.startswith("PySide6.") for m in _imports(path))


def test_every_module_in_gui_imports_qt_and_no_other_module_does() -> None:
    gui = ROOT / "gui"
    qt_free_in_gui = [p.name for p in gui.glob("*.py") if p.name != "__init__.py" and not _qt(p)]
    assert qt_free_in_gui == [], (
        f"Qt-free modules belong in inspector/present or inspector/jobs: {qt_free_in_gui}"
    )
    qt_outside = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if gui not in p.parents and _qt(p)]
    assert qt_outside == []


def test_no_module_outside_gui_imports_gui() -> None:
    reaching_in = sorted(
        (name, m)
        for name, deps in _graph().items()
        if not name.startswith("inspector.gui")
        for m in deps
        if m.startswith("inspector.gui") and (name, m) not in WINDOW_ENTRY
    )
    assert reaching_in == []


def test_present_imports_neither_the_window_nor_its_jobs() -> None:
    """``present`` is what the window shows, worked out in a child: it needs neither."""
    wrong = sorted(
        (name, m)
        for name, deps in _graph().items()
        if name.startswith("inspector.present")
        for m in deps
        if m.startswith(("inspector.gui", "inspector.jobs"))
    )
    assert wrong == []


def _cycles_through(graph: dict[str, set[str]], prefixes: tuple[str, ...]) -> list[list[str]]:
    """The import cycles (strongly connected groups of more than one module, or a module
    importing itself) that hold a module under one of ``prefixes``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = [0]

    def visit(start: str) -> None:  # Tarjan's algorithm, iteratively (no recursion limit)
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return [g for g in groups if any(m.startswith(prefixes) for m in g)]


def test_no_import_cycle_through_the_window_or_its_jobs() -> None:
    graph = _graph()
    assert _cycles_through(graph, ("inspector.gui", "inspector.jobs", "inspector.present")) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The rule above is only as good as its cycle finder: a made-up three-module loop is found."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles_through(graph, ("a",)) == [["a", "b", "c"]]
    assert _cycles_through({"a": {"b"}, "b": set()}, ("a",)) == []

"""The house: no import circle between onnx-arrow's modules, lazy imports included.

Every ``import`` in every module counts, at any depth (in functions too), and so do the
``if TYPE_CHECKING:`` imports of a module that exports names lazily through
:func:`onnx_arrow._lazy.exports`, since they are imported on first use.  Only the
``TYPE_CHECKING`` imports of other modules, which run under a type checker alone, are
left out.  A circle is reported with every module in it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "onnx_arrow"


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    """``{dotted name: file}`` of every module of the package, packages as their ``__init__``."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _lazy_exports(tree: ast.Module) -> bool:
    """Whether the module hands its ``TYPE_CHECKING`` imports to ``exports(__name__)``."""
    return any(
        isinstance(node, ast.Call) and ast.unparse(node.func) == "exports"
        for node in ast.walk(tree)
    )


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that ``name`` imports, anywhere in its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if not _lazy_exports(tree):
        for node in ast.walk(tree):
            if _is_type_checking(node):
                skipped |= {id(n) for n in ast.walk(node)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            # ``from package import module`` imports the module; a name imports its module
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            found = target
            while found and found not in modules:
                found = found.rpartition(".")[0]
            if found and found != name:
                out.add(found)
    return out


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = _modules(package)
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    # importing a submodule imports its parent package first, which is then already
    # there: an import of an enclosing package is no edge back
    return {
        name: {t for t in targets if not name.startswith(t + ".")}
        for name, targets in graph.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle() -> None:
    found = circles(import_graph())
    assert not found, "import circles (lazy imports included): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_the_graph_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    """The check itself: an import in a function, a relative import and a lazy export
    each close a circle it reports; a type checker's import does not."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nfrom pkg._lazy import exports\n"
        "if TYPE_CHECKING:\n    from pkg.c import C\n__getattr__ = exports(__name__)\n"
    )
    (package / "_lazy.py").write_text("def exports(name): ...\n")
    (package / "a.py").write_text("def f():\n    from pkg import b\n")
    (package / "b.py").write_text("from . import a\n")
    (package / "c.py").write_text("import pkg\nC = 1\n")
    (package / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import e\n"
    )
    (package / "e.py").write_text("from pkg import d\n")
    (package / "sub").mkdir()
    (package / "sub" / "__init__.py").write_text("from pkg.sub import leaf\n")
    (package / "sub" / "leaf.py").write_text("import pkg.sub\n")
    found = circles(import_graph(package))
    assert found == [["pkg.a", "pkg.b"]]


@pytest.mark.parametrize("name", sorted(_modules()))
def test_a_long_module_says_it_is_one_concern(name: str) -> None:
    """A module past about 800 lines is one concern and says so at its top."""
    path = _modules()[name]
    source = path.read_text(encoding="utf-8")
    if len(source.splitlines()) <= 800:
        return
    docstring = ast.get_docstring(ast.parse(source)) or ""
    assert "one concern" in docstring.lower(), f"{path}: {len(source.splitlines())} lines"

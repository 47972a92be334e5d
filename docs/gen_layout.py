"""Write docs/layout.md from the code: every module with its one concern and the layers
of its imports, so the page cannot drift from the tree.

The import graph read here is the one ``tests/test_layout.py`` checks for circles: every
``import`` of a module at any depth (in functions too), relative ones resolved, and the
``if TYPE_CHECKING:`` imports of a module that exports them lazily through
``onnx_arrow._lazy.exports`` (they are imported on first use, from the module's table
that ``tests/test_api.py`` holds to the block); the ``TYPE_CHECKING`` imports of other
modules, read by type checkers alone, do not count.

Usage::

    python docs/gen_layout.py          # rewrite docs/layout.md
    python docs/gen_layout.py --check  # exit 1 if the file is not what the code gives
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
PACKAGE: Final = ROOT / "onnx_arrow"
PAGE: Final = Path(__file__).resolve().with_name("layout.md")


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """``{dotted name: file}`` of every module of the package, packages as their ``__init__``."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _lazy_exports(tree: ast.Module) -> bool:
    """Whether the module exports its ``TYPE_CHECKING`` imports lazily: it calls ``exports``."""
    return any(
        isinstance(node, ast.Call) and ast.unparse(node.func) == "exports"
        for node in ast.walk(tree)
    )


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of the package that module ``name`` imports, anywhere in its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if not _lazy_exports(tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
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
            # ``from package import module`` imports the module; a name, its module
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            found = target
            while found and found not in known:
                found = found.rpartition(".")[0]
            if found and found != name:
                out.add(found)
    return out


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """``{module: the package's modules it imports}``.  Importing a submodule imports its
    parent packages first, so an import of an enclosing package is no edge back."""
    known = modules(package)
    return {
        name: {t for t in imports_of(name, path, known) if not name.startswith(t + ".")}
        for name, path in known.items()
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


def layers(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each module's layer: 0 for one that imports no module of the package, else one more
    than the highest layer it imports (the graph has no circle)."""
    out: dict[str, int] = {}

    def layer(v: str) -> int:
        if v not in out:
            out[v] = 1 + max((layer(w) for w in graph[v]), default=-1)
        return out[v]

    for v in graph:
        layer(v)
    return out


def concern(path: Path) -> str:
    """The first sentence of the module's docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(doc.split("\n\n", 1)[0].split())
    return paragraph.replace("|", "\\|")


def build() -> str:
    known = modules()
    graph = import_graph()
    if found := circles(graph):
        raise SystemExit(f"import circles: {found}")
    depth = layers(graph)
    lines = [
        "# Layout",
        "",
        "<!-- generated by docs/gen_layout.py from the code; do not edit -->",
        "",
        "Every module of onnx-arrow with its one concern (the opening of its docstring),",
        "then the layers of its imports.  The core (`onnx_arrow.core`) needs onnx,",
        "numpy and pyarrow only; the adapters around it (the corpus store, compare, diff,",
        "pandas, Jupyter, the command line) reach it through `onnx_arrow` and the internal",
        "model `onnx_arrow.core.model` alone (`tests/test_api.py`).  No module imports",
        "another in a circle, lazy imports in functions included (`tests/test_layout.py`).",
        "",
    ]
    groups: dict[str, list[str]] = {}
    for name in known:
        parts = name.split(".")
        group = ".".join(parts[:2]) if len(parts) > 2 or known[name].name == "__init__.py" else ""
        groups.setdefault(group or "onnx_arrow", []).append(name)
    for group in sorted(groups, key=lambda g: (g != "onnx_arrow", g)):
        lines += [f"## `{group}`", "", "| module | concern |", "|---|---|"]
        for name in sorted(groups[group]):
            lines.append(f"| `{name}` | {concern(known[name])} |")
        lines.append("")
    lines += [
        "## Import layers",
        "",
        "A module imports only modules of lower layers; layer 0 imports none of the",
        "package's modules.  Top to bottom:",
        "",
    ]
    for level in range(max(depth.values()), -1, -1):
        names = sorted(n for n, d in depth.items() if d == level)
        lines.append(f"- **{level}**: " + ", ".join(f"`{n}`" for n in names))
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _page import generate_page

    return generate_page(PAGE, build, script="gen_layout.py", argv=argv)


if __name__ == "__main__":
    sys.exit(main())

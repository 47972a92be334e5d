"""The house: no import circle between onnx-arrow's modules, lazy imports included.

Every ``import`` in every module counts, at any depth (in functions too), and so do the
``if TYPE_CHECKING:`` imports of a module that exports names lazily through
:func:`onnx_arrow._lazy.exports`, since they are imported on first use.  Only the
``TYPE_CHECKING`` imports of other modules, which run under a type checker alone, are
left out.  A circle is reported with every module in it.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

# the graph is read by the layout page's generator, so the page and this check agree
_spec = importlib.util.spec_from_file_location(
    "gen_layout", Path(__file__).resolve().parent.parent / "docs" / "gen_layout.py"
)
assert _spec is not None
assert _spec.loader is not None
gen_layout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_layout)
circles, import_graph, _modules = gen_layout.circles, gen_layout.import_graph, gen_layout.modules


def test_no_import_circle() -> None:
    found = circles(import_graph())
    assert not found, "import circles (lazy imports included): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_the_graph_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    """The check itself: an import in a function, a relative import and a lazy export
    each close a circle it reports; a type checker's import and an import of the
    enclosing package (already imported by then) do not."""
    package = tmp_path / "pkg"
    (package / "q").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "_lazy.py").write_text("def exports(name): ...\n")
    (package / "a.py").write_text("def f():\n    from pkg import b\n")
    (package / "b.py").write_text("from . import a\n")
    (package / "q" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nfrom pkg._lazy import exports\n"
        "if TYPE_CHECKING:\n    from pkg.q.c import C\n__getattr__ = exports(__name__)\n"
    )
    (package / "q" / "c.py").write_text("import pkg.q\nfrom pkg import r\nC = 1\n")
    (package / "r.py").write_text("def g():\n    from pkg.q import C\n")
    (package / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import e\n"
    )
    (package / "e.py").write_text("from pkg import d\n")
    found = circles(import_graph(package))
    assert found == [["pkg.a", "pkg.b"], ["pkg.q", "pkg.q.c", "pkg.r"]]


#: A module past this many lines is one concern and says so at its top.
LONG = 800


def long_modules_not_saying_so(modules: dict[str, Path]) -> list[str]:
    """``path: lines`` of each module past :data:`LONG` lines whose docstring does not say
    it is one concern."""
    out = []
    for path in modules.values():
        source = path.read_text(encoding="utf-8")
        lines = len(source.splitlines())
        docstring = ast.get_docstring(ast.parse(source)) or ""
        if lines > LONG and "one concern" not in docstring.lower():
            out.append(f"{path}: {lines} lines")
    return out


def test_a_long_module_says_it_is_one_concern() -> None:
    """Every module of the package is read: past 800 lines, its docstring says it is one
    concern."""
    found = _modules()
    assert len(found) > 100
    assert not long_modules_not_saying_so(found)


def test_the_length_rule_sees_a_long_module(tmp_path: Path) -> None:
    """The check itself: a long module that does not say it is one concern is reported with
    its length; a long one that says so, and a short one, are not."""
    body = "x = 1\n" * LONG
    (tmp_path / "long.py").write_text('"""Many things."""\n' + body)
    (tmp_path / "said.py").write_text('"""One concern: many things."""\n' + body)
    (tmp_path / "short.py").write_text('"""Many things."""\n' + "x = 1\n" * (LONG - 1))
    found = long_modules_not_saying_so({path.stem: path for path in sorted(tmp_path.glob("*.py"))})
    assert found == [f"{tmp_path / 'long.py'}: {LONG + 1} lines"]

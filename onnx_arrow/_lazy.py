"""Names a module exports but imports on first use (PEP 562), as ``lazy_loader`` does.

``import onnx_arrow`` and ``onnx-arrow --help`` then cost what they use: the value
conversions import onnx (and, through it, ml_dtypes, about a second here) only when
one of them is first looked up.  A module lists those names once, as the imports of
its ``if TYPE_CHECKING:`` block, which type checkers and the API docs read as they
are; :func:`exports` reads the same block from the module's source.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable


def exports(module: str) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A ``__getattr__`` and ``__dir__`` for ``module``: each name its ``if TYPE_CHECKING:``
    block imports is imported from there when first looked up, and then kept in the
    module's namespace, so each is imported once."""
    where = _type_checking_imports(_source(module))

    def __getattr__(name: str) -> object:
        source = where.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[module])) | set(where))

    return __getattr__, __dir__


def _source(module: str) -> str:
    """The source of ``module`` as its loader gives it (a file, or a zip archive's member),
    else as its file holds it: a loader may give none (pytest's assertion rewriter, which
    loads the modules of a pytest plugin's distribution, onnx-arrow's among them)."""
    loaded = sys.modules[module]
    get_source = getattr(getattr(loaded, "__loader__", None), "get_source", None)
    source = None if get_source is None else get_source(module)
    path = getattr(loaded, "__file__", None)
    if source is None and path is not None and path.endswith(".py") and os.path.isfile(path):
        with open(path, "rb") as file:
            source = importlib.util.decode_source(file.read())
    if source is None:
        raise ImportError(
            f"{module}: its source is not installed (a sourceless install?), and onnx-arrow "
            "reads the names it exports from it; install onnx-arrow from its wheel or sdist",
            name=module,
        )
    return str(source)


def _type_checking_imports(source: str) -> dict[str, str]:
    """``{name: module}`` of the ``from module import name`` lines under ``if TYPE_CHECKING:``."""
    where: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    where.update((alias.name, statement.module) for alias in statement.names)
    return where

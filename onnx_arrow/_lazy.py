"""Names a module exports but imports on first use (PEP 562), from a table it spells out.

``import onnx_arrow`` and ``onnx-arrow --help`` then cost what they use: the value
conversions import onnx (and, through it, ml_dtypes, about a second here) only when
one of them is first looked up.  A module lists those names twice, side by side: as
the imports of its ``if TYPE_CHECKING:`` block, which type checkers and the API docs
read, and as a table ``{module: names}`` handed to :func:`exports`, which is what runs
(as polars' ``dependencies.py`` does).  Nothing is read from the module's source, so a
zipped or sourceless install works; a test checks that the block and the table agree.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def exports(
    module: str, table: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A ``__getattr__`` and ``__dir__`` for ``module``: each name of ``table``
    (``{module it comes from: names}``) is imported from there when first looked up,
    and then kept in the module's namespace, so each is imported once."""
    where = {name: source for source, names in table.items() for name in names}

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

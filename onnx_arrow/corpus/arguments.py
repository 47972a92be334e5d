"""Checks of what the corpus's entry points are given: a path, a model, a collection of
records; each refuses anything else with an error naming the argument and what it takes.

An entry point checks its arguments before it does any work.  A lazy argument (an
iterator) is checked element by element as it is consumed, and the error gives the
element's position.  The errors are :class:`~onnx_arrow.errors.UnsupportedTypeError`,
an :class:`~onnx_arrow.errors.OnnxArrowError` that is also a ``TypeError``.

>>> try:
...     check_path(1, where="write_store(out)")
... except TypeError as exc:
...     print(exc)
write_store(out): expected a path (str or os.PathLike), got int
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

from onnx_arrow.errors import UnsupportedTypeError

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = ["check_model", "check_path", "checked_items", "type_name"]

T = TypeVar("T")


def type_name(value: object) -> str:
    """The type of ``value`` as an error names it: ``int``, ``polars.series.series.Series``."""
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def check_path(value: object, *, where: str) -> str | os.PathLike[str]:
    """``value`` if it is a path (a ``str`` or an ``os.PathLike``), else an error at ``where``
    (the argument, as ``write_store(out)``)."""
    if isinstance(value, str) or (
        isinstance(value, os.PathLike) and isinstance(os.fspath(value), str)
    ):
        return value
    raise UnsupportedTypeError(
        f"expected a path (str or os.PathLike), got {type_name(value)}", where=where
    )


def check_model(value: object, *, where: str) -> ModelProto:
    """``value`` if it is an ONNX ``ModelProto``, else an error at ``where``."""
    from onnx_arrow.core.model import ModelProto

    if isinstance(value, ModelProto):
        return value
    raise UnsupportedTypeError(
        f"expected an onnx.ModelProto (a model, as onnx.load gives), got {type_name(value)}",
        where=where,
    )


def checked_items(
    items: object, kinds: type[T] | tuple[type[T], ...], *, what: str, where: str
) -> Iterable[T]:
    """``items`` as an iterable of ``kinds``, checked.

    Refused at once: anything not iterable, a string or a path, and Arrow data (an
    object of the Arrow PyCapsule interface, as a pyarrow array or a Polars Series: Arrow
    holds no Python objects).  A list or tuple has each element checked at once; any
    other iterable is checked element by element as it is consumed, so that nothing is
    read twice.  ``what`` names the elements expected (``"Case or CaseRef objects"``);
    an element's error is located at ``where[i]``.
    """
    if (
        isinstance(items, str | bytes | os.PathLike)
        or not isinstance(items, Iterable)
        or hasattr(items, "__arrow_c_array__")
        or hasattr(items, "__arrow_c_stream__")
    ):
        raise UnsupportedTypeError(
            f"expected an iterable of {what}, got {type_name(items)}", where=where
        )
    if isinstance(items, list | tuple):
        for i, item in enumerate(items):
            _check_item(item, kinds, i, what=what, where=where)
        return items
    return _each_checked(items, kinds, what=what, where=where)


def _each_checked(
    items: Iterable[object], kinds: type[T] | tuple[type[T], ...], *, what: str, where: str
) -> Iterator[T]:
    for i, item in enumerate(items):
        yield _check_item(item, kinds, i, what=what, where=where)


def _check_item(
    item: object, kinds: type[T] | tuple[type[T], ...], i: int, *, what: str, where: str
) -> T:
    if not isinstance(item, kinds):
        raise UnsupportedTypeError(f"expected {what}, got {type_name(item)}", where=f"{where}[{i}]")
    return item

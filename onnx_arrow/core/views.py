"""The view layouts other engines produce, replaced by the layouts onnx-arrow converts.

Polars, DuckDB and others hand back ``binary_view``, ``string_view`` and list views;
they hold the same values as ``binary``, ``string`` and lists, which are the layouts
onnx-arrow's types are defined over.
"""

from __future__ import annotations

import pyarrow as pa

from onnx_arrow.core.walk import ExtensionFunction, map_type

__all__ = ["without_views"]


def _unview(t: pa.DataType) -> pa.DataType:
    """One view layout replaced by the layout of the same values; other types kept."""
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_list_view(t):
        return pa.list_(t.value_field)
    if pa.types.is_large_list_view(t):
        return pa.large_list(t.value_field)
    return t


def without_views(
    arrow_type: pa.DataType, extension: ExtensionFunction | None = None
) -> pa.DataType:
    """``arrow_type`` with the view layouts other engines produce replaced, at any depth.

    ``binary_view`` becomes ``binary``, ``string_view`` ``string`` and list views lists:
    the same values in the layouts onnx-arrow converts.  A type with nothing to replace
    is kept as it is (the same object).  An extension type is kept as it is, or, given
    ``extension``, replaced by ``extension(type, new_storage)`` when its storage changes.

    >>> import pyarrow as pa
    >>> without_views(pa.struct([("value", pa.int64()), ("envelope", pa.binary_view())]))
    StructType(struct<value: int64, envelope: binary>)
    """
    return map_type(arrow_type, _unview, extension=extension)

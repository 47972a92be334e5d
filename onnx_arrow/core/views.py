"""The view layouts other engines produce, replaced by the layouts onnx-arrow converts.

Polars, DuckDB and others hand back ``binary_view``, ``string_view`` and list views;
they hold the same values as ``binary``, ``string`` and lists, which are the layouts
onnx-arrow's types are defined over.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

__all__ = ["without_views"]


def without_views(
    arrow_type: pa.DataType,
    extension: Callable[[pa.DataType, pa.DataType], pa.DataType] | None = None,
) -> pa.DataType:
    """``arrow_type`` with the view layouts other engines produce replaced, at any depth.

    ``binary_view`` becomes ``binary``, ``string_view`` ``string`` and list views lists:
    the same values in the layouts onnx-arrow converts.  An extension type is kept as
    it is, or, given ``extension``, replaced by ``extension(type, new_storage)`` when
    its storage changes.

    >>> import pyarrow as pa
    >>> without_views(pa.struct([("value", pa.int64()), ("envelope", pa.binary_view())]))
    StructType(struct<value: int64, envelope: binary>)
    """
    t = arrow_type
    if isinstance(t, pa.BaseExtensionType):
        if extension is None:
            return t
        storage = without_views(t.storage_type, extension)
        return t if storage == t.storage_type else extension(t, storage)
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_list_view(t) or pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(without_views(t.value_type, extension)))
    if pa.types.is_large_list_view(t) or pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(without_views(t.value_type, extension)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(
            t.value_field.with_type(without_views(t.value_type, extension)), t.list_size
        )
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(without_views(t.key_type, extension)),
            t.item_field.with_type(without_views(t.item_type, extension)),
            t.keys_sorted,
        )
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(without_views(f.type, extension)) for f in t])
    return t

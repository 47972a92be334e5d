"""The view layouts other engines produce, replaced by the layouts onnx-arrow converts.

Polars, DuckDB and others hand back ``binary_view``, ``string_view`` and list views;
they hold the same values as ``binary``, ``string`` and lists, which are the layouts
onnx-arrow's types are defined over.  :func:`without_views` replaces them in a type,
:func:`lists_of_views` rebuilds the list views of an array, which pyarrow cannot cast.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from onnx_arrow.core.walk import ExtensionFunction, map_type, walk

__all__ = ["lists_of_views", "without_views"]


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


def _has_list_view(t: pa.DataType) -> bool:
    return any(pa.types.is_list_view(x) or pa.types.is_large_list_view(x) for x in walk(t))


def _offsets(array: pa.Array) -> pa.Array:
    """The offsets of a list or map array's rows, as an array of their own (pyarrow builds
    no list from offsets that are a slice, given a mask)."""
    offsets = array.offsets
    return pa.array(offsets.to_numpy(zero_copy_only=False), offsets.type)


def lists_of_views(array: pa.Array) -> pa.Array:
    """``array``, of a type without extension types (a storage form), with its list views
    rebuilt as lists of the same values, at any depth under lists, structs and maps.

    pyarrow 26 casts a list view to a list with a wrong offsets buffer, so this is done
    here, from the views' sizes; other views (``binary_view``, ``string_view``) cast
    well and are left to the cast, as are views under dictionaries, run-end encoding or
    unions.

    >>> import pyarrow as pa
    >>> views = pa.array([[1], None, [2, 3]], pa.list_view(pa.int64()))
    >>> lists_of_views(views).to_pylist(), lists_of_views(views).type
    ([[1], None, [2, 3]], ListType(list<item: int64>))
    """
    t = array.type
    if not _has_list_view(t):
        return array
    mask = array.is_null() if array.null_count else None
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        sizes = array.sizes.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        values = lists_of_views(array.flatten())
        field = t.value_field.with_type(values.type)
        if pa.types.is_list_view(t):
            return pa.ListArray.from_arrays(
                pa.array(offsets, pa.int32()), values, pa.list_(field), mask=mask
            )
        return pa.LargeListArray.from_arrays(
            pa.array(offsets, pa.int64()), values, pa.large_list(field), mask=mask
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = lists_of_views(array.values)
        field = t.value_field.with_type(values.type)
        make = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
        build = pa.list_ if pa.types.is_list(t) else pa.large_list
        return make.from_arrays(_offsets(array), values, build(field), mask=mask)
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        values = lists_of_views(array.values.slice(array.offset * size, len(array) * size))
        field = t.value_field.with_type(values.type)
        return pa.FixedSizeListArray.from_arrays(values, type=pa.list_(field, size), mask=mask)
    if pa.types.is_map(t):
        keys, items = lists_of_views(array.keys), lists_of_views(array.items)
        return pa.MapArray.from_arrays(
            _offsets(array),
            keys,
            items,
            pa.map_(t.key_field.with_type(keys.type), t.item_field.with_type(items.type)),
            mask=mask,
        )
    if pa.types.is_struct(t):
        children = [lists_of_views(array.field(i)) for i in range(t.num_fields)]
        fields = [t.field(i).with_type(c.type) for i, c in enumerate(children)]
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    return array  # under a dictionary, run-end encoding or a union: left to the cast

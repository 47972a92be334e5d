"""The storage-only form of onnx-arrow columns: one call away, zero-copy, both ways.

Some readers do not handle extension types nested inside others (dask's
``read_parquet``), and engines without onnx-arrow see extension columns as their
storage anyway.  :func:`to_storage` gives that form (every extension type,
canonical or onnx-arrow's own, replaced by its storage, at any depth) over the
same buffers, without a copy; :func:`from_storage` puts the types back.
"""

from __future__ import annotations

from typing import TypeVar

import pyarrow as pa

from onnx_arrow.errors import ArrowLayoutError

__all__ = ["from_storage", "storage_type", "to_storage"]

Data = TypeVar("Data", pa.Array, pa.ChunkedArray, pa.Table, pa.RecordBatch)


def storage_type(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` with every extension type replaced by its storage, at any depth.

    >>> import pyarrow as pa
    >>> storage_type(pa.list_(pa.fixed_shape_tensor(pa.bool8(), [2])))
    ListType(list<item: fixed_size_list<item: int8>[2]>)
    """
    t = arrow_type
    if isinstance(t, pa.BaseExtensionType):
        return storage_type(t.storage_type)
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(storage_type(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(storage_type(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(storage_type(t.value_type)), t.list_size)
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(storage_type(t.key_type)),
            t.item_field.with_type(storage_type(t.item_type)),
            t.keys_sorted,
        )
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(storage_type(f.type)) for f in t])
    return t


def _schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_type(storage_type(f.type)) for f in schema], metadata=schema.metadata)


def to_storage(data: Data) -> Data:
    """The storage-only form of an array, chunked array, table or record batch (zero-copy).

    >>> import numpy as np, onnx_arrow
    >>> from onnx import numpy_helper
    >>> arr = onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(2, np.float32))])
    >>> to_storage(arr).type
    FixedSizeListType(fixed_size_list<item: float>[2])
    >>> exact = onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(2, np.float32))], exact=True)
    >>> to_storage(exact).type
    StructType(struct<value: fixed_size_list<item: float>[2], envelope: binary>)
    """
    if isinstance(data, pa.Array):
        return _retyped(data, storage_type(data.type))
    if isinstance(data, pa.ChunkedArray):
        target = storage_type(data.type)
        return pa.chunked_array([_retyped(c, target) for c in data.chunks], type=target)
    if isinstance(data, pa.Table):
        columns = [to_storage(c) for c in data.columns]
        return pa.Table.from_arrays(columns, schema=_schema(data.schema))
    if isinstance(data, pa.RecordBatch):
        columns = [to_storage(c) for c in data.columns]
        return pa.RecordBatch.from_arrays(columns, schema=_schema(data.schema))
    raise TypeError(
        f"expected a pyarrow Array, ChunkedArray, Table or RecordBatch, got {type(data)}"
    )


def from_storage(data: pa.Array | pa.ChunkedArray, arrow_type: pa.DataType) -> pa.Array:
    """Give a storage-only column its types back (zero-copy).

    Raises
    ------
    ArrowLayoutError
        If ``data`` is not the storage form of ``arrow_type``.
    """
    expected = storage_type(arrow_type)
    if data.type != expected:
        raise ArrowLayoutError(
            f"the column is {data.type}, but the storage of {arrow_type} is {expected}"
        )
    if isinstance(data, pa.ChunkedArray):
        return pa.chunked_array([_retyped(c, arrow_type) for c in data.chunks], type=arrow_type)
    return _retyped(data, arrow_type)


class _Retyped:
    """An array's buffers under another, layout-compatible type (Arrow C data interface)."""

    def __init__(self, array: pa.Array, arrow_type: pa.DataType) -> None:
        self._array = array
        self._type = arrow_type

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        return pa.field("", self._type).__arrow_c_schema__(), self._array.__arrow_c_array__()[1]


def _retyped(array: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    # Array.view would do, but it loses the length of nested null arrays (list<null>)
    return pa.array(_Retyped(array, arrow_type))

"""The storage form of Arrow types and data: every extension type replaced by its
storage, at any depth, and the same buffers retyped both ways without a copy.

The mechanism only, over pyarrow data; :mod:`onnx_arrow.core.storage` holds the public
entry points, which take data through the gate of :mod:`onnx_arrow.core.arrow_input`.
"""

from __future__ import annotations

from typing import TypeVar

import pyarrow as pa

from onnx_arrow.core.walk import map_type
from onnx_arrow.errors import ArrowLayoutError

__all__ = ["Data", "portable_type", "retyped", "storage_type", "stored", "typed"]

Data = TypeVar("Data", pa.Array, pa.ChunkedArray, pa.Table, pa.RecordBatch)


def _storage_of(t: pa.DataType) -> pa.DataType:
    return t.storage_type if isinstance(t, pa.BaseExtensionType) else t


def storage_type(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` with every extension type replaced by its storage, at any depth.

    >>> import pyarrow as pa
    >>> storage_type(pa.list_(pa.fixed_shape_tensor(pa.bool8(), [2])))
    ListType(list<item: fixed_size_list<item: int8>[2]>)
    """
    return map_type(arrow_type, _storage_of, extension=lambda ext, storage: storage)


def _entries(t: pa.DataType) -> pa.DataType:
    if not pa.types.is_map(t):
        return t
    entries = pa.struct([t.key_field, t.item_field])
    return pa.list_(pa.field("entries", entries, nullable=False))


def portable_type(arrow_type: pa.DataType) -> pa.DataType:
    """The storage type of ``arrow_type`` (:func:`storage_type`) with every map as the list
    of its entries (``list<entries: struct<key, value>>``, the same buffers): the layout of
    portable tables, which engines without maps (Hugging Face ``datasets``, Dask's numpy
    cells) read too.

    >>> import pyarrow as pa
    >>> portable_type(pa.map_(pa.int64(), pa.fixed_shape_tensor(pa.float32(), [2]))).value_type
    StructType(struct<key: int64 not null, value: fixed_size_list<item: float>[2]>)
    """
    return map_type(storage_type(arrow_type), _entries)


def _schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_type(storage_type(f.type)) for f in schema], metadata=schema.metadata)


def stored(data: Data) -> Data:
    """The storage form of pyarrow ``data`` of any of the four classes (zero-copy)."""
    if isinstance(data, pa.Array):
        return retyped(data, storage_type(data.type))
    if isinstance(data, pa.ChunkedArray):
        target = storage_type(data.type)
        return pa.chunked_array([retyped(c, target) for c in data.chunks], type=target)
    columns = [stored(c) for c in data.columns]
    if isinstance(data, pa.Table):
        return pa.Table.from_arrays(columns, schema=_schema(data.schema))
    return pa.RecordBatch.from_arrays(columns, schema=_schema(data.schema))


def typed(data: pa.Array | pa.ChunkedArray, arrow_type: pa.DataType) -> pa.Array:
    """A storage-form pyarrow column given the types of ``arrow_type`` back (zero-copy).

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
        return pa.chunked_array([retyped(c, arrow_type) for c in data.chunks], type=arrow_type)
    return retyped(data, arrow_type)


class _Retyped:
    """An array's buffers under another, layout-compatible type (Arrow C data interface)."""

    def __init__(self, array: pa.Array, arrow_type: pa.DataType) -> None:
        self._array = array
        self._type = arrow_type

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        return pa.field("", self._type).__arrow_c_schema__(), self._array.__arrow_c_array__()[1]


def retyped(array: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """``array``'s buffers under ``arrow_type``, which must have the same layout."""
    # Array.view would do, but it loses the length of nested null arrays (list<null>)
    return pa.array(_Retyped(array, arrow_type))

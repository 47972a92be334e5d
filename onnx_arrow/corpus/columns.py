"""Arrow columns of the store's rows built from their buffers: numbers from numpy (the
statistics columns among them), strings, bytes and shapes from Python values.

``pyarrow.array`` imports pandas on its first call in a process (it asks whether its
input is a pandas object), about a third of a second of CPU here: as much as the rest of
the start of ``onnx-arrow import``.  The columns a store's rows are made of have plain
layouts (a validity bitmap, offsets, values), so they are put together here with
:meth:`pyarrow.Array.from_buffers`, which looks for no pandas; numpy arrays are taken
without a copy where they are contiguous already.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any, Final

import numpy as np
import pyarrow as pa

from onnx_arrow.core.model import Statistic
from onnx_arrow.corpus.format import COLUMNS
from onnx_arrow.errors import NotRepresentableError, UnsupportedTypeError

__all__ = [
    "binaries",
    "lists",
    "numbers",
    "of_items",
    "optional_numbers",
    "shapes",
    "statistics_columns",
    "strings",
    "values_of",
]

_BINARY: Final = pa.binary()
_STRING: Final = pa.string()


def _validity(valid: np.ndarray[Any, Any] | None) -> pa.Buffer | None:
    """The validity bitmap of ``valid`` (one bool a slot; None: all valid)."""
    if valid is None or bool(valid.all()):
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def numbers(
    values: np.ndarray[Any, Any], type_: pa.DataType, valid: np.ndarray[Any, Any] | None = None
) -> pa.Array:
    """A column of the fixed-width numbers ``values`` as ``type_`` (cast exactly to its
    numpy dtype where they are of another), null where ``valid`` is False."""
    if not (pa.types.is_integer(type_) or pa.types.is_floating(type_)):
        raise UnsupportedTypeError(
            f"no column of numbers is built as {type_}", where="the store's rows"
        )
    dtype = np.dtype(type_.to_pandas_dtype())
    values = np.asarray(values)
    data = np.ascontiguousarray(values, dtype=dtype)
    if data.dtype != values.dtype and not np.array_equal(data, values, equal_nan=True):
        raise NotRepresentableError(
            f"numbers of {values.dtype} do not fit {type_} exactly", where="the store's rows"
        )
    if data.ndim != 1:
        data = data.reshape(-1)
    return pa.Array.from_buffers(type_, len(data), [_validity(valid), pa.py_buffer(data)])


def optional_numbers(items: Sequence[Any], type_: pa.DataType) -> pa.Array:
    """A column of numbers or None, as ``type_``."""
    valid = np.fromiter((x is not None for x in items), dtype=bool, count=len(items))
    dtype = np.dtype(type_.to_pandas_dtype())
    data = np.fromiter((0 if x is None else x for x in items), dtype=dtype, count=len(items))
    return numbers(data, type_, valid)


def _offsets(lengths: np.ndarray[Any, Any], type_: pa.DataType) -> pa.Buffer:
    """The offsets of items of ``lengths``: 64-bit for a large type, else 32-bit, refused
    where they would overflow (an error, never offsets that wrap around)."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    large = pa.types.is_large_binary(type_) or pa.types.is_large_string(type_)
    if large or pa.types.is_large_list(type_):
        return pa.py_buffer(offsets)
    if offsets[-1] > _MAX_OFFSET:
        raise NotRepresentableError(
            f"{offsets[-1]} bytes or items in one {type_} column of a row group, more than "
            "its 32-bit offsets hold; a case this large cannot be stored: split its files "
            "into cases of their own",
            where="the store's rows",
        )
    return pa.py_buffer(offsets.astype(np.int32))


#: The largest offset of a binary, string or list column (32-bit).
_MAX_OFFSET: Final = np.iinfo(np.int32).max


def binaries(items: Sequence[bytes | None], type_: pa.DataType = _BINARY) -> pa.Array:
    """A column of bytes or None, as ``type_`` (binary or string)."""
    n = len(items)
    valid = np.fromiter((x is not None for x in items), dtype=bool, count=n)
    lengths = np.fromiter((0 if x is None else len(x) for x in items), dtype=np.int64, count=n)
    data = b"".join(x for x in items if x is not None)
    buffers = [_validity(valid), _offsets(lengths, type_), pa.py_buffer(data)]
    return pa.Array.from_buffers(type_, n, buffers)


def strings(items: Sequence[str | None], type_: pa.DataType = _STRING) -> pa.Array:
    """A column of strings or None, as ``type_``."""
    return binaries([None if x is None else x.encode() for x in items], type_)


def lists(
    lengths: np.ndarray[Any, Any],
    values: pa.Array,
    type_: pa.DataType,
    valid: np.ndarray[Any, Any] | None = None,
) -> pa.Array:
    """A list column of ``type_``: row ``i`` holds the next ``lengths[i]`` of ``values``,
    null where ``valid`` is False."""
    buffers = [_validity(valid), _offsets(lengths, type_)]
    return pa.Array.from_buffers(type_, len(lengths), buffers, children=[values])


def shapes(items: Sequence[Sequence[int] | None], type_: pa.DataType) -> pa.Array:
    """A column of shapes (lists of integers) or None, as ``type_``."""
    n = len(items)
    valid = np.fromiter((x is not None for x in items), dtype=bool, count=n)
    lengths = np.fromiter((0 if x is None else len(x) for x in items), dtype=np.int64, count=n)
    flat = np.fromiter(
        chain.from_iterable(x for x in items if x is not None),
        dtype=np.dtype(type_.value_type.to_pandas_dtype()),
        count=int(lengths.sum()),
    )
    return lists(lengths, numbers(flat, type_.value_type), type_, valid)


def of_items(items: Sequence[Any], type_: pa.DataType) -> pa.Array:
    """A column of Python values or None as ``type_``: a string, binary, integer, float or
    list-of-integers type (the types of the store's columns built from rows)."""
    if pa.types.is_string(type_):
        return strings(items, type_)
    if pa.types.is_binary(type_):
        return binaries(items, type_)
    if pa.types.is_integer(type_) or pa.types.is_floating(type_):
        return optional_numbers(items, type_)
    if pa.types.is_list(type_) and pa.types.is_integer(type_.value_type):
        return shapes(items, type_)
    raise UnsupportedTypeError(
        f"no column of Python values is built as {type_}", where="the store's rows"
    )


def values_of(array: pa.Array) -> np.ndarray[Any, Any]:
    """The numbers of a fixed-width column without nulls, as numpy, without a copy, through
    DLPack (what ``array.to_numpy()`` gives, without its look for pandas)."""
    if array.null_count:
        raise ValueError(f"a column of {array.null_count} nulls has no numbers to give")
    return np.from_dlpack(array)


def numbers_of(array: pa.Array) -> np.ndarray[Any, Any]:
    """:func:`values_of`, booleans (one bit each in Arrow) included, read-only as Arrow's
    data is (what ``array.to_numpy()`` gives)."""
    if pa.types.is_boolean(array.type):
        out = _bits(array.buffers()[1], array.offset, len(array))
    else:
        out = values_of(array)
    out.flags.writeable = False
    return out


def validity_of(array: pa.Array) -> np.ndarray[Any, Any]:
    """Which elements of ``array`` are valid, as numpy booleans (what
    ``np.asarray(array.is_valid())`` gives, without its look for pandas)."""
    bitmap = array.buffers()[0]
    if bitmap is None or not array.null_count:
        return np.ones(len(array), dtype=bool)
    return _bits(bitmap, array.offset, len(array))


def _bits(buffer: pa.Buffer | None, offset: int, n: int) -> np.ndarray[Any, Any]:
    if buffer is None or n == 0:
        return np.zeros(n, dtype=bool)
    start, skip = divmod(offset, 8)
    raw = np.frombuffer(buffer, np.uint8, count=(skip + n + 7) // 8, offset=start)
    return np.unpackbits(raw, bitorder="little")[skip : skip + n].astype(bool)


def statistics_columns(
    stats: dict[str, Statistic], row_leaf: np.ndarray[Any, Any]
) -> dict[str, pa.Array]:
    """The statistics columns of rows: each row takes the statistics of its leaf (the
    tensor it holds, by number: ``row_leaf``), null where it has none (-1) or the
    statistic is undefined."""
    has = row_leaf >= 0
    at = np.where(has, row_leaf, 0)
    out = {}
    for key, stat in stats.items():
        type_ = COLUMNS[key].type
        if not stat.values.size:
            out[key] = pa.nulls(len(row_leaf), type_)
            continue
        out[key] = numbers(stat.values[at], type_, has & stat.defined[at])
    return out

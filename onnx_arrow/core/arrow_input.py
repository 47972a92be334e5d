"""Arrow from anywhere, checked once before a buffer is read.

Every public entry point that takes Arrow data (:func:`onnx_arrow.from_arrow`,
:func:`onnx_arrow.to_numpy`, :func:`onnx_arrow.to_pylist`, the pandas adapter) calls
:func:`as_array` first.  It takes

* pyarrow objects: ``Array``, ``ChunkedArray``, and a ``Table`` or ``RecordBatch``
  of one column;
* any object of the Arrow PyCapsule interface: ``__arrow_c_array__`` (nanoarrow)
  or ``__arrow_c_stream__`` (a Polars ``Series``; a Polars ``DataFrame`` or DuckDB
  relation of one column);

and gives one ``pyarrow.Array`` that is

* **valid**: its buffers are checked in full (offsets in bounds and monotonic, sizes
  consistent), so data forged or damaged outside cannot crash the interpreter;
* **in the layouts onnx-arrow converts**: the views other engines produce
  (``binary_view``, ``string_view``, list views) are cast to ``binary``, ``string``
  and lists, which hold the same values;
* **readable**: an onnx-arrow extension type whose layout was wrong when pyarrow
  read it (kept as read, so that the rest of the file stays readable) is refused
  here, located.

>>> import pyarrow as pa
>>> as_array(pa.chunked_array([[1, 2], [3]])).to_pylist()
[1, 2, 3]
>>> as_array(pa.array([b"a"], pa.binary_view())).type
DataType(binary)
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from onnx_arrow.core.extension_types import check_readable, with_storage, without_views
from onnx_arrow.core.storage import from_storage, storage_type, to_storage
from onnx_arrow.errors import ArrowLayoutError, UnsupportedTypeError

__all__ = ["as_array"]

_ACCEPTED = (
    "a pyarrow Array, ChunkedArray, or Table or RecordBatch of one column, or an object "
    "with __arrow_c_array__ or __arrow_c_stream__ (a Polars Series, a nanoarrow array)"
)


def as_array(data: Any, *, where: str = "") -> pa.Array:
    """``data`` as one valid, readable ``pyarrow.Array`` (see the module docs).

    Raises
    ------
    UnsupportedTypeError
        If ``data`` is no Arrow data, or a table of other than one column.
    ArrowLayoutError
        If its buffers are inconsistent, or an onnx-arrow type in it has a wrong layout.
    """
    chunked = _arrow(data, where)
    try:
        chunked.validate(full=True)
    except (pa.ArrowInvalid, pa.ArrowException) as exc:
        raise ArrowLayoutError(
            f"the Arrow data is malformed and cannot be read safely ({exc}); rebuild it "
            "with its writer, or check the file it came from",
            where=where or None,
        ) from exc
    check_readable(chunked.type, where=where)
    target = without_views(chunked.type, with_storage)
    if target != chunked.type:
        chunked = from_storage(to_storage(chunked).cast(storage_type(target)), target)
    if isinstance(chunked, pa.ChunkedArray):
        if chunked.num_chunks == 0:
            # combine_chunks() cannot build an empty array of nested extension types
            return pa.nulls(0, chunked.type)
        return chunked.chunk(0) if chunked.num_chunks == 1 else chunked.combine_chunks()
    return chunked


def _arrow(data: Any, where: str) -> pa.Array | pa.ChunkedArray:
    if isinstance(data, pa.Array | pa.ChunkedArray):
        return data
    if isinstance(data, pa.Table | pa.RecordBatch):
        return _one_column(data, where)
    if hasattr(data, "__arrow_c_array__") or hasattr(data, "__arrow_c_stream__"):
        try:
            return _imported(data, where)
        except pa.ArrowException as exc:
            hint = "check what produced it"
            if "large_list" in str(exc):
                hint = (
                    "pyarrow's own arrow.variable_shape_tensor takes list storage only, so a "
                    "column another engine turned into large_list does not import; convert it "
                    "to list storage in that engine first"
                )
            raise ArrowLayoutError(
                f"pyarrow cannot import this {type(data).__qualname__}'s Arrow data ({exc}); "
                f"{hint}",
                where=where or None,
            ) from exc
    raise UnsupportedTypeError(
        f"expected {_ACCEPTED}, got {type(data).__module__}.{type(data).__qualname__}",
        where=where or None,
    )


def _imported(data: Any, where: str) -> pa.Array | pa.ChunkedArray:
    if hasattr(data, "__arrow_c_array__"):
        return pa.array(data)
    chunked = pa.chunked_array(data)
    if hasattr(data, "columns") and pa.types.is_struct(chunked.type):
        # a table-like object (a Polars DataFrame, a DuckDB relation): its rows
        return _one_column(pa.table(data), where)
    return chunked


def _one_column(table: pa.Table | pa.RecordBatch, where: str) -> pa.Array | pa.ChunkedArray:
    if table.num_columns != 1:
        raise UnsupportedTypeError(
            f"a table of {table.num_columns} columns ({', '.join(table.column_names)}) is not "
            "one column of values; pass the column itself, e.g. table['name']",
            where=where or None,
        )
    return table.column(0)

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
  (``binary_view``, ``string_view``, list views), at any depth, are cast to
  ``binary``, ``string`` and lists, which hold the same values (the cast's result
  is validated: where pyarrow cannot cast them, as pyarrow 26 cannot views under
  run-end encoding, the column is refused, located);
* **readable**: an onnx-arrow extension type whose layout was wrong when pyarrow
  read it (kept as read, so that the rest of the file stays readable) is refused
  here, located;
* **consistent in its values** where a layout constrains them, at any depth (under
  every nested type :mod:`onnx_arrow.core.walk` knows, dictionaries, run-end
  encoding and unions included): the shapes of a variable-shape or variable-rank
  tensor are non-negative and agree with the length of its data (and a variable-shape
  tensor's with its ``uniform_shape``).  An error names the first row at fault.

The entry points that retype buffers without reading them (:func:`onnx_arrow.to_storage`
and the other storage and portable functions) take their data through the same
import, :func:`arrow_column`, or :func:`arrow_table` for tables; every argument that
takes an Arrow type or schema goes through :func:`arrow_type_arg` or
:func:`arrow_schema`.  Anything else is refused with an
:class:`~onnx_arrow.errors.UnsupportedTypeError` naming the argument.

>>> import pyarrow as pa
>>> as_array(pa.chunked_array([[1, 2], [3]])).to_pylist()
[1, 2, 3]
>>> as_array(pa.array([b"a"], pa.binary_view())).type
DataType(binary)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
import pyarrow as pa

from onnx_arrow.core.extension_metadata import extension_metadata, with_storage
from onnx_arrow.core.json_extension import check_readable
from onnx_arrow.core.message_type import MessageType
from onnx_arrow.core.storage_form import storage_type, stored, typed
from onnx_arrow.core.tensor_types import SparseTensorType, tensor_layout
from onnx_arrow.core.views import lists_of_views, without_views
from onnx_arrow.core.walk import child_arrays, child_fields, map_type, walk
from onnx_arrow.errors import ArrowLayoutError, UnsupportedTypeError

__all__ = ["arrow_column", "arrow_schema", "arrow_table", "arrow_type_arg", "as_array"]

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
    chunked = arrow_column(data, where=where)
    try:
        chunked.validate(full=True)
    except (pa.ArrowInvalid, pa.ArrowException) as exc:
        raise ArrowLayoutError(
            f"the Arrow data is malformed and cannot be read safely ({exc}); rebuild it "
            "with its writer, or check the file it came from",
            where=where or None,
        ) from exc
    check_readable(chunked.type, where=where)
    read = chunked.type
    target = map_type(without_views(read, with_storage), _as_declared)
    if target is not read:  # told by identity: see onnx_arrow.core.walk.map_type
        try:
            plain = _lists_of_views(stored(chunked)).cast(storage_type(target))
            # never let a cast's result be read unchecked (pyarrow 26 casts list views to
            # lists with a wrong offsets buffer: they are rebuilt above)
            plain.validate(full=True)
            _no_null_where_not_null(plain, where)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise UnsupportedTypeError(
                f"the column is {read}, whose view layouts onnx-arrow reads as "
                f"{target}, but this pyarrow cannot cast it so ({exc}); decode its "
                "run-end or dictionary encoding in the engine that made it",
                where=where or None,
            ) from None
        chunked = typed(plain, target)
    if isinstance(chunked, pa.ChunkedArray):
        if chunked.num_chunks == 0:
            # combine_chunks() cannot build an empty array of nested extension types
            return pa.nulls(0, chunked.type)
        chunked = chunked.chunk(0) if chunked.num_chunks == 1 else chunked.combine_chunks()
    try:
        _check_message_kinds(chunked.type)
    except ArrowLayoutError as exc:
        raise (exc.at(where) if where else exc) from None
    _check_values_located(chunked, where)
    return chunked


def _as_declared(t: pa.DataType) -> pa.DataType:
    """An onnx-arrow type read over a storage that an engine made nullable where the type
    declares it not null (Polars and Lance drop the flag), over its declared storage."""
    declared = getattr(t, "declared_storage", None)
    return t if declared is None else with_storage(t, declared)


def _no_null_where_not_null(data: pa.Array | pa.ChunkedArray, where: str) -> None:
    """Refuse a null in a field its type declares not null (a cast to such a field keeps
    the null, which would be read as a number)."""
    for chunk in data.chunks if isinstance(data, pa.ChunkedArray) else [data]:
        found = _null_under(chunk)
        if found is not None:
            raise ArrowLayoutError(
                f"the column holds a null in {found}, which its type declares not null; "
                "the engine that made it gave an element no value",
                where=where or None,
            )


def _null_under(array: pa.Array) -> str | None:
    fields = child_fields(array.type)
    for field, child in zip(fields, child_arrays(array), strict=False):
        if not field.nullable and child.null_count:
            return f"field {field.name!r}"
        found = _null_under(child)
        if found is not None:
            return found
    return None


def _lists_of_views(data: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """:func:`~onnx_arrow.core.views.lists_of_views` of an array or of every chunk."""
    if isinstance(data, pa.Array):
        return lists_of_views(data)
    if data.num_chunks == 0:
        return data
    return pa.chunked_array([lists_of_views(c) for c in data.chunks])


_VARIABLE_SHAPE: Final = frozenset({"arrow.variable_shape_tensor", "onnx.variable_shape_tensor"})
_VARIABLE_RANK: Final = "onnx.variable_rank_tensor"


def _check_values_located(array: pa.Array, where: str) -> None:
    """:func:`_check_values`, the error located at the first row at fault (found by
    bisection, on the error path only)."""
    try:
        _check_values(array)
    except ArrowLayoutError as first:
        lo, hi = 0, len(array)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            try:
                _check_values(array.slice(lo, mid - lo))
            except ArrowLayoutError:
                hi = mid
            else:
                lo = mid
        try:
            _check_values(array.slice(lo, 1))
        except ArrowLayoutError as exc:
            row = f"{where}: row {lo}" if where else f"row {lo}"
            raise exc.at(row) from None
        raise (first.at(where) if where else first) from None


def _check_values(array: pa.Array) -> None:
    """Check the values of ``array`` and of every array nested in it (see the module docs)."""
    t = array.type
    if isinstance(t, pa.BaseExtensionType) and t.extension_name in _VARIABLE_SHAPE:
        _check_variable_shapes(array)
    elif isinstance(t, pa.BaseExtensionType) and t.extension_name == _VARIABLE_RANK:
        _check_variable_ranks(array)
    for child in child_arrays(array):
        _check_values(child)


def _layout_kind(t: pa.DataType) -> str | None:
    """The kind of value an Arrow column's layout holds, as far as the layout says."""
    if isinstance(t, SparseTensorType):
        return "sparse_tensor"
    if tensor_layout(t) is not None:
        return "tensor"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "sequence"
    if pa.types.is_map(t):
        return "map"
    return None


def _check_message_kinds(t: pa.DataType) -> None:
    """:func:`_check_message_kind` of every ``onnx.message`` type in ``t``."""
    for x in walk(t):
        if isinstance(x, MessageType):
            _check_message_kind(x)


def _check_message_kind(t: MessageType) -> None:
    """The kind an ``onnx.message`` column declares must be the kind its value column holds
    (an optional is its element's column, with nulls)."""
    kind, value_type = t.kind, t.value_type
    while isinstance(kind, list) and kind and kind[0] == "optional" and len(kind) == 2:
        kind = kind[1]
        if pa.types.is_struct(value_type) and [f.name for f in value_type] == ["value"]:
            value_type = value_type.field(0).type  # an optional level of its own
    if not isinstance(kind, list) or not kind or pa.types.is_null(value_type):
        return  # no kind below, or no value at all (every row absent)
    held = _layout_kind(value_type)
    if held != kind[0]:
        raise ArrowLayoutError(
            f"the onnx.message metadata says {kind[0]} values, but its value column is "
            f"{value_type} ({held or 'no value kind'}); the metadata and the storage were "
            "put together by hand: rebuild the column with onnx_arrow.to_arrow(..., exact=True)"
        )


def _check_variable_shapes(array: pa.Array) -> None:
    storage = array.storage
    data, shapes = storage.field("data"), storage.field("shape")
    ndim = shapes.type.list_size
    n = len(storage)
    flat = shapes.values.slice(shapes.offset * ndim, n * ndim).fill_null(0)
    dims = flat.to_numpy(zero_copy_only=False).astype(np.int64).reshape(n, ndim)
    valid = storage.is_valid().to_numpy(zero_copy_only=False)
    if data.null_count:
        valid &= data.is_valid().to_numpy(zero_copy_only=False)
    dims = dims[valid]
    if (dims < 0).any():
        bad = dims[np.flatnonzero((dims < 0).any(axis=1))[0]]
        raise ArrowLayoutError(f"shape {bad.tolist()} has a negative size")
    uniform = extension_metadata(array.type).get("uniform_shape")
    if uniform:
        for j, size in enumerate(uniform):
            if size is not None and (dims[:, j] != size).any():
                bad = dims[np.flatnonzero(dims[:, j] != size)[0]]
                raise ArrowLayoutError(
                    f"shape {bad.tolist()} disagrees with the column's uniform_shape {uniform}"
                )
    lengths = np.diff(data.offsets.to_numpy())[valid]
    wide = np.prod(dims.astype(np.float64), axis=1)
    counts = np.prod(dims, axis=1)
    _check_sizes(wide, counts, lengths, lambda i: dims[i].tolist())


def _check_sizes(
    wide: np.ndarray[Any, Any],
    counts: np.ndarray[Any, Any],
    lengths: np.ndarray[Any, Any],
    shape: Callable[[int], list[int]],
) -> None:
    """Each row's element count (``wide`` in float64, so that it cannot wrap; ``counts``
    in int64) must be what its data holds (``lengths``); ``shape(i)`` is row i's shape."""
    wrong = np.flatnonzero((wide > 2.0**62) | (counts != lengths))
    if wrong.size:
        i = int(wrong[0])
        raise ArrowLayoutError(
            f"shape {shape(i)} needs {int(wide[i])} elements, data holds {int(lengths[i])}"
        )


def _check_variable_ranks(array: pa.Array) -> None:
    """The shapes of a variable-rank tensor (``list<int32>``, one rank per row) are
    non-negative and agree with the length of its data, as a variable-shape tensor's."""
    storage = array.storage
    data, shapes = storage.field("data"), storage.field("shape")
    valid = storage.is_valid().to_numpy(zero_copy_only=False)
    if data.null_count:
        valid &= data.is_valid().to_numpy(zero_copy_only=False)
    if shapes.null_count:  # a null shape is a scalar's (no dims)
        valid &= shapes.is_valid().to_numpy(zero_copy_only=False)
    offsets = shapes.offsets.to_numpy().astype(np.int64)
    ranks = np.diff(offsets)
    start = int(offsets[0])
    flat = shapes.values.slice(start, int(offsets[-1]) - start).fill_null(0)
    dims = flat.to_numpy(zero_copy_only=False).astype(np.int64)
    owned = np.repeat(valid, ranks)  # the dims of rows that hold a tensor
    negative = np.flatnonzero((dims < 0) & owned)
    if negative.size:
        row = int(np.searchsorted(offsets - start, negative[0], side="right")) - 1
        bad = dims[offsets[row] - start : offsets[row + 1] - start]
        raise ArrowLayoutError(f"shape {bad.tolist()} has a negative size")
    wide = np.ones(len(storage), dtype=np.float64)
    counts = np.ones(len(storage), dtype=np.int64)
    filled = np.flatnonzero(ranks > 0)
    if filled.size:  # each segment from one filled row's start to the next's: its dims
        starts = offsets[filled] - start
        wide[filled] = np.multiply.reduceat(dims.astype(np.float64), starts)
        counts[filled] = np.multiply.reduceat(dims, starts)
    lengths = np.diff(data.offsets.to_numpy())
    kept = np.flatnonzero(valid)
    _check_sizes(
        wide[kept],
        counts[kept],
        lengths[kept],
        lambda i: dims[offsets[kept[i]] - start : offsets[kept[i] + 1] - start].tolist(),
    )


def arrow_column(data: Any, *, where: str = "") -> pa.Array | pa.ChunkedArray:
    """``data`` as a pyarrow ``Array`` or ``ChunkedArray``, imported but not checked: the
    first step of :func:`as_array`, for what only retypes buffers (:func:`to_storage`).

    Raises
    ------
    UnsupportedTypeError
        If ``data`` is no Arrow data, or a table of other than one column.
    ArrowLayoutError
        If pyarrow cannot import it.
    """
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
        f"expected {_ACCEPTED}, got {_name(data)}",
        where=where or None,
    )


def arrow_table(data: Any, *, where: str = "") -> pa.Table | pa.RecordBatch:
    """``data`` as a pyarrow ``Table`` or ``RecordBatch``: one of those, or a table-like
    object of the Arrow PyCapsule interface (a Polars ``DataFrame``), imported.

    Raises
    ------
    UnsupportedTypeError
        If ``data`` is no Arrow table.
    ArrowLayoutError
        If pyarrow cannot import it.
    """
    if isinstance(data, pa.Table | pa.RecordBatch):
        return data
    if hasattr(data, "__arrow_c_stream__") and hasattr(data, "columns"):
        try:
            return pa.table(data)
        except pa.ArrowException as exc:
            raise ArrowLayoutError(
                f"pyarrow cannot import this {type(data).__qualname__}'s Arrow data ({exc}); "
                "check what produced it",
                where=where or None,
            ) from exc
    raise UnsupportedTypeError(
        "expected a pyarrow Table or RecordBatch, or a table with __arrow_c_stream__ (a "
        f"Polars DataFrame), got {_name(data)}",
        where=where or None,
    )


def arrow_type_arg(value: Any, *, function: str, where: str) -> pa.DataType:
    """``value``, which must be a pyarrow ``DataType``: the one check of an argument
    (``where``) of ``function`` that takes an Arrow type.

    Raises
    ------
    UnsupportedTypeError
        If it is anything else (an ``onnx.TypeProto`` with a hint to ``arrow_type``).
    """
    if isinstance(value, pa.DataType):
        return value
    hint = (
        "; for the Arrow type of a TypeProto, use onnx_arrow.arrow_type"
        if type(value).__name__ == "TypeProto"
        else ""
    )
    raise UnsupportedTypeError(
        f"{function} takes a pyarrow DataType, got {type(value).__name__}{hint}", where=where
    )


def arrow_schema(value: Any, *, where: str = "") -> pa.Schema:
    """``value``, which must be a pyarrow ``Schema``.

    Raises
    ------
    UnsupportedTypeError
        If it is anything else.
    """
    if isinstance(value, pa.Schema):
        return value
    raise UnsupportedTypeError(
        f"expected a pyarrow Schema (e.g. table.schema), got {_name(value)}",
        where=where or None,
    )


def _name(value: Any) -> str:
    return f"{type(value).__module__}.{type(value).__qualname__}"


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

"""Arrow data in: every column through the core's gate (``as_array``), then unwrapped.

:func:`read_input` tells a table from a column (pyarrow objects, then the Arrow
PyCapsule interface), :func:`read_column` checks one column in full and splits it into
its kind, value array and envelopes; the helpers below answer what a column holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa

from onnx_arrow.core.model import (
    NUMPY_MAX_RANK,
    OPTIONAL,
    TENSOR,
    DType,
    Kind,
    MessageType,
    SparseTensorType,
    as_array,
    child_fields,
    children,
    dtype_of_arrow,
    stacked_codes,
    tensor_layout,
    unwrap,
)
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError

__all__ = [
    "OPTIONAL_TENSOR",
    "TENSOR_KIND",
    "Column",
    "is_tensor_kind",
    "leaf_dtype",
    "read_column",
    "read_input",
    "stacked",
]

TENSOR_KIND: Final = Kind(TENSOR)
OPTIONAL_TENSOR: Final = Kind(OPTIONAL, TENSOR_KIND)


@dataclass(frozen=True, eq=False)
class Column:
    """An onnx-arrow Arrow column: as given, its value array, kind and envelopes."""

    array: pa.Array
    values: pa.Array
    kind: Kind
    envelopes: pa.Array | None


def read_column(data: Any, where: str) -> Column:
    """``data`` checked as every entry point of the core checks Arrow data, then unwrapped."""
    array = as_array(data, where=where)
    try:
        kind, values, envelopes = unwrap(array)
    except OnnxArrowError as exc:
        raise exc.at(where) if where else exc from None
    return Column(array, values, kind, envelopes)


def read_input(data: Any, where: str) -> pa.Table | pa.Array | pa.ChunkedArray:
    """A table (a ``pa.Table``, a ``RecordBatch``, a stream of rows) or one column.

    A column is handed on as it is: :func:`read_column` takes it through the gate.  A
    stream (``__arrow_c_stream__``) is a table when its rows are plain structs (a Polars
    DataFrame), else a column (a Polars Series); ``__arrow_c_array__`` is a column.
    """
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.Array | pa.ChunkedArray) or hasattr(data, "__arrow_c_array__"):
        return data
    if hasattr(data, "__arrow_c_stream__"):
        try:
            chunked = pa.chunked_array(data)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise UnsupportedTypeError(
                f"cannot read a {type(data).__name__} through the Arrow PyCapsule interface "
                f"({exc}); pass pa.chunked_array(obj) for a column",
                where=where,
            ) from None
        if pa.types.is_struct(chunked.type):
            return pa.Table.from_struct_array(chunked)
        return chunked
    raise UnsupportedTypeError(
        f"expected an onnx-arrow Arrow array, chunked array or table, got "
        f"{type(data).__module__}.{type(data).__qualname__}; convert ONNX messages with "
        "onnx_arrow.to_arrow first",
        where=where,
    )


def leaf_dtype(t: pa.DataType) -> DType | None:
    """The dtype of the tensors a column of type ``t`` holds (a map's values, not its keys)."""
    tensor = tensor_layout(t)
    if tensor is not None:
        return dtype_of_arrow(tensor.value_type)
    step = _value_child(t)
    return None if step is None else leaf_dtype(step)


def _value_child(t: pa.DataType) -> pa.DataType | None:
    """The child type on the one value path of a column: a message's value, a sparse
    tensor's values, a list's item, a map's item, a single-field struct's field; None
    where the path ends."""
    if isinstance(t, MessageType | SparseTensorType):
        (storage,) = children(t)
        name = "value" if isinstance(t, MessageType) else "values"
        return next(f.type for f in child_fields(storage) if f.name == name)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return children(t)[0]
    if pa.types.is_map(t):
        return children(t)[1]  # the items, not the keys
    if pa.types.is_struct(t) and t.num_fields == 1:
        return children(t)[0]
    return None


def is_tensor_kind(kind: Kind) -> bool:
    """A tensor, or an optional tensor: a column whose cells are ndarrays or None."""
    return kind in (TENSOR_KIND, OPTIONAL_TENSOR)


def stacked(values: pa.Array, kind: Kind) -> np.ndarray[Any, Any] | None:
    """The rows of a fixed-shape tensor column as one array, else None (also when the
    stack would have more dimensions than numpy holds: the rows are then cells)."""
    layout = tensor_layout(values.type) if is_tensor_kind(kind) else None
    if layout is None:
        return None
    if layout.layout == "fixed" and len(values.type.shape) >= NUMPY_MAX_RANK:
        return None
    return stacked_codes(values)

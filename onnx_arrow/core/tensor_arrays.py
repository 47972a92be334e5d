"""Tensor values as rows of an Arrow tensor array, and back.

The Arrow type for tensors of given shapes (:func:`tensor_type_for`), the array of
one row per tensor (:func:`tensor_array`) and the tensors of an array
(:func:`tensor_rows`), each error naming the row at fault.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa

from onnx_arrow.core.codec import codes_to_storage
from onnx_arrow.core.dtypes import DType
from onnx_arrow.core.element_types import dtype_of_arrow, element_type
from onnx_arrow.core.extension_metadata import extension_metadata
from onnx_arrow.core.tensor_codes import (
    check_plain_layout,
    codes_of_rows,
    fixed_codes,
    storage_array,
    storage_numpy,
    stored_values,
    validity,
)
from onnx_arrow.core.tensor_types import (
    CANONICAL_VARIABLE_SHAPE,
    fixed_shape_tensor,
    ragged_from_storage,
    tensor_layout,
    variable_rank_tensor,
    variable_shape_tensor,
)
from onnx_arrow.core.tensors import Tensor, numpy_shape
from onnx_arrow.errors import ArrowLayoutError, NotRepresentableError, UnsupportedTypeError

__all__ = [
    "TensorColumn",
    "stacked_codes",
    "tensor_array",
    "tensor_column",
    "tensor_dtype",
    "tensor_rows",
    "tensor_type_for",
]


def tensor_array(tensors: Sequence[Tensor], arrow_type: pa.DataType) -> pa.Array:
    """An Arrow tensor array of ``arrow_type`` with one row per tensor.

    The type comes from a declared ONNX type or from :func:`tensor_type_for`; a
    tensor that does not fit it is an error naming its row.
    """
    layout, row = _layout(arrow_type)
    for i, t in enumerate(tensors):
        _check_fits(t, arrow_type, layout, row, f"row {i}")
    flat = _concat_storage([codes_to_storage(t.codes, row) for t in tensors], row)
    values = stored_values(storage_array(flat, row), arrow_type, layout)
    if layout == "fixed":
        size = math.prod(arrow_type.shape)
        storage = pa.FixedSizeListArray.from_arrays(values, size)
        return pa.ExtensionArray.from_storage(arrow_type, storage)
    counts = np.fromiter((t.codes.size for t in tensors), dtype=np.int64, count=len(tensors))
    offsets = np.zeros(len(tensors) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    list_type = arrow_type.storage_type.field("data").type
    offset_type = np.int64 if pa.types.is_large_list(list_type) else np.int32
    if offsets[-1] > np.iinfo(offset_type).max:
        raise NotRepresentableError(
            f"{offsets[-1]} elements in one column overflow {list_type} offsets; "
            "split the values into several arrays"
        )
    data = pa.ListArray.from_arrays(pa.array(offsets.astype(offset_type)), values, type=list_type)
    shape_type = arrow_type.storage_type.field("shape").type
    dims = [t.dims for t in tensors]
    if layout == "variable":
        flat_dims = pa.array(
            np.array(dims, dtype=np.int64).reshape(-1).astype(np.int32), pa.int32()
        )
        shapes = pa.FixedSizeListArray.from_arrays(flat_dims, type=shape_type)
    else:
        shape_offsets = np.zeros(len(tensors) + 1, dtype=np.int32)
        np.cumsum([len(d) for d in dims], out=shape_offsets[1:])
        flat = np.fromiter((d for ds in dims for d in ds), dtype=np.int64)
        shapes = pa.ListArray.from_arrays(pa.array(shape_offsets), pa.array(flat.astype(np.int32)))
    storage = pa.StructArray.from_arrays([data, shapes], fields=list(arrow_type.storage_type))
    return ragged_from_storage(arrow_type, storage)


def _concat_storage(parts: list[np.ndarray[Any, Any]], row: DType) -> np.ndarray[Any, Any]:
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.empty(0, dtype=row.arrow_storage)
    return np.concatenate(parts)


def tensor_type_for(row: DType, shapes: Sequence[tuple[int, ...]]) -> pa.DataType:
    """The Arrow type for tensors of ``row`` with these shapes, which decide together.

    One shape with no 0 in it gives ``arrow.fixed_shape_tensor``; one rank a
    variable-shape type (``uniform_shape`` keeps the sizes all rows share); several
    ranks ``onnx.variable_rank_tensor``.
    """
    value_type = element_type(row)
    distinct = set(shapes)
    if len(distinct) == 1:
        (shape,) = distinct
        if 0 not in shape:
            return fixed_shape_tensor(value_type, shape)
    ranks = {len(s) for s in distinct}
    if len(ranks) == 1:
        (ndim,) = ranks
        uniform: list[int | None] = [
            sizes.pop() if len(sizes := {s[k] for s in distinct}) == 1 else None
            for k in range(ndim)
        ]
        return variable_shape_tensor(
            value_type, ndim, uniform if any(u is not None for u in uniform) else None
        )
    return variable_rank_tensor(value_type)


def tensor_dtype(arrow_type: pa.DataType) -> DType:
    """The ONNX dtype of the elements of a tensor type."""
    return _layout(arrow_type)[1]


def _layout(arrow_type: pa.DataType) -> tuple[str, DType]:
    found = tensor_layout(arrow_type)
    if found is None:
        raise UnsupportedTypeError(
            f"{arrow_type} is not a tensor type; expected arrow.fixed_shape_tensor, "
            "arrow.variable_shape_tensor, onnx.variable_shape_tensor or onnx.variable_rank_tensor"
        )
    return found.layout, dtype_of_arrow(found.value_type)


_INT32_MAX: Final = int(np.iinfo(np.int32).max)


def _check_fits(t: Tensor, arrow_type: pa.DataType, layout: str, row: DType, where: str) -> None:
    if t.dtype is not row:
        raise UnsupportedTypeError(
            f"tensor is {t.dtype.name} but the column holds {row.name}", where=where
        )
    if layout == "fixed":
        expected = tuple(arrow_type.shape)
        if t.dims != expected:
            raise NotRepresentableError(
                f"shape {list(t.dims)} differs from the column's fixed shape {list(expected)}",
                where=where,
            )
    elif layout == "variable":
        ndim = arrow_type.storage_type.field("shape").type.list_size
        uniform = extension_metadata(arrow_type).get("uniform_shape")
        if len(t.dims) != ndim or (
            uniform and any(u is not None and u != d for u, d in zip(uniform, t.dims, strict=True))
        ):
            raise NotRepresentableError(
                f"shape {list(t.dims)} does not fit the column's shape "
                f"{uniform if uniform else ['?'] * ndim}",
                where=where,
            )
    if layout != "fixed" and t.dims and max(t.dims) > _INT32_MAX:
        raise NotRepresentableError(
            f"dims {list(t.dims)} exceed int32, the type of variable-shape tensor dims",
            where=where,
        )


def tensor_rows(array: pa.Array) -> list[Tensor | None]:
    """The tensors of an Arrow tensor array (None for null rows), without envelopes."""
    if isinstance(array, pa.ChunkedArray):
        return [t for chunk in array.chunks for t in tensor_rows(chunk)]
    column = tensor_column(array)
    row, codes, dims, valid = column.dtype, column.codes, column.dims, column.valid
    bounds = column.offsets.tolist()
    return [
        Tensor(row, dims[i], codes[bounds[i] : bounds[i + 1]]) if valid[i] else None
        for i in range(len(dims))
    ]


@dataclass(frozen=True, slots=True)
class TensorColumn:
    """The tensors of an Arrow tensor array, all rows' elements in one array: row ``i``
    has ``dims[i]`` and the codes ``codes[offsets[i]:offsets[i + 1]]`` (none if it is
    null, ``valid[i]`` false)."""

    dtype: DType
    codes: np.ndarray[Any, Any]
    offsets: np.ndarray[Any, Any]
    dims: list[tuple[int, ...]]
    valid: list[bool]


def tensor_column(array: pa.Array) -> TensorColumn:
    """The tensors of an Arrow tensor array (not chunked) as one :class:`TensorColumn`;
    a row whose shape and elements disagree is an error naming it."""
    layout, row = _layout(array.type)
    storage = array.storage
    valid = validity(storage)
    if layout == "fixed":
        shape = tuple(array.type.shape)
        size = math.prod(shape)
        offsets = np.arange(len(array) + 1, dtype=np.int64) * size
        return TensorColumn(row, fixed_codes(array, row), offsets, [shape] * len(array), valid)
    data = storage.field("data")
    shapes = storage.field("shape")
    if layout == "variable" and array.type.extension_name == CANONICAL_VARIABLE_SHAPE:
        check_plain_layout(array.type)
    offsets = data.offsets.to_numpy()
    values = data.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    owned = None if storage.null_count == 0 else np.repeat(valid, np.diff(offsets))
    offsets = (offsets - offsets[0]).astype(np.int64)
    codes = codes_of_rows(storage_numpy(values, row, owned, offsets), row, offsets)
    if layout == "variable":
        ndim = shapes.type.list_size
        dims = (
            shapes.values.slice(shapes.offset * ndim, len(shapes) * ndim)
            .fill_null(0)
            .to_numpy()
            .reshape(-1, ndim)
        )
        dim_rows = [tuple(int(d) for d in r) for r in dims]
    else:
        dim_rows = [tuple(int(d) for d in s) if s is not None else () for s in shapes.to_pylist()]
    bounds = offsets.tolist()
    for i in range(len(array)):
        if valid[i] and math.prod(dim_rows[i]) != bounds[i + 1] - bounds[i]:
            raise ArrowLayoutError(
                f"shape {list(dim_rows[i])} needs {math.prod(dim_rows[i])} elements, "
                f"data holds {bounds[i + 1] - bounds[i]}",
                where=f"row {i}",
            )
    return TensorColumn(row, codes, offsets, dim_rows, valid)


def stacked_codes(array: pa.Array) -> np.ndarray[Any, Any] | None:
    """A fixed-shape tensor array without nulls as one ndarray ``(rows, *shape)``, else None."""
    layout, row = _layout(array.type)
    if layout != "fixed" or array.null_count:
        return None
    shape = numpy_shape(
        (len(array), *array.type.shape),
        what="an ndarray of the column's rows",
        where="column",
        dtype=np.dtype(row.numpy),
    )
    return fixed_codes(array, row).reshape(shape)

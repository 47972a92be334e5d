"""Arrow types and arrays for the tests of onnx-arrow's Arrow types: every own type, sample
arrays of any type, file round trips."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from onnx_arrow.core import element_types as el
from onnx_arrow.core import message_type as mt
from onnx_arrow.core import tensor_types as tt
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of

OWN_ROWS = [row for row in DTYPES.values() if row.extension_name is not None]
NATIVE_ROWS = [row for row in DTYPES.values() if row.arrow_kind is ArrowKind.NATIVE]
OTHER_ROWS = [row for row in DTYPES.values() if row.arrow_kind is not ArrowKind.NATIVE]


def ids(rows: list[DType]) -> list[str]:
    return [row.name for row in rows]


def _element(row: DType) -> pa.DataType:
    return el.element_type(row)


#: Every type onnx-arrow defines itself, each built by a fresh call.
OWN_TYPES: dict[str, Callable[[], pa.DataType]] = {
    **{row.extension_name: (lambda row=row: _element(row)) for row in OWN_ROWS},  # type: ignore[misc]
    "onnx.variable_shape_tensor[bool8]": lambda: tt.variable_shape_tensor(pa.bool8(), 2),
    "onnx.variable_shape_tensor[binary, uniform]": lambda: tt.variable_shape_tensor(
        pa.binary(), 3, [None, 2, 0]
    ),
    "onnx.variable_shape_tensor[bfloat16]": lambda: tt.variable_shape_tensor(
        _element(dtype_of("BFLOAT16")), 1
    ),
    "onnx.variable_shape_tensor[complex64]": lambda: tt.variable_shape_tensor(
        _element(dtype_of("COMPLEX64")), 1
    ),
    "onnx.variable_rank_tensor[float]": lambda: tt.variable_rank_tensor(pa.float32()),
    "onnx.variable_rank_tensor[int4]": lambda: tt.variable_rank_tensor(_element(dtype_of("INT4"))),
    "onnx.message[fixed_shape_tensor]": lambda: mt.MessageType(
        tt.fixed_shape_tensor(pa.float32(), (2, 3))
    ),
    "onnx.message[variable_rank_tensor]": lambda: mt.MessageType(
        tt.variable_rank_tensor(_element(dtype_of("FLOAT8E5M2")))
    ),
    "onnx.message[canonical variable_shape_tensor]": lambda: mt.MessageType(
        tt.variable_shape_tensor(pa.int64(), 2, [None, 4])
    ),
}


def sample_storage(storage_type: pa.DataType) -> pa.Array:
    """A small non-empty storage array of ``storage_type`` (two rows, one element or more)."""
    if pa.types.is_struct(storage_type) and storage_type.names == ["data", "shape"]:
        data_type = storage_type.field("data").type
        shape_type = storage_type.field("shape").type
        ndim = shape_type.list_size if pa.types.is_fixed_size_list(shape_type) else 1
        shapes = [[1] * ndim, [1] * ndim]
        data = pa.array([[None], [None]], pa.list_(pa.null()))
        values = sample_values(data_type.value_type, 2)
        data = pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), values, type=data_type)
        return pa.StructArray.from_arrays(
            [data, pa.array(shapes, shape_type)], fields=list(storage_type)
        )
    if pa.types.is_struct(storage_type):  # onnx.message
        value_type = storage_type.field("value").type
        value = sample_array(value_type, 2)
        envelope = pa.array([b"\x42\x01x", b""], pa.binary())
        return pa.StructArray.from_arrays([value, envelope], fields=list(storage_type))
    return sample_values(storage_type, 2)


def sample_values(value_type: pa.DataType, n: int) -> pa.Array:
    if isinstance(value_type, pa.BaseExtensionType):
        return sample_array(value_type, n)
    if pa.types.is_fixed_size_list(value_type):
        flat = sample_values(value_type.value_type, n * value_type.list_size)
        return pa.FixedSizeListArray.from_arrays(flat, type=value_type)
    if pa.types.is_binary(value_type):
        return pa.array([b"\xff\x00"] * n, value_type)
    return pa.array(np.zeros(n, dtype=value_type.to_pandas_dtype()), value_type)


def sample_array(arrow_type: pa.DataType, n: int) -> pa.Array:
    if isinstance(arrow_type, pa.ExtensionType):
        storage = sample_storage(arrow_type.storage_type)
        return pa.ExtensionArray.from_storage(arrow_type, storage.slice(0, n))
    if isinstance(arrow_type, pa.BaseExtensionType):
        name = arrow_type.extension_name
        if name == tt.CANONICAL_FIXED_SHAPE:
            size = int(np.prod(arrow_type.shape))
            flat = sample_values(arrow_type.value_type, n * size)
            return pa.ExtensionArray.from_storage(
                arrow_type, pa.FixedSizeListArray.from_arrays(flat, size)
            )
        if name == "arrow.bool8":
            return pa.ExtensionArray.from_storage(arrow_type, pa.array([0, 1][:n], pa.int8()))
        storage = sample_storage(arrow_type.storage_type)
        return tt.ragged_from_storage(arrow_type, storage.slice(0, n))
    return sample_values(arrow_type, n)


def ipc_round_trip(table: pa.Table) -> pa.Table:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return pa.ipc.open_stream(sink.getvalue()).read_all()


def parquet_round_trip(table: pa.Table) -> pa.Table:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    sink.seek(0)
    # use_threads=False: pyarrow 26 intermittently aborts at interpreter exit after a threaded
    # Parquet read ("terminate called without an active exception"); unrelated to onnx-arrow.
    return pq.read_table(sink, use_threads=False)


def _tensor(array: np.ndarray, name: str = "t") -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(array, name)

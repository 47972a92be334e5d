"""Tests of :mod:`onnx_arrow.core.tensor_column_wire`: a column's messages encoded at once
are every row's message as :func:`~onnx_arrow.core.tensor_wire.encode_tensor` gives it
alone, and a row it refuses is named."""

from __future__ import annotations

from typing import Any

import pytest
from onnx import TensorProto
from tensor_samples import ROWS, make_message, sample_codes, serialized

import onnx_arrow
from onnx_arrow.core import tensor_wire
from onnx_arrow.core.dtypes import ArrowKind, dtype_of
from onnx_arrow.core.tensor_arrays import TensorColumn, tensor_column
from onnx_arrow.core.tensor_column_wire import encode_tensor_rows
from onnx_arrow.core.tensors import Tensor
from onnx_arrow.errors import InvalidTensorError


def column_of(messages: list[TensorProto]) -> tuple[TensorColumn, list[bytes | None]]:
    array = onnx_arrow.to_arrow(messages, exact=True)
    return tensor_column(array.storage.field("value")), array.storage.field("envelope").to_pylist()


def rows_alone(column: TensorColumn, envelopes: list[bytes | None]) -> list[bytes]:
    bounds = column.offsets.tolist()
    return [
        tensor_wire.encode_tensor(
            Tensor(column.dtype, dims, column.codes[bounds[i] : bounds[i + 1]], envelopes[i])
        )
        for i, dims in enumerate(column.dims)
    ]


#: Columns as (element counts of the rows, where their data is, their envelopes): rows of
#: 0 to 5 elements or of 3 (sub-byte elements that end within a byte) or 4, in raw_data,
#: the typed field or both, with one envelope or several.
COLUMNS = {
    "0 to 5, both, named apart": (range(6), ["typed", "raw"], "apart"),
    "3, both, named apart": ([3] * 3, ["typed", "raw"], "apart"),
    "3, typed, alike": ([3] * 3, ["typed"], "alike"),
    "3, raw, alike": ([3] * 3, ["raw"], "alike"),
    "4, typed, alike": ([4] * 3, ["typed"], "alike"),
    "4, raw, unnamed": ([4] * 3, ["raw"], "unnamed"),
}


@pytest.mark.parametrize("column", COLUMNS.values(), ids=COLUMNS.keys())
def test_a_column_is_encoded_as_its_rows_are_alone(column: tuple[Any, list[str], str]) -> None:
    """For every dtype: the column encoded at once gives every row's message as
    encode_tensor gives it alone, and as protobuf serializes the message."""
    counts, storages, names = column
    for row in ROWS:
        stored = ["typed"] if row.arrow_kind is ArrowKind.BINARY else storages
        envelopes = {
            "apart": lambda i: {"name": f"t{i}"} if i % 2 else None,
            "alike": lambda i: {"name": "t", "doc_string": "d"},
            "unnamed": lambda i: None,
        }[names]
        messages = [
            make_message(row, [n], sample_codes(row, n, seed=i), storage, envelope=envelopes(i))
            for storage in stored
            for i, n in enumerate(counts)
        ]
        values, envelope_bytes = column_of(messages)
        encoded = encode_tensor_rows(
            values.dtype, values.dims, values.codes, values.offsets, envelope_bytes
        )
        expected = [serialized(m) for m in messages]
        assert encoded == rows_alone(values, envelope_bytes) == expected, row.name


def test_a_column_row_stored_in_another_dtypes_field_is_refused_at_its_row() -> None:
    row = dtype_of("FLOAT")
    messages = [make_message(row, [2], sample_codes(row, 2), "typed") for _ in range(3)]
    column, envelopes = column_of(messages)
    envelopes[1] = b"\x42\x01x\x2a\x00"  # name "x", an int32_data marker
    with pytest.raises(InvalidTensorError, match=r"^row 1: .*FLOAT elements in int32_data"):
        encode_tensor_rows(column.dtype, column.dims, column.codes, column.offsets, envelopes)

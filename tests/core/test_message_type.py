"""Tests of :mod:`onnx_arrow.core.message_type`: the value beside its envelope, from Polars too."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from arrow_samples import (
    _tensor,
)

import onnx_arrow
from onnx_arrow.core import message_type as mt
from onnx_arrow.errors import ArrowLayoutError

# --- Polars hands columns back with large storage -----------------------------------------------


def _polars_values() -> dict[str, list[Any]]:
    import ml_dtypes
    from onnx import OptionalProto, SequenceProto, TensorProto, helper

    strings = helper.make_tensor("s", TensorProto.STRING, [2], [b"a", b"\xff"])
    return {
        "fixed float": [
            _tensor(np.arange(6, dtype=np.float32).reshape(2, 3) + i) for i in range(2)
        ],
        "string": [strings, strings],
        "bool, variable shape": [_tensor(np.ones((2, 3), bool)), _tensor(np.ones((2, 2), bool))],
        "variable rank": [_tensor(np.ones((2, 3), np.float32)), _tensor(np.ones(2, np.float32))],
        "bfloat16": [_tensor(np.ones(3, ml_dtypes.bfloat16)) for _ in range(2)],
        "sequence": [
            helper.make_sequence("s", SequenceProto.TENSOR, [_tensor(np.ones(3, np.float32))]),
            helper.make_sequence("s", SequenceProto.TENSOR, []),
        ],
        "optional": [
            helper.make_optional("o", OptionalProto.TENSOR, _tensor(np.ones(2, np.float32))),
            OptionalProto(name="o", elem_type=OptionalProto.TENSOR),
        ],
        "map": [
            helper.make_map(
                "m",
                TensorProto.INT64,
                [1, 2],
                helper.make_sequence(
                    "v",
                    SequenceProto.TENSOR,
                    [_tensor(np.ones(2, np.float32)), _tensor(np.zeros(2, np.float32))],
                ),
            )
        ],
    }


@pytest.mark.parametrize("name", list(_polars_values()))
def test_message_columns_come_back_from_polars_exactly(name: str) -> None:
    # Polars keeps the extension types and turns binary and list storage into
    # large_binary and large_list, which onnx-arrow's types take

    pl = pytest.importorskip("polars")
    messages = _polars_values()[name]
    back = pl.from_arrow(pa.table({"c": onnx_arrow.to_arrow(messages, exact=True)})).to_arrow()
    column = back.column("c").combine_chunks()
    assert isinstance(column.type, mt.MessageType)
    again = [m.SerializeToString() for m in onnx_arrow.from_arrow(column)]
    assert again == [m.SerializeToString() for m in messages]


def test_an_envelope_is_binary_or_large_binary() -> None:
    assert (
        mt.MessageType(pa.int64(), envelope_type=pa.large_binary())
        .storage_type.field("envelope")
        .type
        == pa.large_binary()
    )
    with pytest.raises(ArrowLayoutError, match="binary or large_binary, not string"):
        mt.MessageType(pa.int64(), envelope_type=pa.string())

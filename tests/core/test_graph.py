"""What a model declares: its fed inputs and outputs, their types in words, its operators
and opsets."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import ModelProto, TensorProto, TypeProto, helper, numpy_helper
from store_helpers import sum_model

from onnx_arrow.core.graph import (
    declared_type,
    declared_type_text,
    graph_values,
    onnx_type_string,
    op_types,
    opsets,
)


def test_graph_values_leave_out_the_weights_listed_as_inputs() -> None:
    model = sum_model(2, weights=2)
    assert [v.name for v in model.graph.input] == ["x0", "x1", "w0", "w1"]
    assert [v.name for v in graph_values(model, "input")] == ["x0", "x1"]
    assert [v.name for v in graph_values(model, "output")] == ["y"]
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.ones(1, np.float32), "x1"),
        numpy_helper.from_array(np.zeros(1, np.int64), "i"),
        [2],
    )
    model.graph.sparse_initializer.append(sparse)
    assert [v.name for v in graph_values(model, "input")] == ["x0"]


def test_declared_type_is_that_of_the_graph_value_at_the_index() -> None:
    model = sum_model(2, weights=1)
    assert declared_type(model, "input", 1) == model.graph.input[1].type
    assert declared_type(model, "input", 2) is None  # w0 is a weight, not input 2
    assert declared_type(model, "output", 0) == model.graph.output[0].type
    assert declared_type(model, "output", 1) is None
    assert declared_type(None, "input", 0) is None
    model.graph.input[0].ClearField("type")
    assert declared_type(model, "input", 0) is None


def test_op_types_and_opsets_of_a_model() -> None:
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"]),
            helper.make_node("Abs", ["a"], ["b"]),
            helper.make_node("Relu", ["b"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 3)]
    )
    assert op_types(model) == ("Abs", "Relu")
    assert opsets(model) == "ai.onnx 21, ai.onnx.ml 3"
    assert op_types(ModelProto()) == ()
    assert opsets(ModelProto()) == "(none)"


# --- types in words ---------------------------------------------------------------------


def _tensor_type(elem: int, shape: list[Any] | None) -> TypeProto:
    return helper.make_tensor_type_proto(elem, shape)


@pytest.mark.parametrize(
    ("type_proto", "text"),
    [
        (_tensor_type(TensorProto.FLOAT, [2]), "tensor(float)"),
        (_tensor_type(TensorProto.BFLOAT16, None), "tensor(bfloat16)"),
        (helper.make_sparse_tensor_type_proto(TensorProto.INT64, [3]), "sparse_tensor(int64)"),
        (
            helper.make_sequence_type_proto(_tensor_type(TensorProto.STRING, None)),
            "seq(tensor(string))",
        ),
        (
            helper.make_optional_type_proto(
                helper.make_sequence_type_proto(_tensor_type(TensorProto.UINT8, None))
            ),
            "optional(seq(tensor(uint8)))",
        ),
        (
            helper.make_map_type_proto(
                TensorProto.STRING,
                helper.make_sequence_type_proto(_tensor_type(TensorProto.FLOAT, None)),
            ),
            "map(string,seq(tensor(float)))",
        ),
        (TypeProto(), "undefined"),
        (_tensor_type(999, None), "tensor(undefined(999))"),
        (_tensor_type(TensorProto.UNDEFINED, None), "tensor(undefined(0))"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_onnx_type_string_is_onnx_own_notation(type_proto: TypeProto, text: str) -> None:
    assert onnx_type_string(type_proto) == text


def test_declared_type_text_adds_the_declared_dims() -> None:
    assert declared_type_text(_tensor_type(TensorProto.FLOAT, [2, "N", None])) == (
        "tensor(float) [2, N, ?]"
    )
    assert declared_type_text(_tensor_type(TensorProto.FLOAT, [])) == "tensor(float) []"
    assert declared_type_text(_tensor_type(TensorProto.FLOAT, None)) == (
        "tensor(float) (any shape)"
    )
    seq = helper.make_sequence_type_proto(_tensor_type(TensorProto.FLOAT, [3]))
    assert declared_type_text(seq) == "seq(tensor(float))"

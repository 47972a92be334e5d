"""An actual value kept as a ``.pb`` of the declared type, or why it is not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from compare_helpers import stated_store
from onnx import ModelProto, TensorProto, ValueInfoProto, helper, numpy_helper

from onnx_arrow import compare as cmp
from onnx_arrow.compare.serialize import serialized


def test_an_actual_value_that_cannot_be_kept_says_so(tmp_path: Path) -> None:
    path = stated_store(tmp_path, None)

    def a_sequence(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        return [[object()]]  # where the model declares a tensor: nothing numpy_helper takes

    (row,) = cmp.compare(path, a_sequence).to_pandas().itertuples()
    assert row.status == "shape_mismatch"
    assert pd.isna(row.actual)
    assert "the actual value is not kept: the output cannot be serialized as declared" in (
        row.detail
    )


def test_an_output_the_model_declares_no_type_for_is_a_tensor_if_an_ndarray() -> None:
    # as onnx's runner reads such an expected output (and import stores it): a TensorProto;
    # a value of another kind is not guessed at
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    untyped = ValueInfoProto(name="y")  # no type
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [untyped])
    model = helper.make_model(graph)
    as_tensor = numpy_helper.from_array(np.zeros(2, np.float32), "y").SerializeToString()
    assert serialized(model, 0, np.zeros(2, np.float32), "y") == as_tensor
    for value in ([np.zeros(2, np.float32)], {1: np.zeros(1)}):
        said = "the model declares no type for output 0, and it is no ndarray"
        assert serialized(model, 0, value, "y") == said
    assert serialized(None, 0, np.zeros(2), "y") == "the model declares no type for output 0"
    assert serialized(model, 1, np.zeros(2), "z") == "the model declares no type for output 1"
    typed = helper.make_model(graph)
    typed.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]))
    kept = serialized(typed, 0, np.zeros(2, np.float32), "y")
    assert kept == numpy_helper.from_array(np.zeros(2, np.float32), "y").SerializeToString()
    refused = serialized(typed, 0, [np.zeros(2, np.float32)], "y")
    assert refused == (
        "the output cannot be serialized as declared: UnsupportedTypeError: "
        "y: expected a numpy array for tensor(float), got list"
    )

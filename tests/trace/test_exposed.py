"""A backend on a model with values exposed: what it gives, copies of the feed it may
write into, and a TraceError that says what it was asked when it cannot."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import ModelProto, TensorProto, helper

from onnx_arrow.compare import reference_backend
from onnx_arrow.errors import TraceError
from onnx_arrow.trace.exposed import run_model


def model() -> ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_the_values_in_output_order_and_the_feed_untouched() -> None:
    x = np.array([-1.0, 2.0], np.float32)
    x.flags.writeable = False

    def writes(m: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        inputs["x"][:] = 0  # a backend may write into what it is fed: a copy
        return reference_backend(m, {"x": np.array([-1.0, 2.0], np.float32)})

    got = run_model(writes, "writes", model(), {"x": x}, "a and y")
    assert [v.tolist() for v in got] == [[1.0, 2.0], [-1.0, -2.0]]
    assert x.tolist() == [-1.0, 2.0]


def test_a_backend_that_raises_or_gives_too_few() -> None:
    def raises(m: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        raise RuntimeError("only the model's own outputs")

    with pytest.raises(
        TraceError, match=r"backend mine cannot run the case's model with a and y"
    ) as info:
        run_model(raises, "mine", model(), {"x": np.zeros(2, np.float32)}, "a and y")
    assert "RuntimeError: only the model's own outputs" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(TraceError, match="gave 1 values for the 2 outputs"):
        run_model(
            lambda m, i: [np.zeros(2)], "short", model(), {"x": np.zeros(2, np.float32)}, "a and y"
        )

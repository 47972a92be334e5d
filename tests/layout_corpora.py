"""Corpora laid out as runtimes keep theirs, built with onnx.helper: files numbered against
the names inside them (KInference's rf_iris and fastgelu), a model named NAME.onnx beside
its data sets, data sets without expected outputs or without a model, and values that
contradict their declarations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from onnx import MapProto, ModelProto, SequenceProto, TensorProto, helper, numpy_helper

#: rf_iris's inputs, and the probabilities its ZipMap gives (one map per row).
IRIS_X = np.array([[0.1, 0.2, 0.7], [0.5, 0.3, 0.2]], np.float32)


def _save(path: Path, message: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(message.SerializeToString())


def iris_model() -> ModelProto:
    """rf_iris's interface: output 0 ``output_label`` (int64 [N]), output 1
    ``output_probability``, a ZipMap's seq(map(int64, tensor(float)))."""
    x = helper.make_tensor_value_info("float_input", TensorProto.FLOAT, [None, 3])
    label = helper.make_tensor_value_info("output_label", TensorProto.INT64, [None])
    probability = helper.make_value_info(
        "output_probability",
        helper.make_sequence_type_proto(
            helper.make_map_type_proto(
                TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, [])
            )
        ),
    )
    nodes = [
        helper.make_node("ArgMax", ["float_input"], ["output_label"], axis=1, keepdims=0),
        helper.make_node(
            "ZipMap",
            ["float_input"],
            ["output_probability"],
            domain="ai.onnx.ml",
            classlabels_int64s=[0, 1, 2],
        ),
    ]
    graph = helper.make_graph(nodes, "rf_iris", [x], [label, probability])
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    )


def zipmap(rows: np.ndarray, name: str) -> SequenceProto:
    """What ZipMap gives for ``rows``, as a SequenceProto of MapProtos."""
    maps: list[MapProto] = []
    for row in rows:
        values = helper.make_sequence(
            "", SequenceProto.TENSOR, [numpy_helper.from_array(np.float32(v)) for v in row]
        )
        maps.append(helper.make_map("", TensorProto.INT64, [0, 1, 2], values))
    return helper.make_sequence(name, SequenceProto.MAP, maps)


def iris_backend(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """rf_iris's outputs in graph order, computed as its model computes them."""
    x = inputs["float_input"]
    return [np.argmax(x, axis=1).astype(np.int64), [dict(enumerate(r)) for r in x]]


def rf_iris(case: Path, *, model_name: str = "model.onnx") -> Path:
    """rf_iris as KInference keeps it: ``output_0.pb`` names itself ``output_probability``
    (the model's output 1), ``output_1.pb`` names ``output_label`` (output 0)."""
    _save(case / model_name, iris_model())
    data = case / "test_data_set_0"
    _save(data / "input_0.pb", numpy_helper.from_array(IRIS_X, "float_input"))
    _save(data / "output_0.pb", zipmap(IRIS_X, "output_probability"))
    label = np.argmax(IRIS_X, axis=1).astype(np.int64)
    _save(data / "output_1.pb", numpy_helper.from_array(label, "output_label"))
    return case


def identity_model(elem: int = TensorProto.FLOAT, shape: list[Any] | None = None) -> ModelProto:
    """Y = Identity(X), of ``elem`` tensors of ``shape`` ([2] unless given)."""
    shape = [2] if shape is None else shape
    x = helper.make_tensor_value_info("X", elem, shape)
    y = helper.make_tensor_value_info("Y", elem, shape)
    graph = helper.make_graph([helper.make_node("Identity", ["X"], ["Y"])], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def fastgelu(case: Path) -> Path:
    """fastgelu as KInference keeps it: only ``output_1.pb``, named ``Y``, for a model with
    one output."""
    _save(case / "model.onnx", identity_model())
    data = case / "test_data_set_0"
    x = np.array([0.5, -1.0], np.float32)
    _save(data / "input_0.pb", numpy_helper.from_array(x, "X"))
    _save(data / "output_1.pb", numpy_helper.from_array(x, "Y"))
    return case


def without_outputs(case: Path) -> Path:
    """A case whose data set has its input and no expected output."""
    _save(case / "model.onnx", identity_model())
    _save(case / "test_data_set_0" / "input_0.pb", numpy_helper.from_array(np.ones(2, np.float32)))
    return case


def without_model(case: Path) -> Path:
    """Data sets whose model is missing."""
    x = numpy_helper.from_array(np.ones(2, np.float32), "X")
    _save(case / "test_data_set_0" / "input_0.pb", x)
    _save(case / "test_data_set_0" / "output_0.pb", x)
    return case


def contradicting(case: Path) -> Path:
    """Values that contradict what their model declares: a [2, 3] tensor for a declared
    scalar input, INT64 tensors in a declared seq(tensor(float)) output."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [])
    s = helper.make_value_info(
        "s", helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    )
    graph = helper.make_graph([helper.make_node("SequenceConstruct", ["x"], ["s"])], "g", [x], [s])
    _save(
        case / "model.onnx", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    )
    data = case / "test_data_set_0"
    _save(data / "input_0.pb", numpy_helper.from_array(np.zeros((2, 3), np.float32), "x"))
    ints = numpy_helper.from_array(np.arange(3, dtype=np.int64))
    _save(data / "output_0.pb", helper.make_sequence("s", SequenceProto.TENSOR, [ints]))
    return case


def runtime_corpus(root: Path) -> Path:
    """A corpus of each layout above, one case each."""
    rf_iris(root / "kinference" / "rf_iris")
    fastgelu(root / "kinference" / "fastgelu")
    rf_iris(root / "kinference" / "named", model_name="named.onnx")
    without_outputs(root / "kinference" / "no_outputs")
    without_model(root / "kinference" / "no_model")
    return root

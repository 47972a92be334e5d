"""Shared fixtures: the node test suite that the installed onnx builds, as messages."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import pytest
from onnx import TensorProto, TypeProto, numpy_helper


@dataclass(frozen=True)
class NodeValue:
    """One value of one data set of a node test case, serialized as onnx's writer does."""

    case: str
    data_set: int
    io: str  # "input" or "output"
    index: int
    type: TypeProto
    serialized: bytes


def _serialize(value: object, name: str, type_proto: TypeProto) -> bytes:
    kind = type_proto.WhichOneof("value")
    if kind == "map_type":
        return numpy_helper.from_dict(value, name).SerializeToString()
    if kind == "sequence_type":
        return numpy_helper.from_list(value, name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, name).SerializeToString()


@pytest.fixture(scope="session")
def node_values() -> list[NodeValue]:
    """Every value of the node suite (onnx.backend.test.loader.load_node_model_tests)."""
    from onnx.backend.test.loader import load_node_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = load_node_model_tests()
    out = []
    for case in cases:
        graph = case.model.graph
        for n, (inputs, outputs) in enumerate(case.data_sets):
            for io, values, infos in (
                ("input", inputs, graph.input),
                ("output", outputs, graph.output),
            ):
                for k, value in enumerate(values):
                    info = infos[k]
                    out.append(
                        NodeValue(
                            case.name, n, io, k, info.type, _serialize(value, info.name, info.type)
                        )
                    )
    return out

"""A value file against its model's declarations: pairing by the name inside, and values
that contradict what is declared."""

from __future__ import annotations

import numpy as np
import pytest
from layout_corpora import IRIS_X, identity_model, iris_model, zipmap
from onnx import OptionalProto, SequenceProto, TensorProto, helper, numpy_helper

from onnx_arrow.core.declarations import (
    contradiction,
    diagnosis,
    holds_model,
    message_name,
    pair_files,
)
from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.kinds import Kind
from onnx_arrow.core.tensors import Tensor


def _tensor(name: str, value: object = 1.0) -> bytes:
    return numpy_helper.from_array(np.atleast_1d(np.float32(value)), name).SerializeToString()


def test_the_name_of_every_kind_of_message() -> None:
    t = numpy_helper.from_array(np.zeros(2, np.float32), "t")
    seq = helper.make_sequence("s", SequenceProto.TENSOR, [t])
    keys = helper.make_sequence("", SequenceProto.TENSOR, [t])
    mapped = helper.make_map("m", TensorProto.INT64, [0], keys)
    optional = helper.make_optional("o", OptionalProto.TENSOR, t)
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.ones(1, np.float32), "sp"),
        numpy_helper.from_array(np.zeros(1, np.int64)),
        [2],
    )
    for message, kind, name in (
        (t, "tensor", "t"),
        (seq, "sequence", "s"),
        (mapped, "map", "m"),
        (optional, "optional", "o"),
        (sparse, "sparse_tensor", "sp"),
    ):
        assert message_name(message.SerializeToString(), kind) == name
    # no name, not a message, or read as a kind whose name field it does not hold
    assert message_name(numpy_helper.from_array(np.ones(1)).SerializeToString(), "tensor") is None
    assert message_name(b"\xff\xff", "tensor") is None
    assert message_name(t.SerializeToString(), "sequence") is None


def test_rf_iris_files_numbered_against_their_names_pair_by_name() -> None:
    files = {
        0: zipmap(IRIS_X, "output_probability").SerializeToString(),
        1: numpy_helper.from_array(np.array([2, 0], np.int64), "output_label").SerializeToString(),
    }
    pairs = pair_files("output", iris_model(), files)
    assert (pairs[0].index, pairs[0].name) == (1, "output_probability")
    assert (pairs[1].index, pairs[1].name) == (0, "output_label")


def test_fastgelu_output_1_named_y_is_the_one_output() -> None:
    pairs = pair_files("output", identity_model(), {1: _tensor("Y")})
    assert pairs[1].index == 0
    assert pairs[1].name == "Y"


def test_the_number_decides_when_the_name_is_empty_or_names_nothing_declared() -> None:
    pairs = pair_files("output", iris_model(), {0: _tensor(""), 1: _tensor("elsewhere")})
    assert [(p.index, p.name) for p in pairs.values()] == [(0, None), (1, None)]
    # a name declared for a message of another kind names nothing: the number decides
    as_tensor = numpy_helper.from_array(np.zeros(2, np.float32), "output_probability")
    assert pair_files("output", iris_model(), {1: as_tensor.SerializeToString()})[1].index == 1


def test_files_for_no_declared_value_say_why() -> None:
    beyond = pair_files("output", identity_model(), {3: _tensor("")})[3]
    assert beyond.index is None
    assert "the model declares no output 3 (1 outputs: 'Y')" in (beyond.reason or "")
    # two files naming Y: the lower number is for it
    twice = pair_files("output", identity_model(), {0: _tensor("Y"), 1: _tensor("Y")})
    assert twice[0].index == 0
    assert twice[1].index is None
    assert "output_0.pb names output 0 'Y' too" in (twice[1].reason or "")
    # a number taken by a file that names it
    taken = pair_files("output", iris_model(), {0: _tensor(""), 1: _tensor("output_label")})
    assert taken[1].index == 0
    assert taken[0].index is None
    assert "output_1.pb names output 0 'output_label'" in (taken[0].reason or "")


def test_inputs_pair_among_the_inputs_that_are_not_initializers() -> None:
    model = identity_model()
    model.graph.input.insert(0, helper.make_tensor_value_info("w", TensorProto.FLOAT, [2]))
    model.graph.initializer.append(numpy_helper.from_array(np.ones(2, np.float32), "w"))
    assert pair_files("input", model, {0: _tensor("X")})[0].index == 0
    assert pair_files("input", model, {0: _tensor("w")})[0].name is None


@pytest.mark.parametrize(
    ("declared", "holds", "said"),
    [
        (
            helper.make_tensor_type_proto(TensorProto.FLOAT, []),
            Tensor(dtype_of("FLOAT"), (2, 3), np.zeros(6, np.float32)),
            "holds tensor(float) [2, 3], which contradicts the declared tensor(float) []",
        ),
        (
            helper.make_tensor_type_proto(TensorProto.INT64, ["N", 3]),
            Tensor(dtype_of("FLOAT"), (2, 3), np.zeros(6, np.float32)),
            "holds tensor(float) [2, 3], which contradicts the declared tensor(int64) [N, 3]",
        ),
    ],
)
def test_a_tensor_that_contradicts_its_declaration(declared, holds, said) -> None:
    found = contradiction(declared, holds, Kind("tensor"))
    assert found is not None
    assert found.message("x.pb") == f"x.pb: {said}; kept exactly with its own type"


def test_what_fits_its_declaration_contradicts_nothing() -> None:
    t = Tensor(dtype_of("FLOAT"), (2, 3), np.zeros(6, np.float32))
    for shape in ([2, 3], ["N", 3], [None, None], None):
        declared = helper.make_tensor_type_proto(TensorProto.FLOAT, shape)
        assert contradiction(declared, t, Kind("tensor")) is None, shape


def test_a_model_in_a_pb_and_a_message_of_another_kind_are_said_to_be_so() -> None:
    model = iris_model().SerializeToString()
    assert holds_model(model)
    assert not holds_model(_tensor("Y"))
    assert "it holds an ONNX model (a ModelProto), not a value: rename it model.onnx" in (
        diagnosis(model, "tensor") or ""
    )
    # rf_iris's output_0.pb read as output 0 declares it: a tensor, whose dims would be the
    # letters of its name
    said = diagnosis(zipmap(IRIS_X, "output_probability").SerializeToString(), "tensor")
    assert said == "it is a SequenceProto named 'output_probability', not a TensorProto"
    assert diagnosis(b"\xff", "tensor") is None

"""Tests of :mod:`onnx_arrow.core.python_values`: every kind of node as a Python value, and
Python values as messages of their declared type, byte for byte as onnx's helpers write them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import OptionalProto, SequenceProto, TensorProto, TypeProto, helper, numpy_helper

from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.nodes import MapValue, OptionalValue, SequenceValue, SparseValue
from onnx_arrow.core.python_values import python_value, value_message
from onnx_arrow.core.tensors import Tensor
from onnx_arrow.errors import NotRepresentableError, OnnxArrowError, UnsupportedTypeError

FLOAT = dtype_of("FLOAT")
INT64 = dtype_of("INT64")
STRING = dtype_of("STRING")


def floats(*values: float) -> Tensor:
    return Tensor(FLOAT, (len(values),), np.array(values, dtype=np.float32))


def strings(*values: bytes) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def test_a_tensor_is_an_ndarray_of_its_shape_and_dtype() -> None:
    t = Tensor(FLOAT, (2, 1), np.array([1.0, 2.0], np.float32))
    got = python_value(t)
    assert got.shape == (2, 1)
    assert got.dtype == np.float32
    assert got.tolist() == [[1.0], [2.0]]


def test_string_elements_are_bytes_unless_str_is_asked_for() -> None:
    t = Tensor(STRING, (2,), strings(b"caf\xc3\xa9", b""))
    assert python_value(t).tolist() == [b"caf\xc3\xa9", b""]
    assert python_value(t, strings="str").tolist() == ["caf\u00e9", ""]


def test_sequences_are_lists_and_optionals_their_value_or_none() -> None:
    seq = SequenceValue([floats(1.0), OptionalValue(None), None])
    got = python_value(seq)
    assert isinstance(got, list)
    assert len(got) == 3
    assert got[0].tolist() == [1.0]
    assert got[1] is None
    assert got[2] is None
    assert python_value(OptionalValue(floats(2.0))).tolist() == [2.0]
    assert python_value(None) is None


@pytest.mark.parametrize("maps_as_dicts", [False, True])
def test_maps_are_pairs_in_order_or_dicts_on_request(maps_as_dicts: bool) -> None:
    m = MapValue(INT64, np.array([3, 1, 3], np.int64), [floats(1.0), floats(2.0), floats(3.0)])
    got = python_value(m, maps_as_dicts=maps_as_dicts)
    if maps_as_dicts:  # as onnx.numpy_helper gives: the last of duplicate keys wins
        assert list(got) == [3, 1]
        assert got[3].tolist() == [3.0]
    else:  # order and duplicate keys kept
        assert [(k, v.tolist()) for k, v in got] == [(3, [1.0]), (1, [2.0]), (3, [3.0])]


def test_string_map_keys_follow_strings() -> None:
    m = MapValue(STRING, strings(b"a", b"b"), [floats(1.0), floats(2.0)])
    assert [k for k, _ in python_value(m)] == [b"a", b"b"]
    assert list(python_value(m, maps_as_dicts=True, strings="str")) == ["a", "b"]


def test_nested_maps_pass_the_options_down() -> None:
    inner = MapValue(STRING, strings(b"k"), [floats(1.0)])
    got = python_value(SequenceValue([OptionalValue(inner)]), maps_as_dicts=True, strings="str")
    assert list(got[0]) == ["k"]


def test_a_sparse_tensor_is_its_dims_values_and_indices() -> None:
    indices = Tensor(INT64, (2,), np.array([0, 5], np.int64))
    got = python_value(SparseValue((2, 3), floats(1.0, 2.0), indices))
    assert got["dims"] == (2, 3)
    assert got["values"].tolist() == [1.0, 2.0]
    assert got["indices"].tolist() == [0, 5]


# --- Python values as messages ---------------------------------------------------------

FLOAT_T = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
STRING_T = helper.make_tensor_type_proto(TensorProto.STRING, None)
SEQ_FLOAT = helper.make_sequence_type_proto(FLOAT_T)
SEQ_SEQ = helper.make_sequence_type_proto(SEQ_FLOAT)
OPT_FLOAT = helper.make_optional_type_proto(FLOAT_T)
OPT_SEQ = helper.make_optional_type_proto(SEQ_FLOAT)
MAP_INT64 = helper.make_map_type_proto(TensorProto.INT64, FLOAT_T)
MAP_STRING = helper.make_map_type_proto(TensorProto.STRING, SEQ_FLOAT)


def f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


@pytest.mark.parametrize(
    ("value", "declared", "onnx_writes"),
    [
        (f32(1.0, 2.0), FLOAT_T, numpy_helper.from_array),
        (np.float32(1.5), FLOAT_T, lambda v, n: numpy_helper.from_array(np.asarray(v), n)),
        (np.array([b"a", b"bc"], object), STRING_T, numpy_helper.from_array),
        ([f32(1.0), f32(2.0, 3.0)], SEQ_FLOAT, numpy_helper.from_list),
        ([], SEQ_FLOAT, numpy_helper.from_list),
        ([[f32(1.0)], []], SEQ_SEQ, numpy_helper.from_list),
        (None, OPT_FLOAT, numpy_helper.from_optional),
        (f32(4.0), OPT_FLOAT, numpy_helper.from_optional),
        ([f32(4.0)], OPT_SEQ, numpy_helper.from_optional),
        ({3: f32(1.0), 1: f32(2.0)}, MAP_INT64, numpy_helper.from_dict),
    ],
    ids=lambda x: "" if callable(x) else None,
)
def test_a_value_is_written_as_onnx_s_helpers_write_it(
    value: Any, declared: TypeProto, onnx_writes: Any
) -> None:
    for name in ("x", ""):
        expected = onnx_writes(value, name).SerializeToString()
        assert value_message(value, name, declared).SerializeToString() == expected


def test_the_declared_type_decides_where_onnx_s_helpers_would_guess() -> None:
    assert value_message([], "s", SEQ_SEQ).elem_type == SequenceProto.SEQUENCE  # not TENSOR
    assert value_message([[]], "s", SEQ_SEQ).sequence_values[0].elem_type == SequenceProto.TENSOR
    pairs = [(3, f32(1.0)), (3, f32(2.0))]  # the pairs python_value gives: duplicates kept
    m = value_message(pairs, "m", MAP_INT64)
    assert list(m.keys) == [3, 3]
    assert m.key_type == TensorProto.INT64
    assert value_message({}, "m", MAP_INT64).values.elem_type == SequenceProto.TENSOR
    # MapProto holds every integer key in int64: UINT64 past 2**63 as its bit pattern
    uint64 = helper.make_map_type_proto(TensorProto.UINT64, FLOAT_T)
    assert list(value_message({2**63 + 5: f32(1.0)}, "m", uint64).keys) == [2**63 + 5 - 2**64]
    # string keys, which onnx's from_dict cannot write (it reads "k" as a numpy dtype name)
    strings = value_message({"k": [f32(1.0)], b"l": []}, "m", MAP_STRING)
    assert (strings.key_type, list(strings.string_keys)) == (TensorProto.STRING, [b"k", b"l"])
    assert strings.values.elem_type == SequenceProto.SEQUENCE
    nested = helper.make_optional_type_proto(OPT_FLOAT)
    opt = value_message(f32(1.0), "o", nested)
    assert opt.elem_type == OptionalProto.OPTIONAL
    assert opt.optional_value.tensor_value.float_data or opt.optional_value.tensor_value.raw_data
    proto = numpy_helper.from_array(f32(1.0), "kept")
    assert value_message(proto, "x", FLOAT_T) is proto  # a message is kept as it is


def test_a_sparse_tensor_is_its_dims_values_and_indices_as_python_value_gives() -> None:
    declared = TypeProto()
    declared.sparse_tensor_type.elem_type = TensorProto.FLOAT
    indices = Tensor(INT64, (2,), np.array([0, 5], np.int64))
    value = python_value(SparseValue((2, 3), floats(1.0, 2.0), indices))
    sparse = value_message(value, "sp", declared)
    assert list(sparse.dims) == [2, 3]
    assert numpy_helper.to_array(sparse.values).tolist() == [1.0, 2.0]
    assert numpy_helper.to_array(sparse.indices).tolist() == [0, 5]
    assert sparse.values.name == "sp"


@pytest.mark.parametrize(
    ("value", "declared", "error", "words"),
    [
        (
            [f32(1.0)],
            FLOAT_T,
            UnsupportedTypeError,
            "x: expected a numpy array for tensor(float), got list",
        ),
        (
            None,
            FLOAT_T,
            UnsupportedTypeError,
            "x: expected a numpy array for tensor(float), got None",
        ),
        (
            f32(1.0),
            SEQ_FLOAT,
            UnsupportedTypeError,
            "x: expected a list for seq(tensor(float)), got ndarray",
        ),
        ([f32(1.0), None], SEQ_FLOAT, UnsupportedTypeError, "x[1]: expected a numpy array"),
        ({1: [f32(1.0)]}, MAP_INT64, UnsupportedTypeError, "x[1]: expected a numpy array"),
        ([[f32(1.0)], [[2.0]]], SEQ_SEQ, UnsupportedTypeError, "x[1][0]: expected a numpy array"),
        (
            {"k": f32(1.0)},
            MAP_INT64,
            NotRepresentableError,
            "x: keys: map keys ['k'] are not all INT64 values",
        ),
        ({2**63: f32(1.0)}, MAP_INT64, NotRepresentableError, "are not all INT64 values"),
        ({1: [f32(1.0)]}, MAP_STRING, UnsupportedTypeError, "x: keys: a STRING element is a int"),
        ([f32(1.0)], OPT_FLOAT, UnsupportedTypeError, "x.value: expected a numpy array"),
        (f32(1.0), TypeProto(), NotRepresentableError, "x: no type is declared (undefined)"),
        ([], helper.make_sequence_type_proto(TypeProto()), NotRepresentableError, "element type"),
        (
            {1.5: f32(1.0)},
            helper.make_map_type_proto(TensorProto.FLOAT, FLOAT_T),
            NotRepresentableError,
            "x: the declared key type of map(float,tensor(float)) is not STRING or an integer",
        ),
        ({b"k": f32(1.0)}, MAP_STRING, UnsupportedTypeError, "x[b'k']: expected a list"),
    ],
)
def test_a_value_that_does_not_fit_its_declared_type_is_refused_where_it_is(
    value: Any, declared: TypeProto, error: type[OnnxArrowError], words: str
) -> None:
    with pytest.raises(error) as info:
        value_message(value, "x", declared)
    assert words in str(info.value)


def _as_onnx_writes(value: Any, name: str, declared: TypeProto) -> bytes:
    """What onnx's test-data writer (``onnx.backend.test.cmd_tools``) writes for a value."""
    if declared.HasField("map_type"):
        return numpy_helper.from_dict(value, name).SerializeToString()
    if declared.HasField("sequence_type"):
        return numpy_helper.from_list(value, name).SerializeToString()
    if declared.HasField("optional_type"):
        return numpy_helper.from_optional(value, name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, name).SerializeToString()


def test_the_node_suite_is_written_as_onnx_s_test_data_writer_writes_it(node_values: Any) -> None:
    names = {"input": "x", "output": "y"}
    for v in node_values:
        expected = _as_onnx_writes(v.value, names[v.io], v.type)
        got = value_message(v.value, names[v.io], v.type).SerializeToString()
        assert got == expected, (v.case, v.data_set, v.io, v.index)


@pytest.mark.parametrize(
    ("dims", "indices", "text"),
    [
        ([-2, 3], [0, 1], r"^sp\.dims: dims \[-2, 3\] has a negative size"),
        ([2, 3], [0, 6], r"^sp\.indices: indices\[1\] is 6, outside dims \[2, 3\]"),
    ],
)
def test_a_sparse_value_every_reader_would_refuse_is_never_written(dims, indices, text) -> None:
    from onnx_arrow.errors import InvalidMessageError

    declared = TypeProto()
    declared.sparse_tensor_type.elem_type = TensorProto.FLOAT
    value = {"dims": dims, "values": np.float32([1, 2]), "indices": np.int64(indices)}
    with pytest.raises(InvalidMessageError, match=text):
        value_message(value, "sp", declared)

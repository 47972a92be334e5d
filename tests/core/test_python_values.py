"""Tests of :mod:`onnx_arrow.core.python_values`: every kind of node as a Python value."""

from __future__ import annotations

import numpy as np
import pytest

from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.nodes import MapValue, OptionalValue, SequenceValue, SparseValue
from onnx_arrow.core.python_values import python_value
from onnx_arrow.core.tensors import Tensor

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

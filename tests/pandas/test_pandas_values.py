"""Numpy cells to ONNX values: every cell read as its kind says, or refused at its row."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import OptionalProto, TensorProto, numpy_helper
from pandas_helpers import (
    ROWS,
    _bits,
    _map,
    _sample,
    _serialized,
)

import onnx_arrow
import onnx_arrow.pandas as oap
from onnx_arrow.core.dtypes import DType
from onnx_arrow.errors import OnnxArrowError, OnnxArrowWarning, UnsupportedTypeError


def test_changed_uint64_map_keys_keep_their_full_range() -> None:
    big = 2**63 + 5  # past int64
    arr = onnx_arrow.to_arrow([_map([1, 2], TensorProto.UINT64)], exact=True)
    s = oap.to_pandas(arr, cells="numpy")
    changed = s.copy()
    changed[0] = {big: np.zeros(2, np.float32), 1: np.ones(2, np.float32)}
    assert list(oap.to_pandas(changed.onnx.to_arrow(), cells="numpy")[0]) == [big, 1]
    # MapProto holds every integer key in int64 keys: UINT64 past 2**63 as its bit pattern
    assert list(onnx_arrow.from_arrow(changed.onnx.to_arrow())[0].keys) == [big - 2**64, 1]
    for bad in (-1, 2**64, 1.5):
        changed[0] = {bad: np.zeros(2, np.float32)}
        with pytest.raises(OnnxArrowError, match="are not all UINT64 values"):
            changed.onnx.to_arrow()


def test_map_cells_are_read_as_the_core_reads_a_map_s_python_value() -> None:
    from onnx import helper

    from onnx_arrow.core.model import value_message

    arr = onnx_arrow.to_arrow([_map([b"a", b"b"], TensorProto.STRING)], exact=True)
    changed = oap.to_pandas(arr, cells="numpy")
    cell = [("k", np.zeros(2, np.float32)), (b"l", np.ones(2, np.float32))]  # pairs, str or bytes
    changed[0] = cell
    (got,) = onnx_arrow.from_arrow(changed.onnx.to_arrow())
    declared = helper.make_map_type_proto(
        TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    )
    assert list(got.string_keys) == list(value_message(cell, "m", declared).string_keys)
    assert list(got.string_keys) == [b"k", b"l"]
    changed[0] = [1, 2]  # neither a dict nor pairs
    with pytest.raises(UnsupportedTypeError, match=r"^row 0: expected a dict or a list of"):
        changed.onnx.to_arrow()
    changed[0] = {3: np.zeros(2, np.float32)}
    with pytest.raises(UnsupportedTypeError, match=r"^row 0: keys: a STRING element is a int"):
        changed.onnx.to_arrow()


def test_a_series_of_ndarrays_without_a_record() -> None:
    s = pd.Series([np.eye(2, dtype=ml_dtypes.bfloat16), None], dtype=object)
    assert s.onnx.dtype == "BFLOAT16"
    assert s.onnx.to_float32()[0].dtype == np.float32
    with pytest.warns(OnnxArrowWarning, match="no onnx-arrow record"):
        s.onnx.to_arrow()
    back = onnx_arrow.from_arrow(s.onnx.to_arrow(rebuild=True))  # on purpose: no warning
    assert isinstance(back[0], OptionalProto)
    assert not back[1].HasField("tensor_value")
    with pytest.raises(UnsupportedTypeError, match="row 0 holds a list"):
        pd.Series([[np.zeros(2)]], dtype=object).onnx.to_arrow(rebuild=True)
    with pytest.raises(UnsupportedTypeError, match="holds no ONNX values"):
        pd.Series([1, 2]).onnx.to_numpy()


def test_errors_and_warnings_name_rows_by_their_label() -> None:
    tensors = [numpy_helper.from_array(np.full((2, 2), i, np.float32), f"x{i}") for i in range(4)]
    s = oap.to_pandas(onnx_arrow.to_arrow(tensors, exact=True), cells="numpy")
    t = s[s.index >= 2].copy()
    t[3] = "oops"  # the second row, labelled 3
    with pytest.raises(UnsupportedTypeError, match=r"^row 3: expected a numpy array, got str"):
        t.onnx.to_arrow()
    t.index = pd.Index(["a", "b"])
    with pytest.raises(UnsupportedTypeError, match=r"^row 'b': expected a numpy array"):
        t.onnx.to_arrow()
    unrecorded = pd.Series([np.zeros(2), [np.zeros(2)]], index=pd.Index([10, 20]), dtype=object)
    assert isinstance(unrecorded.index[1], np.integer)  # shown as 20, not np.int64(20)
    with pytest.raises(UnsupportedTypeError, match=r"^row 20 holds a list"):
        unrecorded.onnx.to_arrow()
    inner_absent = OptionalProto(name="n", elem_type=OptionalProto.OPTIONAL)
    inner_absent.optional_value.CopyFrom(OptionalProto(elem_type=OptionalProto.TENSOR))
    outer_absent = OptionalProto(name="n", elem_type=OptionalProto.OPTIONAL)
    arrow_cells = oap.to_pandas(
        onnx_arrow.to_arrow([outer_absent, inner_absent], exact=True), cells="arrow"
    )
    arrow_cells.index = pd.Index(["p", "q"])
    with pytest.warns(OnnxArrowWarning, match="^row 'q': a present optional"):
        arrow_cells.onnx.to_numpy()


@given(
    row=st.sampled_from(ROWS),
    shapes=st.lists(
        st.none() | st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple),
        min_size=1,
        max_size=5,
    ),
    seed=st.integers(0, 2**16),
)
@settings(max_examples=80, deadline=None)
def test_cells_rebuild_values_exactly(
    row: DType, shapes: list[tuple[int, ...] | None], seed: int
) -> None:
    """Any tensors, absent rows included: cells rebuilt without a record give the same bits."""
    arrays = [None if s is None else _sample(row, s, seed + i) for i, s in enumerate(shapes)]
    messages = [numpy_helper.from_optional(a, dtype=OptionalProto.TENSOR) for a in arrays]
    if all(a is None for a in arrays):
        return  # no dtype anywhere: nothing says what the column holds
    s = oap.to_pandas(onnx_arrow.to_arrow(messages, exact=True), cells="numpy")
    assert _serialized(onnx_arrow.from_arrow(s.onnx.to_arrow())) == _serialized(messages)
    bare = pd.Series(list(s), dtype=object)  # no record: rebuilt from the cells alone
    values = onnx_arrow.to_pylist(bare.onnx.to_arrow(rebuild=True), strings="bytes")
    for got, want in zip(values, arrays, strict=True):
        assert (got is None) == (want is None)
        if want is not None:
            assert _bits(got) == _bits(want)


@pytest.mark.parametrize(
    ("cell", "text"),
    [
        ({"dims": (-2, 2)}, r"^row 'b'.dims: dims \[-2, 2\] has a negative size"),
        ({"indices": np.array([0, 9])}, r"^row 'b'.indices: indices\[1\] is 9, outside"),
        ({"indices": np.array([[0, 0], [1, 2]])}, r"^row 'b'.indices: indices\[1\] is"),
    ],
)
def test_sparse_cells_are_checked_as_from_arrow_checks_sparse_rows(cell, text) -> None:
    from onnx import helper

    sparse = helper.make_sparse_tensor(
        helper.make_tensor("v", 1, [2], [1, 2]), helper.make_tensor("i", 7, [2], [0, 3]), [2, 2]
    )
    column = onnx_arrow.to_arrow([sparse, sparse])
    s = oap.to_pandas(column, cells="numpy")
    s.index = ["a", "b"]
    good = {"dims": (2, 2), "values": np.array([1, 2], np.float32), "indices": np.array([0, 1])}
    s["b"] = {**good, **cell}
    with pytest.raises(onnx_arrow.InvalidMessageError, match=text):
        oap.from_pandas(s)
    with pytest.raises(onnx_arrow.InvalidMessageError, match=text):
        s.onnx.to_arrow(rebuild=True)

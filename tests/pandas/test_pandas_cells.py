"""Numpy cells keep shape and dtype: tensors, strings, BOOL, optionals, containers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from onnx import OptionalProto, TensorProto, helper, numpy_helper
from pandas_helpers import (
    ROWS,
    _bits,
    _map,
    _optional_column,
    _sequences,
    _serialized,
    _tensors,
)

import onnx_arrow
import onnx_arrow.pandas as oap
from onnx_arrow.core.dtypes import DType
from onnx_arrow.errors import OnnxArrowWarning, UnsupportedTypeError


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
@pytest.mark.parametrize("cells", ["numpy", "arrow"])
@pytest.mark.parametrize(
    "shapes", [[(2, 3), (2, 3), (2, 3)], [(2, 3), (1, 3), (0, 3)], [(4,), (), (2, 1, 2)]]
)
def test_tensor_columns_keep_shape_and_dtype(
    row: DType, cells: oap.Cells, shapes: list[tuple[int, ...]]
) -> None:
    expected, tensors = _tensors(row, shapes)
    arr = onnx_arrow.to_arrow(tensors, exact=True)
    s = oap.to_pandas(arr, cells=cells)
    values = s.onnx.to_numpy()
    if cells == "numpy":
        assert s.dtype == object
        for i, cell in enumerate(s):
            assert isinstance(cell, np.ndarray)
            assert cell.shape == shapes[i]
            assert cell.dtype == row.numpy
            assert not cell.flags.writeable
            assert _bits(cell) == _bits(values[i])
    else:
        assert isinstance(s.dtype, pd.ArrowDtype)
        assert s.dtype.pyarrow_dtype == arr.type
    if len(set(shapes)) == 1:
        assert isinstance(values, np.ndarray)
        assert values.shape == (len(shapes), *shapes[0])
    else:
        assert isinstance(values, list)
    for i, value in enumerate(values):
        assert value.dtype == row.numpy
        assert value.shape == shapes[i]
        assert _bits(value) == _bits(expected[i])
    assert s.onnx.dtype == row.name
    assert s.onnx.shape.tolist() == shapes
    back = s.onnx.to_arrow()
    assert back.type == arr.type
    assert _serialized(onnx_arrow.from_arrow(back)) == _serialized(tensors)


def test_strings_keep_invalid_utf8_bytes() -> None:
    words = np.array([[b"\xff\xfe", b"ok"], ["\u00e9".encode(), b""]], dtype=object)
    tensor = numpy_helper.from_array(words, "s")
    cell = oap.to_pandas(onnx_arrow.to_arrow([tensor], exact=True), cells="numpy")[0]
    assert cell.dtype == object
    assert cell.tolist() == words.tolist()


def test_bool_is_bool_not_int8() -> None:
    arr = onnx_arrow.to_arrow([numpy_helper.from_array(np.array([True, False]))], exact=True)
    assert arr.value.to_pandas()[0].dtype == np.int8  # what pyarrow alone gives
    assert oap.to_pandas(arr, cells="numpy")[0].dtype == np.bool_
    assert oap.to_pandas(arr, cells="arrow").onnx.to_numpy().dtype == np.bool_


@pytest.mark.parametrize("cells", ["numpy", "arrow"])
def test_absent_optionals_are_none_never_nan(cells: oap.Cells) -> None:
    messages = _optional_column()
    s = oap.to_pandas(onnx_arrow.to_arrow(messages, exact=True), cells=cells)
    values = s.onnx.to_numpy()
    assert values[0] is None
    assert values[2] is None
    assert values[1].shape == (3,)
    assert s.onnx.shape.tolist() == [None, (3,), None]
    if cells == "numpy":
        assert s[0] is None
    stats = s.onnx.stats()
    assert list(stats.columns) == ["count", "min", "max", "mean", "nan_count", "inf_count"]
    assert [str(t) for t in stats.dtypes] == ["Int64", "Float64", "Float64", "Float64"] + [
        "Int64"
    ] * 2
    assert all(v is pd.NA for v in stats.iloc[0])
    assert stats.iloc[1].tolist() == [3, 1.0, np.inf, np.inf, 1, 1]
    assert _serialized(onnx_arrow.from_arrow(s.onnx.to_arrow())) == _serialized(messages)


def test_bare_value_columns_with_nulls() -> None:
    # a value column, not a message column: a null row is an absent optional
    arr = onnx_arrow.to_arrow(_optional_column(), exact=True).value
    s = oap.to_pandas(arr, cells="numpy")
    assert s[0] is None
    assert s[1].dtype == np.float32
    back = s.onnx.to_arrow()
    assert back.type == arr.type
    assert back.null_count == 2


@pytest.mark.parametrize("cells", ["numpy", "arrow"])
def test_sequences_are_lists(cells: oap.Cells) -> None:
    messages = _sequences()
    s = oap.to_pandas(onnx_arrow.to_arrow(messages, exact=True), cells=cells)
    values = s.onnx.to_numpy()
    assert isinstance(values, list)
    assert isinstance(values[0], list)
    assert [a.tolist() for a in values[0]] == [[0, 0], [0, 1, 2]]
    assert s.onnx.dtype == "INT64"
    assert s.onnx.stats()["count"].tolist() == [5, 1]
    with pytest.raises(UnsupportedTypeError, match="no shape per row"):
        _ = s.onnx.shape
    assert _serialized(onnx_arrow.from_arrow(s.onnx.to_arrow())) == _serialized(messages)


def test_maps_are_dicts_when_keys_are_distinct() -> None:
    messages = [_map([1, 2], TensorProto.INT64), _map([b"\xff", b"a"], TensorProto.STRING)]
    ints = oap.to_pandas(onnx_arrow.to_arrow(messages[:1], exact=True), cells="numpy")
    strings = oap.to_pandas(onnx_arrow.to_arrow(messages[1:], exact=True), cells="numpy")
    assert list(ints[0]) == [1, 2]
    assert ints[0][2].tolist() == [1.0, 1.0]
    assert list(strings[0]) == [b"\xff", b"a"]
    assert ints.onnx.dtype == "FLOAT"
    for s, m in ((ints, messages[0]), (strings, messages[1])):
        assert _serialized(onnx_arrow.from_arrow(s.onnx.to_arrow())) == _serialized([m])


def test_maps_are_pairs_when_a_key_repeats() -> None:
    messages = [_map([1, 2], TensorProto.INT64), _map([7, 7], TensorProto.INT64)]
    s = oap.to_pandas(onnx_arrow.to_arrow(messages, exact=True), cells="numpy")
    assert all(isinstance(cell, list) for cell in s)  # one form for the whole column
    assert [k for k, _ in s[1]] == [7, 7]
    assert _serialized(onnx_arrow.from_arrow(s.onnx.to_arrow())) == _serialized(messages)
    changed = s.copy()
    changed[1] = [(3, np.zeros(2, np.float32)), (3, np.ones(2, np.float32))]
    rebuilt = onnx_arrow.from_arrow(changed.onnx.to_arrow())[1]
    assert list(rebuilt.keys) == [3, 3]


def test_sparse_tensors() -> None:
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "v"),
        numpy_helper.from_array(np.array([0, 3], np.int64), "i"),
        [2, 2],
    )
    s = oap.to_pandas(onnx_arrow.to_arrow([sparse], exact=True), cells="numpy")
    assert s[0]["dims"] == (2, 2)
    assert s[0]["values"].tolist() == [1.0, 2.0]
    assert s.onnx.shape.tolist() == [(2, 2)]
    assert s.onnx.stats()["mean"].tolist() == [1.5]
    assert _serialized(onnx_arrow.from_arrow(s.onnx.to_arrow())) == _serialized([sparse])


def test_nested_optional_absence_warns_and_round_trips() -> None:
    inner_absent = OptionalProto(name="n", elem_type=OptionalProto.OPTIONAL)
    inner_absent.optional_value.CopyFrom(OptionalProto(elem_type=OptionalProto.TENSOR))
    outer_absent = OptionalProto(name="n", elem_type=OptionalProto.OPTIONAL)
    messages = [inner_absent, outer_absent]
    arr = onnx_arrow.to_arrow(messages, exact=True)
    with pytest.warns(OnnxArrowWarning, match="row 0: a present optional"):
        s = oap.to_pandas(arr, cells="numpy")
    assert s.tolist() == [None, None]
    assert _serialized(onnx_arrow.from_arrow(s.onnx.to_arrow())) == _serialized(messages)
    oap.to_pandas(arr, cells="arrow")  # keeps them apart: no warning


def test_a_rank_numpy_cannot_hold_is_a_located_error_and_a_stack_falls_back_to_cells() -> None:
    from onnx_arrow.core.tensors import NUMPY_MAX_RANK

    deep = onnx_arrow.to_arrow([helper.make_tensor("x", TensorProto.FLOAT, [1] * 100, [1.0])])
    with pytest.raises(onnx_arrow.NotRepresentableError, match=r"^row 0: .*rank 100"):
        oap.to_pandas(deep, cells="numpy")
    s = oap.to_pandas(deep)  # Arrow cells keep it, and give it back
    assert s.onnx.to_arrow().equals(deep)
    with pytest.raises(onnx_arrow.NotRepresentableError, match=r"^row 0: .*rank 100"):
        s.onnx.to_numpy()
    # rows of numpy's highest rank are cells; their stack would be one rank more
    top = helper.make_tensor("x", TensorProto.FLOAT, [1] * NUMPY_MAX_RANK, [1.0])
    column = onnx_arrow.to_arrow([top, top])
    for cells in ("numpy", "arrow"):
        got = oap.to_pandas(column, cells=cells).onnx.to_numpy()
        assert isinstance(got, list)
        assert [c.ndim for c in got] == [NUMPY_MAX_RANK] * 2

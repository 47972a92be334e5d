"""Numpy cells back to Arrow: unchanged rows exactly, others from cells; what is lost says so."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from onnx import TensorProto, numpy_helper
from pandas_helpers import (
    _named,
    _optional_column,
    _sequences,
    _serialized,
)

import onnx_arrow
import onnx_arrow.pandas as oap
from onnx_arrow.errors import OnnxArrowWarning


def test_unchanged_rows_come_back_exactly() -> None:
    tensors = [numpy_helper.from_array(np.full((2, 2), i, np.float32), f"x{i}") for i in range(5)]
    arr = onnx_arrow.to_arrow(tensors, exact=True)
    s = oap.to_pandas(arr, cells="numpy")
    assert s.onnx.to_arrow() is arr
    picked = s[s.index % 2 == 0].iloc[::-1]
    assert _serialized(onnx_arrow.from_arrow(picked.onnx.to_arrow())) == _serialized(
        tensors[::2][::-1]
    )
    copied = pickle.loads(pickle.dumps(s))  # the record pickles as a type, rows from cells
    with pytest.warns(OnnxArrowWarning, match="lost its source rows to pickling"):
        back = onnx_arrow.from_arrow(copied.onnx.to_arrow())
    assert [numpy_helper.to_array(t).tolist() for t in back] == [
        numpy_helper.to_array(t).tolist() for t in tensors
    ]


def test_changed_and_new_rows_are_built_from_cells() -> None:
    tensors = [numpy_helper.from_array(np.full((2, 2), i, np.float32), f"x{i}") for i in range(3)]
    s = oap.to_pandas(onnx_arrow.to_arrow(tensors, exact=True), cells="numpy")
    with pytest.raises(ValueError, match="read-only"):
        s[0][0, 0] = 9.0
    s[1] = np.full((2, 2), 7, np.float32)
    s[5] = np.zeros((3,), np.float32)  # a new row with a new shape: variable-shape column
    with pytest.warns(OnnxArrowWarning, match="no longer fit the column's type"):
        back = onnx_arrow.from_arrow(s.onnx.to_arrow())
    assert back[0] == tensors[0]
    assert back[1].name == "x1"  # its envelope still fits
    assert numpy_helper.to_array(back[1]).tolist() == [[7, 7], [7, 7]]
    assert back[3].name == ""
    assert numpy_helper.to_array(back[3]).shape == (3,)
    in_place = oap.to_pandas(onnx_arrow.to_arrow(_sequences(), exact=True), cells="numpy")
    in_place[0].append(np.array([9], np.int64))  # a list cell changed in place
    rebuilt = onnx_arrow.from_arrow(in_place.onnx.to_arrow())[0]
    assert [numpy_helper.to_array(t).tolist() for t in rebuilt.tensor_values] == [
        [0, 0],
        [0, 1, 2],
        [9],
    ]


def test_reindexed_rows_are_absent() -> None:
    s = oap.to_pandas(onnx_arrow.to_arrow(_optional_column(), exact=True), cells="numpy")
    moved = s.reindex([1, 7])
    back = onnx_arrow.from_arrow(moved.onnx.to_arrow())
    assert back[0] == _optional_column()[1]
    assert not back[1].HasField("tensor_value")


def test_rows_taken_in_another_order_keep_their_envelopes() -> None:
    tensors = [numpy_helper.from_array(np.full((2, 2), i, np.float32), f"x{i}") for i in range(6)]
    s = oap.to_pandas(onnx_arrow.to_arrow(tensors, exact=True), cells="numpy")
    t = s.iloc[[4, 1, 3]].copy()
    t[1] = np.full((2, 2), 9, np.float32)  # changed: its old envelope still fits
    t[7] = np.zeros((2, 2), np.float32)  # new: no envelope
    back = onnx_arrow.from_arrow(t.onnx.to_arrow())
    assert [b.name for b in back] == ["x4", "x1", "x3", ""]
    assert back[0] == tensors[4]
    assert back[2] == tensors[3]
    assert numpy_helper.to_array(back[1]).tolist() == [[9, 9], [9, 9]]


PANDAS_OPERATIONS = {
    "concat": lambda a, b: pd.concat([a, b], ignore_index=True),
    "pickle": lambda a, b: pickle.loads(pickle.dumps(pd.concat([a, b], ignore_index=True))),
    "DataFrame": lambda a, b: pd.DataFrame({"x": pd.concat([a, b], ignore_index=True)})["x"],
    "rename": lambda a, b: pd.DataFrame({"x": pd.concat([a, b], ignore_index=True), "y": 1}).rename(
        columns={"x": "z"}
    )["z"],
}


@pytest.mark.parametrize("operation", list(PANDAS_OPERATIONS))
def test_arrow_cells_keep_every_message_through_pandas(operation: str) -> None:
    first, second = _named(3), _named(2, start=3)
    a = oap.to_pandas(onnx_arrow.to_arrow(first, exact=True))
    b = oap.to_pandas(onnx_arrow.to_arrow(second, exact=True))
    assert isinstance(a.dtype, pd.ArrowDtype)  # the default
    s = PANDAS_OPERATIONS[operation](a, b)
    assert _serialized(onnx_arrow.from_arrow(s.onnx.to_arrow())) == _serialized(first + second)
    assert s.onnx.to_numpy().shape == (5, 2, 2)


@pytest.mark.parametrize("operation", list(PANDAS_OPERATIONS))
def test_numpy_cells_that_lose_their_record_say_so(operation: str) -> None:
    first, second = _named(3), _named(2, start=3)
    a = oap.to_pandas(onnx_arrow.to_arrow(first, exact=True), cells="numpy")
    b = oap.to_pandas(onnx_arrow.to_arrow(second, exact=True), cells="numpy")
    s = PANDAS_OPERATIONS[operation](a, b)
    with pytest.warns(OnnxArrowWarning, match="no onnx-arrow record"):
        back = onnx_arrow.from_arrow(s.onnx.to_arrow())
    # the values are all there; the names and doc strings, as the warning says, are not
    assert [numpy_helper.to_array(m).tolist() for m in back] == [
        numpy_helper.to_array(m).tolist() for m in first + second
    ]
    assert {m.name for m in back} == {""}


# --- numpy cells are lossy, and loud: one warning per column whose rows lost their record -------


def _numpy_cells(n: int = 3) -> tuple[list[TensorProto], pd.Series]:
    tensors = _named(n)
    return tensors, oap.to_pandas(onnx_arrow.to_arrow(tensors, exact=True), cells="numpy")


def _lost_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "no onnx-arrow record" in str(w.message)]


def test_a_concat_of_a_column_with_itself_warns_once_that_rows_lost_their_record() -> None:
    tensors, s = _numpy_cells()
    twice = pd.concat([s, s], ignore_index=True)
    assert twice.attrs == s.attrs  # pandas keeps the one record: rows 3-5 have no label in it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        back = onnx_arrow.from_arrow(twice.onnx.to_arrow())
    assert _lost_warnings(caught) == [
        "the Series: row 3 and 2 more have no onnx-arrow record (their labels no longer find "
        "the rows to_pandas gave them: pd.concat(ignore_index=True), a new index): numpy cells "
        "are lossy, so "
        "they are built from their cells alone, without the names and doc strings of their "
        "messages; use to_pandas(cells='arrow') to keep them, or .onnx.to_arrow(rebuild=True) "
        "to build from cells on purpose"
    ]
    assert [m.name for m in back] == ["x0", "x1", "x2", "", "", ""]  # as the warning says
    assert [numpy_helper.to_array(m).tolist() for m in back] == [
        numpy_helper.to_array(m).tolist() for m in tensors + tensors
    ]
    back = onnx_arrow.from_arrow(twice.onnx.to_arrow(rebuild=True))  # meant: no warning
    assert len(back) == 6


def test_relabelled_rows_warn_and_repeated_labels_find_their_rows() -> None:
    tensors, s = _numpy_cells()
    relabelled = s.copy()
    relabelled.index = pd.Index(["a", "b", "c"])
    with pytest.warns(OnnxArrowWarning, match=r"^the Series: row 'a' and 2 more have no onnx"):
        relabelled.onnx.to_arrow()
    # labels 0, 1, 2 twice: each finds its row, so nothing is lost and nothing warns
    back = onnx_arrow.from_arrow(pd.concat([s, s]).onnx.to_arrow())
    assert _serialized(back) == _serialized(tensors + tensors)


def test_a_frame_warns_once_per_column_at_its_name() -> None:
    _, s = _numpy_cells()
    frame = pd.DataFrame({"a": s, "b": s})
    frame.attrs = {oap.ATTRS_KEY: {"a": s.attrs[oap.ATTRS_KEY][None]}}
    frame.attrs[oap.ATTRS_KEY]["b"] = s.attrs[oap.ATTRS_KEY][None]
    twice = pd.concat([frame, frame], ignore_index=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        oap.from_pandas(twice)
    lost = _lost_warnings(caught)
    assert [m.split(":")[0] for m in lost] == ["column 'a'", "column 'b'"]


def test_rows_that_lose_nothing_do_not_warn() -> None:
    _, s = _numpy_cells()
    s.onnx.to_arrow()  # unchanged
    s.iloc[::-1].onnx.to_arrow()  # reordered: each label finds its row
    grown = s.copy()
    grown[9] = np.zeros((2, 2), np.float32)  # a new row: it had no record to lose
    assert onnx_arrow.from_arrow(grown.onnx.to_arrow())[3].name == ""
    bare = oap.to_pandas(onnx_arrow.to_arrow(_named()), cells="numpy")  # no envelopes
    pd.concat([bare, bare], ignore_index=True).onnx.to_arrow()
    decoded = oap.to_pandas(onnx_arrow.to_arrow(_named(), exact=True)).onnx.to_float32()
    pd.concat([decoded, decoded], ignore_index=True).onnx.to_arrow()  # decoded on purpose

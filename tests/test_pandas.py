"""The pandas adapter: cells that keep shape and dtype, the ``onnx`` accessor, the catalog."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import ml_dtypes
import numpy as np
import onnx
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import MapProto, OptionalProto, SequenceProto, TensorProto, helper, numpy_helper
from store_helpers import one_data_set_case

import onnx_arrow
import onnx_arrow.pandas as oap
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of_numpy
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store
from onnx_arrow.corpus.format import DATA_COLUMNS
from onnx_arrow.corpus.sources import CorpusError
from onnx_arrow.errors import OnnxArrowError, OnnxArrowWarning, UnsupportedTypeError

ROWS = list(DTYPES.values())


def _serialized(messages: Any) -> list[bytes]:
    return [m.SerializeToString() for m in messages]


def _bits(array: np.ndarray[Any, Any]) -> Any:
    """An array's exact content: bytes objects for STRING, raw bytes otherwise (NaN payloads)."""
    if array.dtype == object:
        return (array.shape, array.reshape(-1).tolist())
    return (array.shape, array.dtype, np.ascontiguousarray(array).view(np.uint8).tobytes())


def _sample(row: DType, shape: tuple[int, ...], seed: int = 0) -> np.ndarray[Any, Any]:
    """Elements of ``row`` over its whole range: every bit pattern may come up."""
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape))
    if row.arrow_kind is ArrowKind.BINARY:
        words = [b"", b"a", b"\xff\xfe invalid utf-8", "\u00e9".encode(), b"\x00"]
        out = np.empty(count, dtype=object)
        out[:] = [words[i % len(words)] for i in range(count)]
        return out.reshape(shape)
    if row.arrow_kind is ArrowKind.BOOL8:
        return rng.integers(0, 2, count).astype(np.bool_).reshape(shape)
    if row.bits < 8 or row.name.startswith("FLOAT6"):
        codes = rng.integers(0, 1 << row.bits, count).astype(np.uint8)
        return codes.view(row.numpy).reshape(shape)
    raw = rng.integers(0, 256, count * row.numpy.itemsize).astype(np.uint8)
    return raw.view(row.numpy).reshape(shape)


def _tensors(
    row: DType, shapes: list[tuple[int, ...]]
) -> tuple[list[np.ndarray[Any, Any]], list[TensorProto]]:
    arrays = [_sample(row, shape, seed=i) for i, shape in enumerate(shapes)]
    return arrays, [numpy_helper.from_array(a, f"t{i}") for i, a in enumerate(arrays)]


# --- the adapter stays an adapter ------------------------------------------------------


def test_import_onnx_arrow_does_not_import_pandas() -> None:
    code = (
        "import sys, onnx_arrow, onnx_arrow.corpus; "
        "assert 'pandas' not in sys.modules, 'pandas imported'; "
        "import onnx_arrow.pandas, pandas; "
        "assert hasattr(pandas.Series([], dtype=object), 'onnx')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr


# --- cells keep shape and dtype -----------------------------------------------------------


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


def _optional_column() -> list[OptionalProto]:
    return [
        numpy_helper.from_optional(None, "o", dtype=OptionalProto.TENSOR),
        numpy_helper.from_optional(np.array([1.0, np.nan, np.inf], np.float32), "o"),
        numpy_helper.from_optional(None, "o", dtype=OptionalProto.TENSOR),
    ]


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


# --- containers ----------------------------------------------------------------------------


def _sequences() -> list[SequenceProto]:
    return [
        numpy_helper.from_list([np.zeros(2, np.int64), np.arange(3, dtype=np.int64)], "s"),
        numpy_helper.from_list([np.full(1, 5, np.int64)], "s"),
    ]


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


def _map(keys: list[Any], key_type: int) -> MapProto:
    m = MapProto(name="m", key_type=key_type)
    if key_type == TensorProto.STRING:
        m.string_keys.extend(keys)
    else:
        m.keys.extend(keys)
    m.values.elem_type = SequenceProto.TENSOR
    m.values.tensor_values.extend(
        numpy_helper.from_array(np.full(2, i, np.float32)) for i in range(len(keys))
    )
    return m


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


# --- round trips ------------------------------------------------------------------------------


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


def test_accessor_reads_the_column_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    arr = onnx_arrow.to_arrow(_optional_column(), exact=True)
    built: list[str] = []
    real_column = oap._column

    def column(data: Any, where: str) -> Any:
        built.append(where)
        return real_column(data, where)

    monkeypatch.setattr(oap, "_column", column)
    s = oap.to_pandas(arr, cells="arrow")
    for name in ("shape", "dtype", "stats", "to_numpy", "to_arrow", "to_float32"):
        built.clear()
        member = getattr(s.onnx, name)  # a property reads the column here
        if callable(member):
            member()
        assert len(built) == 1, name
    scanned: list[int] = []
    real_kind = oap._kind_of_cells

    def kind_of_cells(cells: Any, labels: Any, where: str) -> Any:
        scanned.append(len(cells))
        return real_kind(cells, labels, where)

    monkeypatch.setattr(oap, "_kind_of_cells", kind_of_cells)
    unrecorded = pd.Series([np.eye(2, dtype=np.float32), None], dtype=object)
    assert unrecorded.onnx.shape.tolist() == [(2, 2), None]
    assert scanned == [2]


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


def test_to_float32_decodes_exotic_floats() -> None:
    codes = np.arange(256, dtype=np.uint8)
    tensors = [numpy_helper.from_array(codes.view(ml_dtypes.float8_e5m2), "f8")]
    s = oap.to_pandas(onnx_arrow.to_arrow(tensors, exact=True), cells="arrow")
    decoded = s.onnx.to_float32()
    assert decoded[0].dtype == np.float32
    want = codes.view(ml_dtypes.float8_e5m2).astype(np.float32)
    np.testing.assert_array_equal(decoded[0], want)
    assert decoded.onnx.dtype == "FLOAT"
    arr = onnx_arrow.to_arrow([numpy_helper.from_array(np.arange(3))], exact=True)
    ints = oap.to_pandas(arr, cells="numpy")
    assert ints.onnx.to_float32()[0].dtype == np.int64  # not a float: left as it is


# --- zero copy --------------------------------------------------------------------------------


@pytest.mark.parametrize("cells", ["numpy", "arrow"])
def test_to_numpy_is_zero_copy_for_float32(cells: oap.Cells) -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    arr = onnx_arrow.to_arrow([numpy_helper.from_array(r) for r in x], exact=True)
    address = arr.value.storage.values.buffers()[1].address
    s = oap.to_pandas(arr, cells=cells)
    stacked = s.onnx.to_numpy()
    assert stacked.ctypes.data == address
    np.testing.assert_array_equal(stacked, x)
    if cells == "numpy":
        assert s[0].ctypes.data == address
        assert s.iloc[1:].onnx.to_numpy().ctypes.data == address + 6 * 4
        np.testing.assert_array_equal(s.iloc[::-1].onnx.to_numpy(), x[::-1])  # a copy
    else:
        assert s.onnx.to_arrow().value.storage.values.buffers()[1].address == address


# --- tables and interchange -----------------------------------------------------------------


def test_tables_and_pycapsule_objects() -> None:
    x = onnx_arrow.to_arrow(
        [numpy_helper.from_array(np.eye(2, dtype=np.int64), "e")] * 2, exact=True
    )
    field = pa.field("e", x.type, metadata={"io": "input", "index": "0"})
    table = pa.Table.from_arrays(
        [x, onnx_arrow.to_arrow(_sequences(), exact=True)], names=["e", "s"]
    )
    table = table.cast(pa.schema([field, table.schema.field(1)]))

    class Stream:
        def __arrow_c_stream__(self, requested_schema: object = None) -> object:
            return table.__arrow_c_stream__(requested_schema)

    for data in (table, table.to_batches()[0], Stream()):
        for cells in ("numpy", "arrow"):
            frame = oap.to_pandas(data, cells=cells)
            assert list(frame.columns) == ["e", "s"]
            assert frame["e"].onnx.to_numpy().shape == (2, 2, 2)
            back = oap.from_pandas(frame)
            assert back.schema == table.schema
            assert back.schema.field("e").metadata == {b"io": b"input", b"index": b"0"}
            for name in ("e", "s"):
                assert _serialized(onnx_arrow.from_arrow(back.column(name))) == _serialized(
                    onnx_arrow.from_arrow(table.column(name))
                )
    with pytest.raises(UnsupportedTypeError, match="repeats column names"):
        oap.to_pandas(pa.Table.from_arrays([x, x], names=["a", "a"]), cells="numpy")
    with pytest.raises(UnsupportedTypeError, match="not the Arrow form"):
        oap.to_pandas(pa.table({"n": [1, 2]}), cells="numpy")
    with pytest.raises(ValueError, match="cells must be"):
        oap.to_pandas(x, cells="list")  # type: ignore[arg-type]


# --- the node suite store ------------------------------------------------------------------


@pytest.fixture(scope="module")
def node_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pandas") / "node.parquet"
    write_store(NodeSuiteSource(), path)
    return path


@pytest.fixture(scope="module")
def cat(node_store: Path) -> pd.DataFrame:
    return oap.catalog(node_store)


def test_catalog_has_one_row_per_value_file(node_store: Path, cat: pd.DataFrame) -> None:
    roles = pq.read_table(node_store, columns=["role"]).column("role").to_pylist()
    assert len(cat) == roles.count("value")
    if onnx.__version__ == "1.23.2":
        assert len(cat) == 6524
    assert list(cat.columns) == list(oap.CATALOG_COLUMNS)
    assert cat.path.is_unique
    dtypes = {name: str(t) for name, t in cat.dtypes.items()}
    assert dtypes["count"] == dtypes["nan_count"] == dtypes["opset"] == "Int64"
    assert dtypes["index"] == dtypes["data_set"] == "Int32"
    assert dtypes["mean"] == "Float64"
    assert dtypes["dtype"] == "string"
    assert cat["count"].notna().all()
    assert set(cat.value_kind) == {"tensor", "sequence", "optional"}
    assert cat.io.isin(["input", "output"]).all()


def test_catalog_declared_name_is_the_graph_name_case_arrays_uses(
    node_store: Path, cat: pd.DataFrame
) -> None:
    assert cat.declared_name.notna().all()
    assert cat.name.isna().sum() < len(cat)  # the .pb names: some files leave theirs out
    store = Store(node_store)
    for case in ("node/test_abs", "node/test_sequence_insert_at_back", "node/test_add_bcast"):
        rows = cat[(cat.case == case) & (cat.data_set == 0)]
        data_set = store.case_arrays(case)[0]
        for io in ("input", "output"):
            declared = rows[rows.io == io].sort_values("index").declared_name.tolist()
            assert declared == list(data_set[f"{io}s"]), case


def test_catalog_reads_no_data_columns(node_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    real_read, real_batches = pq.read_table, pq.ParquetFile.iter_batches

    def read_table(*args: Any, columns: list[str], **kwargs: Any) -> pa.Table:
        read.extend(columns)
        return real_read(*args, columns=columns, **kwargs)

    def iter_batches(self: pq.ParquetFile, *args: Any, columns: list[str], **kwargs: Any) -> Any:
        read.extend(columns)
        return real_batches(self, *args, columns=columns, **kwargs)

    monkeypatch.setattr(pq, "read_table", read_table)
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", iter_batches)
    oap.catalog(Store(node_store))
    assert read
    assert not [c for c in read if c in DATA_COLUMNS or c == "envelope"]


def test_catalog_models(node_store: Path, cat: pd.DataFrame) -> None:
    store = Store(node_store)
    for case in ("node/test_abs", "node/test_sequence_insert_at_back", "node/test_if_seq"):
        model = store.model(case)
        rows = cat[cat.case == case]
        ops = tuple(sorted({n.op_type for n in model.graph.node}))
        opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        assert set(rows.op_types) == {ops}
        assert set(rows.opset) == {opset}


def _leaves(value: Any) -> list[np.ndarray[Any, Any]]:
    if value is None:
        return []
    if isinstance(value, np.ndarray):
        return [value]
    return [a for item in value for a in _leaves(item)]


def test_catalog_containers_sum_their_tensors(node_store: Path, cat: pd.DataFrame) -> None:
    store = Store(node_store)
    containers = cat[cat.value_kind != "tensor"]
    assert len(containers) > 0
    for case in containers.case.unique():
        for value in store.values(case):
            row = cat[cat.path == value.path].iloc[0]
            leaves = _leaves(value.to_numpy())
            assert row["tensors"] == len(leaves), value.path
            assert row["count"] == sum(a.size for a in leaves), value.path
            if leaves:
                assert row["dtype"] == dtype_of_numpy(leaves[0].dtype).name
                assert row["shape"] == leaves[0].shape
                non_empty = [a for a in leaves if a.size]
                if non_empty:
                    assert row["max"] == max(float(a.max()) for a in non_empty)
            else:
                assert row["dtype"] is pd.NA
                assert row["shape"] is None


def test_which_tests_use_float8(node_store: Path, cat: pd.DataFrame) -> None:
    answer = cat[cat.dtype.str.startswith("FLOAT8")].case.unique()
    assert len(answer) > 0
    assert "node/test_cast_FLOAT_to_FLOAT8E4M3FN" in set(answer)
    expected = duckdb.execute(
        "SELECT DISTINCT test_case FROM read_parquet(?) "
        "WHERE role IN ('value', 'element') AND dtype LIKE 'FLOAT8%'",
        [str(node_store)],
    ).fetchall()
    assert set(answer) == {case for (case,) in expected}


def test_which_expected_outputs_contain_nan(node_store: Path, cat: pd.DataFrame) -> None:
    answer = cat[(cat.io == "output") & (cat.nan_count > 0)]
    assert len(answer) > 0
    assert (answer["nan_count"] > 0).all()
    assert (answer.io == "output").all()
    expected = duckdb.execute(
        "SELECT DISTINCT path FROM read_parquet(?) "
        "WHERE role IN ('value', 'element') AND io = 'output' AND nan_count > 0",
        [str(node_store)],
    ).fetchall()
    assert set(answer.path) == {path for (path,) in expected}
    value = next(v for v in Store(node_store).values(answer.case.iloc[0]) if v.io == "output")
    assert np.isnan(np.asarray(value.to_numpy(), dtype=np.float64)).any()


def test_largest_tensors_per_operator(cat: pd.DataFrame) -> None:
    largest = (
        cat.explode("op_types").sort_values("count", ascending=False).drop_duplicates("op_types")
    )
    per_op = cat.explode("op_types").groupby("op_types")["count"].max()
    assert len(largest) == len(per_op) > 100
    assert largest.set_index("op_types")["count"].sort_index().equals(per_op.sort_index())
    top = largest.iloc[0]
    assert top["count"] == cat["count"].max()
    assert int(np.prod(top["shape"])) == top["count"]
    assert re.fullmatch(r"node/test_\w+", top["case"])


def _one_case_store(path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = np.array([-1.0, 2.0], np.float32)
    write_store([one_data_set_case("node/test_abs", model, x, np.abs(x))], path)
    return path


def _with_value_kind(src: Path, dst: Path, path: str, text: str) -> Path:
    """The store rewritten with ``text`` as the value_kind of the row of ``path``."""
    table = pq.read_table(src)
    kinds = [
        text if p == path else k
        for p, k in zip(table["path"].to_pylist(), table["value_kind"].to_pylist(), strict=True)
    ]
    i = table.schema.get_field_index("value_kind")
    table = table.set_column(i, table.schema.field(i), pa.array(kinds, pa.string()))
    pq.write_table(table, dst)
    return dst


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("{not json", CorpusError, "value_kind is not JSON (Expecting property name"),
        ("[" * 5000 + "]" * 5000, CorpusError, "value_kind nests 5000 levels deep"),
        ("[" + "9" * 5000 + "]", CorpusError, "value_kind is not JSON (Exceeds the limit"),
        ('["tensr"]', OnnxArrowError, 'value_kind: ["tensr"] is not an ONNX value kind'),
    ],
)
def test_catalog_refuses_a_damaged_value_kind(
    tmp_path: Path, text: str, error: type[Exception], message: str
) -> None:
    good = _one_case_store(tmp_path / "good.parquet")
    assert oap.catalog(good).value_kind.tolist() == ["tensor", "tensor"]
    output = "node/test_abs/test_data_set_0/output_0.pb"
    bad = _with_value_kind(good, tmp_path / "bad.parquet", output, text)
    with pytest.raises(error) as caught:
        oap.catalog(bad)
    assert str(caught.value).startswith(f"{bad}: {output}: ")
    assert message in str(caught.value)


def test_case_tables_round_trip(node_store: Path) -> None:
    store = Store(node_store)
    for case in (
        "node/test_abs",
        "node/test_cast_FLOAT_to_FLOAT8E4M3FN",
        "node/test_sequence_insert_at_back",
        "node/test_optional_has_element_empty_optional_input",
    ):
        table = store.case_table(case)
        for cells in ("numpy", "arrow"):
            frame = oap.to_pandas(table, cells=cells)
            back = oap.from_pandas(frame)
            assert back.schema.equals(table.schema, check_metadata=True)
            for i in range(table.num_columns):
                assert _serialized(onnx_arrow.from_arrow(back.column(i))) == _serialized(
                    onnx_arrow.from_arrow(table.column(i))
                )
    frame = oap.to_pandas(store.case_table("node/test_cast_FLOAT_to_FLOAT8E4M3FN"), cells="numpy")
    assert frame["output"][0].dtype == ml_dtypes.float8_e4m3fn
    assert frame["output"].onnx.to_float32()[0].dtype == np.float32


def test_stats_take_each_rows_own_dtype_and_name_a_row_they_cannot_take() -> None:
    s = pd.Series([np.array([1, 2], np.int32), np.array([np.nan, 3], np.float32)], name="x")
    stats = s.onnx.stats()
    assert stats.iloc[0].tolist()[:4] == [2, 1.0, 2.0, 1.5]
    assert stats.iloc[0]["nan_count"] is pd.NA  # no NaN count for integers
    assert stats.iloc[1].tolist() == [2, 3.0, 3.0, 3.0, 1, 0]
    dates = pd.Series([np.array(["2020-01-01"], "datetime64[D]")], name="t")
    with pytest.raises(UnsupportedTypeError, match="column 't': row 0: numpy dtype datetime64"):
        dates.onnx.stats()


def test_stats_say_nan_where_every_element_is_nan_as_the_html_view_does() -> None:
    from onnx_arrow import jupyter

    nans = np.array([np.nan, np.nan], np.float32)
    s = pd.Series([nans, np.array([], np.float32), None], name="x", dtype=object)
    stats = s.onnx.stats()
    assert np.isnan(stats.loc[0, "min"])
    assert np.isnan(stats.loc[0, "mean"])
    assert stats["min"].isna().tolist() == [False, True, True]  # NaN is a value, <NA> is none
    row = stats.to_string().splitlines()[1]
    assert "NaN" in row
    assert "<NA>" not in row
    html = jupyter.html(onnx_arrow.to_arrow([numpy_helper.from_array(nans)]))
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html.split("<table")[-1])
    assert cells[3:6] == ["nan", "nan", "nan"]  # min, max, mean of row 0


def test_the_column_record_prints_short() -> None:
    big = numpy_helper.from_array(np.ones((100, 100), np.float32))
    s = oap.to_pandas(onnx_arrow.to_arrow([big] * 50, exact=True), cells="numpy")
    assert len(repr(s.attrs)) < 300


# --- no hidden state: what pandas does to a column keeps its messages, or says so -------------


def _named(n: int = 3, start: int = 0) -> list[TensorProto]:
    out = []
    for i in range(start, start + n):
        t = numpy_helper.from_array(np.full((2, 2), i, np.float32), f"x{i}")
        t.doc_string = f"tensor {i}"
        out.append(t)
    return out


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


def test_malformed_arrow_is_refused_before_a_buffer_is_read() -> None:
    """Offsets that run backwards: pandas never sees them, onnx-arrow refuses them located."""
    offsets = pa.py_buffer(np.array([0, 1000, 2], dtype=np.int32).tobytes())
    strings = pa.Array.from_buffers(pa.binary(), 2, [None, offsets, pa.py_buffer(b"ab")])
    storage = pa.FixedSizeListArray.from_arrays(strings, 1)
    column = pa.ExtensionArray.from_storage(pa.fixed_shape_tensor(pa.binary(), [1]), storage)
    for cells in ("arrow", "numpy"):
        with pytest.raises(onnx_arrow.ArrowLayoutError, match=r"^column 's': the Arrow data is"):
            oap.to_pandas(pa.table({"s": column}), cells=cells)

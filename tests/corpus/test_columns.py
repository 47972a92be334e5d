"""The store's columns built from their buffers (corpus/columns.py): equal to what
``pyarrow.array`` makes of the same values, nulls, empty values and slices included."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from onnx_arrow.corpus import columns
from onnx_arrow.errors import NotRepresentableError, UnsupportedTypeError

ITEMS = [
    (pa.string(), ["a", None, "", "é∑", None, "node/test_abs"]),
    (pa.binary(), [b"\x00\x01", None, b"", b"x" * 300]),
    (pa.int32(), [0, None, -5, 2**31 - 1]),
    (pa.int64(), [None, None]),
    (pa.float64(), [0.5, None, float("inf"), -0.0]),
    (pa.list_(pa.int64()), [(1, 3, 224, 224), None, (), (0,), [2**40]]),
    (pa.string(), []),
    (pa.list_(pa.int64()), []),
]


@pytest.mark.parametrize(("type_", "items"), ITEMS, ids=lambda x: str(x)[:20])
def test_a_column_of_python_values_is_pyarrow_s(type_: pa.DataType, items: list) -> None:
    got = columns.of_items(items, type_)
    got.validate(full=True)
    assert got.type == type_
    assert got.equals(pa.array(items, type_))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "float32", "float64"])
def test_numbers_with_and_without_nulls_are_pyarrow_s(dtype: str) -> None:
    values = np.arange(-3, 7).astype(dtype)
    valid = np.array([True, False] * 5)
    type_ = pa.from_numpy_dtype(np.dtype(dtype))
    assert columns.numbers(values, type_).equals(pa.array(values, type_))
    with_nulls = columns.numbers(values, type_, valid)
    with_nulls.validate(full=True)
    assert with_nulls.equals(pa.array(values, type_, mask=~valid))
    assert columns.numbers(values, type_, np.ones(10, bool)).null_count == 0


def test_lists_and_values_of_a_slice() -> None:
    flat = columns.numbers(np.arange(6, dtype=np.float32), pa.float32())
    lists = columns.lists(
        np.array([2, 0, 4]), flat, pa.list_(pa.float32()), np.array([True, False, True])
    )
    lists.validate(full=True)
    assert lists.to_pylist() == [[0.0, 1.0], None, [2.0, 3.0, 4.0, 5.0]]
    part = lists.slice(2).flatten()
    assert columns.values_of(part).tolist() == [2.0, 3.0, 4.0, 5.0]
    assert columns.values_of(pa.array([], pa.float32())).size == 0
    with pytest.raises(ValueError, match="nulls"):
        columns.values_of(pa.array([1.0, None]))


def test_a_type_it_does_not_build_is_refused() -> None:
    with pytest.raises(UnsupportedTypeError, match="timestamp"):
        columns.of_items([1], pa.timestamp("s"))


@pytest.mark.parametrize("start", [0, 1, 7, 8, 9, 13])
@pytest.mark.parametrize("length", [0, 1, 8, 17])
def test_validity_and_numbers_of_any_slice_are_numpy_s(start: int, length: int) -> None:
    """Read from the bitmaps and buffers at any bit offset, as ``to_numpy`` reads them
    (which imports pandas): booleans, with nulls and without."""
    bits = [i % 3 == 0 for i in range(40)]
    with_nulls = [None if i % 5 == 2 else b for i, b in enumerate(bits)]
    for array in (
        pa.array(bits),
        pa.array(with_nulls, pa.bool_()),
        pa.array([None if i % 4 == 1 else i for i in range(40)], pa.int16()),
        pa.array(np.arange(40, dtype=np.float32)),
    ):
        piece = array.slice(start, length)
        valid = columns.validity_of(piece)
        assert valid.tolist() == piece.is_valid().to_pylist()
        if not piece.null_count:
            assert columns.numbers_of(piece).tolist() == piece.to_pylist()


def test_numbers_that_do_not_fit_the_type_exactly_are_refused() -> None:
    """As ``pyarrow.array`` refuses them: never a number cast into another."""
    assert columns.numbers(np.array([2, -7]), pa.int32()).to_pylist() == [2, -7]  # exact
    for values, type_ in (([2**40, 1], pa.int32()), ([1.5], pa.int64()), ([-1], pa.uint8())):
        with pytest.raises(NotRepresentableError, match="do not fit"):
            columns.numbers(np.array(values), type_)
    with pytest.raises(UnsupportedTypeError, match="no column of numbers"):
        columns.numbers(np.array([True, False]), pa.bool_())  # bits, not bytes


def test_offsets_past_32_bits_are_refused_not_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A column of more bytes than 32-bit offsets hold is an error, never offsets that
    wrap around (a large type takes them: its offsets are 64-bit)."""
    monkeypatch.setattr(columns, "_MAX_OFFSET", 5)
    assert columns.binaries([b"abc", b"de"]).to_pylist() == [b"abc", b"de"]  # 5: fits
    with pytest.raises(NotRepresentableError, match="32-bit offsets"):
        columns.binaries([b"abc", b"def"])
    with pytest.raises(NotRepresentableError, match="32-bit offsets"):
        columns.shapes([(1, 2, 3), (4, 5, 6)], pa.list_(pa.int64()))
    large = columns.binaries([b"abc", b"def"], pa.large_binary())
    assert large.to_pylist() == [b"abc", b"def"]

"""Tests of :mod:`onnx_arrow.core.tensor_codes`: codes to a flat Arrow array of their element
type and back, nulls only under null rows, and the refusals that name a row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from onnx_arrow.core.codec import codes_to_storage, storage_to_codes
from onnx_arrow.core.dtypes import DTYPES, DType, dtype_of
from onnx_arrow.core.element_types import element_type
from onnx_arrow.core.tensor_codes import (
    check_plain_layout,
    fixed_codes,
    null_row_error,
    storage_array,
    storage_numpy,
    validity,
)
from onnx_arrow.errors import ArrowLayoutError, NotRepresentableError

ROWS = [row for row in DTYPES.values() if row.name != "STRING"]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_codes_round_trip_through_a_flat_array_of_their_element_type(row: DType) -> None:
    codes = np.array([0, 1, 1, 0], dtype=np.int8).astype(row.numpy)
    array = storage_array(codes_to_storage(codes, row), row)
    assert array.type == element_type(row)
    back = storage_to_codes(storage_numpy(array, row), row)
    assert back.dtype == row.numpy
    assert back.tobytes() == codes.tobytes()


def test_strings_are_binary_and_come_back_as_bytes() -> None:
    row = dtype_of("STRING")
    codes = np.empty(2, dtype=object)
    codes[:] = [b"\xff", b""]
    array = storage_array(codes, row)
    assert array.type == pa.binary()
    assert storage_numpy(array, row).tolist() == [b"\xff", b""]


def test_a_null_is_code_zero_under_a_null_row_and_refused_elsewhere() -> None:
    row = dtype_of("FLOAT")
    values = pa.array([1.0, None, 3.0, 4.0], pa.float32())
    offsets = np.array([0, 2, 4])
    owned = np.array([False, False, True, True])  # row 0 is null
    assert storage_numpy(values, row, owned, offsets).tolist() == [0.0, 0.0, 3.0, 4.0]
    with pytest.raises(ArrowLayoutError) as info:
        storage_numpy(values, row, np.ones(4, bool), offsets)
    assert str(info.value) == (
        "row 0: FLOAT tensor element 1 is null; tensor elements are never null "
        "(an absent value is a null row)"
    )


def test_a_null_complex_part_names_its_element() -> None:
    row = dtype_of("COMPLEX64")
    parts = pa.array([1.0, 2.0, 3.0, None], pa.float32())
    values = pa.FixedSizeListArray.from_arrays(parts, 2)
    with pytest.raises(ArrowLayoutError, match=r"^row 1: COMPLEX64 tensor element 0 is null"):
        storage_numpy(values, row, None, np.array([0, 1, 2]))


def test_fixed_codes_read_every_row_of_a_fixed_shape_array() -> None:
    row = dtype_of("INT64")
    array = pa.FixedShapeTensorArray.from_numpy_ndarray(np.arange(6, dtype=np.int64).reshape(3, 2))
    assert fixed_codes(array, row).tolist() == [0, 1, 2, 3, 4, 5]
    assert validity(array.storage) == [True, True, True]
    sliced = array.slice(1)
    assert fixed_codes(sliced, row).tolist() == [2, 3, 4, 5]


def test_a_transposed_layout_is_refused() -> None:
    transposed = pa.fixed_shape_tensor(pa.float32(), [2, 3], permutation=[1, 0])
    with pytest.raises(NotRepresentableError, match=r"permutation \[1, 0\]; ONNX tensors"):
        check_plain_layout(transposed)
    check_plain_layout(pa.fixed_shape_tensor(pa.float32(), [2, 3], permutation=[0, 1]))


def test_a_null_row_is_not_part_of_one_ndarray() -> None:
    error = null_row_error(3)
    assert isinstance(error, NotRepresentableError)
    assert str(error) == (
        "row 3: the row is null (an absent value), so the column is not one ndarray; "
        "onnx_arrow.to_pylist gives None for it"
    )

"""Tests of :mod:`onnx_arrow.core.dtypes`: the table against onnx's and ml_dtypes' own facts."""

from __future__ import annotations

import dataclasses
import math

import ml_dtypes
import numpy as np
import pyarrow as pa
import pytest
from onnx import OptionalProto, SequenceProto, TensorProto, helper

from onnx_arrow.core.dtypes import (
    DTYPES,
    ArrowKind,
    DType,
    TypedEncoding,
    UlpKind,
    dtype_of,
    dtype_of_numpy,
)
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError

ROWS = list(DTYPES.values())
BYTE_ALIGNED = [row for row in ROWS if row.bits % 8 == 0 and row.name != "STRING"]
PACKED = [row for row in ROWS if row.is_packed]

#: The value kinds that SequenceProto / OptionalProto may hold.  They are mapped in a later
#: step; pinning the enums here makes a new ONNX release fail this test instead of a user.
VALUE_KINDS = {"UNDEFINED", "TENSOR", "SPARSE_TENSOR", "SEQUENCE", "MAP", "OPTIONAL"}


def ids(rows: list[DType]) -> list[str]:
    return [row.name for row in rows]


# --- coverage ----------------------------------------------------------------------------


def test_table_covers_every_tensor_data_type() -> None:
    onnx_types = dict(TensorProto.DataType.items())
    del onnx_types["UNDEFINED"]
    assert {row.name: row.onnx for row in ROWS} == onnx_types
    assert len(DTYPES) == 28
    assert all(key == row.onnx for key, row in DTYPES.items())


@pytest.mark.parametrize("enum", [SequenceProto.DataType, OptionalProto.DataType])
def test_container_value_kinds_are_known(enum: object) -> None:
    assert set(enum.keys()) == VALUE_KINDS  # type: ignore[attr-defined]


def test_numpy_dtypes_are_unique() -> None:
    """The inverse map numpy -> row is total: no two rows share a numpy dtype."""
    dtypes = [row.numpy for row in ROWS if row.name != "STRING"]
    assert len(set(dtypes)) == len(dtypes)


# --- each row against onnx and ml_dtypes ---------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_numpy_dtype_is_onnx_own(row: DType) -> None:
    assert row.numpy == helper.tensor_dtype_to_np_dtype(row.onnx)


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_typed_field_is_onnx_own(row: DType) -> None:
    try:
        field = helper.tensor_dtype_to_field(row.onnx)
    except (KeyError, ValueError):  # pragma: no cover - onnx 1.23 defines every one
        pytest.skip(f"onnx defines no typed field for {row.name}")
    assert row.typed_field == field
    assert row.typed_field in TensorProto.DESCRIPTOR.fields_by_name
    expected_entry = {
        "float_data": np.float32,
        "double_data": np.float64,
        "int32_data": np.int32,
        "int64_data": np.int64,
        "uint64_data": np.uint64,
        "string_data": np.object_,
    }[field]
    assert row.typed_entry_dtype == np.dtype(expected_entry)


@pytest.mark.parametrize("row", BYTE_ALIGNED, ids=ids(BYTE_ALIGNED))
def test_bits_of_byte_aligned_types_are_the_itemsize(row: DType) -> None:
    assert row.bits == row.numpy.itemsize * 8
    assert row.raw_nbytes(5) == 5 * row.numpy.itemsize
    assert not row.is_packed


@pytest.mark.parametrize("row", PACKED, ids=ids(PACKED))
def test_bits_of_packed_types_are_ml_dtypes_and_onnx_packing(row: DType) -> None:
    info = (
        ml_dtypes.iinfo(row.numpy)  # type: ignore[no-untyped-call]
        if row.arrow_kind is ArrowKind.SUBBYTE_INT
        else ml_dtypes.finfo(row.numpy)  # type: ignore[no-untyped-call]
    )
    assert row.bits == info.bits
    assert row.bits in (2, 4, 6)
    for count in range(13):
        codes = np.zeros(count, dtype=np.uint8).view(row.numpy)
        packed = helper.make_tensor("", row.onnx, [count], codes, raw=True).raw_data
        assert row.raw_nbytes(count) == len(packed) == math.ceil(count * row.bits / 8)


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r.name != "STRING"], ids=ids([r for r in ROWS if r.name != "STRING"])
)
def test_raw_nbytes_matches_onnx(row: DType) -> None:
    for count in (0, 1, 3, 7):
        codes = np.zeros(count, dtype=row.numpy)
        raw = helper.make_tensor("", row.onnx, [count], codes, raw=True).raw_data
        assert row.raw_nbytes(count) == len(raw)


def test_string_row() -> None:
    row = dtype_of("STRING")
    assert (row.bits, row.typed_encoding, row.arrow_kind) == (
        0,
        TypedEncoding.STRINGS,
        ArrowKind.BINARY,
    )
    assert row.numpy == np.dtype(object)


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_extension_name_follows_the_arrow_kind(row: DType) -> None:
    if row.arrow_kind in (ArrowKind.NATIVE, ArrowKind.BOOL8, ArrowKind.BINARY):
        assert row.extension_name is None
    else:
        assert row.extension_name == f"onnx.{row.name.lower()}"


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_typed_encoding_fits_the_field(row: DType) -> None:
    encoding = row.typed_encoding
    if encoding is TypedEncoding.PACKED_BYTES:
        assert row.is_packed
    if encoding is TypedEncoding.INTERLEAVED:
        assert row.numpy.kind == "c"
        assert row.typed_entry_dtype.itemsize * 2 == row.numpy.itemsize
    if encoding is TypedEncoding.NATIVE:
        assert row.typed_entry_dtype == row.numpy
    if encoding in (TypedEncoding.SIGN_EXTEND, TypedEncoding.ZERO_EXTEND):
        assert row.typed_entry_dtype.itemsize > row.numpy.itemsize
    if row.arrow_kind in (ArrowKind.BFLOAT16, ArrowKind.MINIFLOAT):
        assert row.arrow_storage == np.dtype(np.float32)


# --- lookups ---------------------------------------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_dtype_of_by_value_name_and_row(row: DType) -> None:
    assert dtype_of(row.onnx) is row
    assert dtype_of(row.name) is row
    assert dtype_of(row.name.lower()) is row
    assert dtype_of(row) is row
    assert dtype_of(TensorProto.DataType.Value(row.name)) is row


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_dtype_of_numpy_round_trip(row: DType) -> None:
    assert dtype_of_numpy(row.numpy) is row
    assert dtype_of_numpy(helper.tensor_dtype_to_np_dtype(row.onnx)) is row
    if row.numpy.byteorder in "<=" and row.numpy.itemsize > 1 and row.numpy.kind in "iufc":
        assert dtype_of_numpy(row.numpy.newbyteorder(">")) is row


@pytest.mark.parametrize("dtype", [np.str_, np.bytes_, object, "U3", "S7"])
def test_dtype_of_numpy_strings(dtype: object) -> None:
    assert dtype_of_numpy(dtype).name == "STRING"


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        (0, "UNDEFINED (0)"),
        ("UNDEFINED", "UNDEFINED (0)"),
        (99, "99"),
        (-1, "-1"),
        (29, "29"),
        ("FLOAT99", "'FLOAT99'"),
        ("", "''"),
    ],
)
def test_dtype_of_refuses_unknown_values(key: int | str, shown: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        dtype_of(key)
    err = info.value
    assert isinstance(err, TypeError)
    assert isinstance(err, OnnxArrowError)
    message = str(err)
    assert shown in message
    # names every accepted value
    for row in ROWS:
        assert f"{row.name} ({row.onnx})" in message


@pytest.mark.parametrize("key", [None, [1], 1.5j, object(), TensorProto()], ids=repr)
def test_dtype_of_refuses_what_is_no_key(key: object) -> None:
    with pytest.raises(UnsupportedTypeError, match=r"key: expected .* got ") as info:
        dtype_of(key)  # type: ignore[arg-type]
    assert "FLOAT (1)" in str(info.value)


@pytest.mark.parametrize("dtype", ["datetime64[ns]", "timedelta64[s]", "V4", "<f4,<f4"])
def test_dtype_of_numpy_refuses_unknown_dtypes(dtype: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        dtype_of_numpy(dtype)
    assert isinstance(info.value, TypeError)
    assert "float32" in str(info.value)
    assert "bfloat16" in str(info.value)


# --- ULP kind and store storage: facts in the row, read by ulp.py, rows.py and format.py ---


def _has_floating_numbers(row: DType) -> bool:
    """Whether numpy (ml_dtypes) gives ``row``'s elements float info: floats and complex."""
    try:
        ml_dtypes.finfo(row.numpy)  # type: ignore[no-untyped-call]
    except (TypeError, ValueError):
        return False
    return True


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_ulp_kind_fits_the_row(row: DType) -> None:
    assert isinstance(row.ulp_kind, UlpKind)
    assert row.is_floating == _has_floating_numbers(row) == (row.ulp_kind is not UlpKind.NONE)
    if row.ulp_kind is UlpKind.IEEE:  # sign-magnitude codes counted in uint64
        assert row.arrow_kind is ArrowKind.NATIVE
        assert row.numpy.kind == "f"
        assert row.bits in (32, 64)
    if row.ulp_kind is UlpKind.RANK_TABLE:  # a table of 1 << 16 ranks at most
        assert row.numpy.itemsize <= 2
        assert row.arrow_kind is not ArrowKind.COMPLEX
    if row.ulp_kind is UlpKind.COMPLEX_PARTS:  # each part measured as the part's own dtype
        assert row.arrow_kind is ArrowKind.COMPLEX
        assert dtype_of_numpy(row.arrow_storage).ulp_kind is UlpKind.IEEE


def test_every_floating_kind_is_used() -> None:
    assert {row.ulp_kind for row in ROWS} == set(UlpKind)


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_store_storage_holds_the_arrow_storage_exactly(row: DType) -> None:
    assert isinstance(row.store_storage, np.dtype)
    assert row.store_widens == (row.store_storage != row.arrow_storage)
    if row.store_widens:
        assert row.store_storage.kind == row.arrow_storage.kind
        assert row.store_storage.itemsize > row.arrow_storage.itemsize
        assert np.can_cast(row.arrow_storage, row.store_storage, casting="safe")


def test_only_float16_is_widened_for_the_store() -> None:
    """Spark refuses a whole Parquet file holding a FLOAT16 column; nothing else is widened."""
    assert {row.name: row.store_storage for row in ROWS if row.store_widens} == {
        "FLOAT16": np.dtype("<f4")
    }
    for row in ROWS:
        if row.arrow_kind is not ArrowKind.BINARY:
            assert pa.from_numpy_dtype(row.store_storage) != pa.float16(), row.name


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_the_store_data_column_reads_the_store_storage(row: DType) -> None:
    from onnx_arrow.corpus.format import data_storage_dtype

    element = data_storage_dtype(row)
    if row.arrow_kind is ArrowKind.BINARY:
        assert element == pa.binary()
        return
    if row.arrow_kind is ArrowKind.COMPLEX:
        element = element.value_type
    assert element == pa.from_numpy_dtype(row.store_storage)


def test_the_store_widens_by_the_fact_not_the_name() -> None:
    """A row that says INT16 is stored as int32 is widened and narrowed back, exactly."""
    from onnx_arrow.corpus.format import data_storage_dtype
    from onnx_arrow.corpus.rows import _narrow, _widen
    from onnx_arrow.errors import NotRepresentableError

    wide = dataclasses.replace(dtype_of("INT16"), store_storage=np.dtype("<i4"))
    assert data_storage_dtype(wide) == pa.int32()
    codes = np.array([-32768, 0, 7, 32767], np.int16)
    stored = _widen(codes, wide)
    assert stored.dtype == np.int32
    assert stored.tolist() == codes.tolist()
    back = _narrow(stored, wide, "data_int16")
    assert back.dtype == np.int16
    assert back.tolist() == codes.tolist()
    with pytest.raises(NotRepresentableError, match=r"element 1 .* not a int16 value"):
        _narrow(np.array([1, 1 << 20], np.int32), wide, "data_int16")
    # and FLOAT16 no longer widened when its row says so
    plain = dataclasses.replace(dtype_of("FLOAT16"), store_storage=np.dtype("<f2"))
    assert data_storage_dtype(plain) == pa.float16()
    half = np.array([1.5, -0.0], np.float16)
    assert _widen(half, plain).dtype == np.float16


def test_float16_is_widened_exactly_and_refused_when_inexact() -> None:
    from onnx_arrow.corpus.rows import _narrow, _widen
    from onnx_arrow.errors import NotRepresentableError

    row = dtype_of("FLOAT16")
    codes = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    stored = _widen(codes, row)
    assert stored.dtype == np.float32
    assert _narrow(stored, row, "data_float16").view(np.uint16).tolist() == list(range(1 << 16))
    with pytest.raises(NotRepresentableError, match=r"element 0 .* not a float16 value"):
        _narrow(np.array([0.1], np.float32), row, "data_float16")


@pytest.mark.parametrize("row", list(DTYPES.values()), ids=lambda r: r.name)
def test_code_bits_are_unsigned_integers_of_an_ml_dtypes_type_s_size(row: DType) -> None:
    """A code's bits: the unsigned integers of its size for an ml_dtypes type (known
    without importing it), the numpy dtype itself for the others."""
    if row.numpy_name.startswith("ml_dtypes."):
        assert row.code_bits.kind == "u"
        assert row.code_bits.itemsize == row.numpy.itemsize
    else:
        assert row.code_bits == row.numpy

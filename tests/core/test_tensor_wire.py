"""Tests of :mod:`onnx_arrow.core.tensor_wire`: exact round trips of every message, exact bit
patterns, every refusal of a malformed tensor."""

from __future__ import annotations

import io
import re
import time
import tracemalloc
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from onnx import TensorProto, numpy_helper
from tensor_samples import (
    FLOATISH,
    PACKED,
    PROPERTY,
    ROWS,
    assert_same_elements,
    columns,
    expected_layout,
    ids,
    is_fixed,
    make_message,
    messages,
    numpy_helper_to_array,
    parquet_round_trip,
    plain,
    round_trip,
    sample_codes,
    serialized,
)
from wire_reference import TENSOR_FIELDS, len_field, varint

import onnx_arrow
from onnx_arrow.core import tensor_wire
from onnx_arrow.core.dtypes import ArrowKind, DType, TypedEncoding, dtype_of
from onnx_arrow.core.tensor_wire import decode_tensor
from onnx_arrow.core.tensors import MAX_ELEMENTS
from onnx_arrow.errors import (
    InvalidMessageError,
    InvalidTensorError,
    NotRepresentableError,
    OnnxArrowError,
    UnsupportedTypeError,
)

# --- round trips --------------------------------------------------------------------------------


@PROPERTY
@given(messages())
def test_every_message_round_trips_exactly(message: TensorProto) -> None:
    assert round_trip([message]) == [serialized(message)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns())
def test_columns_of_mixed_shapes_round_trip(messages: list[TensorProto]) -> None:
    array = onnx_arrow.to_arrow(messages, exact=True)
    layout = expected_layout([tuple(m.dims) for m in messages])
    assert array.value.type.extension_name.endswith(layout)
    back = [m.SerializeToString() for m in onnx_arrow.from_arrow(array)]
    assert back == [serialized(m) for m in messages]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns())
def test_columns_round_trip_through_ipc_and_parquet(messages: list[TensorProto]) -> None:
    array = onnx_arrow.to_arrow(messages, exact=True)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, pa.schema([("t", array.type)])) as writer:
        writer.write_table(pa.table({"t": array}))
    from_ipc = pa.ipc.open_stream(sink.getvalue()).read_all().column("t")
    assert [m.SerializeToString() for m in onnx_arrow.from_arrow(from_ipc)] == [
        serialized(m) for m in messages
    ]
    read = parquet_round_trip(array)
    assert read.type == array.type
    assert read.type.value_type == array.type.value_type
    back = [m.SerializeToString() for m in onnx_arrow.from_arrow(read)]
    assert back == [serialized(m) for m in messages]


UNKNOWN_FIELDS = {
    "varint 100": varint(100 << 3) + varint(5),
    "LEN 15": varint(15 << 3 | 2) + varint(3) + b"abc",
    "fixed32 2**29-1": varint((2**29 - 1) << 3 | 5) + b"\x01\x02\x03\x04",
    "fixed64 17": varint(17 << 3 | 1) + bytes(8),
}


@pytest.mark.parametrize("extra", UNKNOWN_FIELDS.values(), ids=UNKNOWN_FIELDS.keys())
@pytest.mark.parametrize("before", [False, True], ids=["after", "before"])
def test_unknown_fields_are_kept(extra: bytes, before: bool) -> None:
    """Fields this onnx does not know (a newer writer's) survive, wherever they were."""
    for known in (
        numpy_helper.from_array(np.arange(3, dtype=np.float32), "x"),
        TensorProto(dims=[0], data_type=TensorProto.FLOAT),
        TensorProto(dims=[2], data_type=TensorProto.STRING, string_data=[b"a", b"b"]),
    ):
        data = known.SerializeToString()
        message = TensorProto.FromString(extra + data if before else data + extra)
        assert round_trip([message, known]) == [serialized(message), serialized(known)]


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
@pytest.mark.parametrize("dims", [[0], [2, 0, 3], [0, 0], [1, 0]], ids=str)
def test_tensors_with_a_zero_dim_survive_parquet(row: DType, dims: list[int]) -> None:
    messages = [
        make_message(row, dims, np.empty(0, row.numpy), storage, envelope={"name": storage})
        for storage in (["typed"] if row.arrow_kind is ArrowKind.BINARY else ["raw", "typed"])
    ]
    array = onnx_arrow.to_arrow(messages, exact=True)
    assert is_fixed(array.value.type) is False
    back = onnx_arrow.from_arrow(parquet_round_trip(array))
    assert [m.SerializeToString() for m in back] == [serialized(m) for m in messages]
    if row.arrow_kind is not ArrowKind.BINARY:
        assert back[0].HasField("raw_data")  # the empty raw_data marker is kept
        assert not back[1].HasField("raw_data")


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_rank_zero_tensors(row: DType) -> None:
    code = sample_codes(row, 1)
    message = make_message(row, [], code, "typed")
    array = onnx_arrow.to_arrow([message, message], exact=True)
    assert is_fixed(array.value.type)
    assert list(array.value.type.shape) == []
    assert round_trip([message, message]) == [serialized(message)] * 2
    back = onnx_arrow.from_arrow(parquet_round_trip(array))
    assert [m.SerializeToString() for m in back] == [serialized(message)] * 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns())
def test_bare_value_arrays_give_the_same_values(messages: list[TensorProto]) -> None:
    """A bare tensor array (no envelopes) gives what ``numpy_helper.from_array`` would."""
    array = onnx_arrow.to_arrow(messages, exact=True)
    for original, bare in zip(messages, onnx_arrow.from_arrow(array.value), strict=True):
        assert list(bare.dims) == list(original.dims)
        assert bare.data_type == original.data_type
        elements = numpy_helper_to_array(original)
        assert_same_elements(numpy_helper_to_array(bare), elements)
        assert bare.SerializeToString() == numpy_helper.from_array(elements).SerializeToString()


# --- exact bit patterns --------------------------------------------------------------------------


def all_codes(row: DType) -> np.ndarray:
    width = 16 if row.bits == 16 else 8
    codes = np.arange(1 << row.bits, dtype=f"u{width // 8}")
    return codes.view(row.numpy)


@pytest.mark.parametrize("storage", ["raw", "typed"])
@pytest.mark.parametrize("row", FLOATISH, ids=ids(FLOATISH))
def test_every_code_survives(row: DType, storage: str) -> None:
    codes = all_codes(row)
    message = make_message(row, [codes.size], codes, storage, envelope={"name": "all"})
    array = onnx_arrow.to_arrow([message], exact=True)
    assert round_trip([message]) == [serialized(message)]
    back = onnx_arrow.to_numpy(array)[0]
    assert back.dtype == row.numpy
    assert np.array_equal(back.view(np.uint8), codes.view(np.uint8))
    # the Arrow view: every code is its own float32, the value ml_dtypes gives where not NaN
    storage_values = plain(array.value.storage.flatten()).to_numpy()
    assert storage_values.dtype == np.float32
    expected = numpy_helper.to_array(message).astype(np.float32)
    nan = np.isnan(expected)
    assert np.array_equal(storage_values[~nan], expected[~nan])
    assert np.array_equal(np.signbit(storage_values[~nan]), np.signbit(expected[~nan]))
    assert np.isnan(storage_values[nan]).all()
    assert np.unique(storage_values.view(np.uint32)).size == codes.size
    # and back through Parquet
    read = onnx_arrow.from_arrow(parquet_round_trip(array))
    assert [m.SerializeToString() for m in read] == [serialized(message)]


def test_bfloat16_nan_payloads_are_kept_in_the_float32_storage() -> None:
    row = dtype_of("BFLOAT16")
    codes = np.array([0x7FC0, 0x7F81, 0xFFFF, 0x7F80, 0x8000], dtype=np.uint16).view(row.numpy)
    array = onnx_arrow.to_arrow([make_message(row, [5], codes, "raw")], exact=True)
    bits = plain(array.value.storage.flatten()).to_numpy().view(np.uint32)
    assert bits.tolist() == [0x7FC00000, 0x7F810000, 0xFFFF0000, 0x7F800000, 0x80000000]


FLOAT32_SPECIALS = np.array(
    [0x7FA00001, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFF, 1],
    dtype=np.uint32,
)
FLOAT64_SPECIALS = np.array(
    [0x7FF0000000000001, 0xFFF8000000000000, 0x8000000000000000, 0x7FF4000000000000],
    dtype=np.uint64,
)


@pytest.mark.parametrize("storage", ["raw", "typed"])
@pytest.mark.parametrize(
    ("name", "bits"),
    [
        ("FLOAT", FLOAT32_SPECIALS),
        ("DOUBLE", FLOAT64_SPECIALS),
        ("COMPLEX64", FLOAT32_SPECIALS),
        ("COMPLEX128", FLOAT64_SPECIALS),
        ("FLOAT16", np.array([0x7C01, 0xFE00, 0x8000, 0x7D55], dtype=np.uint16)),
    ],
)
def test_nan_payloads_and_negative_zero_survive(name: str, bits: np.ndarray, storage: str) -> None:
    row = dtype_of(name)
    codes = bits.view(row.numpy)
    message = make_message(row, [codes.size], codes, storage)
    data = serialized(message)
    if storage == "raw" or row.typed_field in ("float_data", "double_data"):
        assert bits.tobytes() in data  # the signalling NaN made it into the message unquieted
    assert round_trip([message]) == [data]
    assert np.array_equal(
        onnx_arrow.to_numpy(onnx_arrow.to_arrow([message], exact=True))[0].view(bits.dtype), bits
    )
    read = onnx_arrow.from_arrow(parquet_round_trip(onnx_arrow.to_arrow([message], exact=True)))
    assert read[0].SerializeToString() == data


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("UINT64", [2**64 - 1, 0, 2**63]),
        ("INT64", [-(2**63), 2**63 - 1, -1, 0]),
        ("INT32", [-(2**31), 2**31 - 1, -1]),
        ("UINT32", [2**32 - 1, 0]),
        ("INT16", [-(2**15), 2**15 - 1]),
        ("UINT16", [2**16 - 1, 0]),
        ("INT8", [-128, 127, -1]),
        ("UINT8", [255, 0]),
    ],
)
@pytest.mark.parametrize("storage", ["raw", "typed"])
def test_integer_extremes_survive(name: str, values: list[int], storage: str) -> None:
    row = dtype_of(name)
    codes = np.array(values, dtype=row.numpy)
    message = make_message(row, [len(values)], codes, storage)
    assert round_trip([message]) == [serialized(message)]
    back = onnx_arrow.to_numpy(onnx_arrow.to_arrow([message], exact=True))[0]
    assert back.dtype == row.numpy
    assert back.tolist() == values
    assert np.array_equal(back, numpy_helper.to_array(message))


@pytest.mark.parametrize("storage", ["raw", "typed"])
@pytest.mark.parametrize("row", PACKED, ids=ids(PACKED))
def test_sub_byte_tensors_of_any_count(row: DType, storage: str) -> None:
    everything = np.arange(1 << row.bits, dtype=np.uint8)
    messages = []
    for count in range(1, 10):
        codes = np.resize(np.roll(everything, count), count).view(row.numpy)
        messages.append(make_message(row, [count], codes, storage))
    # one variable-shape column, and each alone (fixed shape)
    assert round_trip(messages) == [serialized(m) for m in messages]
    for m in messages:
        assert round_trip([m]) == [serialized(m)]
        back = onnx_arrow.to_numpy(onnx_arrow.to_arrow([m], exact=True))[0]
        assert back.dtype == row.numpy
        assert np.array_equal(back.view(np.uint8), numpy_helper.to_array(m).view(np.uint8))
    read = onnx_arrow.from_arrow(parquet_round_trip(onnx_arrow.to_arrow(messages, exact=True)))
    assert [m.SerializeToString() for m in read] == [serialized(m) for m in messages]


def test_strings_keep_invalid_utf8_and_empty_entries() -> None:
    values = [b"", b"\xff\xfe", b"a\x00", "é".encode(), b""]
    message = TensorProto(dims=[5], data_type=TensorProto.STRING, string_data=values, name="s")
    assert round_trip([message]) == [serialized(message)]
    array = onnx_arrow.to_arrow([message], exact=True)
    assert array.value.type.value_type == pa.binary()
    assert array.value.storage.flatten().to_pylist() == values
    back = onnx_arrow.to_numpy(array, strings="bytes")[0]
    assert back.dtype == object
    assert back.tolist() == values


def test_string_elements_are_bytes_in_slices_and_under_null_rows() -> None:
    rows = [[b"\xff", b""], [b"x"], [b"", b"a\x00"]]
    messages = [
        TensorProto(dims=[len(r)], data_type=TensorProto.STRING, string_data=r) for r in rows
    ]
    value = onnx_arrow.to_arrow(messages, exact=True).value
    taken = value.take(pa.array([2, None, 0], pa.int64())).slice(1)
    got = onnx_arrow.to_pylist(taken, strings="bytes")
    assert got[0] is None
    assert got[1].dtype == object
    assert [type(v) for v in got[1]] == [bytes, bytes]
    assert got[1].tolist() == rows[0]


def test_data_field_tables_follow_the_dtype_table() -> None:
    data_fields = tensor_wire._DATA_FIELDS
    names = {"float_data", "int32_data", "string_data", "int64_data", "raw_data"}
    names |= {"double_data", "uint64_data"}
    assert data_fields == {TENSOR_FIELDS[n]: n for n in names}
    floating = {r.typed_field for r in ROWS if r.typed_entry_dtype.kind == "f"}
    assert floating == tensor_wire.FIXED_WIDTH_FIELDS == {"float_data", "double_data"}


# --- refusals ----------------------------------------------------------------------------------


def good() -> TensorProto:
    return numpy_helper.from_array(np.arange(2, dtype=np.float32), "good")


def refused(
    bad: TensorProto, error: type[OnnxArrowError], builtin: type[Exception], pattern: str
) -> OnnxArrowError:
    """``to_arrow([good, bad])`` raises ``error`` located at row 1; nothing is modified."""
    before = bad.SerializeToString()
    with pytest.raises(error, match=f"(?:^|: )row 1: {pattern}") as info:
        onnx_arrow.to_arrow([good(), bad], exact=True)
    assert isinstance(info.value, builtin)
    assert bad.SerializeToString() == before
    return info.value


def tensor(data_type: int, dims: list[int], **fields: Any) -> TensorProto:
    return TensorProto(dims=dims, data_type=data_type, **fields)


def test_raw_data_length_disagreeing_with_dims() -> None:
    bad = tensor(TensorProto.FLOAT, [2, 2], raw_data=b"\x00" * 12)
    err = refused(bad, InvalidTensorError, ValueError, "raw_data: raw_data holds 12 bytes")
    assert "4 FLOAT elements need 16" in str(err)
    refused(
        tensor(TensorProto.INT4, [3], raw_data=b"\x00"),
        InvalidTensorError,
        ValueError,
        "raw_data: ",
    )


def test_typed_length_disagreeing_with_dims() -> None:
    bad = tensor(TensorProto.INT64, [3], int64_data=[1, 2])
    refused(bad, InvalidTensorError, ValueError, "int64_data: int64_data holds 2 values")
    bad = tensor(TensorProto.COMPLEX64, [2], float_data=[1, 2, 3])
    refused(bad, InvalidTensorError, ValueError, "float_data: float_data holds 3 values")


def test_missing_data_is_refused() -> None:
    refused(
        tensor(TensorProto.FLOAT, [2]),
        InvalidTensorError,
        ValueError,
        "dims .* no field holds data",
    )


def test_negative_dims() -> None:
    bad = tensor(TensorProto.FLOAT, [2, -1], raw_data=b"")
    refused(bad, InvalidTensorError, ValueError, r"dims: dims\[1\] is -1")


@pytest.mark.parametrize(
    ("dims", "fields"),
    [
        ([2**20, 2**20, 2], {"raw_data": b"\x00" * 4}),
        ([2**40 + 1], {"float_data": [1.0]}),
        ([2**62, 2**62], {}),
        ([2**31, 2**31, 2**31, 2**31], {"raw_data": b""}),
    ],
    ids=["raw", "typed", "overflowing int64", "many"],
)
def test_huge_dims_fail_fast(dims: list[int], fields: dict[str, Any]) -> None:
    bad = tensor(TensorProto.FLOAT, dims, **fields)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        err = refused(bad, InvalidTensorError, ValueError, "dims: ")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < 2
    assert peak < 16 * 2**20
    assert str(MAX_ELEMENTS) in str(err)


@pytest.mark.parametrize("data_type", [0, 99, 29, 1000])
def test_undefined_and_unknown_data_types(data_type: int) -> None:
    bad = tensor(data_type, [1], raw_data=b"\x00" * 4)
    err = refused(bad, UnsupportedTypeError, TypeError, "data_type: ")
    assert str(data_type) in str(err)
    assert "FLOAT (1)" in str(err)


@pytest.mark.parametrize(
    ("data_type", "fields", "names"),
    [
        (
            TensorProto.FLOAT,
            {"raw_data": b"\x00" * 4, "float_data": [1.0]},
            "float_data and raw_data",
        ),
        (
            TensorProto.INT32,
            {"raw_data": b"\x00" * 4, "int32_data": [1]},
            "int32_data and raw_data",
        ),
        (TensorProto.FLOAT, {"float_data": [1.0], "int32_data": [1]}, "float_data and int32_data"),
    ],
)
def test_data_in_two_fields(data_type: int, fields: dict[str, Any], names: str) -> None:
    refused(
        tensor(data_type, [1], **fields), InvalidTensorError, ValueError, f"{names} are both set"
    )


@pytest.mark.parametrize(
    ("name", "entries", "shown"),
    [
        ("INT8", [1, 300], "int32_data: int32_data[1] is 300, outside [-128, 127]"),
        ("INT8", [-129], "int32_data: int32_data[0] is -129"),
        ("BOOL", [2], "int32_data: int32_data[0] is 2, outside [0, 1]"),
        ("BOOL", [-1], "int32_data: int32_data[0] is -1"),
        ("UINT8", [256], "int32_data: int32_data[0] is 256"),
        ("UINT16", [70000], "int32_data: int32_data[0] is 70000, outside [0, 65535]"),
        ("INT16", [40000], "int32_data: int32_data[0] is 40000"),
        ("FLOAT16", [65536], "int32_data: int32_data[0] is 65536"),
        ("BFLOAT16", [-1], "int32_data: int32_data[0] is -1"),
        ("FLOAT8E4M3FN", [256], "int32_data: int32_data[0] is 256"),
        ("FLOAT6E2M3", [64], "int32_data: int32_data[0] is 64, outside [0, 63]"),
        ("FLOAT6E3M2", [-1], "int32_data: int32_data[0] is -1"),
        ("INT4", [256], "int32_data: int32_data[0] is 256, outside [0, 255]"),
        ("UINT2", [-1], "int32_data: int32_data[0] is -1"),
        ("UINT32", [2**32], "uint64_data: uint64_data[0] is 4294967296"),
    ],
)
def test_typed_values_out_of_range(name: str, entries: list[int], shown: str) -> None:
    row = dtype_of(name)
    count = (
        len(entries) * 8 // row.bits
        if row.typed_encoding is TypedEncoding.PACKED_BYTES
        else len(entries)
    )
    bad = tensor(row.onnx, [count], **{row.typed_field: entries})
    refused(bad, InvalidTensorError, ValueError, re.escape(shown))


def test_int32_data_beyond_int32_is_refused() -> None:
    """protobuf writes int32 fields as sign-extended varints; a larger varint is malformed."""
    data = TensorProto(dims=[1], data_type=TensorProto.INT32).SerializeToString()
    data += len_field("int32_data", varint(2**40))
    with pytest.raises(InvalidTensorError, match=r"^row 7: int32_data: int32_data\[0\]"):
        decode_tensor(data, where="row 7")


def test_segment_is_not_representable() -> None:
    bad = tensor(TensorProto.FLOAT, [1], float_data=[1.0])
    bad.segment.begin = 0
    bad.segment.end = 1
    refused(bad, NotRepresentableError, ValueError, "segment: ")


def test_string_in_raw_data() -> None:
    bad = tensor(TensorProto.STRING, [1], raw_data=b"abc")
    refused(bad, InvalidTensorError, ValueError, "raw_data: raw_data cannot hold STRING")


@pytest.mark.parametrize(
    ("name", "count", "packed"),
    [
        ("INT4", 3, b"\x21\xf3"),
        ("UINT4", 1, b"\x10"),
        ("FLOAT4E2M1", 5, b"\x00\x00\x80"),
        ("INT2", 3, b"\xc0"),
        ("UINT2", 1, b"\x04"),
        ("FLOAT6E2M3", 1, b"\x40"),
        ("FLOAT6E3M2", 2, b"\x00\x10"),
        ("FLOAT6E2M3", 3, b"\x00\x00\x04"),
    ],
)
@pytest.mark.parametrize("storage", ["raw_data", "int32_data"])
def test_non_zero_padding_bits(name: str, count: int, packed: bytes, storage: str) -> None:
    row = dtype_of(name)
    if storage == "int32_data" and row.typed_encoding is not TypedEncoding.PACKED_BYTES:
        pytest.skip(f"{name} stores one element per int32_data entry")
    value: Any = packed if storage == "raw_data" else list(packed)
    bad = tensor(row.onnx, [count], **{storage: value})
    refused(bad, NotRepresentableError, ValueError, f"{storage}: the padding bits")


def test_float_data_for_an_int64_tensor() -> None:
    bad = tensor(TensorProto.INT64, [1], float_data=[1.0])
    err = refused(bad, InvalidTensorError, ValueError, "float_data: float_data holds data")
    assert "int64_data or raw_data" in str(err)


@pytest.mark.parametrize(
    ("name", "field", "value"),
    [
        ("FLOAT", "int32_data", [1]),
        ("STRING", "int32_data", [1]),
        ("UINT32", "int32_data", [1]),
        ("DOUBLE", "float_data", [1.0]),
    ],
)
def test_wrong_typed_field(name: str, field: str, value: list[Any]) -> None:
    bad = tensor(dtype_of(name).onnx, [1], **{field: value})
    refused(bad, InvalidTensorError, ValueError, f"{field}: {field} holds data")


def test_external_data_without_a_resolver() -> None:
    bad = tensor(TensorProto.FLOAT, [1], data_location=TensorProto.EXTERNAL)
    bad.external_data.add(key="location", value="w.bin")
    pattern = "^row 3: external_data: data_location is EXTERNAL"
    with pytest.raises(InvalidTensorError, match=pattern):
        decode_tensor(bad.SerializeToString(), where="row 3")


def test_external_data_beside_data_is_refused() -> None:
    bad = tensor(TensorProto.FLOAT, [1], data_location=TensorProto.EXTERNAL, float_data=[1.0])
    with pytest.raises(InvalidTensorError, match=r"^row 3: .*float_data holds data too"):
        decode_tensor(bad.SerializeToString(), where="row 3", external=lambda *a: None)


def test_external_data_entries_without_location_external() -> None:
    bad = tensor(TensorProto.FLOAT, [1], float_data=[1.0])
    bad.external_data.add(key="location", value="w.bin")
    refused(bad, InvalidTensorError, ValueError, "external_data: external_data is set")


def external_tensor(*entries: bytes) -> bytes:
    """A FLOAT tensor of 1 element in external data, with these serialized entries."""
    head = tensor(TensorProto.FLOAT, [1], data_location=TensorProto.EXTERNAL).SerializeToString()
    return head + b"".join(len_field("external_data", e) for e in entries)


def entry_field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


LOCATION = entry_field(1, b"location") + entry_field(2, b"w.bin")


def test_external_data_entries_reach_the_resolver_as_text() -> None:
    seen: list[Any] = []

    def resolve(entries: list[tuple[str, str]], length: int) -> np.ndarray:
        seen.append((entries, length))
        return np.frombuffer(np.float32(1.5).tobytes(), np.uint8)

    offset = entry_field(1, b"offset") + entry_field(2, b"0")
    got = decode_tensor(external_tensor(LOCATION, offset, b""), external=resolve)
    assert seen == [([("location", "w.bin"), ("offset", "0"), ("", "")], 4)]
    assert got.codes.tolist() == [1.5]


@pytest.mark.parametrize(
    ("entry", "at", "shown"),
    [
        (entry_field(1, b"loc\xffation") + entry_field(2, b"w.bin"), "[1].key", "key is not valid"),
        (entry_field(1, b"location") + entry_field(2, b"w\xc3.bin"), "[1].value", "value is not"),
        (entry_field(1, b"location") + entry_field(3, b"x"), "[1]", "field 3 is not part"),
        (LOCATION + varint(4 << 3) + varint(1), "[1]", "field 4 is not part"),
        (varint(1 << 3) + varint(7) + entry_field(2, b"w.bin"), "[1].key", "key has wire type 0"),
    ],
    ids=["key-utf8", "value-utf8", "unknown-field", "unknown-varint", "key-not-a-string"],
)
def test_malformed_external_data_entries_are_refused(entry: bytes, at: str, shown: str) -> None:
    def resolve(entries: list[tuple[str, str]], length: int) -> np.ndarray:
        raise AssertionError("a malformed entry must be refused before anything is read")

    pattern = f"^row 3: external_data{re.escape(at)}: {shown}"
    with pytest.raises(InvalidTensorError, match=pattern) as info:
        decode_tensor(external_tensor(LOCATION, entry), where="row 3", external=resolve)
    assert isinstance(info.value, ValueError)


def test_malformed_bytes_are_refused() -> None:
    data = good().SerializeToString()
    with pytest.raises(InvalidMessageError, match="row 7"):
        decode_tensor(data[:-1], where="row 7")


def test_empty_input_without_a_type() -> None:
    with pytest.raises(UnsupportedTypeError, match="type") as info:
        onnx_arrow.to_arrow([], exact=True)
    assert isinstance(info.value, TypeError)


def test_rows_of_different_dtypes() -> None:
    ints = numpy_helper.from_array(np.arange(2, dtype=np.int32))
    with pytest.raises(UnsupportedTypeError, match="INT32") as info:
        onnx_arrow.to_arrow([good(), good(), ints], exact=True)
    assert isinstance(info.value, TypeError)
    assert "FLOAT" in str(info.value)


def test_rows_of_different_dtypes_names_the_row() -> None:
    ints = numpy_helper.from_array(np.arange(2, dtype=np.int32))
    with pytest.raises(UnsupportedTypeError, match="row 2"):
        onnx_arrow.to_arrow([good(), good(), ints], exact=True)


def test_a_bool_byte_other_than_0_and_1_is_refused_in_raw_data_as_in_int32_data() -> None:
    bad = TensorProto(dims=[3], data_type=TensorProto.BOOL, raw_data=b"\x01\x00\x07")
    with pytest.raises(InvalidTensorError, match=r"^row 0: raw_data: raw_data byte 2 is 7"):
        onnx_arrow.to_arrow([bad])
    with pytest.raises(InvalidTensorError, match="byte 2 is 7"):
        decode_tensor(bad.SerializeToString())
    typed = TensorProto(dims=[1], data_type=TensorProto.BOOL, int32_data=[7])
    with pytest.raises(InvalidTensorError, match=r"int32_data\[0\] is 7"):
        onnx_arrow.to_arrow([typed])

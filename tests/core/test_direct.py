"""Tests of :mod:`onnx_arrow.core.direct`: in-memory messages read from their fields give
what the wire codec gives, and whatever it does not take goes the wire way."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pyarrow as pa
import pytest
from onnx import TensorProto, numpy_helper

import onnx_arrow
from onnx_arrow import (
    UnsupportedTypeError,
    from_arrow,
    to_arrow,
    to_pylist,
)
from onnx_arrow.core.direct import (
    TYPED_FAST_BYTES,
    decode_tensor_fast,
    fixed_tensor_messages,
    raw_batch,
)
from onnx_arrow.core.tensor_wire import decode_tensor, encode_tensor
from onnx_arrow.core.tensors import Tensor


def floats(*shape: int, name: str = "x") -> TensorProto:
    return numpy_helper.from_array(np.arange(np.prod(shape), dtype=np.float32).reshape(shape), name)


# --- the direct path: in-memory messages, no serialization --------------------------------------


WHOLE_BYTES = [r for r in onnx_arrow.DTYPES.values() if r.bits >= 8]


#: Bit patterns a float32 entry must keep: a signalling NaN (a Python float would make it
#: quiet), a NaN with a payload, negative zero.
FLOAT32_BITS = np.array([0x7F800001, 0xFFC01234, 0x80000000], dtype=np.uint32)


@pytest.mark.parametrize("row", WHOLE_BYTES, ids=[r.name for r in WHOLE_BYTES])
@pytest.mark.parametrize("shapes", [[(2, 3)] * 3, [(2, 3), (1, 3)], [(0, 3)], [()]])
@pytest.mark.parametrize("storage", ["raw_data", "typed"])
def test_the_direct_path_gives_what_the_wire_path_gives(row, shapes, storage) -> None:
    if storage == "typed" and row.name == "STRING":
        pytest.skip("STRING has no raw form; string_data goes the wire way")
    rng = np.random.default_rng(row.onnx)
    messages = []
    for i, shape in enumerate(shapes):
        raw = rng.integers(0, 256, size=int(np.prod(shape)) * row.bits // 8, dtype=np.uint8)
        if row.name == "BOOL":
            raw &= 1
        if row.typed_entry_dtype == np.float32 and raw.size >= 12:
            raw[:12] = FLOAT32_BITS.view(np.uint8)
        message = TensorProto(name=f"t{i}", dims=shape, data_type=row.onnx, raw_data=raw.tobytes())
        if i % 2:
            message.doc_string = "" if i == 1 else "doc"  # set, even empty, is kept
        if storage == "typed" and raw.size:
            value = decode_tensor(message.SerializeToString())
            number = TensorProto.DESCRIPTOR.fields_by_name[row.typed_field].number
            marker = bytes([number << 3 | 2, 0])
            envelope = TensorProto(name=message.name).SerializeToString() + marker
            typed = encode_tensor(Tensor(row, value.dims, value.codes, envelope))
            message = TensorProto.FromString(typed)
            assert not message.raw_data
            assert len(getattr(message, row.typed_field))
        messages.append(message)
    if all(np.prod(s) for s in shapes):  # raw_data set empty: only the wire path tells
        assert raw_batch(messages) is not None  # the direct path takes them all
    direct = to_arrow(messages)
    wire = onnx_arrow.core.values.to_arrow_serialized(  # decoded from the serialized messages
        [m.SerializeToString() for m in messages], "tensor", None
    )
    exact = to_arrow(messages, exact=True)  # names, envelopes and all
    assert exact.type == wire.type
    assert exact.envelope.equals(wire.envelope)
    assert [a.tobytes() for a in to_pylist(exact)] == [a.tobytes() for a in to_pylist(wire)]
    assert [m.SerializeToString() for m in from_arrow(exact)] == [
        m.SerializeToString() for m in messages
    ]
    wire = wire.value
    assert direct.type == wire.type
    # bit for bit (NaN payloads included, which Array.equals cannot compare)
    assert [a.tobytes() for a in to_pylist(direct)] == [a.tobytes() for a in to_pylist(wire)]
    assert direct.null_count == wire.null_count == 0
    back = from_arrow(direct)
    through_bytes = onnx_arrow.core.values.from_arrow_serialized(direct)[1]
    assert [m.SerializeToString() for m in back] == through_bytes
    assert [numpy_helper.to_array(m).tobytes() for m in back] == [
        numpy_helper.to_array(m).tobytes() for m in messages
    ]


def test_messages_the_direct_path_does_not_take_go_the_wire_way() -> None:
    typed = TensorProto(dims=[2], data_type=TensorProto.FLOAT, float_data=[1.0, 2.0])
    short = TensorProto(dims=[2], data_type=TensorProto.FLOAT, raw_data=b"\x00" * 4)
    assert to_pylist(to_arrow([typed]))[0].tolist() == [1.0, 2.0]
    with pytest.raises(onnx_arrow.InvalidTensorError, match="raw_data holds 4 bytes"):
        to_arrow([short])
    with pytest.raises(UnsupportedTypeError, match="row 1"):
        to_arrow([floats(2), numpy_helper.from_list([np.ones(2, np.float32)])])


@pytest.mark.parametrize("mib", [0, 2], ids=["small", "past the size check"])
@pytest.mark.parametrize("storage", ["raw_data", "float_data"])
def test_the_direct_path_leaves_every_other_field_to_the_wire_path(mib: int, storage) -> None:
    """Segments, metadata, unknown fields, set-but-empty names: byte for byte."""
    data = np.arange(max(4, (mib << 20) // 4), dtype=np.float32)
    base = numpy_helper.from_array(data, "x")
    if storage == "float_data":
        base.ClearField("raw_data")
        base.float_data.extend(data.tolist())
    variants = []
    for edit in ("segment", "metadata", "location", "empty name", "unknown"):
        m = TensorProto()
        m.CopyFrom(base)
        if edit == "segment":
            m.segment.begin = 0
            m.segment.end = 1
        elif edit == "metadata":
            m.metadata_props.add(key="k", value="v")
        elif edit == "location":
            m.data_location = TensorProto.DEFAULT
        elif edit == "empty name":
            m.name = ""
            m.ClearField("name")
            m.doc_string = ""
        else:
            m = TensorProto.FromString(m.SerializeToString() + b"\xa0\x06\x05")
        variants.append(m)
    for m in variants[1:]:  # a segment alone is refused by the decoder, located
        exact = to_arrow([m], exact=True)
        assert from_arrow(exact)[0].SerializeToString() == m.SerializeToString()
    with pytest.raises(onnx_arrow.OnnxArrowError, match="segment"):
        to_arrow([variants[0]])


def test_raw_batch_reads_whole_byte_raw_data_and_declines_anything_else() -> None:
    plain = TensorProto(
        name="x", dims=[2], data_type=TensorProto.INT16, raw_data=b"\x01\x00\x02\x00"
    )
    batch = raw_batch([plain, plain])
    assert batch is not None
    assert [r.name for r in batch.dtypes] == ["INT16", "INT16"]
    assert batch.dims == [(2,), (2,)]
    assert batch.dims[0] is batch.dims[1]  # one tuple for a run of one shape
    assert batch.names == ["x", "x"]
    assert batch.doc_strings == [None, None]
    assert batch.envelopes() == [TensorProto(name="x", raw_data=b"").SerializeToString()] * 2
    declined = {
        "typed data out of range": TensorProto(
            dims=[1], data_type=TensorProto.INT8, int32_data=[300]
        ),
        "typed data too short": TensorProto(
            dims=[2], data_type=TensorProto.FLOAT, float_data=[1.0]
        ),
        "packed dtype": TensorProto(dims=[2], data_type=TensorProto.INT4, raw_data=b"\x21"),
        "short data": TensorProto(dims=[2], data_type=TensorProto.INT16, raw_data=b"\x01"),
        "undefined dtype": TensorProto(dims=[1], data_type=0, raw_data=b"\x01"),
        "another message": numpy_helper.from_list([np.ones(1, np.float32)]),
    }
    for what, message in declined.items():
        assert raw_batch([plain, message]) is None, what
    typed = TensorProto(name="", dims=[2], data_type=TensorProto.INT8, int32_data=[-1, 2])
    batch = raw_batch([typed])
    assert batch is not None  # an entry per element, in range, an empty name kept
    assert np.asarray(batch.raws[0]).tobytes() == b"\xff\x02"
    assert batch.envelopes() == [b"\x2a\x00\x42\x00"]  # int32_data (5) before name (8)


def test_decode_tensor_fast_gives_what_decode_tensor_gives_or_none() -> None:
    message = floats(2, 3)
    data = message.SerializeToString()
    fast = decode_tensor_fast(data, canonical=True)
    wire = decode_tensor(data)
    assert fast is not None
    assert (fast.dtype, fast.dims, fast.envelope) == (wire.dtype, wire.dims, wire.envelope)
    assert fast.codes.tobytes() == wire.codes.tobytes()
    assert encode_tensor(fast) == data
    typed = TensorProto(dims=[1], data_type=TensorProto.FLOAT, float_data=[1.0])
    # dims [1], data_type FLOAT, then float_data's one entry unpacked (tag 4, 32-bit)
    unpacked = b"\x08\x01\x10\x01\x25" + np.float32(1.0).tobytes()
    assert decode_tensor_fast(typed.SerializeToString()) is not None  # as protobuf writes it
    assert decode_tensor(unpacked).codes.tolist() == [1.0]
    assert decode_tensor_fast(unpacked) is None  # typed data not as protobuf writes it
    assert decode_tensor_fast(b"\xff\xff") is None  # malformed: the wire path says why
    reordered = TensorProto(data_type=TensorProto.FLOAT).SerializeToString() + b"\x08\x00"
    assert decode_tensor_fast(reordered) is not None
    assert decode_tensor_fast(reordered, canonical=True) is None  # not what protobuf writes


TYPED = [r for r in onnx_arrow.DTYPES.values() if r.typed_field != "string_data"]


def _typed_entries(row: onnx_arrow.DType, count: int) -> list[int | float]:
    """Entries of ``row``'s typed field for ``count`` elements, in range."""
    if row.typed_encoding.name == "PACKED_BYTES":
        return [1] * -(-count * row.bits // 8)
    if row.typed_field in ("float_data", "double_data"):
        per = 2 if row.typed_encoding.name == "INTERLEAVED" else 1
        return [-0.0, 1.5, -2.25] * per * (count // 3)
    if row.typed_encoding.name == "ZERO_EXTEND":
        return [0, 1, 1] * (count // 3)
    first = 1 if row.typed_field == "uint64_data" else -1
    return [first, 0, 3] * (count // 3)


@pytest.mark.parametrize("row", TYPED, ids=[r.name for r in TYPED])
@pytest.mark.parametrize("envelope", [{}, {"name": "x"}, {"name": "x", "doc_string": "d"}])
def test_a_small_typed_tensor_takes_protobufs_parser_and_gives_what_the_wire_codec_gives(
    row: onnx_arrow.DType, envelope: dict[str, str]
) -> None:
    message = TensorProto(dims=[2, 3], data_type=row.onnx, **envelope)  # type: ignore[arg-type]
    getattr(message, row.typed_field).extend(_typed_entries(row, 6))
    data = message.SerializeToString()
    wire = decode_tensor(data)
    for canonical in (False, True):
        fast = decode_tensor_fast(data, canonical=canonical)
        assert fast is not None
        assert (fast.dtype, fast.dims, fast.envelope) == (wire.dtype, wire.dims, wire.envelope)
        assert fast.codes.tobytes() == wire.codes.tobytes()
        assert encode_tensor(fast) == data  # byte for byte, as the store requires


def test_a_typed_tensor_goes_the_wire_way_where_protobufs_parser_would_not_be_exact() -> None:
    def typed(**fields: object) -> TensorProto:
        return TensorProto(dims=[3], data_type=TensorProto.FLOAT, **fields)  # type: ignore[arg-type]

    large = TensorProto(dims=[1 << 15], data_type=TensorProto.FLOAT, float_data=[1.0] * (1 << 15))
    declined = {
        "past TYPED_FAST_BYTES": large.SerializeToString(),
        "entries for other elements": typed(float_data=[1.0]).SerializeToString(),
        "the field of another dtype": typed(int64_data=[1, 2, 3]).SerializeToString(),
        "a raw_data too": typed(float_data=[1.0] * 3, raw_data=b"\0" * 12).SerializeToString(),
        "out of range": TensorProto(
            dims=[1], data_type=TensorProto.INT8, int32_data=[300]
        ).SerializeToString(),
        "the fields out of order": typed(name="x").SerializeToString()
        + TensorProto(float_data=[1.0] * 3).SerializeToString(),
    }
    assert len(large.SerializeToString()) > TYPED_FAST_BYTES
    for what, data in declined.items():
        assert decode_tensor_fast(data) is None, what
        assert decode_tensor_fast(data, canonical=True) is None, what
    assert decode_tensor(large.SerializeToString()).codes.base is not None  # a view


@pytest.mark.parametrize("name", [None, "x"])
def test_a_small_typed_tensor_keeps_the_bits_of_its_floats(name: str | None) -> None:
    """A signalling NaN, a NaN with a payload, negative zero: read from the bytes, never
    through a Python float, which would make the NaN quiet."""
    for dtype, field, bits in (
        (TensorProto.FLOAT, "float_data", FLOAT32_BITS),
        (TensorProto.DOUBLE, "double_data", np.array([0x7FF0000000000001], np.uint64)),
        (TensorProto.COMPLEX64, "float_data", FLOAT32_BITS[:2]),
    ):
        message = TensorProto(dims=[1 if dtype == TensorProto.COMPLEX64 else bits.size])
        message.data_type = dtype
        if name is not None:
            message.name = name
        getattr(message, field).extend([0.5] * bits.size)
        data = message.SerializeToString()
        payload = np.full(bits.size, 0.5, bits.dtype.str.replace("u", "f")).tobytes()
        data = data.replace(payload, bits.tobytes())
        fast = decode_tensor_fast(data, canonical=True)
        assert fast is not None
        assert fast.codes.tobytes() == bits.tobytes() == decode_tensor(data).codes.tobytes()
        assert fast.envelope == decode_tensor(data).envelope
        assert encode_tensor(fast) == data


def test_fixed_tensor_messages_of_a_plain_column_and_none_otherwise() -> None:
    column = to_arrow([floats(2, 3), floats(2, 3)])
    messages = fixed_tensor_messages(column)
    assert messages is not None
    assert [m.SerializeToString() for m in messages] == [
        numpy_helper.from_array(numpy_helper.to_array(floats(2, 3))).SerializeToString()
    ] * 2
    assert fixed_tensor_messages(to_arrow([floats(2), floats(3)])) is None  # variable shape
    int4 = numpy_helper.from_array(np.array([1, 2], dtype=ml_dtypes.int4))
    assert fixed_tensor_messages(to_arrow([int4])) is None  # a packed dtype
    with_null = pa.concat_arrays([column, pa.nulls(1, column.type)])
    assert fixed_tensor_messages(with_null) is None

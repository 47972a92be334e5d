"""Tests of :mod:`onnx_arrow.core._wire`: varints against a reference and protobuf, and refusals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto
from wire_reference import varint

from onnx_arrow.core import _wire
from onnx_arrow.errors import InvalidMessageError, OnnxArrowError

U64 = st.integers(min_value=0, max_value=2**64 - 1)
EDGES = [0, 1, 127, 128, 255, 16383, 16384, 2**31 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1]


def reference_decode(data: bytes) -> list[int]:
    """Decode packed varints one byte at a time; bits past 64 are dropped as protobuf does."""
    values = []
    value = shift = 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            values.append(value & (2**64 - 1))
            value = shift = 0
    assert shift == 0
    return values


def decode(data: bytes) -> list[int]:
    return [int(v) for v in _wire.decode_varints(np.frombuffer(data, np.uint8), what="test")]


def encode(values: list[int]) -> bytes:
    return _wire.encode_varints(np.array(values, dtype=np.uint64))


def protobuf_packed_uint64(values: list[int]) -> bytes:
    """The payload of a packed ``uint64_data`` field as protobuf writes it."""
    data = TensorProto(uint64_data=values).SerializeToString()
    fields = list(_wire.iter_fields(memoryview(data)))
    if not fields:
        return b""
    (f,) = fields
    return data[f.value_start : f.end]


# --- varints ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", EDGES)
def test_encode_varint_edges(value: int) -> None:
    assert _wire.encode_varint(value) == varint(value)
    assert decode(_wire.encode_varint(value)) == [value]


def test_encode_varint_lengths() -> None:
    assert len(_wire.encode_varint(0)) == 1
    assert len(_wire.encode_varint(2**63)) == 10
    assert len(_wire.encode_varint(2**64 - 1)) == 10
    assert _wire.encode_varint(-1) == _wire.encode_varint(2**64 - 1)  # two's complement


@settings(max_examples=200, deadline=None)
@given(st.lists(U64, max_size=40))
@example([])
@example(EDGES)
@example([0])
@example([2**63])
@example([2**64 - 1])
def test_varints_vectorized_match_the_reference(values: list[int]) -> None:
    encoded = encode(values)
    assert encoded == b"".join(varint(v) for v in values)
    if values:  # a few values are encoded one by one: the vectorized encoder too
        assert _wire._encode_chunk(np.array(values, dtype=np.uint64))[0].tobytes() == encoded
    assert encoded == b"".join(_wire.encode_varint(v) for v in values)
    assert encoded == protobuf_packed_uint64(values)
    assert decode(encoded) == values
    assert reference_decode(encoded) == values


@pytest.mark.parametrize("count", [3, 64, 65, 1000])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint32, np.uint64])
def test_varints_of_signed_and_unsigned_arrays_are_what_protobuf_writes(
    dtype: type, count: int
) -> None:
    info = np.iinfo(dtype)
    values = np.random.default_rng(count).integers(info.min, info.max, count, dtype=dtype)
    values[0], values[-1] = info.min, info.max
    field = {np.int64: "int64_data", np.uint32: "uint64_data", np.uint64: "uint64_data"}
    message = TensorProto(**{field.get(dtype, "int32_data"): values.tolist()})
    (f,) = _wire.iter_fields(memoryview(message.SerializeToString()))
    assert _wire.encode_varints(values) == message.SerializeToString()[f.value_start : f.end]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(U64, max_size=6), max_size=6))
@example([[], [0], []])
@example([EDGES, [], [2**64 - 1]])
def test_varint_runs_are_the_runs_encoded_alone(runs: list[list[int]]) -> None:
    values = np.array([v for run in runs for v in run], dtype=np.uint64)
    starts = np.cumsum([0, *(len(run) for run in runs)], dtype=np.int64)
    data, at = _wire.encode_varint_runs(values, starts)
    assert data == encode([v for run in runs for v in run])
    assert [data[at[k] : at[k + 1]] for k in range(len(runs))] == [encode(r) for r in runs]


def test_varint_runs_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_wire, "_CHUNK_VALUES", 3)
    runs = [[1, 300], [], [2**63, 5, 6, 7, 8], [9], [2**64 - 1, 0]]
    values = np.array([v for run in runs for v in run], dtype=np.uint64)
    starts = np.cumsum([0, *(len(run) for run in runs)], dtype=np.int64)
    data, at = _wire.encode_varint_runs(values, starts)
    assert [data[at[k] : at[k + 1]] for k in range(len(runs))] == [encode(r) for r in runs]
    signed = np.array([-1, 2, -300, 4], dtype=np.int32)
    data, at = _wire.encode_varint_runs(signed, np.array([0, 1, 4], dtype=np.int64))
    assert data == TensorProto(int32_data=signed.tolist()).SerializeToString()[2:]
    assert at.tolist() == [0, 10, len(data)]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(0x80, 0xFF), max_size=9).flatmap(
            lambda cont: st.integers(0, 0x7F).map(lambda last: [*cont, last])
        ),
        max_size=20,
    )
)
def test_decode_any_well_formed_run(groups: list[list[int]]) -> None:
    """Any run of varints of at most 10 bytes, including overlong and > 64-bit ones."""
    data = bytes(b for group in groups for b in group)
    assert decode(data) == reference_decode(data)


def test_decode_negative_int64_as_protobuf_writes_it() -> None:
    values = [-1, -(2**63), 2**63 - 1, 0, -300]
    data = TensorProto(int64_data=values).SerializeToString()
    (f,) = _wire.iter_fields(memoryview(data))
    decoded = _wire.decode_varints(np.frombuffer(data[f.value_start : f.end], np.uint8), what="t")
    assert decoded.view(np.int64).tolist() == values
    assert encode([v % 2**64 for v in values]) == data[f.value_start : f.end]


@settings(max_examples=200, deadline=None)
@given(U64, st.binary(max_size=3), st.binary(max_size=3))
def test_read_varint_reads_one_value_in_place(value: int, before: bytes, after: bytes) -> None:
    data = before + varint(value) + after
    end = len(data) - len(after)
    assert _wire.read_varint(memoryview(data), len(before), end, "t") == (value, end)


@pytest.mark.parametrize(
    ("data", "shown"),
    [(b"", "truncated"), (b"\x80\x80", "truncated"), (b"\x80" * 10 + b"\x01", "longer than 10")],
    ids=["empty", "cut", "11 bytes"],
)
def test_read_varint_refuses_what_does_not_end(data: bytes, shown: str) -> None:
    with pytest.raises(InvalidMessageError, match=f"{shown}.* in here"):
        _wire.read_varint(memoryview(data + b"\x01"), 0, len(data), "here")


def test_tags_and_lengths() -> None:
    assert _wire.encode_tag(1, _wire.VARINT) == b"\x08"
    assert _wire.encode_tag(9, _wire.LEN) == b"\x4a"
    assert _wire.encode_tag(16, _wire.LEN) == b"\x82\x01"
    assert _wire.encode_len(9, 300) == b"\x4a\xac\x02"


# --- walking messages ----------------------------------------------------------------------


def test_iter_fields_walks_a_tensor() -> None:
    t = TensorProto(dims=[2, 3], data_type=TensorProto.FLOAT, name="x", raw_data=b"\x01" * 24)
    t.doc_string = "d" * 200
    data = t.SerializeToString()
    fields = list(_wire.iter_fields(memoryview(data)))
    assert [(f.number, f.wire_type) for f in fields] == [
        (1, _wire.VARINT),
        (1, _wire.VARINT),
        (2, _wire.VARINT),
        (8, _wire.LEN),
        (9, _wire.LEN),
        (12, _wire.LEN),
    ]
    assert [f.value for f in fields[:3]] == [2, 3, TensorProto.FLOAT]
    raw = fields[4]
    assert data[raw.value_start : raw.end] == b"\x01" * 24
    assert raw.value == 24
    doc = fields[5]
    assert data[doc.value_start : doc.end] == b"d" * 200
    assert doc.value_start - doc.start == 3  # one tag byte, two length bytes
    assert fields[0].start == 0
    assert fields[-1].end == len(data)
    assert all(a.end == b.start for a, b in itertools.pairwise(fields))


def test_iter_fields_fixed_width() -> None:
    data = b"\x0d" + (7).to_bytes(4, "little") + b"\x11" + (2**64 - 1).to_bytes(8, "little")
    fields = list(_wire.iter_fields(memoryview(data)))
    assert [(f.number, f.wire_type, f.value) for f in fields] == [(1, 5, 7), (2, 1, 2**64 - 1)]


def test_iter_fields_of_a_range() -> None:
    data = b"\xff\xff" + b"\x08\x05" + b"\xff"
    fields = list(_wire.iter_fields(memoryview(data), 2, 4))
    assert [(f.number, f.value, f.start, f.end) for f in fields] == [(1, 5, 2, 4)]


# --- malformed input -----------------------------------------------------------------------


MALFORMED = {
    "truncated tag varint": b"\x80",
    "truncated value varint": b"\x08\xff\xff",
    "tag varint over 10 bytes": b"\x80" * 10 + b"\x01",
    "value varint over 10 bytes": b"\x08" + b"\xff" * 10 + b"\x01",
    "truncated LEN payload": b"\x4a\x05abc",
    "truncated LEN length": b"\x4a",
    "LEN claiming 2**63 bytes": b"\x4a" + _wire.encode_varint(2**63),
    "field number 0 varint": b"\x00\x01",
    "field number 0 LEN": b"\x02\x00",
    "start group": b"\x0b",
    "end group": b"\x0c",
    "wire type 6": b"\x0e",
    "wire type 7": b"\x0f",
    "truncated fixed32": b"\x0d\x01\x02",
    "truncated fixed64": b"\x09\x01\x02\x03\x04\x05\x06\x07",
}


@pytest.mark.parametrize("data", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_messages_are_refused(data: bytes) -> None:
    with pytest.raises(InvalidMessageError, match="where-it-is") as info:
        list(_wire.iter_fields(memoryview(b"\x08\x01" + data), what="where-it-is"))
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, OnnxArrowError)


@pytest.mark.parametrize("data", MALFORMED.values(), ids=MALFORMED.keys())
def test_protobuf_also_refuses_them(data: bytes) -> None:
    """The refusals agree with protobuf's own parser (a sanity check of the cases)."""
    from google.protobuf.message import DecodeError

    if data[:1] in (b"\x0b", b"\x0c"):
        pytest.skip("protobuf parses groups; ONNX messages have none")
    with pytest.raises(DecodeError):
        TensorProto.FromString(b"\x08\x01" + data)


@pytest.mark.parametrize(
    "data",
    [b"\x80", b"\x01\xff", b"\x80" * 10 + b"\x01", b"\x05" + b"\xff" * 11 + b"\x00"],
    ids=["truncated", "ends mid value", "11 bytes", "12 bytes after a value"],
)
def test_malformed_packed_varints_are_refused(data: bytes) -> None:
    with pytest.raises(InvalidMessageError, match=r"^int32_data here: "):
        _wire.decode_varints(np.frombuffer(data, np.uint8), what="int32_data here")

"""The protobuf wire format, as far as onnx-arrow needs it.

Bulk data never passes through Python objects: packed fields are sliced out of the
message bytes as numpy views (fixed-width) or decoded in bulk (varints), so NaN
payloads survive and a large tensor costs no copy.  Messages are walked one field
at a time; elements are never.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from onnx_arrow.errors import InvalidMessageError

__all__ = [
    "LEN",
    "VARINT",
    "Field",
    "count_varints",
    "decode_varints",
    "encode_len",
    "encode_tag",
    "encode_varint",
    "encode_varint_runs",
    "encode_varints",
    "iter_fields",
    "read_varint",
    "varint_chunks",
    "varint_sizes",
]

VARINT: Final = 0
I64: Final = 1
LEN: Final = 2
I32: Final = 5
_MAX_VARINT_BYTES: Final = 10


@dataclass(frozen=True, slots=True)
class Field:
    """One field occurrence: its number, wire type, and byte ranges in the message.

    ``start``/``end`` span the whole occurrence (tag included); ``value_start`` is
    where the payload begins (for LEN, after the length).  ``value`` is the
    decoded integer for VARINT/I32/I64 and the payload length for LEN.
    """

    number: int
    wire_type: int
    start: int
    value_start: int
    end: int
    value: int


def read_varint(buf: memoryview, pos: int, end: int, what: str) -> tuple[int, int]:
    """The varint at ``pos`` (as a uint64) and the position after it; it must end before ``end``."""
    result = 0
    shift = 0
    for i in range(_MAX_VARINT_BYTES):
        if pos + i >= end:
            raise InvalidMessageError(f"truncated varint in {what} at byte {pos}")
        byte = buf[pos + i]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos + i + 1
        shift += 7
    raise InvalidMessageError(f"varint longer than 10 bytes in {what} at byte {pos}")


def iter_fields(
    buf: memoryview, start: int = 0, end: int | None = None, *, what: str = "message"
) -> Iterator[Field]:
    """Walk the fields of one message in ``buf[start:end]``, in wire order."""
    stop = len(buf) if end is None else end
    pos = start
    while pos < stop:
        tag, value_pos = read_varint(buf, pos, stop, what)
        number, wire_type = tag >> 3, tag & 7
        if number == 0:
            raise InvalidMessageError(f"field number 0 in {what} at byte {pos}")
        if wire_type == VARINT:
            value, nxt = read_varint(buf, value_pos, stop, what)
        elif wire_type == LEN:
            value, payload = read_varint(buf, value_pos, stop, what)
            nxt = payload + value
            if nxt > stop:
                raise InvalidMessageError(
                    f"field {number} of {what} claims {value} bytes at byte {payload}, "
                    f"but only {stop - payload} remain: the data is truncated"
                )
            value_pos = payload
        elif wire_type == I32:
            nxt = value_pos + 4
            if nxt > stop:
                raise InvalidMessageError(f"truncated fixed32 field {number} in {what}")
            value = int.from_bytes(buf[value_pos:nxt], "little")
        elif wire_type == I64:
            nxt = value_pos + 8
            if nxt > stop:
                raise InvalidMessageError(f"truncated fixed64 field {number} in {what}")
            value = int.from_bytes(buf[value_pos:nxt], "little")
        else:
            raise InvalidMessageError(
                f"wire type {wire_type} (groups) of field {number} in {what} at byte {pos} "
                "is not supported by ONNX messages"
            )
        yield Field(number, wire_type, pos, value_pos, nxt, value)
        pos = nxt


#: Packed varints are decoded this many bytes at a time, so that the temporaries of the
#: vectorized decoder stay small next to the result whatever the size of the field.
_CHUNK_BYTES: Final = 1 << 20


def decode_varints(data: npt.NDArray[np.uint8], *, what: str) -> npt.NDArray[np.uint64]:
    """Decode a packed run of varints into uint64 values, vectorized (see
    :func:`varint_chunks`: the peak memory is the result plus a few megabytes)."""
    out = np.empty(count_varints(data, what=what), dtype=np.uint64)
    done = 0
    for values in varint_chunks(data, what=what):
        out[done : done + values.size] = values
        done += values.size
    return out


def count_varints(data: npt.NDArray[np.uint8], *, what: str) -> int:
    """How many varints a packed run holds; it must end with the last byte of one."""
    if data.size and data[-1] & 0x80:
        raise InvalidMessageError(f"{what}: packed varints end in the middle of a value")
    return sum(
        int(np.count_nonzero(data[i : i + _CHUNK_BYTES] < 0x80))
        for i in range(0, data.size, _CHUNK_BYTES)
    )


def varint_chunks(data: npt.NDArray[np.uint8], *, what: str) -> Iterator[npt.NDArray[np.uint64]]:
    """The values of a packed run of varints as uint64, about a megabyte of the run at a
    time, so that a caller fills its result without full-size temporaries."""
    pos = 0
    while pos < data.size:
        stop = _chunk_end(data, pos, what)
        yield _decode_chunk(data[pos:stop], what)
        pos = stop


def _chunk_end(data: npt.NDArray[np.uint8], pos: int, what: str) -> int:
    """Where the chunk from ``pos`` ends: about a megabyte on, after the last byte of a varint."""
    stop = pos + _CHUNK_BYTES
    if stop >= data.size:
        return int(data.size)
    ends = np.flatnonzero(data[stop - 1 : stop - 1 + _MAX_VARINT_BYTES] < 0x80)
    if not ends.size:
        raise InvalidMessageError(f"{what}: a packed varint is longer than 10 bytes")
    return stop + int(ends[0])


def _decode_chunk(data: npt.NDArray[np.uint8], what: str) -> npt.NDArray[np.uint64]:
    """Decode varints that end exactly at the end of ``data``: one pass per byte position."""
    ends = np.flatnonzero(data < 0x80)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts + 1
    longest = int(lengths.max())
    if longest > _MAX_VARINT_BYTES:
        raise InvalidMessageError(f"{what}: a packed varint is longer than 10 bytes")
    values = (data[starts] & 0x7F).astype(np.uint64)
    for k in range(1, longest):
        longer = np.flatnonzero(lengths > k)
        values[longer] |= (data[starts[longer] + k] & 0x7F).astype(np.uint64) << np.uint64(7 * k)
    return values


_VARINT_LIMITS: Final = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def encode_varints(values: npt.NDArray[np.integer]) -> bytes:
    """Encode integers as a packed run of varints, vectorized: signed ones sign-extended to
    64 bits (as protobuf writes int32 and int64), unsigned ones as they are.

    A chunk of about a million values at a time, so the temporaries stay small next to
    the result whatever the number of values.
    """
    if values.size == 0:
        return b""
    flat = values.reshape(-1)
    if flat.size <= _FEW_VALUES:  # numpy's calls would cost more than the values
        return b"".join([encode_varint(v) for v in flat.tolist()])
    chunks = [
        _encode_chunk(flat[i : i + _CHUNK_VALUES])[0].tobytes()
        for i in range(0, flat.size, _CHUNK_VALUES)
    ]
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def encode_varint_runs(
    values: npt.NDArray[np.integer], starts: npt.NDArray[np.int64]
) -> tuple[bytes, npt.NDArray[np.int64]]:
    """Encode integers as :func:`encode_varints` does, and say where in the bytes the
    value at each of ``starts`` (ascending indices of ``values``, ``values.size`` allowed)
    begins: the packed runs of several fields encoded at once, each run's bytes
    ``data[at[k]:at[k + 1]]`` for the values ``values[starts[k]:starts[k + 1]]``."""
    flat = values.reshape(-1)
    at = np.zeros(starts.size, dtype=np.int64)
    chunks = []
    done = 0
    for i in range(0, flat.size, _CHUNK_VALUES):
        encoded, offsets = _encode_chunk(flat[i : i + _CHUNK_VALUES])
        low, high = np.searchsorted(starts, (i, i + offsets.size))
        at[low:high] = done + offsets[starts[low:high] - i]
        chunks.append(encoded.data)
        done += encoded.size
    at[starts >= flat.size] = done
    return b"".join(chunks), at


_CHUNK_VALUES: Final = 1 << 20

#: Up to this many values are encoded one by one (a tensor of a few elements).
_FEW_VALUES: Final = 64


def varint_sizes(values: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """How many bytes the varint of each value takes (non-negative values)."""
    return np.searchsorted(_VARINT_LIMITS, values.astype(np.uint64), side="right") + 1


def _encode_chunk(
    chunk: npt.NDArray[np.integer],
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """The varints of a non-empty chunk, and where each begins: every value's bytes are
    written into one row of a matrix as wide as the longest, then the rows' leading
    bytes are taken in order."""
    if chunk.dtype.kind == "i":
        values = chunk.astype(np.int64).view(np.uint64)
    else:
        values = chunk.astype(np.uint64)
    lengths = varint_sizes(values)
    offsets = np.empty(values.size, dtype=np.int64)
    offsets[0] = 0
    np.cumsum(lengths[:-1], out=offsets[1:])
    longest = int(lengths.max())
    if longest == 1:
        return values.astype(np.uint8), offsets
    matrix = np.empty((values.size, longest), dtype=np.uint8)
    for k in range(longest):
        column = matrix[:, k]
        np.bitwise_and(values >> np.uint64(7 * k), 0x7F, out=column, casting="unsafe")
        column |= (lengths > k + 1).view(np.uint8) << 7
    return matrix[np.arange(longest) < lengths[:, None]], offsets


def encode_varint(value: int) -> bytes:
    """Encode one non-negative integer (< 2**64) as a varint."""
    value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_tag(number: int, wire_type: int) -> bytes:
    """Encode a field tag."""
    return encode_varint(number << 3 | wire_type)


def encode_len(number: int, payload_len: int) -> bytes:
    """Encode the tag and length prefix of a length-delimited field."""
    return encode_tag(number, LEN) + encode_varint(payload_len)

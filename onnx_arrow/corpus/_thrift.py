"""Thrift's compact protocol, scanned in place: where each field of a struct lies, and a
struct written again with some of its integers changed, every other byte as it was.
Enough to move the offsets of a Parquet footer's row groups (see
:mod:`onnx_arrow.corpus.parquet`) without decoding the rest.

Every length is checked against the bytes there are: malformed bytes are a
:class:`ThriftError`, never a read past their end.

>>> data = bytes([0x15, 0x04, 0x16, 0x0A, 0x00])  # {1: i32 2, 2: i64 5}
>>> [(fid, kind) for fid, kind, _, _ in fields(data, 0)]
[(1, 5), (2, 6)]
>>> rewritten(data, 0, {2: lambda n: n + 3}) == (bytes([0x15, 0x04, 0x16, 0x10, 0x00]), 5)
True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Final, Union

from onnx_arrow.core.model import encode_varint, read_varint
from onnx_arrow.errors import CorpusError, InvalidMessageError

__all__ = [
    "I16",
    "I32",
    "I64",
    "LIST",
    "STRUCT",
    "Edits",
    "ThriftError",
    "fields",
    "list_head",
    "read_int",
    "rewritten",
    "rewritten_items",
    "value_end",
    "write_int",
]

# the compact protocol's type codes (a boolean field's value is in its type: TRUE, FALSE)
_STOP: Final = 0
_TRUE: Final = 1
_FALSE: Final = 2
_I8: Final = 3
I16: Final = 4
I32: Final = 5
I64: Final = 6
_DOUBLE: Final = 7
_BINARY: Final = 8
LIST: Final = 9
_SET: Final = 10
_MAP: Final = 11
STRUCT: Final = 12
_INTEGERS: Final = frozenset({I16, I32, I64})
#: One varint: bytes with the high bit set (at most 9), then one without.
_VARINTS: Final = re.compile(rb"[\x80-\xff]{0,9}[\x00-\x7f]")
#: Values nested deeper than this are refused (a Parquet footer nests five deep).
_MAX_DEPTH: Final = 32

#: What :func:`rewritten` changes in a struct, by field id: an integer field's new value (a
#: function of the old), a struct field's own edits, or (for a list of structs) each
#: element's.
Edits = Mapping[int, Union[Callable[[int], int], "Edits"]]


class ThriftError(CorpusError):
    """Bytes that are not a message of Thrift's compact protocol."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` (protobuf's, which Thrift's compact protocol shares) and
    where it ends."""
    try:
        return read_varint(memoryview(data), pos, len(data), "a Thrift struct")
    except InvalidMessageError:
        raise ThriftError(f"no varint of at most 10 bytes at byte {pos}") from None


def read_int(data: bytes, pos: int) -> tuple[int, int]:
    """The zigzag integer (i16, i32, i64) at ``pos`` and where it ends."""
    n, end = _varint(data, pos)
    return (n >> 1) ^ -(n & 1), end


def write_int(value: int) -> bytes:
    """``value`` as a zigzag varint."""
    return encode_varint((value << 1) ^ (value >> 63))


def list_head(kind: int, size: int) -> bytes:
    """The header of a list of ``size`` elements of type ``kind``."""
    if size < 15:
        return bytes([(size << 4) | kind])
    return bytes([0xF0 | kind]) + encode_varint(size)


def _list_head(data: bytes, pos: int) -> tuple[int, int, int]:
    """A list's or set's element type, size and where its elements start."""
    if pos >= len(data):
        raise ThriftError(f"ends at byte {pos} inside a message")
    size, kind = data[pos] >> 4, data[pos] & 0x0F
    pos += 1
    if size == 15:
        size, pos = _varint(data, pos)
    if size > len(data) - pos:  # each element takes a byte at least
        raise ThriftError(f"{size} elements at byte {pos}, more than the bytes left")
    return kind, size, pos


def value_end(data: bytes, pos: int, kind: int, depth: int = 0) -> int:
    """Where the value of type ``kind`` at ``pos`` ends."""
    if kind in _INTEGERS:  # the most common, first
        if pos < len(data) and data[pos] < 0x80:
            return pos + 1
        return _varint(data, pos)[1]
    if depth > _MAX_DEPTH:
        raise ThriftError(f"values nested more than {_MAX_DEPTH} deep")
    if kind == STRUCT:
        return _struct_end(data, pos, depth + 1)
    if kind == _BINARY:
        size, pos = _varint(data, pos)
        end = pos + size
    elif kind in (LIST, _SET):
        element, size, end = _list_head(data, pos)
        if element in _INTEGERS:  # varints: a run of bytes of the high bit, then one without
            found = _VARINTS.match(data, end)
            for _ in range(size):
                if found is None:
                    raise ThriftError(f"a list of {size} integers at byte {pos} runs past the end")
                end = found.end()
                found = _VARINTS.match(data, end)
        elif element in (_TRUE, _FALSE, _I8):
            end += size
        else:
            for _ in range(size):
                end = value_end(data, end, element, depth + 1)
    elif kind in (_TRUE, _FALSE, _I8, _DOUBLE):
        end = pos + (8 if kind == _DOUBLE else 1)
    elif kind == _MAP:
        size, end = _varint(data, pos)
        if size:
            if end >= len(data):
                raise ThriftError(f"ends at byte {end} inside a map")
            key, value = data[end] >> 4, data[end] & 0x0F
            end += 1
            for _ in range(size):
                end = value_end(data, end, key, depth + 1)
                end = value_end(data, end, value, depth + 1)
    else:
        raise ThriftError(f"unknown type code {kind} at byte {pos}")
    if end > len(data):
        raise ThriftError(f"a value at byte {pos} runs past the end")
    return end


def _struct_end(data: bytes, pos: int, depth: int) -> int:
    """Where the struct at ``pos`` ends (after its stop byte)."""
    size = len(data)
    while pos < size:
        head = data[pos]
        if head == _STOP:
            return pos + 1
        pos += 1
        if not head >> 4:  # a field id of its own, after the header
            pos = _varint(data, pos)[1]
        kind = head & 0x0F
        if kind not in (_TRUE, _FALSE):
            pos = value_end(data, pos, kind, depth)
    raise ThriftError(f"ends at byte {pos} inside a struct")


def fields(data: bytes, pos: int, depth: int = 0) -> Iterator[tuple[int, int, int, int]]:
    """The fields of the struct at ``pos``: field id, type, and where the value starts and
    ends (a boolean's value is its type: it starts where it ends).  The struct's stop byte
    is at the last field's end (at ``pos`` for a struct without fields)."""
    last = 0
    while True:
        if pos >= len(data):
            raise ThriftError(f"ends at byte {pos} inside a struct")
        head = data[pos]
        if head == _STOP:
            return
        delta, kind = head >> 4, head & 0x0F
        pos += 1
        if delta:
            fid = last + delta
        else:
            fid, pos = read_int(data, pos)
        end = pos if kind in (_TRUE, _FALSE) else value_end(data, pos, kind, depth)
        yield fid, kind, pos, end
        last, pos = fid, end


def _rewrite(data: bytes, pos: int, edits: Edits, out: list[bytes], depth: int) -> int:
    """Append the struct at ``pos``, ``edits`` applied, to ``out`` in pieces; its end.  One
    pass: a field not edited is skipped over, never read twice."""
    if depth > _MAX_DEPTH:
        raise ThriftError(f"values nested more than {_MAX_DEPTH} deep")
    copied, last, size = pos, 0, len(data)
    while True:
        if pos >= size:
            raise ThriftError(f"ends at byte {pos} inside a struct")
        head = data[pos]
        if head == _STOP:
            pos += 1
            break
        delta, kind = head >> 4, head & 0x0F
        pos += 1
        if delta:
            fid = last + delta
        else:
            fid, pos = read_int(data, pos)
        last = fid
        edit = edits.get(fid)
        if kind in (_TRUE, _FALSE):
            continue
        if edit is None:
            pos = value_end(data, pos, kind, depth)
        elif callable(edit):
            if kind not in _INTEGERS:
                raise ThriftError(f"field {fid} at byte {pos} is not an integer")
            value, end = read_int(data, pos)
            out += (data[copied:pos], write_int(edit(value)))
            copied = pos = end
        elif kind == STRUCT:
            out.append(data[copied:pos])
            copied = pos = _rewrite(data, pos, edit, out, depth + 1)
        elif kind == LIST:
            element, count, pos = _list_head(data, pos)
            if element != STRUCT:
                raise ThriftError(f"field {fid} at byte {pos} is not a list of structs")
            out.append(data[copied:pos])
            for _ in range(count):
                pos = _rewrite(data, pos, edit, out, depth + 1)
            copied = pos
        else:
            raise ThriftError(f"field {fid} at byte {pos} holds no fields to edit")
    out.append(data[copied:pos])
    return pos


def rewritten(data: bytes, pos: int, edits: Edits) -> tuple[bytes, int]:
    """The struct at ``pos`` written again with ``edits`` applied, every other byte as it
    was (field headers keep their ids, so only the changed values' bytes change), and
    where it ends in ``data``."""
    out: list[bytes] = []
    end = _rewrite(data, pos, edits, out, 0)
    return b"".join(out), end


def rewritten_items(
    data: bytes, pos: int, edits: Callable[[int], Edits]
) -> tuple[list[bytes], int]:
    """The list of structs at ``pos``, each written again with ``edits(i)`` applied (see
    :func:`rewritten`), and where the list ends."""
    element, count, pos = _list_head(data, pos)
    if element != STRUCT:
        raise ThriftError(f"the list at byte {pos} is not a list of structs")
    out = []
    for i in range(count):
        struct, pos = rewritten(data, pos, edits(i))
        out.append(struct)
    return out, pos

"""Thrift's compact protocol scanned in place (corpus/_thrift.py): fields found where they
are, integers changed and every other byte kept, malformed bytes refused."""

from __future__ import annotations

import random
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from onnx_arrow.corpus._thrift import (
    I64,
    LIST,
    STRUCT,
    ThriftError,
    fields,
    list_head,
    read_int,
    rewritten,
    rewritten_items,
    value_end,
    write_int,
)
from onnx_arrow.errors import CorpusError


def _field(delta: int, kind: int) -> bytes:
    return bytes([(delta << 4) | kind])


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes([*out, n])


# a struct of every type: i32 1 = -3, bool 2 = true, binary 3 = b"ab", double 4 = 1.5,
# list<i64> 5 of 16 elements (the size after the header), i64 40 = 2**40 (a field id of
# its own: more than 15 after the last), struct 41 {i16 1 = 7, bool 2 = false},
# map<i32, binary> 42 {1: b"x"}, set<byte> 43 of 2, list<struct> 44 of 2
_ELEMENTS = list(range(-8, 8))
_STRUCT = b"".join(
    (
        _field(1, 5) + write_int(-3),
        _field(1, 1),
        _field(1, 8) + _varint(2) + b"ab",
        _field(1, 7) + struct.pack("<d", 1.5),
        _field(1, LIST) + list_head(I64, 16) + b"".join(write_int(n) for n in _ELEMENTS),
        bytes([I64]) + write_int(40) + write_int(2**40),
        _field(1, STRUCT) + _field(1, 4) + write_int(7) + _field(1, 2) + b"\x00",
        _field(1, 11) + _varint(1) + bytes([0x58]) + write_int(1) + _varint(1) + b"x",
        _field(1, 10) + bytes([0x23]) + b"\x01\xff",
        _field(1, LIST) + list_head(STRUCT, 2) + (_field(1, I64) + write_int(5) + b"\x00") * 2,
        b"\x00",
    )
)


def test_the_fields_of_a_struct_are_found_where_they_are():
    got = [(fid, kind) for fid, kind, _, _ in fields(_STRUCT, 0)]
    assert got == [
        *((1, 5), (2, 1), (3, 8), (4, 7), (5, LIST), (40, I64)),
        *((41, STRUCT), (42, 11), (43, 10), (44, LIST)),
    ]
    spans = {fid: (start, end) for fid, _, start, end in fields(_STRUCT, 0)}
    assert read_int(_STRUCT, spans[1][0]) == (-3, spans[1][1])
    assert read_int(_STRUCT, spans[40][0])[0] == 2**40
    assert _STRUCT[slice(*spans[3])] == _varint(2) + b"ab"
    assert spans[2][0] == spans[2][1]  # a boolean's value is in its field's type
    assert value_end(_STRUCT, 0, STRUCT) == len(_STRUCT)


def test_a_rewrite_changes_the_integers_edited_and_keeps_every_other_byte():
    same, end = rewritten(_STRUCT, 0, {})
    assert (same, end) == (_STRUCT, len(_STRUCT))
    moved, _ = rewritten(
        _STRUCT,
        0,
        {1: lambda n: n * 1000, 40: lambda n: n + 1, 41: {1: lambda n: -n}, 44: {1: abs}},
    )
    spans = {fid: (start, end) for fid, _, start, end in fields(moved, 0)}
    assert read_int(moved, spans[1][0])[0] == -3000  # one byte longer
    assert read_int(moved, spans[40][0])[0] == 2**40 + 1
    inner = {fid: start for fid, _, start, _ in fields(moved, spans[41][0])}
    assert read_int(moved, inner[1])[0] == -7
    assert [fid for fid, *_ in fields(moved, 0)] == [fid for fid, *_ in fields(_STRUCT, 0)]
    # elsewhere the bytes are the same
    before = dict_spans(_STRUCT)
    assert moved[spans[3][0] : spans[5][1]] == _STRUCT[before[3][0] : before[5][1]]
    assert moved[spans[42][0] :] == _STRUCT[before[42][0] :]
    with pytest.raises(ThriftError, match="not an integer"):
        rewritten(_STRUCT, 0, {3: abs})
    with pytest.raises(ThriftError, match="holds no fields to edit"):
        rewritten(_STRUCT, 0, {3: {1: abs}})
    with pytest.raises(ThriftError, match="not a list of structs"):
        rewritten(_STRUCT, 0, {5: {1: abs}})


def dict_spans(data: bytes) -> dict[int, tuple[int, int]]:
    return {fid: (start, end) for fid, _, start, end in fields(data, 0)}


def test_a_list_of_structs_is_rewritten_element_by_element():
    spans = dict_spans(_STRUCT)
    items, end = rewritten_items(_STRUCT, spans[44][0], lambda i: {1: lambda n: n + i})
    assert end == spans[44][1]
    assert [read_int(item, 1)[0] for item in items] == [5, 6]
    with pytest.raises(ThriftError, match="not a list of structs"):
        rewritten_items(_STRUCT, spans[5][0], lambda i: {})


def _footer() -> bytes:
    sink = pa.BufferOutputStream()
    table = pa.table({"a": list(range(100)), "b": [str(n) for n in range(100)]})
    pq.write_table(table, sink, row_group_size=30)
    data = sink.getvalue().to_pybytes()
    (length,) = struct.unpack("<i", data[-8:-4])
    return data[-8 - length : -8]


def test_a_parquet_footer_is_rewritten_byte_for_byte_and_read_by_pyarrow():
    footer = _footer()
    assert rewritten(footer, 0, {}) == (footer, len(footer))
    # every row group's offsets moved by 1000: pyarrow reads them so
    spans = dict_spans(footer)
    move = {1: {2: lambda n: n + 1000 if n else n, 3: {9: lambda n: n + 1000}}}
    groups, end = rewritten_items(footer, spans[4][0], lambda i: move)
    assert end == spans[4][1]
    head = footer[: spans[4][0]] + list_head(STRUCT, len(groups))
    moved = head + b"".join(groups) + footer[end:]
    file = b"PAR1" + moved + struct.pack("<i", len(moved)) + b"PAR1"
    original = b"PAR1" + footer + struct.pack("<i", len(footer)) + b"PAR1"
    before = pq.read_metadata(pa.BufferReader(original))
    after = pq.read_metadata(pa.BufferReader(file))
    assert after.num_row_groups == before.num_row_groups == 4
    for i in range(4):
        for j in range(2):
            a, b = after.row_group(i).column(j), before.row_group(i).column(j)
            assert a.data_page_offset == b.data_page_offset + 1000
            assert a.total_compressed_size == b.total_compressed_size


def test_malformed_bytes_are_refused_never_read_past_their_end():
    footer = _footer()
    assert issubclass(ThriftError, CorpusError)
    rng = random.Random(0)
    cuts = sorted(rng.sample(range(len(footer) - 1), 120))
    for cut in cuts:  # every struct ends with a stop byte: a cut one is malformed
        with pytest.raises(ThriftError):
            value_end(footer[:cut], 0, STRUCT)
    for _ in range(300):  # bytes changed: refused, or read as other values; nothing else
        damaged = bytearray(footer)
        for _ in range(3):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        try:
            assert value_end(bytes(damaged), 0, STRUCT) <= len(damaged)
            rewritten(bytes(damaged), 0, {4: {1: {2: abs}}})
        except ThriftError:
            pass
    with pytest.raises(ThriftError, match="more than the bytes left"):
        value_end(list_head(I64, 1000), 0, LIST)
    with pytest.raises(ThriftError, match="no varint"):
        read_int(b"\xff" * 12, 0)
    with pytest.raises(ThriftError, match="unknown type code 13"):
        value_end(_field(1, 13) + b"\x00", 0, STRUCT)
    deep = _field(1, STRUCT) * 100 + b"\x00" * 101
    with pytest.raises(ThriftError, match="nested more than"):
        value_end(deep, 0, STRUCT)
    with pytest.raises(ThriftError, match="nested more than"):
        rewritten(deep, 0, {1: {1: {1: {}}}})

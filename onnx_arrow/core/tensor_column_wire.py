"""The wire codec of a whole tensor column: every row's serialized ``TensorProto``, byte
for byte what :func:`~onnx_arrow.core.tensor_wire.encode_tensor` gives it alone.

The elements of all rows are encoded at once (one buffer of the column's fixed-width
entries or raw bytes, one vectorized run of its varints, one join of its strings), and
each message is joined from its slice between the bytes its envelope and dims give; a
row whose data the column cannot encode with the others (stored in another field,
sub-byte elements that end within a byte) is encoded alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from onnx_arrow.core import _wire
from onnx_arrow.core.codec import pack
from onnx_arrow.core.dtypes import ArrowKind, DType, TypedEncoding
from onnx_arrow.core.tensor_wire import (
    FIELD_NUMBER,
    FIXED_WIDTH_FIELDS,
    RAW_DATA,
    STRING_DATA,
    encode_tensor,
    envelope_plan,
    len_prefix,
    tensor_header,
    typed_entries,
)
from onnx_arrow.core.tensors import Tensor
from onnx_arrow.errors import OnnxArrowError

__all__ = ["encode_tensor_rows"]

#: The tag and length of a ``string_data`` element shorter than 128 bytes, by its length.
_SHORT_STRING_PREFIXES: Final = tuple(_wire.encode_len(STRING_DATA, n) for n in range(128))


def encode_tensor_rows(
    row: DType,
    dims: Sequence[tuple[int, ...]],
    codes: np.ndarray[Any, Any],
    offsets: np.ndarray[Any, Any],
    envelopes: Sequence[bytes | None],
) -> list[bytes]:
    """:func:`encode_tensor` of every row of a column, byte for byte: row ``i`` of
    ``dims[i]``, the codes ``codes[offsets[i]:offsets[i + 1]]`` and ``envelopes[i]``.

    The data of all rows that store it alike is encoded at once (one buffer of the
    column's fixed-width entries, one vectorized run of its varints) and each message
    joined from its slice; a row stored otherwise is encoded alone.  An error names
    the row.
    """
    binary = row.arrow_kind is ArrowKind.BINARY
    own = FIELD_NUMBER[row.typed_field]
    same = _same_rows(row, dims, codes, offsets, envelopes)
    if same is not None:
        return same
    bounds = offsets.tolist()
    bulk: dict[int, tuple[bytes | memoryview, list[int]] | None] = {}
    plans: dict[tuple[bytes | None, bool], tuple[int | None, bytes, bytes]] = {}
    headers: dict[tuple[int, ...], bytes] = {}
    out = []
    for i, envelope in enumerate(envelopes):
        start, stop = bounds[i], bounds[i + 1]
        try:
            key = (envelope, stop > start)
            plan = plans.get(key)
            if plan is None:
                plan = plans[key] = envelope_plan(envelope, stop > start, binary)
            storage, head, tail = plan
            header = headers.get(dims[i])
            if header is None:
                header = headers[dims[i]] = tensor_header(dims[i], row.onnx)
            if storage is None or (start == stop and storage == own):
                out.append(b"".join((header, head, tail)))
                continue
            if storage not in bulk:
                bulk[storage] = _bulk_payload(storage, codes, offsets, row)
            found = bulk[storage]
            if found is None:  # stored as the column cannot be at once: this row alone
                piece = Tensor(row, dims[i], codes[start:stop], envelope)
                out.append(encode_tensor(piece))
                continue
            data, at = found
            begin, end = at[i], at[i + 1]
            if storage == STRING_DATA:  # one field per element, each with its length
                out.append(b"".join((header, head, data[begin:end], tail)))
            else:
                prefix = len_prefix(storage, end - begin)
                out.append(b"".join((header, head, prefix, data[begin:end], tail)))
        except OnnxArrowError as exc:
            raise exc.at(f"row {i}") from None
    return out


def _same_rows(
    row: DType,
    dims: Sequence[tuple[int, ...]],
    codes: np.ndarray[Any, Any],
    offsets: np.ndarray[Any, Any],
    envelopes: Sequence[bytes | None],
) -> list[bytes] | None:
    """The messages of a column whose rows differ in their data alone (one envelope, one
    shape, elements in every row, stored at once), each its data's slice between the
    same bytes; None for any other column."""
    if not envelopes or len(set(envelopes)) > 1 or len(set(dims)) > 1 or (dims and 0 in dims[0]):
        return None
    try:
        storage, head, tail = envelope_plan(envelopes[0], True, row.arrow_kind is ArrowKind.BINARY)
    except OnnxArrowError as exc:  # every row's envelope: the first row names it
        raise exc.at("row 0") from None
    if storage is None:
        return None
    found = _bulk_payload(storage, codes, offsets, row)
    if found is None:
        return None
    data, at = found
    before = tensor_header(dims[0], row.onnx) + head
    rows = itertools.pairwise(at)
    if storage == STRING_DATA:
        return [b"".join((before, data[a:b], tail)) for a, b in rows]
    if storage == RAW_DATA or row.typed_field in FIXED_WIDTH_FIELDS:
        # elements of one width, as many in every row: one length prefix for all
        before += len_prefix(storage, at[1] - at[0])
        return [b"".join((before, data[a:b], tail)) for a, b in rows]
    return [b"".join((before, len_prefix(storage, b - a), data[a:b], tail)) for a, b in rows]


def _bulk_payload(
    storage: int, codes: np.ndarray[Any, Any], offsets: np.ndarray[Any, Any], row: DType
) -> tuple[bytes | memoryview, list[int]] | None:
    """The data of every row stored in field ``storage``, as one buffer and where each
    row's part begins (then where the last ends), or None if the rows cannot share one:
    a field that is not the dtype's, sub-byte elements packed per row.  The data of
    ``string_data`` is its fields themselves, each element's tag and length included."""
    if storage != RAW_DATA and storage != FIELD_NUMBER[row.typed_field]:
        return None  # encode_tensor refuses it, naming the field
    if row.arrow_kind is ArrowKind.BINARY:
        if storage != STRING_DATA:
            return None  # encode_tensor refuses STRING elements in raw_data
        strings = codes.tolist()
        lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
        short = _SHORT_STRING_PREFIXES
        pieces: list[bytes] = [b""] * (2 * len(strings))
        pieces[0::2] = [
            short[n] if n < 128 else _wire.encode_len(STRING_DATA, n) for n in lengths.tolist()
        ]
        pieces[1::2] = strings
        ends = np.zeros(len(strings) + 1, dtype=np.int64)
        tag = len(_wire.encode_tag(STRING_DATA, _wire.LEN))
        np.cumsum(tag + _wire.varint_sizes(lengths) + lengths, out=ends[1:])
        return b"".join(pieces), ends[offsets].tolist()
    if row.is_packed and (storage == RAW_DATA or row.typed_encoding is TypedEncoding.PACKED_BYTES):
        # a row's elements are packed from its first byte: rows that fill whole bytes
        # pack alike all at once, any other row starts in the middle of a byte
        if np.any(offsets * row.bits % 8):
            return None
        packed = pack(codes.view(np.uint8), row)
        starts = offsets * row.bits // 8
        if storage == RAW_DATA:
            return packed.tobytes(), starts.tolist()
        data, at = _wire.encode_varint_runs(packed.astype(np.uint64), starts)
        return data, at.tolist()
    if storage == RAW_DATA or row.typed_field in FIXED_WIDTH_FIELDS:
        # the bytes of the elements as they are (little-endian, as the wire's), not copied
        flat = np.ascontiguousarray(codes).view(np.uint8)
        return flat.data, (offsets * codes.dtype.itemsize).tolist()
    data, at = _wire.encode_varint_runs(typed_entries(codes, row), offsets)
    return data, at.tolist()

"""The wire codec of ``TensorProto``: a serialized message to its value and envelope, and back.

A tensor message is split in two:

* its value: dtype, dims and elements (a :class:`~onnx_arrow.core.tensors.Tensor`);
* its *envelope*: the message's own bytes with ``dims``, ``data_type`` and the
  element data cut out.  The storage field that held the data stays behind as an
  empty entry of that field (a marker), so the envelope is itself a valid
  ``TensorProto`` holding the name, doc string and metadata_props.

Joining the two gives the message back, byte for byte, for every message that
protobuf itself re-serializes identically.  An envelope holding what decoding never
leaves in one (``dims``, ``data_type``, external data, a segment) is refused, so an
envelope from elsewhere cannot make the message point at data the value does not hold.
Elements move between ``proto storage`` (``raw_data`` bytes or a typed field) and
``codes`` (numpy array of the ONNX numpy dtype), each conversion vectorized; codes to
Arrow storage is :mod:`onnx_arrow.core.codec`.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from onnx_arrow.core import _wire
from onnx_arrow.core.codec import pack, unpack
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, TypedEncoding, dtype_of
from onnx_arrow.core.proto_fields import EXTERNAL, FIELDS, by_number
from onnx_arrow.core.tensors import MAX_ELEMENTS, Tensor
from onnx_arrow.errors import (
    ArrowLayoutError,
    InvalidTensorError,
    NotRepresentableError,
    OnnxArrowError,
    UnsupportedTypeError,
    join_path,
)

__all__ = [
    "DATA_LOCATION",
    "DATA_TYPE",
    "DIMS",
    "EXTERNAL_DATA",
    "FIELD_NUMBER",
    "FIXED_WIDTH_FIELDS",
    "KNOWN_FIELDS",
    "RAW_DATA",
    "SEGMENT",
    "STRING_DATA",
    "TYPED_FIELDS",
    "decode_tensor",
    "encode_tensor",
    "envelope_plan",
    "len_prefix",
    "raw_to_codes",
    "tensor_header",
    "typed_entries",
    "typed_to_codes",
]


_F = FIELDS["TensorProto"]
DIMS: Final = _F["dims"].number
DATA_TYPE: Final = _F["data_type"].number
SEGMENT: Final = _F["segment"].number
RAW_DATA: Final = _F["raw_data"].number
STRING_DATA: Final = _F["string_data"].number
EXTERNAL_DATA: Final = _F["external_data"].number
DATA_LOCATION: Final = _F["data_location"].number
#: The fields that can hold elements: raw_data and every dtype's typed field, by number.
_DATA_FIELDS: Final = {
    _F[name].number: name
    for name in sorted(
        {row.typed_field for row in DTYPES.values()} | {"raw_data"}, key=lambda n: _F[n].number
    )
}
#: The number of raw_data and of each dtype's typed field, by its name.
FIELD_NUMBER: Final = {name: number for number, name in _DATA_FIELDS.items()}
KNOWN_FIELDS: Final = frozenset(f.number for f in _F.values())
#: The data fields of float or double entries: viewed in place, never varint-decoded.
FIXED_WIDTH_FIELDS: Final = frozenset(
    name for name in _DATA_FIELDS.values() if _F[name].type in ("float", "double")
)


def raw_to_codes(
    raw: npt.NDArray[np.uint8], row: DType, count: int, where: str
) -> np.ndarray[Any, Any]:
    if row.arrow_kind is ArrowKind.BINARY:
        raise InvalidTensorError(
            "raw_data cannot hold STRING elements; store them in string_data", where=where
        )
    if row.is_packed:
        return unpack(raw, row, count, where).view(row.numpy)
    expected = row.raw_nbytes(count)
    if raw.size != expected:
        raise InvalidTensorError(
            f"raw_data holds {raw.size} bytes, but {count} {row.name} elements need {expected}; "
            "dims or data_type disagree with the data",
            where=where,
        )
    if row.arrow_kind is ArrowKind.BOOL8 and raw.size and raw.max() > 1:
        bad = int(np.flatnonzero(raw > 1)[0])
        raise InvalidTensorError(
            f"raw_data byte {bad} is {int(raw[bad])}, but a BOOL element is 0 or 1 "
            "(onnx.proto), as in int32_data",
            where=where,
        )
    return raw.view(row.numpy)


def typed_to_codes(
    entries: np.ndarray[Any, Any], row: DType, count: int, where: str
) -> np.ndarray[Any, Any]:
    """The ``count`` elements of ``row`` that the entries of its typed field hold, as
    codes: checked to be in range and as many as the elements need."""
    encoding = row.typed_encoding
    if encoding is TypedEncoding.PACKED_BYTES:
        _check_range(entries, 0, 255, row, where)
        return unpack(entries.astype(np.uint8), row, count, where).view(row.numpy)
    per_element = 2 if encoding is TypedEncoding.INTERLEAVED else 1
    if entries.size != count * per_element:
        raise InvalidTensorError(
            f"{row.typed_field} holds {entries.size} values, but {count} {row.name} elements "
            f"need {count * per_element}; dims and data disagree",
            where=where,
        )
    if encoding is TypedEncoding.NATIVE or encoding is TypedEncoding.INTERLEAVED:
        return entries.view(row.numpy)
    if encoding is TypedEncoding.STRINGS:
        return entries
    if encoding is TypedEncoding.SIGN_EXTEND:
        info = np.iinfo(row.numpy)  # type: ignore[type-var]
        _check_range(entries, int(info.min), int(info.max), row, where)
        return entries.astype(row.numpy)
    # ZERO_EXTEND: the element's bit pattern as an unsigned integer
    limit = 1 if row.arrow_kind is ArrowKind.BOOL8 else (1 << row.bits) - 1
    _check_range(entries, 0, limit, row, where)
    unsigned = np.dtype(f"<u{row.numpy.itemsize}")
    return entries.astype(unsigned).view(row.numpy)


def _check_range(
    entries: np.ndarray[Any, Any], low: int, high: int, row: DType, where: str
) -> None:
    bad = np.flatnonzero((entries < low) | (entries > high))
    if bad.size:
        raise InvalidTensorError(
            f"{row.typed_field}[{int(bad[0])}] is {int(entries[bad[0]])}, outside [{low}, {high}] "
            f"for {row.name}",
            where=where,
        )


def typed_entries(codes: np.ndarray[Any, Any], row: DType) -> np.ndarray[Any, Any]:
    """The entries of a varint typed field for ``codes`` (not a fixed-width field, nor
    STRING): packed sub-byte elements, or the codes zero-extended or as they are (the
    varint encoder sign-extends a chunk at a time)."""
    encoding = row.typed_encoding
    if encoding is TypedEncoding.PACKED_BYTES:
        return pack(codes.view(np.uint8), row)
    if encoding is TypedEncoding.ZERO_EXTEND:
        return codes.view(np.dtype(f"<u{codes.dtype.itemsize}"))
    return codes  # NATIVE, SIGN_EXTEND


def _codes_to_typed_payload(codes: np.ndarray[Any, Any], row: DType) -> bytes:
    """The packed payload of the typed field (not used for STRING)."""
    if row.typed_field in FIXED_WIDTH_FIELDS:
        return np.ascontiguousarray(codes).view(row.typed_entry_dtype).tobytes()
    return _wire.encode_varints(typed_entries(codes, row))


# --- messages ---------------------------------------------------------------------------


def _field_name(number: int) -> str:
    return _DATA_FIELDS.get(number) or by_number("TensorProto")[number].name


def decode_tensor(
    data: bytes | memoryview,
    *,
    where: str = "tensor",
    external: Any = None,
) -> Tensor:
    """Split one serialized ``TensorProto`` into its value and envelope.

    ``data`` is not copied: the codes of fixed-width types are views into it.
    ``external`` resolves ``data_location = EXTERNAL``: a callable taking the
    ``(key, value)`` pairs and the expected byte length and returning the bytes
    as a uint8 array; without one such a tensor is an error.
    """
    buf = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
    dims: list[int] = []
    data_type = 0
    kept: list[tuple[int, bytes]] = []
    payload_fields: dict[int, list[_wire.Field]] = {}
    external_entries: list[_wire.Field] = []
    location_external = False
    for f in _wire.iter_fields(buf, what=where):
        number = f.number
        if number == DIMS:
            if f.wire_type == _wire.LEN:
                raw = np.frombuffer(buf[f.value_start : f.end], dtype=np.uint8)
                dims.extend(
                    int(v)
                    for v in _wire.decode_varints(raw, what=join_path(where, "dims")).view(np.int64)
                )
            else:
                dims.append(f.value - (1 << 64) if f.value >= 1 << 63 else f.value)
        elif number == DATA_TYPE:
            data_type = f.value
        elif number in _DATA_FIELDS:
            payload_fields.setdefault(number, []).append(f)
        elif number == SEGMENT:
            raise NotRepresentableError(
                "segment is set: a tensor segment cannot be represented as a value; "
                "join the segments into one tensor first",
                where=join_path(where, "segment"),
            )
        elif number == EXTERNAL_DATA:
            external_entries.append(f)
        elif number == DATA_LOCATION:
            location_external = f.value == EXTERNAL
            if not location_external:
                kept.append((number, bytes(buf[f.start : f.end])))
        else:
            kept.append((number, bytes(buf[f.start : f.end])))
    try:
        row = dtype_of(data_type)
    except UnsupportedTypeError as exc:
        raise exc.at(join_path(where, "data_type")) from None
    count = _element_count(dims, where)
    storage_number, codes = _decode_data(buf, row, count, payload_fields, where)
    if location_external:
        if storage_number is not None:
            raise InvalidTensorError(
                f"data_location is EXTERNAL but {_field_name(storage_number)} holds data too; "
                "keep one of them",
                where=where,
            )
        entries = [
            _parse_string_entry(buf, f, join_path(where, f"external_data[{i}]"))
            for i, f in enumerate(external_entries)
        ]
        if external is None:
            raise InvalidTensorError(
                "data_location is EXTERNAL: pass base_dir, the folder the external files "
                "are relative to",
                where=join_path(where, "external_data"),
            )
        try:
            raw = external(entries, row.raw_nbytes(count))
        except OnnxArrowError as exc:  # located inside the value: which tensor it was
            if where and exc.where and "external_data" in exc.where:
                exc.where = join_path(where, exc.where[exc.where.find("external_data") :])
                exc.args = (f"{exc.where}: {exc.message}",)
            raise
        codes = raw_to_codes(raw, row, count, join_path(where, "external_data"))
        storage_number = RAW_DATA
    elif external_entries:
        raise InvalidTensorError(
            "external_data is set but data_location is not EXTERNAL; set data_location "
            "or remove external_data",
            where=join_path(where, "external_data"),
        )
    if storage_number is not None:
        kept.append((storage_number, _wire.encode_len(storage_number, 0)))
    elif codes is None:
        if count:
            raise InvalidTensorError(
                f"dims {dims} declare {count} elements but no field holds data; "
                f"set raw_data or {row.typed_field}",
                where=where,
            )
        codes = np.empty(0, dtype=row.numpy)
    assert codes is not None
    return Tensor(row, tuple(dims), codes, _canonical(kept))


def _canonical(parts: list[tuple[int, bytes]]) -> bytes:
    """Fields in the order protobuf writes them: known ones by number, unknown ones last."""
    known = sorted((p for p in parts if p[0] in KNOWN_FIELDS), key=lambda p: p[0])
    return b"".join(b for _, b in known) + b"".join(b for n, b in parts if n not in KNOWN_FIELDS)


TYPED_FIELDS: Final = frozenset(n for name, n in FIELD_NUMBER.items() if name != "raw_data")


#: The fields of ``StringStringEntryProto``, by number.
_ENTRY_FIELDS: Final = {f.number: f.name for f in FIELDS["StringStringEntryProto"].values()}


def _parse_string_entry(buf: memoryview, f: _wire.Field, where: str) -> tuple[str, str]:
    """The ``(key, value)`` of one ``StringStringEntryProto``, both strict UTF-8.

    Anything else in the entry is refused rather than dropped: the entry names the
    bytes to read, so a part of it that cannot be read must not be ignored.
    """
    texts = {"key": "", "value": ""}
    for sub in _wire.iter_fields(buf, f.value_start, f.end, what=where):
        name = _ENTRY_FIELDS.get(sub.number)
        if name is None:
            raise InvalidTensorError(
                f"field {sub.number} is not part of an external_data entry, which holds "
                "key (1) and value (2) only; remove it",
                where=where,
            )
        if sub.wire_type != _wire.LEN:
            raise InvalidTensorError(
                f"{name} has wire type {sub.wire_type}, not a string (wire type {_wire.LEN})",
                where=join_path(where, name),
            )
        try:
            texts[name] = bytes(buf[sub.value_start : sub.end]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidTensorError(
                f"{name} is not valid UTF-8 (byte {exc.start} of {sub.end - sub.value_start}); "
                "external_data keys and values are strings",
                where=join_path(where, name),
            ) from None
    return texts["key"], texts["value"]


def _element_count(dims: list[int], where: str) -> int:
    count = 1
    for i, d in enumerate(dims):
        if d < 0:
            raise InvalidTensorError(
                f"dims[{i}] is {d}; dims must be non-negative", where=join_path(where, "dims")
            )
        count *= d
        if count > MAX_ELEMENTS:
            break
    if count > MAX_ELEMENTS and 0 not in dims:
        raise InvalidTensorError(
            f"dims {dims} declare more than {MAX_ELEMENTS} elements; refusing to allocate",
            where=join_path(where, "dims"),
        )
    return 0 if 0 in dims else count


def _decode_data(
    buf: memoryview,
    row: DType,
    count: int,
    fields: dict[int, list[_wire.Field]],
    where: str,
) -> tuple[int | None, np.ndarray[Any, Any] | None]:
    """The storage field that holds the elements, and the elements as codes."""
    present = sorted(fields)
    if len(present) > 1:
        names = " and ".join(_field_name(n) for n in present)
        raise InvalidTensorError(
            f"{names} are both set; a tensor stores its data in exactly one field", where=where
        )
    if not present:
        return None, None
    number = present[0]
    name = _field_name(number)
    occurrences = fields[number]
    at = join_path(where, name)
    if number == RAW_DATA:
        last = occurrences[-1]  # protobuf keeps the last occurrence of a singular field
        raw = np.frombuffer(buf[last.value_start : last.end], dtype=np.uint8)
        return number, raw_to_codes(raw, row, count, at)
    if name != row.typed_field:
        raise InvalidTensorError(
            f"{name} holds data, but {row.name} elements are stored in {row.typed_field} "
            "or raw_data; data_type and the data disagree",
            where=at,
        )
    if number == STRING_DATA:
        entries = np.empty(len(occurrences), dtype=object)
        entries[:] = [bytes(buf[f.value_start : f.end]) for f in occurrences]
        return number, typed_to_codes(entries, row, count, at)
    entry_dtype = row.typed_entry_dtype
    chunks = []
    for f in occurrences:
        if f.wire_type == _wire.LEN:
            raw = np.frombuffer(buf[f.value_start : f.end], dtype=np.uint8)
            if name in FIXED_WIDTH_FIELDS:
                if raw.size % entry_dtype.itemsize:
                    raise InvalidTensorError(
                        f"packed {name} is {raw.size} bytes, not a multiple of "
                        f"{entry_dtype.itemsize}",
                        where=at,
                    )
                chunks.append(raw.view(entry_dtype))
            elif entry_dtype == np.int32:
                chunks.append(_packed_int32(raw, row, at))
            else:
                decoded = _wire.decode_varints(raw, what=at)
                chunks.append(decoded.view(np.int64) if entry_dtype.kind == "i" else decoded)
        else:  # one unpacked entry
            chunks.append(_unpacked_entry(f, entry_dtype))
    if entry_dtype == np.int32:
        chunks = [c if c.dtype == np.int32 else _int32_entries(c, row, at) for c in chunks]
    entries = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
    return number, typed_to_codes(entries, row, count, at)


def _int32_entries(entries: np.ndarray[Any, Any], row: DType, at: str) -> np.ndarray[Any, Any]:
    """An unpacked int32 entry (a sign-extended 64-bit varint) as int32, range-checked."""
    _check_range(entries, -(1 << 31), (1 << 31) - 1, row, at)
    return entries.astype(np.int32)


def _packed_int32(raw: npt.NDArray[np.uint8], row: DType, at: str) -> np.ndarray[Any, Any]:
    """A packed int32 field, decoded a chunk at a time straight into int32: never a
    full-size int64 copy, whatever the size of the field."""
    out = np.empty(_wire.count_varints(raw, what=at), dtype=np.int32)
    done = 0
    for values in _wire.varint_chunks(raw, what=at):
        signed = values.view(np.int64)
        bad = np.flatnonzero((signed < -(1 << 31)) | (signed > (1 << 31) - 1))
        if bad.size:
            raise InvalidTensorError(
                f"{row.typed_field}[{done + int(bad[0])}] is {int(signed[bad[0]])}, outside "
                f"[{-(1 << 31)}, {(1 << 31) - 1}] for {row.name}",
                where=at,
            )
        out[done : done + values.size] = signed
        done += values.size
    return out


def _unpacked_entry(f: _wire.Field, entry_dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    if f.wire_type == _wire.I32:
        return np.array([f.value], dtype=np.uint32).view(entry_dtype)
    if f.wire_type == _wire.I64 and entry_dtype.itemsize == 8:
        return np.array([f.value], dtype=np.uint64).view(entry_dtype)
    value = np.array([f.value], dtype=np.uint64)
    return value.view(np.int64) if entry_dtype.kind == "i" else value


def encode_tensor(tensor: Tensor) -> bytes:
    """Join a value and its envelope into a serialized ``TensorProto`` (canonical order)."""
    row, codes = tensor.dtype, tensor.codes
    binary = row.arrow_kind is ArrowKind.BINARY
    envelope = tensor.envelope
    storage, head, tail = envelope_plan(envelope, bool(codes.size), binary)
    if storage == RAW_DATA and not binary:
        payload = _raw_payload(codes, row)
        parts = [tensor_header(tensor.dims, row.onnx), head, len_prefix(RAW_DATA, len(payload))]
        return b"".join((*parts, payload, tail))
    data = b"" if storage is None else b"".join(b for _, b in _encode_data(storage, codes, row))
    return b"".join((tensor_header(tensor.dims, row.onnx), head, data, tail))


@functools.lru_cache(maxsize=4096)
def len_prefix(number: int, length: int) -> bytes:
    """The tag and length of a length-delimited field; rows of a column share a few."""
    return _wire.encode_len(number, length)


@functools.lru_cache(maxsize=4096)
def tensor_header(dims: tuple[int, ...], onnx: int) -> bytes:
    """The ``dims`` and ``data_type`` fields, the first ones protobuf writes."""
    dims_tag = _wire.encode_tag(DIMS, _wire.VARINT)
    out = b"".join(dims_tag + _wire.encode_varint(d) for d in dims)
    return out + _wire.encode_tag(DATA_TYPE, _wire.VARINT) + _wire.encode_varint(onnx)


#: Envelopes up to this size are planned once and the plan kept (a few thousand of
#: them); a longer one (a large doc string) is planned each time, never kept.
_CACHED_ENVELOPE: Final = 4096


def _plan(envelope: bytes | None, has_codes: bool, binary: bool) -> tuple[int | None, bytes, bytes]:
    """What an envelope gives every message made with it: the storage field of the
    data (None for none), and the envelope's fields that go before it and after it in
    canonical order (known ones by number, unknown ones last).  Envelopes repeat down a
    column, so each is read once."""
    fields = _short_fields(envelope) if envelope else None
    if fields is None:  # anything the quick scan does not take: read and checked in full
        _check_envelope(envelope)
        buf = memoryview(envelope or b"")
        fields = [
            (f.number, bytes(buf[f.start : f.end])) for f in _wire.iter_fields(buf, what="envelope")
        ]
    parts: list[tuple[int, bytes]] = []
    storage: int | None = None
    for number, data in fields:
        if number in _DATA_FIELDS:
            storage = number
        elif number not in (DIMS, DATA_TYPE):
            parts.append((number, data))
    if storage is None and (envelope is None or has_codes):
        # no message behind the value: store it as numpy_helper.from_array would
        storage = STRING_DATA if binary else RAW_DATA
    # canonical order: known fields by number (a stable sort), unknown ones last
    known = [p for p in parts if p[0] in KNOWN_FIELDS]
    if len(known) > 1:
        known.sort(key=lambda p: p[0])
    unknown = b"".join(d for n, d in parts if n not in KNOWN_FIELDS)
    if storage is None:
        return None, b"".join(d for _, d in known) + unknown, b""
    before = b"".join(d for n, d in known if n < storage)
    return storage, before, b"".join(d for n, d in known if n > storage) + unknown


_envelope_plan = functools.lru_cache(maxsize=4096)(_plan)


def envelope_plan(
    envelope: bytes | None, has_codes: bool, binary: bool
) -> tuple[int | None, bytes, bytes]:
    """What an envelope gives every message made with it (see :func:`_plan`), kept if
    the envelope is short: rows of a column share a few."""
    if envelope is None or len(envelope) <= _CACHED_ENVELOPE:
        return _envelope_plan(envelope, has_codes, binary)
    return _plan(envelope, has_codes, binary)


#: Fields an envelope holds that the quick scan leaves to the full read, which refuses them
#: or, for data_location, reads its value.
_NOT_SHORT: Final = frozenset((DIMS, DATA_TYPE, SEGMENT, EXTERNAL_DATA, DATA_LOCATION))


def _short_fields(envelope: bytes) -> list[tuple[int, bytes]] | None:
    """The fields of an envelope of the common shape, each with its bytes: one-byte tags,
    strings and markers shorter than 128 bytes, varints; None for anything else (longer
    fields, other wire types, fields an envelope may not hold, malformed bytes), which
    :func:`_check_envelope` and the wire reader then take, with their errors."""
    fields = []
    i, n = 0, len(envelope)
    while i < n:
        tag = envelope[i]
        number = tag >> 3
        if tag & 0x80 or number in _NOT_SHORT or not number:
            return None
        if tag & 7 == _wire.LEN:
            if i + 1 >= n or envelope[i + 1] & 0x80:
                return None
            end = i + 2 + envelope[i + 1]
        elif tag & 7 == _wire.VARINT:
            end = i + 1
            while end < n and envelope[end] & 0x80:
                end += 1
            end += 1
            if end - i > 6:  # longer varints: the full read checks them
                return None
        else:
            return None
        if end > n:
            return None
        fields.append((number, envelope[i:end]))
        i = end
    return fields


def _check_envelope(envelope: bytes | None) -> None:
    """An envelope holds what the value does not, and nothing decoding never leaves in
    one: no dims or data_type (the value gives them), no external data (the value holds
    the data itself: a ``data_location = EXTERNAL`` or an ``external_data`` entry would
    make the message point at a file the column does not hold) and no segment.  One
    that holds any of them was not cut from a message, and is refused."""
    if not envelope:
        return
    for f in _wire.iter_fields(memoryview(envelope), what="envelope"):
        if f.number in (DIMS, DATA_TYPE):
            name = "dims" if f.number == DIMS else "data_type"
            raise ArrowLayoutError(
                f"the envelope carries {name}, which the value itself gives; an envelope "
                "holds the message without its dims, data_type and data (build it with "
                "onnx_arrow.to_arrow(..., exact=True))",
                where="envelope",
            )
        external = f.number == DATA_LOCATION and f.value == EXTERNAL
        if external or f.number in (EXTERNAL_DATA, SEGMENT):
            name = _field_name(f.number) + (" = EXTERNAL" if external else "")
            raise ArrowLayoutError(
                f"the envelope carries {name}, but the value holds the tensor's data itself; "
                "an envelope never points at data outside the column (build it with "
                "onnx_arrow.to_arrow(..., exact=True), which reads external data in)",
                where="envelope",
            )


def _raw_payload(codes: np.ndarray[Any, Any], row: DType) -> bytes:
    if row.is_packed:
        return pack(codes.view(np.uint8), row).tobytes()
    return np.ascontiguousarray(codes).tobytes()


def _encode_data(number: int, codes: np.ndarray[Any, Any], row: DType) -> list[tuple[int, bytes]]:
    if number == STRING_DATA:
        return [(number, _wire.encode_len(number, len(s)) + s) for s in codes]
    if number == RAW_DATA:
        if row.arrow_kind is ArrowKind.BINARY:
            raise InvalidTensorError("STRING elements cannot be stored in raw_data")
        payload = _raw_payload(codes, row)
        return [(number, len_prefix(number, len(payload)) + payload)]
    name = _DATA_FIELDS[number]
    if name != row.typed_field:
        raise InvalidTensorError(
            f"the envelope stores {row.name} elements in {name}; they belong in "
            f"{row.typed_field} or raw_data"
        )
    if codes.size == 0:
        return []
    payload = _codes_to_typed_payload(codes, row)
    return [(number, len_prefix(number, len(payload)) + payload)]

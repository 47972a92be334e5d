"""``TensorProto`` to Arrow tensor arrays and back, exactly.

A tensor message is split in two:

* its value: dtype, dims and elements, which become a row of an Arrow tensor
  array (``arrow.fixed_shape_tensor`` when all rows share a shape, a variable-shape
  layout otherwise);
* its *envelope*: the message's own bytes with ``dims``, ``data_type`` and the
  element data cut out.  The storage field that held the data stays behind as an
  empty entry of that field (a marker), so the envelope is itself a valid
  ``TensorProto`` holding the name, doc string and metadata_props.

Joining the two gives the message back, byte for byte, for every message that
protobuf itself re-serializes identically.

Elements move through three forms, each conversion vectorized:
``proto storage`` (``raw_data`` bytes or a typed field) <-> ``codes`` (numpy
array of the ONNX numpy dtype, ml_dtypes where needed) <-> ``Arrow storage``
(the widened numpy array behind the Arrow element type).  The element codec, codes
and Arrow storage, is :mod:`onnx_arrow.core.codec`; this module holds the messages
(wire decode and encode, and the direct path that reads a message's fields) and the
tensor arrays (build and read).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.unknown_fields import UnknownFieldSet
from onnx import TensorProto

from onnx_arrow.core import _wire
from onnx_arrow.core.codec import (
    Strings,
    codes_to_storage,
    decode_strings,
    pack,
    storage_to_codes,
    unpack,
)
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, TypedEncoding, dtype_of
from onnx_arrow.core.extension_types import (
    CANONICAL_VARIABLE_SHAPE,
    dtype_of_arrow,
    element_type,
    extension_metadata,
    fixed_shape_tensor,
    ragged_from_storage,
    tensor_layout,
    variable_rank_tensor,
    variable_shape_tensor,
)
from onnx_arrow.errors import (
    ArrowLayoutError,
    InvalidTensorError,
    NotRepresentableError,
    OnnxArrowError,
    UnsupportedTypeError,
    join_path,
)

__all__ = [
    "MAX_ELEMENTS",
    "Tensor",
    "codes_to_storage",
    "decode_tensor",
    "decode_tensor_fast",
    "encode_tensor",
    "stacked_codes",
    "storage_to_codes",
    "tensor_array",
    "tensor_rows",
]

#: The most elements one tensor may declare (2**40, a terabyte of bytes); more is refused
#: before anything is allocated.
MAX_ELEMENTS: Final = 1 << 40

_F = TensorProto.DESCRIPTOR.fields_by_name
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
_FIELD_NUMBER: Final = {name: number for number, name in _DATA_FIELDS.items()}
_KNOWN_FIELDS: Final = frozenset(f.number for f in TensorProto.DESCRIPTOR.fields)
#: The data fields of float or double entries: viewed in place, never varint-decoded.
FIXED_WIDTH_FIELDS: Final = frozenset(
    name
    for name in _DATA_FIELDS.values()
    if _F[name].type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE)
)


@dataclass(frozen=True, slots=True)
class Tensor:
    """A tensor's value, split from its message: dtype, dims and elements (codes).

    ``codes`` is a flat numpy array of ``dtype.numpy`` (for STRING an object array
    of ``bytes``); ``envelope`` the rest of the message (see the module docs), or
    None for a value with no message behind it, which is then stored as
    ``onnx.numpy_helper.from_array`` would.
    """

    dtype: DType
    dims: tuple[int, ...]
    codes: np.ndarray[Any, Any]
    envelope: bytes | None = None

    def to_numpy(self, strings: Strings = "bytes") -> np.ndarray[Any, Any]:
        """The elements shaped by ``dims``; STRING elements as ``bytes`` or, with
        ``strings="str"``, decoded from UTF-8 (see :func:`decode_strings`)."""
        codes = self.codes
        if strings == "str" and self.dtype.arrow_kind is ArrowKind.BINARY:
            codes = decode_strings(codes)
        return codes.reshape(self.dims)


def _raw_to_codes(
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
    return raw.view(row.numpy)


def _typed_to_codes(
    entries: np.ndarray[Any, Any], row: DType, count: int, where: str
) -> np.ndarray[Any, Any]:
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


def _codes_to_typed_payload(codes: np.ndarray[Any, Any], row: DType) -> bytes:
    """The packed payload of the typed field (not used for STRING)."""
    encoding = row.typed_encoding
    field_dtype = row.typed_entry_dtype
    if encoding is TypedEncoding.PACKED_BYTES:
        entries = pack(codes.view(np.uint8), row).astype(np.uint64)
    elif row.typed_field in FIXED_WIDTH_FIELDS:
        return np.ascontiguousarray(codes).view(field_dtype).tobytes()
    elif encoding is TypedEncoding.NATIVE or encoding is TypedEncoding.SIGN_EXTEND:
        entries = codes  # sign-extended a chunk at a time by the encoder
    else:  # ZERO_EXTEND
        entries = codes.view(np.dtype(f"<u{row.numpy.itemsize}"))
    return _wire.encode_varints(entries)


# --- messages ---------------------------------------------------------------------------


def _field_name(number: int) -> str:
    return _DATA_FIELDS.get(number) or TensorProto.DESCRIPTOR.fields_by_number[number].name


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
            location_external = f.value == TensorProto.EXTERNAL
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
        codes = _raw_to_codes(raw, row, count, join_path(where, "external_data"))
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
    known = sorted((p for p in parts if p[0] in _KNOWN_FIELDS), key=lambda p: p[0])
    return b"".join(b for _, b in known) + b"".join(b for n, b in parts if n not in _KNOWN_FIELDS)


_TYPED_FIELDS: Final = frozenset(n for name, n in _FIELD_NUMBER.items() if name != "raw_data")
#: Fields the C-parser path takes: everything but typed data, segments and external data.
_FAST_FIELDS: Final = _KNOWN_FIELDS - _TYPED_FIELDS - {SEGMENT, EXTERNAL_DATA, DATA_LOCATION}


def decode_tensor_fast(data: bytes | memoryview, *, canonical: bool = False) -> Tensor | None:
    """:func:`decode_tensor` through protobuf's C parser, for the common case.

    Handles a tensor whose elements sit in ``raw_data`` (or that has none); returns
    None for anything else (typed fields, external data, malformed input), which
    :func:`decode_tensor` then takes, with its precise errors.  The message is
    parsed once and its data copied once: use :func:`decode_tensor` on a large
    buffer that must not be copied.

    With ``canonical``, it also returns None unless ``data`` is exactly what
    protobuf writes for the message; then :func:`encode_tensor` of the result,
    which protobuf writes from the same fields, gives ``data`` back.
    """
    try:
        m = TensorProto.FromString(data)
    except Exception:  # protobuf's DecodeError: the wire path says exactly what is wrong
        return None
    if canonical and m.SerializeToString() != data:
        return None
    row = DTYPES.get(m.data_type)
    if row is None or row.arrow_kind is ArrowKind.BINARY:
        return None
    if not _FAST_FIELDS.issuperset([f.number for f, _ in m.ListFields()]):
        return None
    dims = tuple(m.dims)
    count = math.prod(dims)
    if count > MAX_ELEMENTS or (dims and min(dims) < 0):
        return None
    if not m.HasField("raw_data"):
        if count:
            return None
        codes = np.empty(0, dtype=row.numpy)
    else:
        try:
            codes = _raw_to_codes(np.frombuffer(m.raw_data, dtype=np.uint8), row, count, "")
        except (InvalidTensorError, NotRepresentableError):  # the wire path names the field
            return None
        m.raw_data = b""  # the marker of the storage field
    m.ClearField("dims")
    m.ClearField("data_type")
    return Tensor(row, dims, codes, m.SerializeToString())


#: The fields of ``StringStringEntryProto``, by number.
_ENTRY_FIELDS: Final = {
    f.number: f.name
    for f in TensorProto.DESCRIPTOR.fields_by_name["external_data"].message_type.fields
}


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
        return number, _raw_to_codes(raw, row, count, at)
    if name != row.typed_field:
        raise InvalidTensorError(
            f"{name} holds data, but {row.name} elements are stored in {row.typed_field} "
            "or raw_data; data_type and the data disagree",
            where=at,
        )
    if number == STRING_DATA:
        entries = np.empty(len(occurrences), dtype=object)
        entries[:] = [bytes(buf[f.value_start : f.end]) for f in occurrences]
        return number, _typed_to_codes(entries, row, count, at)
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
    return number, _typed_to_codes(entries, row, count, at)


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


@dataclass(frozen=True, slots=True)
class RawBatch:
    """What :func:`raw_batch` reads of in-memory ``TensorProto`` messages, a list per
    field: their values, and the fields that make their envelopes (None where a message
    does not set them)."""

    dtypes: list[DType]
    dims: list[tuple[int, ...]]
    raws: list[bytes]
    names: list[str | None]
    doc_strings: list[str | None]

    def envelopes(self) -> list[bytes]:
        """The envelopes the wire decoder cuts from the messages' bytes: the name, the doc
        string and, where a message set ``raw_data``, its empty marker."""
        out = []
        for raw, name, doc_string in zip(self.raws, self.names, self.doc_strings, strict=True):
            kept: dict[str, Any] = {}
            if name is not None:
                kept["name"] = name
            if doc_string is not None:
                kept["doc_string"] = doc_string
            if raw:
                kept["raw_data"] = b""
            out.append(TensorProto(**kept).SerializeToString() if kept else b"")
        return out


#: The fields a message read by :func:`raw_batch` may not set, repeated and singular:
#: every one of ``TensorProto`` but those it reads.
_READ: Final = frozenset(("dims", "data_type", "raw_data", "name", "doc_string"))
_OTHER_REPEATED: Final = tuple(
    f.name for f in TensorProto.DESCRIPTOR.fields if f.name not in _READ and f.is_repeated
)
_OTHER_SINGULAR: Final = tuple(
    f.name for f in TensorProto.DESCRIPTOR.fields if f.name not in _READ and not f.is_repeated
)
#: Up to this much data, that a message sets nothing else is checked by its serialized
#: size (one C call, but ``ByteSize`` serializes the message); past it, field by field.
_SIZE_CHECK_BYTES: Final = 1 << 20


def raw_batch(messages: Sequence[object]) -> RawBatch | None:
    """The values and envelope fields of in-memory ``TensorProto`` messages, or None.

    The common case, data in ``raw_data`` of a dtype of whole bytes, whose length fits
    the dims: read from the fields (one copy of the data, protobuf's), not serialized,
    into lists rather than an object per message (the garbage collector would walk
    them all).  If any message holds anything else (typed fields, external data,
    segments, metadata, unknown fields, packed dtypes, a length that does not fit,
    another message, or a name, doc string or ``raw_data`` set to the empty value, which
    only the wire path tells from unset), None: the wire path decodes or refuses them,
    located.
    """
    dtypes: list[DType] = []
    all_dims: list[tuple[int, ...]] = []
    raws: list[bytes] = []
    names: list[str | None] = []
    doc_strings: list[str | None] = []
    previous: tuple[int, ...] = ()
    for message in messages:
        if type(message) is not TensorProto:
            return None
        row = DTYPES.get(message.data_type)
        if row is None or row.bits < 8:
            return None
        dims = tuple(message.dims[:])  # a slice is a list made in C: faster than tuple()
        if dims == previous:
            dims = previous  # one tuple for a run of one shape
        raw = message.raw_data
        count = math.prod(dims)
        if count > MAX_ELEMENTS or len(raw) != count * (row.bits >> 3) or (dims and min(dims) < 0):
            return None
        name = message.name or None
        doc_string = message.doc_string or None
        if len(raw) <= _SIZE_CHECK_BYTES:
            size = 1 + _varint_size(row.onnx)  # data_type: set, it is not UNDEFINED
            for d in dims:
                size += 1 + _varint_size(d)
            if raw:
                size += 1 + _varint_size(len(raw)) + len(raw)
            if name is not None:
                size += _string_size(name)
            if doc_string is not None:
                size += _string_size(doc_string)
            if message.ByteSize() != size:
                return None
        elif not _only_read_fields(message, name, doc_string):
            return None
        dtypes.append(row)
        all_dims.append(dims)
        raws.append(raw)
        names.append(name)
        doc_strings.append(doc_string)
        previous = dims
    return RawBatch(dtypes, all_dims, raws, names, doc_strings)


def _only_read_fields(message: TensorProto, name: str | None, doc_string: str | None) -> bool:
    """Whether a message sets no field :func:`raw_batch` does not read, asked field by
    field: nothing is serialized (``ByteSize`` would copy a large tensor's data twice)."""
    if any(len(getattr(message, field)) for field in _OTHER_REPEATED):
        return False
    if any(message.HasField(field) for field in _OTHER_SINGULAR):
        return False
    if (message.HasField("name") and name is None) or (
        message.HasField("doc_string") and doc_string is None
    ):
        return False  # set to the empty value
    return not len(UnknownFieldSet(message))


def _varint_size(n: int) -> int:
    return 1 if n < 0x80 else (n.bit_length() + 6) // 7


def _string_size(text: str) -> int:
    """The serialized size of a string field numbered below 16: tag, length, UTF-8."""
    try:
        n = len(text) if text.isascii() else len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return -1  # no size matches: the wire path takes the message as it is
    return 1 + _varint_size(n) + n


def fixed_tensor_array(arrow_type: pa.DataType, row: DType, raw: bytes) -> pa.Array:
    """A fixed-shape tensor array of ``arrow_type`` (of ``row``'s elements) whose rows'
    ``raw_data`` (whole bytes, as :func:`raw_batch` accepts) are joined in ``raw``."""
    codes = np.frombuffer(raw, dtype=row.numpy)
    values = _stored_values(_storage_array(codes_to_storage(codes, row), row), arrow_type, "fixed")
    storage = pa.FixedSizeListArray.from_arrays(values, math.prod(arrow_type.shape))
    return pa.ExtensionArray.from_storage(arrow_type, storage)


def _stored_values(values: pa.Array, arrow_type: pa.DataType, layout: str) -> pa.Array:
    """Flat elements as the tensor type stores them: an onnx-arrow element type as its
    plain storage where the tensor type records the dtype itself."""
    storage = arrow_type.storage_type
    inside = storage.value_type if layout == "fixed" else storage.field("data").type.value_type
    if values.type != inside and isinstance(values, pa.ExtensionArray):
        return values.storage
    return values


def fixed_tensor_messages(array: pa.Array) -> list[TensorProto] | None:
    """The messages of a fixed-shape tensor column without nulls, built from its data as
    :func:`encode_tensor` encodes a value without an envelope, or None for a column the
    general path takes (nulls, another layout, STRING or a packed dtype)."""
    found = tensor_layout(array.type)
    if found is None or found.layout != "fixed" or array.null_count:
        return None
    row = dtype_of_arrow(found.value_type)
    if row.bits < 8:
        return None
    data = _fixed_codes(array, row).tobytes()
    shape = list(array.type.shape)
    size = len(data) // len(array) if len(array) else 0
    return [
        TensorProto(dims=shape, data_type=row.onnx, raw_data=data[i * size : (i + 1) * size])
        for i in range(len(array))
    ]


def encode_tensor(tensor: Tensor) -> bytes:
    """Join a value and its envelope into a serialized ``TensorProto`` (canonical order)."""
    row, codes = tensor.dtype, tensor.codes
    _check_envelope(tensor.envelope)
    if tensor.envelope and row.arrow_kind is not ArrowKind.BINARY:
        fast = _encode_raw_fast(tensor)
        if fast is not None:
            return fast
    buf = memoryview(tensor.envelope or b"")
    parts: list[tuple[int, bytes]] = []
    storage: int | None = None
    for f in _wire.iter_fields(buf, what="envelope"):
        if f.number in _DATA_FIELDS:
            storage = f.number
        elif f.number not in (DIMS, DATA_TYPE):
            parts.append((f.number, bytes(buf[f.start : f.end])))
    dims_tag = _wire.encode_tag(DIMS, _wire.VARINT)
    parts.extend((DIMS, dims_tag + _wire.encode_varint(d)) for d in tensor.dims)
    parts.append(
        (DATA_TYPE, _wire.encode_tag(DATA_TYPE, _wire.VARINT) + _wire.encode_varint(row.onnx))
    )
    if storage is None and (tensor.envelope is None or codes.size):
        # no message behind the value: store it as numpy_helper.from_array would
        storage = STRING_DATA if row.arrow_kind is ArrowKind.BINARY else RAW_DATA
    if storage is not None:
        parts.extend(_encode_data(storage, codes, row))
    return _canonical(parts)


def _check_envelope(envelope: bytes | None) -> None:
    """An envelope holds what the value does not: never dims or data_type (decoding takes
    them out), which the value gives; one that does was not cut from a message."""
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


def _encode_raw_fast(tensor: Tensor) -> bytes | None:
    """The common case through protobuf's C serializer: data in ``raw_data``."""
    try:
        m = TensorProto.FromString(tensor.envelope)
    except Exception:  # a malformed envelope: the wire path reports it
        return None
    present = {f.number for f, _ in m.ListFields()}
    if RAW_DATA not in present or not _TYPED_FIELDS.isdisjoint(present):
        return None
    row, codes = tensor.dtype, tensor.codes
    m.dims.extend(tensor.dims)
    m.data_type = row.onnx
    m.raw_data = _raw_payload(codes, row)
    return m.SerializeToString()


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
        return [(number, _wire.encode_len(number, len(payload)) + payload)]
    name = _DATA_FIELDS[number]
    if name != row.typed_field:
        raise InvalidTensorError(
            f"the envelope stores {row.name} elements in {name}; they belong in "
            f"{row.typed_field} or raw_data"
        )
    if codes.size == 0:
        return []
    payload = _codes_to_typed_payload(codes, row)
    return [(number, _wire.encode_len(number, len(payload)) + payload)]


# --- Arrow ----------------------------------------------------------------------------------


def _storage_array(storage: np.ndarray[Any, Any], row: DType) -> pa.Array:
    """A flat Arrow array of ``row``'s element type over the numpy storage."""
    ext = element_type(row)
    if row.arrow_kind is ArrowKind.BINARY:
        return pa.array(storage, type=pa.binary())
    if row.arrow_kind is ArrowKind.COMPLEX:
        parts = pa.array(storage, type=pa.from_numpy_dtype(row.arrow_storage))
        inner = pa.FixedSizeListArray.from_arrays(parts, type=ext.storage_type)
        return pa.ExtensionArray.from_storage(ext, inner)
    base = pa.array(storage, type=pa.from_numpy_dtype(row.arrow_storage))
    if isinstance(ext, pa.BaseExtensionType):
        return pa.ExtensionArray.from_storage(ext, base)
    return base


def _storage_numpy(
    values: pa.Array,
    row: DType,
    owned: np.ndarray[Any, Any] | None = None,
    offsets: np.ndarray[Any, Any] | None = None,
) -> np.ndarray[Any, Any]:
    """The numpy storage behind a flat array of ``row``'s element type (zero-copy if possible).

    ``owned`` marks the elements that belong to a valid (non-null) row; nulls are
    allowed only in the others (what ``take`` leaves under a null row) and read as 0.
    ``offsets`` (where each row starts, then the end) let an error name the row.
    """
    if isinstance(values, pa.ExtensionArray):
        values = values.storage
    per_element = 1
    if row.arrow_kind is ArrowKind.COMPLEX:
        if values.null_count:  # a null complex element is allowed under a null row only
            _check_null_elements(values, row, owned, offsets)
        # (real, imaginary) parts, null entries' slots included (flatten() would drop them)
        per_element = 2
        owned = None if owned is None else np.repeat(owned, per_element)
        values = values.values.slice(values.offset * per_element, len(values) * per_element)
    if values.null_count:
        _check_null_elements(values, row, owned, offsets, per_element)
        values = _fill_nulls(values, row)
    # binary gives an object array of bytes, which the codes of STRING are
    out: np.ndarray[Any, Any] = values.to_numpy(zero_copy_only=False)
    if owned is not None and not owned.all():
        # what lies under a null row (take() leaves zeros there) is no element: code 0
        out = out.copy()
        out[~owned] = _code_zero(row)
    return out


def _check_null_elements(
    values: pa.Array,
    row: DType,
    owned: np.ndarray[Any, Any] | None,
    offsets: np.ndarray[Any, Any] | None,
    per_element: int = 1,
) -> None:
    """Refuse a null among ``values`` outside null rows, naming its row and element.

    ``per_element`` entries of ``values`` make one element (2 for complex parts).
    """
    null = ~np.asarray(values.is_valid(), dtype=bool)
    bad = np.flatnonzero(null if owned is None else null & owned)
    if not bad.size:
        return
    element = int(bad[0]) // per_element
    where = None
    if offsets is not None:
        # the last row starting at or before the element: empty rows before it share its start
        index = int(np.searchsorted(offsets, element, side="right")) - 1
        element -= int(offsets[index])
        where = f"row {index}"
    raise ArrowLayoutError(
        f"{row.name} tensor element {element} is null; tensor elements are never null "
        "(an absent value is a null row)",
        where=where,
    )


def _fill_nulls(values: pa.Array, row: DType) -> pa.Array:
    """``values`` with every null read as code 0 (the nulls are checked to be under null rows)."""
    return values.fill_null(pa.scalar(_code_zero(row), values.type))


def _code_zero(row: DType) -> Any:
    """The storage of one element of code 0, which every dtype has (FLOAT8E8M0 has no 0.0)."""
    if row.arrow_kind is ArrowKind.BINARY:
        return b""
    return codes_to_storage(np.zeros(1, dtype=row.numpy), row)[0].item()


def tensor_array(tensors: Sequence[Tensor], arrow_type: pa.DataType) -> pa.Array:
    """An Arrow tensor array of ``arrow_type`` with one row per tensor.

    The type comes from a declared ONNX type or from :func:`tensor_type_for`; a
    tensor that does not fit it is an error naming its row.
    """
    layout, row = _layout(arrow_type)
    for i, t in enumerate(tensors):
        _check_fits(t, arrow_type, layout, row, f"row {i}")
    flat = _concat_storage([codes_to_storage(t.codes, row) for t in tensors], row)
    values = _stored_values(_storage_array(flat, row), arrow_type, layout)
    if layout == "fixed":
        size = math.prod(arrow_type.shape)
        storage = pa.FixedSizeListArray.from_arrays(values, size)
        return pa.ExtensionArray.from_storage(arrow_type, storage)
    counts = np.fromiter((t.codes.size for t in tensors), dtype=np.int64, count=len(tensors))
    offsets = np.zeros(len(tensors) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    list_type = arrow_type.storage_type.field("data").type
    offset_type = np.int64 if pa.types.is_large_list(list_type) else np.int32
    if offsets[-1] > np.iinfo(offset_type).max:
        raise NotRepresentableError(
            f"{offsets[-1]} elements in one column overflow {list_type} offsets; "
            "split the values into several arrays"
        )
    data = pa.ListArray.from_arrays(pa.array(offsets.astype(offset_type)), values, type=list_type)
    shape_type = arrow_type.storage_type.field("shape").type
    dims = [t.dims for t in tensors]
    if layout == "variable":
        flat_dims = pa.array(
            np.array(dims, dtype=np.int64).reshape(-1).astype(np.int32), pa.int32()
        )
        shapes = pa.FixedSizeListArray.from_arrays(flat_dims, type=shape_type)
    else:
        shape_offsets = np.zeros(len(tensors) + 1, dtype=np.int32)
        np.cumsum([len(d) for d in dims], out=shape_offsets[1:])
        flat = np.fromiter((d for ds in dims for d in ds), dtype=np.int64)
        shapes = pa.ListArray.from_arrays(pa.array(shape_offsets), pa.array(flat.astype(np.int32)))
    storage = pa.StructArray.from_arrays([data, shapes], fields=list(arrow_type.storage_type))
    return ragged_from_storage(arrow_type, storage)


def _concat_storage(parts: list[np.ndarray[Any, Any]], row: DType) -> np.ndarray[Any, Any]:
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.empty(0, dtype=row.arrow_storage)
    return np.concatenate(parts)


def tensor_type_for(row: DType, shapes: Sequence[tuple[int, ...]]) -> pa.DataType:
    """The Arrow type for tensors of ``row`` with these shapes, which decide together.

    One shape with no 0 in it gives ``arrow.fixed_shape_tensor``; one rank a
    variable-shape type (``uniform_shape`` keeps the sizes all rows share); several
    ranks ``onnx.variable_rank_tensor``.
    """
    value_type = element_type(row)
    distinct = set(shapes)
    if len(distinct) == 1:
        (shape,) = distinct
        if 0 not in shape:
            return fixed_shape_tensor(value_type, shape)
    ranks = {len(s) for s in distinct}
    if len(ranks) == 1:
        (ndim,) = ranks
        uniform: list[int | None] = [
            sizes.pop() if len(sizes := {s[k] for s in distinct}) == 1 else None
            for k in range(ndim)
        ]
        return variable_shape_tensor(
            value_type, ndim, uniform if any(u is not None for u in uniform) else None
        )
    return variable_rank_tensor(value_type)


def tensor_dtype(arrow_type: pa.DataType) -> DType:
    """The ONNX dtype of the elements of a tensor type."""
    return _layout(arrow_type)[1]


def _layout(arrow_type: pa.DataType) -> tuple[str, DType]:
    found = tensor_layout(arrow_type)
    if found is None:
        raise UnsupportedTypeError(
            f"{arrow_type} is not a tensor type; expected arrow.fixed_shape_tensor, "
            "arrow.variable_shape_tensor, onnx.variable_shape_tensor or onnx.variable_rank_tensor"
        )
    return found.layout, dtype_of_arrow(found.value_type)


_INT32_MAX: Final = int(np.iinfo(np.int32).max)


def _check_fits(t: Tensor, arrow_type: pa.DataType, layout: str, row: DType, where: str) -> None:
    if t.dtype is not row:
        raise UnsupportedTypeError(
            f"tensor is {t.dtype.name} but the column holds {row.name}", where=where
        )
    if layout == "fixed":
        expected = tuple(arrow_type.shape)
        if t.dims != expected:
            raise NotRepresentableError(
                f"shape {list(t.dims)} differs from the column's fixed shape {list(expected)}",
                where=where,
            )
    elif layout == "variable":
        ndim = arrow_type.storage_type.field("shape").type.list_size
        uniform = extension_metadata(arrow_type).get("uniform_shape")
        if len(t.dims) != ndim or (
            uniform and any(u is not None and u != d for u, d in zip(uniform, t.dims, strict=True))
        ):
            raise NotRepresentableError(
                f"shape {list(t.dims)} does not fit the column's shape "
                f"{uniform if uniform else ['?'] * ndim}",
                where=where,
            )
    if layout != "fixed" and t.dims and max(t.dims) > _INT32_MAX:
        raise NotRepresentableError(
            f"dims {list(t.dims)} exceed int32, the type of variable-shape tensor dims",
            where=where,
        )


def tensor_rows(array: pa.Array) -> list[Tensor | None]:
    """The tensors of an Arrow tensor array (None for null rows), without envelopes."""
    if isinstance(array, pa.ChunkedArray):
        return [t for chunk in array.chunks for t in tensor_rows(chunk)]
    layout, row = _layout(array.type)
    storage = array.storage
    valid = _validity(storage)
    if layout == "fixed":
        shape = tuple(array.type.shape)
        codes = _fixed_codes(array, row)
        size = math.prod(shape)
        return [
            Tensor(row, shape, codes[i * size : (i + 1) * size]) if valid[i] else None
            for i in range(len(array))
        ]
    data = storage.field("data")
    shapes = storage.field("shape")
    if layout == "variable" and array.type.extension_name == CANONICAL_VARIABLE_SHAPE:
        _check_plain_layout(array.type)
    offsets = data.offsets.to_numpy()
    values = data.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    owned = None if storage.null_count == 0 else np.repeat(valid, np.diff(offsets))
    offsets = offsets - offsets[0]
    codes = _codes_of_rows(_storage_numpy(values, row, owned, offsets), row, offsets)
    if layout == "variable":
        ndim = shapes.type.list_size
        dims = (
            shapes.values.slice(shapes.offset * ndim, len(shapes) * ndim)
            .fill_null(0)
            .to_numpy()
            .reshape(-1, ndim)
        )
        dim_rows = [tuple(int(d) for d in r) for r in dims]
    else:
        dim_rows = [tuple(int(d) for d in s) if s is not None else () for s in shapes.to_pylist()]
    out: list[Tensor | None] = []
    for i in range(len(array)):
        if not valid[i]:
            out.append(None)
            continue
        piece = codes[offsets[i] : offsets[i + 1]]
        if math.prod(dim_rows[i]) != piece.size:
            raise ArrowLayoutError(
                f"shape {list(dim_rows[i])} needs {math.prod(dim_rows[i])} elements, "
                f"data holds {piece.size}",
                where=f"row {i}",
            )
        out.append(Tensor(row, dim_rows[i], piece))
    return out


def _fixed_codes(array: pa.Array, row: DType) -> np.ndarray[Any, Any]:
    _check_plain_layout(array.type)
    storage = array.storage
    size = math.prod(array.type.shape)
    flat = storage.values.slice(storage.offset * size, len(storage) * size)
    owned = None if storage.null_count == 0 else np.repeat(_validity(storage), size)
    offsets = np.arange(len(storage) + 1) * size
    return _codes_of_rows(_storage_numpy(flat, row, owned, offsets), row, offsets)


def _codes_of_rows(
    storage: np.ndarray[Any, Any], row: DType, offsets: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """:func:`storage_to_codes` of the elements of all rows; an error names row and element."""
    try:
        return storage_to_codes(storage, row)
    except NotRepresentableError:
        # on the error path only: convert row by row to say which row holds the value
        for i in range(len(offsets) - 1):
            storage_to_codes(storage[offsets[i] : offsets[i + 1]], row, where=f"row {i}")
        raise


def stacked_codes(array: pa.Array) -> np.ndarray[Any, Any] | None:
    """A fixed-shape tensor array without nulls as one ndarray ``(rows, *shape)``, else None."""
    layout, row = _layout(array.type)
    if layout != "fixed" or array.null_count:
        return None
    return _fixed_codes(array, row).reshape((len(array), *array.type.shape))


def _validity(storage: pa.Array) -> list[bool]:
    if storage.null_count == 0:
        return [True] * len(storage)
    return storage.is_valid().to_pylist()


def _check_plain_layout(arrow_type: pa.DataType) -> None:
    meta = extension_metadata(arrow_type)
    permutation = meta.get("permutation")
    if permutation is not None and list(permutation) != sorted(permutation):
        raise NotRepresentableError(
            f"tensor layout has permutation {permutation}; ONNX tensors are row-major, "
            "transpose the data to the identity permutation first",
            where=getattr(arrow_type, "extension_name", None),
        )

"""The direct path: tensors read from and made as in-memory messages, skipping the wire codec.

For the common case (elements in ``raw_data``, of a dtype of whole bytes, nothing else
set but a name and a doc string) protobuf's C implementation reads a message's fields
faster than the wire codec decodes its bytes.  Each function here returns None for
anything else, which :mod:`onnx_arrow.core.tensor_wire` then takes, with its precise,
located errors.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa
from google.protobuf.unknown_fields import UnknownFieldSet

from onnx_arrow.core.codec import codes_to_storage
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, TypedEncoding
from onnx_arrow.core.element_types import dtype_of_arrow
from onnx_arrow.core.proto_fields import FIELDS
from onnx_arrow.core.tensor_codes import fixed_codes, storage_array, stored_values
from onnx_arrow.core.tensor_types import tensor_layout
from onnx_arrow.core.tensor_wire import (
    DATA_LOCATION,
    EXTERNAL_DATA,
    FIXED_WIDTH_FIELDS,
    KNOWN_FIELDS,
    SEGMENT,
    TYPED_FIELDS,
    decode_tensor,
    raw_to_codes,
    typed_to_codes,
)
from onnx_arrow.core.tensors import MAX_ELEMENTS, Tensor
from onnx_arrow.errors import InvalidTensorError, NotRepresentableError

if TYPE_CHECKING:
    from onnx import TensorProto

__all__ = [
    "RawBatch",
    "decode_tensor_fast",
    "fixed_tensor_array",
    "fixed_tensor_messages",
    "raw_batch",
]


#: Fields the C-parser path takes: everything but segments and external data (typed
#: data only in canonical bytes: see decode_tensor_fast).
_FAST_FIELDS: Final = KNOWN_FIELDS - {SEGMENT, EXTERNAL_DATA, DATA_LOCATION}
#: Serialized tensors up to this size with their data in a typed field take protobuf's
#: parser; past it the wire codec, whose packed floats and doubles are a view of the bytes,
#: not a Python number per entry (18x faster on 4M floats), and whose varints are decoded
#: in bulk (benchmarks/bench_typed.py prints both).
TYPED_FAST_BYTES: Final = 64 << 10
#: The dtypes the C-parser path takes, by ONNX enum value: all but STRING.
_FAST_DTYPES: Final = {
    onnx: row for onnx, row in DTYPES.items() if row.arrow_kind is not ArrowKind.BINARY
}


def decode_tensor_fast(data: bytes | memoryview, *, canonical: bool = False) -> Tensor | None:
    """:func:`decode_tensor` through protobuf's C parser, for the common case.

    Handles a tensor whose elements sit in ``raw_data`` (or that has none), and one of at
    most :data:`TYPED_FAST_BYTES` whose elements sit in its dtype's typed field
    (``float_data``, ``int64_data`` ...) if ``data`` is exactly what protobuf writes for
    the message; returns None for anything else (other fields, external data, typed data
    in other bytes, malformed input), which :func:`decode_tensor` then takes, with its
    precise errors.  The message is parsed once and its data copied once: use
    :func:`decode_tensor` on a large buffer that must not be copied.

    With ``canonical``, it also returns None unless ``data`` is exactly what
    protobuf writes for the message; then :func:`encode_tensor` of the result,
    which protobuf writes from the same fields, gives ``data`` back.
    """
    from onnx_arrow.core.protos import TensorProto  # protobuf's parser, without onnx's package

    try:
        m = TensorProto.FromString(data)
    except Exception:  # protobuf's DecodeError: the wire path says exactly what is wrong
        return None
    row = _FAST_DTYPES.get(m.data_type)
    if row is None:
        return None
    numbers = [f.number for f, _ in m.ListFields()]
    if not _FAST_FIELDS.issuperset(numbers):
        return None
    typed = TYPED_FIELDS.intersection(numbers)
    if typed and len(data) > TYPED_FAST_BYTES:
        return None
    # typed data only from bytes protobuf writes: their entries re-encode to the same bytes
    if (canonical or typed) and m.SerializeToString() != data:
        return None
    dims = tuple(m.dims)
    count = math.prod(dims)
    if count > MAX_ELEMENTS or (dims and min(dims) < 0):
        return None
    if typed:
        return _typed_fast(m, data, row, dims, count, typed)
    if not m.HasField("raw_data"):
        if count:
            return None
        codes = np.empty(0, dtype=row.numpy)
    else:
        try:
            codes = raw_to_codes(np.frombuffer(m.raw_data, dtype=np.uint8), row, count, "")
        except (InvalidTensorError, NotRepresentableError):  # the wire path names the field
            return None
        m.raw_data = b""  # the marker of the storage field
    m.ClearField("dims")
    m.ClearField("data_type")
    return Tensor(row, dims, codes, m.SerializeToString())


def _typed_fast(
    m: TensorProto,
    data: bytes | memoryview,
    row: DType,
    dims: tuple[int, ...],
    count: int,
    typed: frozenset[int],
) -> Tensor | None:
    """The tensor of a message whose data is in a typed field, ``data`` its canonical
    bytes, or None (see :func:`decode_tensor_fast`).  The bytes are laid out as protobuf
    writes them: dims and data_type, the name (for a field numbered after it), the data
    field, then the rest; so the envelope is cut from them, and floats and doubles are
    copied from them (a Python float per entry would cost more and turn a signalling NaN
    quiet).  Integers come from protobuf's entries."""
    field = row.typed_field
    number = _FIELDS[field].number
    # several fields of data, or the field of another dtype: the wire path refuses them
    if typed != {number} or m.HasField("raw_data"):
        return None
    buf = data if isinstance(data, memoryview) else memoryview(data)
    start = pos = _header_size(dims, row.onnx)
    if number > _NAME and m.HasField("name"):  # the name's one-byte tag, length, text
        length, pos = _varint(buf, pos + 1)
        pos += length
    if buf[pos] != _MARKERS[number][0]:  # not the layout protobuf writes: never, but checked
        return None
    length, first = _varint(buf, pos + 1)
    entry_dtype = row.typed_entry_dtype
    if field in FIXED_WIDTH_FIELDS:
        entries = np.frombuffer(buf, entry_dtype, length // entry_dtype.itemsize, first).copy()
    else:
        container = getattr(m, field)  # fromiter: a third of the time np.array takes
        entries = np.fromiter(container, entry_dtype, len(container))
    try:
        codes = typed_to_codes(entries, row, count, "")
    except (InvalidTensorError, NotRepresentableError):  # the wire path names the field
        return None
    envelope = b"".join((buf[start:pos], _MARKERS[number], buf[first + length :]))
    return Tensor(row, dims, codes, envelope)


@functools.lru_cache(maxsize=4096)
def _header_size(dims: tuple[int, ...], onnx: int) -> int:
    """The bytes protobuf writes for the dims and data_type of a tensor; shapes repeat."""
    return sum(1 + _varint_size(d) for d in dims) + 1 + _varint_size(onnx)


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` of bytes protobuf wrote, and where it ends."""
    value = shift = 0
    while True:
        byte = buf[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7


@dataclass(frozen=True, slots=True)
class RawBatch:
    """What :func:`raw_batch` reads of in-memory ``TensorProto`` messages, a list per
    field: their values (each row's elements as bytes, or a view of them), the
    field that held them (0 for none), and the fields that make their envelopes (None
    where a message does not set them)."""

    dtypes: list[DType]
    dims: list[tuple[int, ...]]
    raws: list[bytes | memoryview]
    names: list[str | None]
    doc_strings: list[str | None]
    storage: list[int]

    def envelopes(self) -> list[bytes]:
        """The envelopes the wire decoder cuts from the messages' bytes: the name, the doc
        string and, where a message's data was in a field, that field's empty marker."""
        out = []
        made: dict[tuple[int, str | None, str | None], bytes] = {}  # rows often share one
        for key in zip(self.storage, self.names, self.doc_strings, strict=True):
            envelope = made.get(key)
            if envelope is None:
                envelope = made[key] = _envelope(*key)
            out.append(envelope)
        return out


def _envelope(number: int, name: str | None, doc_string: str | None) -> bytes:
    """The envelope of a message with this name and doc string whose data was in field
    ``number`` (0 for none), as the wire decoder cuts it."""
    from onnx_arrow.core.protos import TensorProto

    parts: list[tuple[int, bytes]] = []
    if name is not None:
        parts.append((_NAME, TensorProto(name=name).SerializeToString()))
    if doc_string is not None:
        parts.append((_DOC_STRING, TensorProto(doc_string=doc_string).SerializeToString()))
    if number:
        parts.append((number, _MARKERS[number]))
    return b"".join(b for _, b in sorted(parts))


_FIELDS: Final = FIELDS["TensorProto"]
_NAME: Final = _FIELDS["name"].number
_DOC_STRING: Final = _FIELDS["doc_string"].number
_RAW_DATA: Final = _FIELDS["raw_data"].number
#: The empty entry of a storage field that an envelope keeps, by field number.
_MARKERS: Final = {
    _FIELDS[name].number: bytes([_FIELDS[name].number << 3 | 2, 0])
    for name in {row.typed_field for row in DTYPES.values()} | {"raw_data"}
}


@dataclass(frozen=True, slots=True)
class _Bulk:
    """How :func:`raw_batch` reads a dtype's typed field: its name and number, the
    entries per element, and the fields a message holding data there may set."""

    field: str
    number: int
    per_element: int
    allowed: frozenset[int]
    #: Bytes an entry takes on the wire where that is fixed (float, double), else 0.
    width: int


#: The dtypes whose typed field :func:`raw_batch` reads in bulk, an entry per element (two
#: for COMPLEX), by ONNX enum value.
_BULK: Final = {
    row.onnx: _Bulk(
        row.typed_field,
        _FIELDS[row.typed_field].number,
        2 if row.typed_encoding is TypedEncoding.INTERLEAVED else 1,
        frozenset(
            _FIELDS[name].number
            for name in ("dims", "data_type", "name", "doc_string", row.typed_field)
        ),
        row.typed_entry_dtype.itemsize if row.typed_field in FIXED_WIDTH_FIELDS else 0,
    )
    for row in DTYPES.values()
    if row.bits >= 8
    and row.typed_encoding
    in (
        TypedEncoding.NATIVE,
        TypedEncoding.INTERLEAVED,
        TypedEncoding.SIGN_EXTEND,
        TypedEncoding.ZERO_EXTEND,
    )
}
#: Entries of these dtypes pass through a Python float on the way out of protobuf, which
#: turns a signalling NaN quiet: a row holding a NaN is read from its bytes instead.
_NARROWED: Final = frozenset((np.dtype(np.float32),))


#: The fields a message read by :func:`raw_batch` may not set, repeated and singular:
#: every one of ``TensorProto`` but those it reads.
_READ: Final = frozenset(("dims", "data_type", "raw_data", "name", "doc_string"))
_OTHER_REPEATED: Final = tuple(
    f.name for f in _FIELDS.values() if f.name not in _READ and f.repeated
)
_OTHER_SINGULAR: Final = tuple(
    f.name for f in _FIELDS.values() if f.name not in _READ and not f.repeated
)
#: Up to this much data, that a message sets nothing else is checked by its serialized
#: size (one C call, but ``ByteSize`` serializes the message); past it, field by field.
_SIZE_CHECK_BYTES: Final = 1 << 20


def raw_batch(messages: Sequence[object]) -> RawBatch | None:
    """The values and envelope fields of in-memory ``TensorProto`` messages, or None.

    The common cases, data in ``raw_data`` of a dtype of whole bytes whose length fits
    the dims, or in the dtype's typed field (``float_data``, ``int64_data`` ...) an
    entry per element: read from the fields (one copy of the data, protobuf's; the
    typed fields of all rows of a dtype in one pass), not serialized, into lists rather
    than an object per message (the garbage collector would walk them all).  If any
    message holds anything else (external data, segments, metadata, unknown fields,
    packed dtypes, a length that does not fit, an entry out of its dtype's range, a
    BOOL byte other than 0 and 1, another message, or ``raw_data`` set to the empty
    value, which only the wire path tells from unset), None: the wire
    path decodes or refuses them, located.
    """
    dtypes: list[DType] = []
    all_dims: list[tuple[int, ...]] = []
    raws: list[bytes | memoryview] = []
    names: list[str | None] = []
    doc_strings: list[str | None] = []
    storage: list[int] = []
    typed: dict[int, list[int]] = {}  # the rows whose data is in a typed field, by dtype
    previous: tuple[int, ...] = ()
    from onnx_arrow.core.protos import TensorProto

    for i, message in enumerate(messages):
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
        if count > MAX_ELEMENTS or (dims and min(dims) < 0):
            return None
        # None where unset; "" where set to the empty value (kept: the wire path keeps it)
        name = message.name if message.HasField("name") else None
        doc_string = message.doc_string if message.HasField("doc_string") else None
        # the serialized size of what the message may set besides its data
        size = 1 + _varint_size(row.onnx)  # data_type: set, it is not UNDEFINED
        for d in dims:
            size += 1 + _varint_size(d)
        if name is not None:
            size += _string_size(name)
        if doc_string is not None:
            size += _string_size(doc_string)
        if not raw and count:
            bulk = _BULK.get(row.onnx)
            if bulk is None or len(getattr(message, bulk.field)) != count * bulk.per_element:
                return None
            payload = count * bulk.per_element * bulk.width  # 0: varints, of any size
            if 0 < payload <= _SIZE_CHECK_BYTES:
                if message.ByteSize() != size + 1 + _varint_size(payload) + payload:
                    return None
            elif not _typed_only(message, bulk):
                return None
            typed.setdefault(row.onnx, []).append(i)
            storage.append(bulk.number)
        else:
            if len(raw) != count * (row.bits >> 3):
                return None
            if row.arrow_kind is ArrowKind.BOOL8 and raw.translate(None, b"\x00\x01"):
                return None  # a BOOL byte other than 0 and 1: the wire path refuses it, located
            if len(raw) <= _SIZE_CHECK_BYTES:
                if raw:
                    size += 1 + _varint_size(len(raw)) + len(raw)
                if message.ByteSize() != size:
                    return None
            elif not _only_read_fields(message):
                return None
            storage.append(_RAW_DATA if raw else 0)
        dtypes.append(row)
        all_dims.append(dims)
        raws.append(raw)
        names.append(name)
        doc_strings.append(doc_string)
        previous = dims
    for onnx, rows in typed.items():
        read = _typed_codes([messages[i] for i in rows], DTYPES[onnx])  # type: ignore[misc]
        if read is None:
            return None
        codes, bounds = read
        view = codes.view(np.uint8).data  # each row's bytes a slice of it, not a copy
        width = codes.itemsize
        for k, i in enumerate(rows):
            raws[i] = view[bounds[k] * width : bounds[k + 1] * width]
    return RawBatch(dtypes, all_dims, raws, names, doc_strings, storage)


def _typed_only(message: TensorProto, bulk: _Bulk) -> bool:
    """Whether a message whose data is in its dtype's typed field sets nothing else
    :func:`raw_batch` does not read, asked field by field."""
    allowed = bulk.allowed
    for f, _ in message.ListFields():
        if f.number not in allowed:
            return False
    return not len(UnknownFieldSet(message))


def _typed_codes(
    messages: list[TensorProto], row: DType
) -> tuple[np.ndarray[Any, Any], list[int]] | None:
    """The elements of messages of one dtype whose data is in its typed field, as one
    codes array read in one pass over all their entries, and where each message's
    elements start in it (and the last ends); None where an entry is out of the dtype's
    range (the wire path names it)."""
    field = row.typed_field
    containers = [getattr(m, field) for m in messages]
    lengths = np.fromiter(map(len, containers), dtype=np.int64, count=len(containers))
    offsets = np.zeros(len(containers) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    entry_dtype = row.typed_entry_dtype
    entries = np.fromiter(
        itertools.chain.from_iterable(containers), dtype=entry_dtype, count=int(offsets[-1])
    )
    if entry_dtype in _NARROWED:
        nan = np.isnan(entries)
        if nan.any():
            with_nan = np.unique(np.searchsorted(offsets, np.flatnonzero(nan), side="right") - 1)
            for k in with_nan.tolist():
                try:
                    exact = decode_tensor(messages[k].SerializeToString()).codes
                except (InvalidTensorError, NotRepresentableError):
                    return None
                entries[int(offsets[k]) : int(offsets[k + 1])] = exact.view(entry_dtype)
    per_element = 2 if row.typed_encoding is TypedEncoding.INTERLEAVED else 1
    try:
        codes = typed_to_codes(entries, row, entries.size // per_element, "")
    except (InvalidTensorError, NotRepresentableError):
        return None
    return codes, (offsets // per_element).tolist()


def _only_read_fields(message: TensorProto) -> bool:
    """Whether a message sets no field :func:`raw_batch` does not read, asked field by
    field: nothing is serialized (``ByteSize`` would copy a large tensor's data twice)."""
    if any(len(getattr(message, field)) for field in _OTHER_REPEATED):
        return False
    if any(message.HasField(field) for field in _OTHER_SINGULAR):
        return False
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
    values = stored_values(storage_array(codes_to_storage(codes, row), row), arrow_type, "fixed")
    storage = pa.FixedSizeListArray.from_arrays(values, math.prod(arrow_type.shape))
    return pa.ExtensionArray.from_storage(arrow_type, storage)


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
    from onnx_arrow.core.protos import TensorProto

    data = fixed_codes(array, row).tobytes()
    shape = list(array.type.shape)
    size = len(data) // len(array) if len(array) else 0
    return [
        TensorProto(dims=shape, data_type=row.onnx, raw_data=data[i * size : (i + 1) * size])
        for i in range(len(array))
    ]

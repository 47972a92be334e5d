"""The direct path: tensors read from and made as in-memory messages, skipping the wire codec.

For the common case (elements in ``raw_data``, of a dtype of whole bytes, nothing else
set but a name and a doc string) protobuf's C implementation reads a message's fields
faster than the wire codec decodes its bytes.  Each function here returns None for
anything else, which :mod:`onnx_arrow.core.tensor_wire` then takes, with its precise,
located errors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa
from google.protobuf.unknown_fields import UnknownFieldSet
from onnx import TensorProto

from onnx_arrow.core.codec import codes_to_storage
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType
from onnx_arrow.core.element_types import dtype_of_arrow
from onnx_arrow.core.tensor_codes import fixed_codes, storage_array, stored_values
from onnx_arrow.core.tensor_types import tensor_layout
from onnx_arrow.core.tensor_wire import (
    DATA_LOCATION,
    EXTERNAL_DATA,
    KNOWN_FIELDS,
    SEGMENT,
    TYPED_FIELDS,
    raw_to_codes,
)
from onnx_arrow.core.tensors import MAX_ELEMENTS, Tensor
from onnx_arrow.errors import InvalidTensorError, NotRepresentableError

__all__ = [
    "RawBatch",
    "decode_tensor_fast",
    "fixed_tensor_array",
    "fixed_tensor_messages",
    "raw_batch",
]


#: Fields the C-parser path takes: everything but typed data, segments and external data.
_FAST_FIELDS: Final = KNOWN_FIELDS - TYPED_FIELDS - {SEGMENT, EXTERNAL_DATA, DATA_LOCATION}


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
            codes = raw_to_codes(np.frombuffer(m.raw_data, dtype=np.uint8), row, count, "")
        except (InvalidTensorError, NotRepresentableError):  # the wire path names the field
            return None
        m.raw_data = b""  # the marker of the storage field
    m.ClearField("dims")
    m.ClearField("data_type")
    return Tensor(row, dims, codes, m.SerializeToString())


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
    segments, metadata, unknown fields, packed dtypes, a length that does not fit, a
    BOOL byte other than 0 and 1, another message, or a name, doc string or
    ``raw_data`` set to the empty value, which only the wire path tells from unset),
    None: the wire path decodes or refuses them, located.
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
        if row.arrow_kind is ArrowKind.BOOL8 and raw.translate(None, b"\x00\x01"):
            return None  # a BOOL byte other than 0 and 1: the wire path refuses it, located
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
    data = fixed_codes(array, row).tobytes()
    shape = list(array.type.shape)
    size = len(data) // len(array) if len(array) else 0
    return [
        TensorProto(dims=shape, data_type=row.onnx, raw_data=data[i * size : (i + 1) * size])
        for i in range(len(array))
    ]

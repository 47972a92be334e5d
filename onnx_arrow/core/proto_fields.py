"""The fields of onnx.proto's value messages, as the wire codecs read and write them.

The codecs of :mod:`onnx_arrow.core.tensor_wire` and :mod:`onnx_arrow.core.containers`
read and write the bytes of ``TensorProto``, ``SequenceProto``, ``MapProto``,
``OptionalProto`` and ``SparseTensorProto`` themselves; what they need of onnx.proto is
each field's number, type and whether it repeats, and the codes of two enums.  Those
are kept here as a table rather than read from onnx's descriptors at import, so that a
store is read and exported without importing onnx (about a second, most of it
ml_dtypes).  Field numbers are the wire format, fixed for good by protobuf's rules; a
test (``tests/core/test_proto_fields.py``) checks every row against the descriptors of
the installed onnx, and that no field of these messages is missing.

>>> FIELDS["TensorProto"]["raw_data"]
ProtoField(name='raw_data', number=9, type='bytes', repeated=False)
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final, NamedTuple

from onnx_arrow.core._wire import I32, I64, LEN, VARINT

__all__ = [
    "ELEM_TYPE_CODES",
    "EXTERNAL",
    "FIELDS",
    "ProtoField",
    "by_number",
]


class ProtoField(NamedTuple):
    """One field of a message: its name, number, protobuf type (the descriptor's
    ``TYPE_*`` name, lower case) and whether it repeats."""

    name: str
    number: int
    type: str
    repeated: bool

    @property
    def wire_type(self) -> int:
        """The wire type an element of the field is written with (packed repeated
        numbers are length-delimited as a whole)."""
        return _WIRE_TYPES.get(self.type, VARINT)


#: The wire type of each protobuf type that is not a varint.
_WIRE_TYPES: Final = {
    **dict.fromkeys(("double", "fixed64", "sfixed64"), I64),
    **dict.fromkeys(("float", "fixed32", "sfixed32"), I32),
    **dict.fromkeys(("string", "bytes", "message"), LEN),
}


def _message(*fields: tuple[str, int, str, bool]) -> MappingProxyType[str, ProtoField]:
    return MappingProxyType({f[0]: ProtoField(*f) for f in fields})


_R, _S = True, False  # repeated, singular

#: ``{message name: {field name: ProtoField}}`` of the messages the wire codecs handle.
FIELDS: Final = MappingProxyType(
    {
        "TensorProto": _message(
            ("dims", 1, "int64", _R),
            ("data_type", 2, "int32", _S),
            ("segment", 3, "message", _S),
            ("float_data", 4, "float", _R),
            ("int32_data", 5, "int32", _R),
            ("string_data", 6, "bytes", _R),
            ("int64_data", 7, "int64", _R),
            ("name", 8, "string", _S),
            ("raw_data", 9, "bytes", _S),
            ("double_data", 10, "double", _R),
            ("uint64_data", 11, "uint64", _R),
            ("doc_string", 12, "string", _S),
            ("external_data", 13, "message", _R),
            ("data_location", 14, "enum", _S),
            ("metadata_props", 16, "message", _R),
        ),
        "SequenceProto": _message(
            ("name", 1, "string", _S),
            ("elem_type", 2, "int32", _S),
            ("tensor_values", 3, "message", _R),
            ("sparse_tensor_values", 4, "message", _R),
            ("sequence_values", 5, "message", _R),
            ("map_values", 6, "message", _R),
            ("optional_values", 7, "message", _R),
        ),
        "OptionalProto": _message(
            ("name", 1, "string", _S),
            ("elem_type", 2, "int32", _S),
            ("tensor_value", 3, "message", _S),
            ("sparse_tensor_value", 4, "message", _S),
            ("sequence_value", 5, "message", _S),
            ("map_value", 6, "message", _S),
            ("optional_value", 7, "message", _S),
        ),
        "MapProto": _message(
            ("name", 1, "string", _S),
            ("key_type", 2, "int32", _S),
            ("keys", 3, "int64", _R),
            ("string_keys", 4, "bytes", _R),
            ("values", 5, "message", _S),
        ),
        "SparseTensorProto": _message(
            ("values", 1, "message", _S),
            ("indices", 2, "message", _S),
            ("dims", 3, "int64", _R),
        ),
        "StringStringEntryProto": _message(
            ("key", 1, "string", _S),
            ("value", 2, "string", _S),
        ),
    }
)

#: ``SequenceProto.DataType`` (and ``OptionalProto.DataType``, the same codes) by name.
ELEM_TYPE_CODES: Final = MappingProxyType(
    {"UNDEFINED": 0, "TENSOR": 1, "SPARSE_TENSOR": 2, "SEQUENCE": 3, "MAP": 4, "OPTIONAL": 5}
)

#: ``TensorProto.DataLocation.EXTERNAL``: the tensor's data is in a file of its own.
EXTERNAL: Final = 1


def by_number(message: str) -> dict[int, ProtoField]:
    """The fields of ``message`` by number."""
    return {f.number: f for f in FIELDS[message].values()}

"""The table of onnx.proto's value messages is onnx's own: every field, number, type and
label, and the enum codes, as the installed onnx's descriptors give them."""

from __future__ import annotations

import pytest
from google.protobuf.descriptor import FieldDescriptor
from onnx import MapProto, OptionalProto, SequenceProto, SparseTensorProto, TensorProto

from onnx_arrow.core.proto_fields import ELEM_TYPE_CODES, EXTERNAL, FIELDS, ProtoField, by_number

_TYPE_NAMES = {
    getattr(FieldDescriptor, n): n.removeprefix("TYPE_").lower()
    for n in dir(FieldDescriptor)
    if n.startswith("TYPE_")
}
_ENTRY = TensorProto.DESCRIPTOR.fields_by_name["external_data"].message_type

_DESCRIPTORS = {
    "TensorProto": TensorProto.DESCRIPTOR,
    "SequenceProto": SequenceProto.DESCRIPTOR,
    "OptionalProto": OptionalProto.DESCRIPTOR,
    "MapProto": MapProto.DESCRIPTOR,
    "SparseTensorProto": SparseTensorProto.DESCRIPTOR,
    "StringStringEntryProto": _ENTRY,
}


def test_the_table_holds_the_messages_the_codecs_handle() -> None:
    from onnx_arrow.core.kinds import MESSAGE_NAMES

    assert set(FIELDS) == set(_DESCRIPTORS)
    assert set(MESSAGE_NAMES.values()) == set(FIELDS) - {"StringStringEntryProto"}


@pytest.mark.parametrize("message", sorted(_DESCRIPTORS))
def test_every_field_is_onnx_s_own(message: str) -> None:
    """Each field of the message, and no other, with its number, type and label."""
    onnx_s = {
        f.name: ProtoField(f.name, f.number, _TYPE_NAMES[f.type], f.is_repeated)
        for f in _DESCRIPTORS[message].fields
    }
    assert dict(FIELDS[message]) == onnx_s
    assert by_number(message) == {f.number: f for f in onnx_s.values()}


def test_the_enum_codes_are_onnx_s_own() -> None:
    assert dict(ELEM_TYPE_CODES) == dict(SequenceProto.DataType.items())
    assert dict(ELEM_TYPE_CODES) == dict(OptionalProto.DataType.items())
    assert EXTERNAL == TensorProto.EXTERNAL


def test_a_field_s_wire_type_is_the_one_protobuf_writes_it_with() -> None:
    """The wire type of each field is the tag's protobuf writes for one element of it
    (a packed field's whole is length-delimited: its elements' type is its own)."""
    from google.protobuf.message_factory import GetMessageClass

    from onnx_arrow.core import _wire

    samples = {"string": "a", "bytes": b"a", "float": 1.5, "double": 1.5}
    for message, descriptor in _DESCRIPTORS.items():
        for field in FIELDS[message].values():
            proto = GetMessageClass(descriptor)()
            if field.type == "message":
                getattr(proto, field.name).add() if field.repeated else getattr(
                    proto, field.name
                ).SetInParent()
            elif field.repeated:
                getattr(proto, field.name).append(samples.get(field.type, 1))
            else:
                setattr(proto, field.name, samples.get(field.type, 1))
            wire = proto.SerializeToString()[0] & 7
            packed = field.repeated and wire == _wire.LEN and field.wire_type != _wire.LEN
            assert packed or field.wire_type == wire, (message, field.name)

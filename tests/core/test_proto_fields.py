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
    assert set(FIELDS) == set(_DESCRIPTORS)


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

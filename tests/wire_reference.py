"""Protobuf wire bytes built by hand, independently of onnx_arrow's own codec, for tests."""

from __future__ import annotations

from onnx import TensorProto

#: ``TensorProto`` field numbers, by name.
TENSOR_FIELDS = {f.name: f.number for f in TensorProto.DESCRIPTOR.fields}


def varint(value: int) -> bytes:
    """``value`` as a varint; a negative one as its 64-bit two's complement, as protobuf does."""
    value &= 2**64 - 1
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def len_field(name: str, payload: bytes) -> bytes:
    """The length-delimited ``TensorProto`` field ``name`` holding ``payload``."""
    return varint(TENSOR_FIELDS[name] << 3 | 2) + varint(len(payload)) + payload

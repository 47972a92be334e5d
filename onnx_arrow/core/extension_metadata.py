"""The metadata of any extension type, C++-only ones included, read and re-attached.

pyarrow registers some extension types (``arrow.variable_shape_tensor``) in C++
without a Python class, so their metadata is read from the schema they export
through the Arrow C data interface, and arrays of them are built through it too.
"""

from __future__ import annotations

import ctypes
from typing import Any

import pyarrow as pa

from onnx_arrow.core.json_extension import OTHER_METADATA_HINT, JsonExtensionType, json_object
from onnx_arrow.errors import UnsupportedTypeError

__all__ = ["CDataHolder", "c_schema_metadata", "extension_metadata", "with_storage"]


class _ArrowSchema(ctypes.Structure):
    _fields_ = (
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_void_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    )


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = (ctypes.py_object, ctypes.c_char_p)


def c_schema_metadata(arrow_type: pa.DataType) -> dict[bytes, bytes]:
    capsule = arrow_type.__arrow_c_schema__()
    schema = _ArrowSchema.from_address(_capsule_pointer(capsule, b"arrow_schema"))
    out: dict[bytes, bytes] = {}
    if not schema.metadata:
        return out
    pos = schema.metadata
    count = ctypes.c_int32.from_address(pos).value
    pos += 4
    for _ in range(count):
        size = ctypes.c_int32.from_address(pos).value
        key = ctypes.string_at(pos + 4, size)
        pos += 4 + size
        size = ctypes.c_int32.from_address(pos).value
        value = ctypes.string_at(pos + 4, size)
        pos += 4 + size
        out[key] = value
    return out


class CDataHolder:
    """Hands an array and a schema with extension metadata to ``pa.array``."""

    def __init__(self, storage: pa.Array, field: pa.Field) -> None:
        self._storage = storage
        self._field = field

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        return self._field.__arrow_c_schema__(), self._storage.__arrow_c_array__()[1]


def extension_metadata(arrow_type: pa.DataType) -> dict[str, Any]:
    """The parsed JSON metadata of any extension type, C++-only ones included.

    >>> import pyarrow as pa
    >>> from onnx_arrow.core.tensor_types import variable_shape_tensor
    >>> extension_metadata(variable_shape_tensor(pa.float32(), 2, [None, 3]))
    {'uniform_shape': [None, 3]}
    """
    if isinstance(arrow_type, JsonExtensionType):
        return arrow_type.params
    if isinstance(arrow_type, pa.ExtensionType):
        raw = arrow_type.__arrow_ext_serialize__()
    elif isinstance(arrow_type, pa.BaseExtensionType):
        raw = c_schema_metadata(arrow_type).get(b"ARROW:extension:metadata", b"")
    else:
        raise UnsupportedTypeError(f"{arrow_type} is not an extension type")
    if not raw:
        return {}
    # other writers' types carry no onnx-arrow version key: a JSON object is all they owe
    where = str(getattr(arrow_type, "extension_name", arrow_type))
    return json_object(raw, hint=OTHER_METADATA_HINT, where=where)


def with_storage(arrow_type: pa.DataType, storage: pa.DataType) -> pa.DataType:
    """The extension type ``arrow_type`` (any registered one) over another storage type."""
    if isinstance(arrow_type, pa.ExtensionType):
        serialized = arrow_type.__arrow_ext_serialize__()
    else:
        serialized = c_schema_metadata(arrow_type).get(b"ARROW:extension:metadata", b"")
    field = pa.field(
        "",
        storage,
        metadata={
            b"ARROW:extension:name": arrow_type.extension_name.encode(),
            b"ARROW:extension:metadata": serialized,
        },
    )
    return pa.array(CDataHolder(pa.nulls(0, storage), field)).type

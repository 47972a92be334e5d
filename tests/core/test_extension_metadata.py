"""Tests of :mod:`onnx_arrow.core.extension_metadata`: any extension type's metadata,
C++-only ones included."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from onnx_arrow.core import extension_metadata as em
from onnx_arrow.core import tensor_types as tt
from onnx_arrow.errors import ArrowLayoutError, UnsupportedTypeError


def test_extension_metadata_reads_cpp_types() -> None:
    assert em.extension_metadata(tt.fixed_shape_tensor(pa.int32(), (2, 3))) == {"shape": [2, 3]}
    assert em.extension_metadata(pa.bool8()) == {}
    t = tt.variable_shape_tensor(pa.float32(), 3, [None, 3, 0])
    assert em.extension_metadata(t) == {"uniform_shape": [None, 3, 0]}
    with pytest.raises(UnsupportedTypeError, match="not an extension type"):
        em.extension_metadata(pa.float32())


class _OtherWritersType(pa.ExtensionType):  # type: ignore[misc]
    """Another library's extension type, whose metadata onnx-arrow only reads."""

    def __init__(self, metadata: bytes) -> None:
        self._metadata = metadata
        super().__init__(pa.int8(), "other.type")

    def __arrow_ext_serialize__(self) -> bytes:
        return self._metadata

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> Any:
        return cls(serialized)


@pytest.mark.parametrize(
    ("metadata", "text"),
    [
        (b"{x", "other.type: extension metadata is not JSON"),
        (b"\xff", "other.type: extension metadata is not JSON"),
        (b"[1]", "other.type: extension metadata must be a JSON object, got list"),
    ],
)
def test_unreadable_metadata_of_other_types_says_what_it_must_be(
    metadata: bytes, text: str
) -> None:
    with pytest.raises(ArrowLayoutError) as info:
        em.extension_metadata(_OtherWritersType(metadata))
    assert str(info.value).startswith(text)
    assert str(info.value).endswith("a JSON object")
    assert em.extension_metadata(_OtherWritersType(b'{"a": 1}')) == {"a": 1}

"""Tests of :func:`onnx_arrow.core.kinds.map_key_dtype`: the map keys ONNX allows, the others
refused with the error class of the caller (a malformed message, or a declared type)."""

from __future__ import annotations

import pytest
from onnx import TensorProto

from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.kinds import MAP_KEY_TYPES, map_key_dtype
from onnx_arrow.errors import (
    InvalidMessageError,
    OnnxArrowError,
    UnsupportedTypeError,
)


@pytest.mark.parametrize("name", sorted(MAP_KEY_TYPES))
def test_map_keys_onnx_allows_are_accepted(name: str) -> None:
    row = dtype_of(name)
    assert map_key_dtype(row.onnx, where="x", error=InvalidMessageError) is row


@pytest.mark.parametrize("error", [InvalidMessageError, UnsupportedTypeError])
@pytest.mark.parametrize(
    ("key_type", "shown"),
    [
        (TensorProto.DOUBLE, "key_type 11 is not a map key type (DOUBLE)"),
        (99, "key_type 99 is not a map key type;"),
    ],
)
def test_other_map_keys_are_refused_with_the_callers_error(
    error: type[OnnxArrowError], key_type: int, shown: str
) -> None:
    with pytest.raises(error) as info:
        map_key_dtype(key_type, where="m.key_type", error=error)
    assert str(info.value).startswith(f"m.key_type: {shown}")
    assert "ONNX allows INT16, INT32" in str(info.value)

"""Tests of :mod:`onnx_arrow.core.kinds`: kinds as text and JSON, unified, and map keys."""

from __future__ import annotations

import pytest
from onnx import TensorProto

from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.kinds import MAP_KEY_TYPES, Kind, map_key_dtype, unify
from onnx_arrow.errors import (
    ArrowLayoutError,
    InvalidMessageError,
    OnnxArrowError,
    UnsupportedTypeError,
)

KINDS = [
    Kind("tensor"),
    Kind("sparse_tensor"),
    Kind("sequence", None),
    Kind("optional", Kind("optional", Kind("tensor"))),
    Kind("map", Kind("sequence", Kind("tensor")), dtype_of("STRING")),
    Kind("map", None, None),
]


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_kinds_round_trip_through_json(kind: Kind) -> None:
    assert Kind.from_json(kind.to_json()) == kind


@pytest.mark.parametrize("data", [[], ["tensor", 1], ["map", "FLOAT16X", None], "tensor", None])
def test_anything_else_is_not_a_kind(data: object) -> None:
    with pytest.raises(ArrowLayoutError, match="is not an ONNX value kind"):
        Kind.from_json(data, where="kind")


def test_unify_fills_what_one_side_leaves_open() -> None:
    seq = Kind("sequence", Kind("tensor"))
    assert unify(Kind("sequence"), seq, "row 1") == seq
    assert unify(None, seq, "row 1") == seq
    with pytest.raises(
        UnsupportedTypeError,
        match=r"^row 1: holds sparse_tensor but the column holds tensor$",  # the level that differs
    ):
        unify(seq, Kind("sequence", Kind("sparse_tensor")), "row 1")


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

"""Kinds: the structure of a value, its text and JSON forms, and the codes ONNX gives it."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import MapProto, ModelProto, OptionalProto, SequenceProto, SparseTensorProto, TensorProto

from onnx_arrow.core.dtypes import DTYPES, dtype_of
from onnx_arrow.core.kinds import (
    ELEM_TYPE,
    KIND_OF_ELEM_TYPE,
    MAP,
    MAP_KEY_TYPES,
    MAP_VALUE_KINDS,
    OPTIONAL,
    SEQUENCE,
    SPARSE_TENSOR,
    TENSOR,
    Kind,
    kind_of_message,
    map_key_dtype,
    message_class,
    unify,
)
from onnx_arrow.errors import (
    ArrowLayoutError,
    InvalidMessageError,
    OnnxArrowError,
    UnsupportedTypeError,
)

INT64 = dtype_of("INT64")
STRING = dtype_of("STRING")


def test_elem_type_codes_are_onnx_own_for_sequences_and_optionals() -> None:
    for kind, code in ELEM_TYPE.items():
        assert SequenceProto.DataType.Name(code) == kind.upper()
        assert OptionalProto.DataType.Name(code) == kind.upper()
    # every code ONNX defines but UNDEFINED has its kind, and back
    defined = {v for n, v in SequenceProto.DataType.items() if n != "UNDEFINED"}
    assert set(KIND_OF_ELEM_TYPE) == defined
    assert {v for n, v in OptionalProto.DataType.items() if n != "UNDEFINED"} == defined
    assert all(ELEM_TYPE[KIND_OF_ELEM_TYPE[code]] == code for code in defined)


def test_message_classes_are_those_of_each_kind() -> None:
    assert {
        TENSOR: TensorProto,
        SPARSE_TENSOR: SparseTensorProto,
        SEQUENCE: SequenceProto,
        MAP: MapProto,
        OPTIONAL: OptionalProto,
    } == {kind: message_class(kind) for kind in ELEM_TYPE}
    for kind in ELEM_TYPE:
        assert kind_of_message(message_class(kind)(), where="x") == kind


def test_map_keys_are_the_integer_types_and_string_as_onnx_allows() -> None:
    assert sorted(MAP_KEY_TYPES) == sorted(
        ["INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "STRING"]
    )
    assert {r.name for r in DTYPES.values()} >= MAP_KEY_TYPES
    # an optional is never a map's value: ONNX's MapProto holds its values in a sequence
    assert {TENSOR, SPARSE_TENSOR, SEQUENCE, MAP} == MAP_VALUE_KINDS


@pytest.mark.parametrize(
    ("kind", "text", "data", "depth"),
    [
        (Kind(TENSOR), "tensor", ["tensor"], 0),
        (Kind(SPARSE_TENSOR), "sparse_tensor", ["sparse_tensor"], 1),
        (Kind(SEQUENCE), "sequence(?)", ["sequence", None], 0),
        (Kind(SEQUENCE, Kind(TENSOR)), "sequence(tensor)", ["sequence", ["tensor"]], 1),
        (
            Kind(SEQUENCE, Kind(SEQUENCE, Kind(TENSOR))),
            "sequence(sequence(tensor))",
            ["sequence", ["sequence", ["tensor"]]],
            2,
        ),
        (Kind(OPTIONAL, Kind(TENSOR)), "optional(tensor)", ["optional", ["tensor"]], 1),
        (Kind(OPTIONAL), "optional(?)", ["optional", None], 0),
        (
            Kind(MAP, Kind(TENSOR), INT64),
            "map(INT64, tensor)",
            ["map", "INT64", ["tensor"]],
            2,
        ),
        (Kind(MAP), "map(?, ?)", ["map", None, None], 0),
        (
            Kind(MAP, Kind(SEQUENCE, Kind(SPARSE_TENSOR)), STRING),
            "map(STRING, sequence(sparse_tensor))",
            ["map", "STRING", ["sequence", ["sparse_tensor"]]],
            4,
        ),
        (
            Kind(OPTIONAL, Kind(MAP, Kind(TENSOR), INT64)),
            "optional(map(INT64, tensor))",
            ["optional", ["map", "INT64", ["tensor"]]],
            3,
        ),
    ],
    ids=str,
)
def test_text_json_and_depth_of_a_kind(kind: Kind, text: str, data: Any, depth: int) -> None:
    assert str(kind) == text
    assert kind.to_json() == data
    assert Kind.from_json(json.loads(json.dumps(data))) == kind
    assert kind.depth == depth


def test_depth_counts_the_messages_below_the_root() -> None:
    """A map(INT64, tensor) value is MapProto > SequenceProto (values) > TensorProto."""
    inner = TensorProto(name="t")
    values = SequenceProto(elem_type=SequenceProto.TENSOR, tensor_values=[inner])
    value = MapProto(key_type=TensorProto.INT64, keys=[1], values=values)
    kind = Kind(MAP, Kind(TENSOR), INT64)
    assert kind.depth == 2
    assert value.values.tensor_values[0] == inner  # two levels down
    assert Kind(SEQUENCE, kind).depth == 3


def test_a_map_key_is_read_by_any_spelling_of_its_dtype() -> None:
    assert Kind.from_json(["map", "int64", ["tensor"]]).key is INT64
    # its TensorProto.DataType code too; written back, it is the name
    kind = Kind.from_json(["map", TensorProto.INT64, ["tensor"]])
    assert kind.key is INT64
    assert kind.to_json() == ["map", "INT64", ["tensor"]]


@pytest.mark.parametrize(
    "data",
    [
        [],
        None,
        "tensor",
        42,
        ["tensor", None],
        ["sparse_tensor", ["tensor"]],
        ["sequence"],
        ["sequence", ["tensor"], ["tensor"]],
        ["optional", "tensor"],
        ["map", "INT64"],
        ["map", "NOT_A_TYPE", ["tensor"]],
        ["map", "UNDEFINED", ["tensor"]],
        ["map", 99, ["tensor"]],
        ["matrix"],
        ["sequence", ["matrix"]],
        {"name": "tensor"},
    ],
    ids=json.dumps,
)
def test_anything_else_is_not_a_kind_and_the_error_says_what_is(data: Any) -> None:
    with pytest.raises(
        ArrowLayoutError, match=r"is not an ONNX value kind; expected e\.g\."
    ) as info:
        Kind.from_json(data, where="row 3: value_kind")
    assert str(info.value).startswith("row 3: value_kind: ")
    assert json.dumps(data)[:20] in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_long_bad_kind_is_cut_in_the_message() -> None:
    data = ["sequence", ["x" * 500]]
    with pytest.raises(ArrowLayoutError) as info:
        Kind.from_json(data)
    assert len(info.value.message) < 300
    assert info.value.where == "kind"


def test_a_message_of_no_kind_is_refused_saying_how_to_convert() -> None:
    with pytest.raises(UnsupportedTypeError, match=r"got ndarray; convert numpy arrays") as info:
        kind_of_message(np.zeros(3), where="inputs/x")
    assert str(info.value).startswith("inputs/x: expected an ONNX value message")
    assert isinstance(info.value, TypeError)
    with pytest.raises(UnsupportedTypeError, match="got ModelProto"):
        kind_of_message(ModelProto(), where="m")


def test_unify_fills_in_what_one_side_leaves_open() -> None:
    tensor = Kind(TENSOR)
    seq = Kind(SEQUENCE, tensor)
    assert unify(None, seq, "w") is seq
    assert unify(seq, None, "w") is seq
    assert unify(None, None, "w") is None
    assert unify(Kind(SEQUENCE), seq, "w") == seq  # an empty sequence says no element kind
    assert unify(seq, Kind(SEQUENCE), "w") == seq
    assert unify(Kind(MAP, tensor), Kind(MAP, None, INT64), "w") == Kind(MAP, tensor, INT64)
    deep = Kind(SEQUENCE, Kind(SEQUENCE))
    full = Kind(SEQUENCE, Kind(SEQUENCE, Kind(MAP, tensor, STRING)))
    assert unify(deep, full, "w") == full


@pytest.mark.parametrize(
    ("a", "b", "said"),
    [
        (Kind(TENSOR), Kind(SEQUENCE), "holds sequence(?) but the column holds tensor"),
        (
            Kind(MAP, Kind(TENSOR), INT64),
            Kind(MAP, Kind(TENSOR), STRING),
            "holds map(STRING, tensor) but the column holds map(INT64, tensor)",
        ),
        (
            Kind(SEQUENCE, Kind(TENSOR)),
            Kind(SEQUENCE, Kind(SPARSE_TENSOR)),
            "holds sparse_tensor but the column holds tensor",
        ),
    ],
)
def test_unify_refuses_kinds_that_disagree_naming_where(a: Kind, b: Kind, said: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        unify(a, b, "column x, row 2")
    assert str(info.value) == f"column x, row 2: {said}"
    assert isinstance(info.value, OnnxArrowError)


def _kinds() -> st.SearchStrategy[Kind]:
    keys = st.sampled_from(sorted(MAP_KEY_TYPES)).map(dtype_of)
    leaves = st.sampled_from([Kind(TENSOR), Kind(SPARSE_TENSOR)])

    def nest(inner: st.SearchStrategy[Kind]) -> st.SearchStrategy[Kind]:
        maybe = st.one_of(st.none(), inner)
        return st.one_of(
            st.builds(Kind, st.just(SEQUENCE), maybe),
            st.builds(Kind, st.just(OPTIONAL), maybe),
            st.builds(Kind, st.just(MAP), maybe, st.one_of(st.none(), keys)),
        )

    return st.recursive(leaves, nest, max_leaves=6)


@settings(max_examples=200, deadline=None)
@given(_kinds())
def test_every_kind_goes_through_json_and_back(kind: Kind) -> None:
    data = json.loads(json.dumps(kind.to_json()))
    assert Kind.from_json(data) == kind
    assert str(Kind.from_json(data)) == str(kind)
    assert unify(kind, kind, "w") == kind
    assert kind.depth >= 0


# --- map keys (map_key_dtype): the ones ONNX allows, the others refused with the
# error class of the caller (a malformed message, or a declared type) ---------------


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

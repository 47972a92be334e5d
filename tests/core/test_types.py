"""Tests of :mod:`onnx_arrow.core.types`: a declared ``TypeProto`` to its column's Arrow type
and back, the kind an Arrow type holds, and a declaration checked against a column."""

from __future__ import annotations

import pyarrow as pa
import pytest
from onnx import TensorProto, TypeProto, helper

from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.kinds import Kind
from onnx_arrow.core.types import (
    arrow_type,
    arrow_type_of_kind,
    fit_declared,
    kind_of_arrow,
    kind_of_type,
    onnx_type,
)
from onnx_arrow.errors import NotRepresentableError, UnsupportedTypeError

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


def tensor(elem: int = FLOAT, shape: list[object] | None = None) -> TypeProto:
    return helper.make_tensor_type_proto(elem, shape)  # type: ignore[arg-type]


def sequence(elem: TypeProto) -> TypeProto:
    return helper.make_sequence_type_proto(elem)


def optional(elem: TypeProto) -> TypeProto:
    return helper.make_optional_type_proto(elem)


def map_of(key: int, value: TypeProto) -> TypeProto:
    return helper.make_map_type_proto(key, value)


def sparse(elem: int = FLOAT) -> TypeProto:
    out = TypeProto()
    out.sparse_tensor_type.elem_type = elem
    return out


#: Declarations whose Arrow type gives them back exactly, with the kind each declares.
EXACT: dict[str, tuple[TypeProto, str, str]] = {
    "fixed": (tensor(FLOAT, [2, 3]), "tensor", "arrow.fixed_shape_tensor"),
    "scalar": (tensor(INT64, []), "tensor", "arrow.fixed_shape_tensor"),
    "unknown dims": (tensor(FLOAT, [None, 3]), "tensor", "onnx.variable_shape_tensor"),
    "a zero dim": (tensor(FLOAT, [0, 3]), "tensor", "onnx.variable_shape_tensor"),
    "no shape": (tensor(FLOAT, None), "tensor", "onnx.variable_rank_tensor"),
    "own dtype": (tensor(TensorProto.BFLOAT16, [2]), "tensor", "onnx.fixed_shape_tensor"),
    "sparse": (sparse(TensorProto.DOUBLE), "sparse_tensor", "onnx.sparse_tensor"),
    "sequence": (sequence(tensor(FLOAT, [2])), "sequence(tensor)", "list"),
    "map": (map_of(TensorProto.STRING, tensor(INT64, [])), "map(STRING, tensor)", "map"),
    "optional": (optional(tensor(FLOAT, [2])), "optional(tensor)", "arrow.fixed_shape_tensor"),
    "optional(optional)": (
        optional(optional(tensor(FLOAT, [2]))),
        "optional(optional(tensor))",
        "struct",
    ),
    "zipmap": (
        sequence(map_of(INT64, tensor(FLOAT, []))),
        "sequence(map(INT64, tensor))",
        "list",
    ),
}


def _outer(t: pa.DataType) -> str:
    name = getattr(t, "extension_name", None)
    return str(name) if name is not None else str(t).split("<", 1)[0]


@pytest.mark.parametrize(("declared", "kind", "outer"), EXACT.values(), ids=EXACT)
def test_a_declaration_round_trips_through_its_arrow_type(
    declared: TypeProto, kind: str, outer: str
) -> None:
    assert str(kind_of_type(declared)) == kind
    column = arrow_type(declared)
    assert _outer(column) == outer
    back = onnx_type(column, kind_of_type(declared))
    assert back == declared


def test_symbolic_dims_come_back_as_dims_without_a_value() -> None:
    column = arrow_type(tensor(FLOAT, ["N", 3]))
    assert column.extension_name == "onnx.variable_shape_tensor"
    assert onnx_type(column) == tensor(FLOAT, [None, 3])


def test_without_a_kind_an_optional_level_is_known_from_struct_value_only() -> None:
    twice = arrow_type(optional(optional(tensor(FLOAT, [2]))))
    assert onnx_type(twice) == optional(optional(tensor(FLOAT, [2])))
    once = arrow_type(optional(tensor(FLOAT, [2])))
    assert onnx_type(once) == tensor(FLOAT, [2])  # a nullable column: only nulls would say


@pytest.mark.parametrize("junk", [tensor(FLOAT, [2]), "float", None, pa.array([1])])
def test_onnx_type_takes_an_arrow_type_only(junk: object) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        onnx_type(junk)  # type: ignore[arg-type]
    assert str(info.value).startswith("arrow_type: onnx_type takes a pyarrow DataType, got ")
    hinted = "use onnx_arrow.arrow_type" in str(info.value)
    assert hinted == isinstance(junk, TypeProto)


@pytest.mark.parametrize("function", [arrow_type, kind_of_type])
def test_a_declaration_must_be_a_type_proto(function: object) -> None:
    with pytest.raises(UnsupportedTypeError, match=r"^type: type must be an onnx.TypeProto, got"):
        function(pa.float32())  # type: ignore[operator]


DECLARATION_ERRORS: dict[str, tuple[TypeProto, type[Exception], str]] = {
    "empty": (TypeProto(), UnsupportedTypeError, "type: an empty TypeProto is not a value type"),
    "undefined dtype": (tensor(0, [1]), UnsupportedTypeError, "type.tensor_type.elem_type: "),
    "double map key": (
        map_of(TensorProto.DOUBLE, tensor(FLOAT, [])),
        UnsupportedTypeError,
        "type.map_type.key_type: key_type 11 is not a map key type (DOUBLE)",
    ),
    "nested undefined dtype": (
        sequence(sparse(0)),
        UnsupportedTypeError,
        "type.sequence_type.sparse_tensor_type.elem_type: ",
    ),
    "too many elements": (
        tensor(FLOAT, [1 << 30, 1 << 30, 4]),
        NotRepresentableError,
        "type.tensor_type.shape: shape [1073741824, 1073741824, 4] declares",
    ),
}


@pytest.mark.parametrize(
    ("declared", "error", "text"), DECLARATION_ERRORS.values(), ids=DECLARATION_ERRORS
)
def test_a_declaration_without_a_column_type_is_refused_where_it_is_wrong(
    declared: TypeProto, error: type[Exception], text: str
) -> None:
    with pytest.raises(error) as info:
        arrow_type(declared)
    assert str(info.value).startswith(text)


def test_kind_of_arrow_reads_nulls_as_an_optional_level() -> None:
    seq = arrow_type(sequence(tensor(FLOAT, [2])))
    assert str(kind_of_arrow(seq)) == "sequence(tensor)"
    assert str(kind_of_arrow(seq, pa.nulls(2, seq))) == "optional(sequence(tensor))"
    empty = pa.array([[], []], pa.list_(pa.null()))
    assert str(kind_of_arrow(empty.type, empty)) == "sequence(?)"
    nested = arrow_type(optional(optional(tensor(FLOAT, [2]))))
    assert str(kind_of_arrow(nested)) == "optional(optional(tensor))"


def test_kind_of_arrow_refuses_a_plain_column_and_names_engines_that_drop_types() -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        kind_of_arrow(pa.int64())
    assert "int64 is not the Arrow form of an ONNX value" in str(info.value)
    assert "drops the extension types" in str(info.value)
    with pytest.raises(UnsupportedTypeError) as info:
        kind_of_arrow(pa.list_(pa.int64()))
    assert "int64 is not the Arrow form" in str(info.value)


def test_arrow_type_of_kind_wraps_an_inner_type() -> None:
    inner = pa.float32()
    assert arrow_type_of_kind(Kind("sequence", Kind("tensor")), inner) == pa.list_(inner)
    int64 = dtype_of("INT64")
    assert arrow_type_of_kind(Kind("map", Kind("tensor"), int64), inner) == pa.map_(
        pa.int64(), inner
    )
    assert arrow_type_of_kind(Kind("optional", Kind("tensor")), inner) == inner
    twice = arrow_type_of_kind(Kind("optional", Kind("optional", Kind("tensor"))), inner)
    assert twice == pa.struct([pa.field("value", inner)])
    with pytest.raises(UnsupportedTypeError, match=r"map\(\?, tensor\) has no key type"):
        arrow_type_of_kind(Kind("map", Kind("tensor")), inner)
    with pytest.raises(UnsupportedTypeError, match="tensor has no element type"):
        arrow_type_of_kind(Kind("tensor"), inner)


def test_fit_declared_gives_the_declared_kind_and_refuses_where_they_differ() -> None:
    column = arrow_type(tensor(FLOAT, [2, 3]))
    assert str(fit_declared(optional(tensor(FLOAT, [2, 3])), column, Kind("tensor"))) == (
        "optional(tensor)"
    )
    assert str(fit_declared(tensor(FLOAT, ["N", 3]), column, Kind("tensor"))) == "tensor"
    with pytest.raises(UnsupportedTypeError) as info:
        fit_declared(tensor(FLOAT, [2, 4]), column, Kind("tensor"))
    assert str(info.value) == (
        "declared.tensor_type.shape: declared shape [2, 4], but the column holds tensors "
        "of shape [2, 3]"
    )
    with pytest.raises(UnsupportedTypeError, match=r"^declared: the column holds absent values"):
        fit_declared(tensor(FLOAT, [2, 3]), column, Kind("optional", Kind("tensor")))
    with pytest.raises(UnsupportedTypeError, match=r"^declared: declared sequence_type, but"):
        fit_declared(sequence(tensor(FLOAT, [2, 3])), column, Kind("tensor"))
    seq = arrow_type(sequence(tensor(INT64, [2])))
    with pytest.raises(UnsupportedTypeError) as info:
        fit_declared(sequence(tensor(FLOAT, [2])), seq, kind_of_arrow(seq))
    assert str(info.value).startswith(
        "declared.sequence_type.tensor_type.elem_type: declared FLOAT, but the column holds INT64"
    )


def test_the_kind_of_a_slice_is_read_from_its_own_rows() -> None:
    """A map's items outside a slice (here a null one) do not make the slice's kind."""
    import numpy as np
    from onnx import numpy_helper

    import onnx_arrow

    seq = onnx_arrow.to_arrow([numpy_helper.from_list([np.zeros(2, np.float32)])])
    items = pa.concat_arrays([seq, pa.nulls(1, seq.type)])
    maps = pa.MapArray.from_arrays(pa.array([0, 1, 2], pa.int32()), pa.array([1, 2]), items)
    first = maps.slice(0, 1)
    alone = pa.concat_arrays([first])
    assert kind_of_arrow(maps.type, first) == kind_of_arrow(alone.type, alone)
    assert kind_of_arrow(maps.type, maps) != kind_of_arrow(alone.type, alone)

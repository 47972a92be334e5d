"""Tests of :mod:`onnx_arrow.core.arrays`: nodes to the Arrow type and array of their column,
and the nodes of a column read back, with every error located inside its row."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from onnx_arrow.core.arrays import build_array, infer_arrow_type, value_rows
from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.kinds import Kind
from onnx_arrow.core.nodes import MapValue, Node, OptionalValue, SequenceValue, SparseValue
from onnx_arrow.core.tensors import Tensor
from onnx_arrow.errors import NotRepresentableError, OnnxArrowError, UnsupportedTypeError

FLOAT = dtype_of("FLOAT")
INT64 = dtype_of("INT64")
STRING = dtype_of("STRING")
TENSOR = Kind("tensor")


def t(values: list[Any], dtype: Any = FLOAT, dims: tuple[int, ...] | None = None) -> Tensor:
    codes = np.array(values, dtype=dtype.numpy)
    return Tensor(dtype, (len(values),) if dims is None else dims, codes)


def same(a: Node | None, b: Node | None) -> bool:
    """Nodes equal in structure, dtypes, dims and every element."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return (
            a.dtype is b.dtype
            and a.dims == b.dims
            and np.array_equal(a.codes, b.codes)
            and a.codes.dtype == b.codes.dtype
        )
    if isinstance(a, SequenceValue) and isinstance(b, SequenceValue):
        return len(a.items) == len(b.items) and all(map(same, a.items, b.items))
    if isinstance(a, MapValue) and isinstance(b, MapValue):
        return (
            a.key is b.key
            and list(a.keys) == list(b.keys)
            and len(a.values) == len(b.values)
            and all(map(same, a.values, b.values))
        )
    if isinstance(a, OptionalValue) and isinstance(b, OptionalValue):
        return same(a.value, b.value)
    if isinstance(a, SparseValue) and isinstance(b, SparseValue):
        return a.dims == b.dims and same(a.values, b.values) and same(a.indices, b.indices)
    return a is None and b is None


def keys(values: list[Any], dtype: Any) -> np.ndarray:
    if dtype is STRING:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.array(values, dtype=dtype.numpy)


COLUMNS: dict[str, tuple[list[Node | None], Kind, str]] = {
    "tensors of one shape": (
        [t([1.0, 2.0]), None, t([3.0, 4.0])],
        TENSOR,
        "extension<arrow.fixed_shape_tensor[value_type=float, shape=[2]]>",
    ),
    "tensors of two shapes": (
        [t([1.0, 2.0]), t([3.0])],
        TENSOR,
        "extension<onnx.variable_shape_tensor",
    ),
    "tensors of two ranks": (
        [t([1.0, 2.0]), t([3.0], dims=())],
        TENSOR,
        "extension<onnx.variable_rank_tensor",
    ),
    "sequences, one empty": (
        [SequenceValue([t([1.0]), t([2.0])]), SequenceValue([]), None],
        Kind("sequence", TENSOR),
        "list<item: extension<arrow.fixed_shape_tensor",
    ),
    "maps of string keys": (
        [
            MapValue(STRING, keys([b"a", b"a"], STRING), [t([1.0]), t([2.0])]),
            MapValue(STRING, keys([], STRING), []),
        ],
        Kind("map", TENSOR, STRING),
        "map<binary, extension<arrow.fixed_shape_tensor",
    ),
    "maps of int keys": (
        [MapValue(INT64, keys([3, 1], INT64), [t([1.0]), t([2.0])])],
        Kind("map", TENSOR, INT64),
        "map<int64, extension<arrow.fixed_shape_tensor",
    ),
    "optionals": (
        [OptionalValue(t([1.0])), OptionalValue(None)],
        Kind("optional", TENSOR),
        "extension<arrow.fixed_shape_tensor",
    ),
    "optionals of optionals": (
        [
            OptionalValue(OptionalValue(t([1.0]))),
            OptionalValue(OptionalValue(None)),
            OptionalValue(None),
        ],
        Kind("optional", Kind("optional", TENSOR)),
        "struct<value: extension<arrow.fixed_shape_tensor",
    ),
    "sparse tensors": (
        [SparseValue((2, 3), t([5.0]), t([4], INT64)), None],
        Kind("sparse_tensor"),
        "extension<onnx.sparse_tensor",
    ),
    "sequences of maps": (
        [SequenceValue([MapValue(INT64, keys([1], INT64), [SequenceValue([t([1.0])])])])],
        Kind("sequence", Kind("map", Kind("sequence", TENSOR), INT64)),
        "list<item: map<int64, list<item: extension<arrow.fixed_shape_tensor",
    ),
}


@pytest.mark.parametrize(("nodes", "kind", "type_text"), COLUMNS.values(), ids=COLUMNS)
def test_nodes_round_trip_through_their_column(
    nodes: list[Node | None], kind: Kind, type_text: str
) -> None:
    arrow_type = infer_arrow_type(nodes, kind)
    assert str(arrow_type).startswith(type_text)
    array = build_array(nodes, kind, arrow_type)
    assert array.type == arrow_type
    assert len(array) == len(nodes)
    array.validate(full=True)
    back = value_rows(array, kind)
    assert len(back) == len(nodes)
    for i, (got, expected) in enumerate(zip(back, nodes, strict=True)):
        assert same(got, expected), f"row {i}: {got!r} != {expected!r}"
    # a slice reads back the rows it holds
    assert all(map(same, value_rows(array.slice(1), kind), nodes[1:]))


def test_no_value_anywhere_gives_a_null_column() -> None:
    nodes: list[Node | None] = [SequenceValue([]), None]
    arrow_type = infer_arrow_type(nodes, Kind("sequence", TENSOR))
    assert arrow_type == pa.list_(pa.null())
    assert infer_arrow_type([None, None], None) == pa.null()
    array = build_array(nodes, Kind("sequence", TENSOR), arrow_type)
    assert array.to_pylist() == [[], None]
    assert all(map(same, value_rows(array, Kind("sequence", TENSOR)), nodes))


def test_a_null_column_of_optionals_reads_as_absent_values() -> None:
    rows = value_rows(pa.nulls(2), Kind("optional", TENSOR))
    assert all(same(r, OptionalValue(None)) for r in rows)


def test_infer_names_the_first_tensor_of_another_dtype() -> None:
    nodes: list[Node | None] = [
        SequenceValue([t([1.0])]),
        SequenceValue([t([1.0]), t([2], INT64)]),
    ]
    with pytest.raises(UnsupportedTypeError) as info:
        infer_arrow_type(nodes, Kind("sequence", TENSOR))
    assert str(info.value) == (
        "row 1: tensor_values[1]: the tensor is INT64 but row 0: tensor_values[0] is FLOAT; "
        "a column holds one data type"
    )


def test_build_locates_a_value_that_does_not_fit_inside_its_row() -> None:
    kind = Kind("sequence", TENSOR)
    good = [SequenceValue([t([1.0, 2.0])]), SequenceValue([t([3.0, 4.0])])]
    arrow_type = infer_arrow_type(good, kind)
    bad = [*good, SequenceValue([t([1.0, 2.0]), t([1.0, 2.0, 3.0])])]
    with pytest.raises(NotRepresentableError) as info:
        build_array(bad, kind, arrow_type)
    assert str(info.value).startswith("row 2: tensor_values[1]: shape [3] differs from")


@pytest.mark.parametrize(
    ("nodes", "kind", "text"),
    [
        ([t([1.0])], Kind("optional", TENSOR), "row 0: expected an optional, got Tensor"),
        ([OptionalValue(t([1.0]))], TENSOR, "row 0: expected a tensor, got OptionalValue"),
        ([t([1.0])], Kind("sparse_tensor"), "row 0: expected a sparse tensor, got Tensor"),
    ],
)
def test_build_refuses_a_node_of_another_kind(nodes: list[Node], kind: Kind, text: str) -> None:
    arrow_type = infer_arrow_type([t([1.0])], TENSOR)
    if kind.name == "sparse_tensor":
        arrow_type = infer_arrow_type([SparseValue((1,), t([1.0]), t([0], INT64))], kind)
    with pytest.raises(OnnxArrowError) as info:
        build_array(nodes, kind, arrow_type)
    assert isinstance(info.value, UnsupportedTypeError)
    assert str(info.value) == text


def test_build_refuses_values_for_a_null_column() -> None:
    with pytest.raises(UnsupportedTypeError, match="values present but the column type is null"):
        build_array([SequenceValue([t([1.0])])], Kind("sequence", TENSOR), pa.null())
    with pytest.raises(UnsupportedTypeError, match="no values to build a list<item: int64>"):
        build_array([None], None, pa.list_(pa.int64()))


def test_a_sparse_value_whose_parts_do_not_fit_is_never_written() -> None:
    from onnx_arrow.errors import InvalidMessageError

    values = Tensor(dtype_of("FLOAT"), (2,), np.array([1, 2], np.float32))
    good = SparseValue((2, 2), values, Tensor(dtype_of("INT64"), (2,), np.array([0, 3])))
    bad = SparseValue((2, 2), values, Tensor(dtype_of("INT64"), (2,), np.array([0, 4])))
    kind = Kind("sparse_tensor")
    arrow_type = infer_arrow_type([good], kind)
    assert len(build_array([good, None], kind, arrow_type)) == 2
    with pytest.raises(InvalidMessageError, match=r"^row 1: .*indices\[1\] is 4, outside"):
        build_array([good, bad], kind, arrow_type)
    negative = SparseValue((-1,), values, Tensor(dtype_of("INT64"), (2,), np.array([0, 0])))
    with pytest.raises(InvalidMessageError, match=r"^row 0: .*negative size"):
        build_array([negative], kind, arrow_type)

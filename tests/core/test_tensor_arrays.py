"""Tests of :mod:`onnx_arrow.core.tensor_arrays`: the Arrow view of tensors, to_numpy, declared
types, and the values and nulls an array may hold that no tensor can."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from tensor_samples import (
    ROWS,
    SUBBYTE_INT,
    assert_same_elements,
    columns,
    ids,
    is_fixed,
    make_message,
    numpy_helper_to_array,
    parquet_round_trip,
    plain,
    round_trip,
    sample_codes,
    serialized,
)

import onnx_arrow
from onnx_arrow.core.dtypes import ArrowKind, DType, dtype_of
from onnx_arrow.core.extension_metadata import extension_metadata
from onnx_arrow.core.tensor_types import ragged_from_storage
from onnx_arrow.errors import (
    ArrowLayoutError,
    NotRepresentableError,
    UnsupportedTypeError,
)

# --- to_numpy --------------------------------------------------------------------------------


@pytest.mark.parametrize("storage", ["raw", "typed"])
@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_to_numpy_of_a_fixed_column(row: DType, storage: str) -> None:
    if row.arrow_kind is ArrowKind.BINARY and storage == "raw":
        pytest.skip("STRING has no raw form")
    messages = [make_message(row, [2, 3], sample_codes(row, 6, seed), storage) for seed in range(3)]
    got = onnx_arrow.to_numpy(onnx_arrow.to_arrow(messages, exact=True), strings="bytes")
    assert isinstance(got, np.ndarray)
    expected = np.stack([numpy_helper_to_array(m) for m in messages])
    assert_same_elements(got, expected)
    assert got.dtype == row.numpy == helper.tensor_dtype_to_np_dtype(row.onnx)


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_to_numpy_of_variable_columns(row: DType) -> None:
    shapes = [[2, 3], [0, 3], [1, 1]]
    ranks = [[4], [], [1, 2, 1]]
    for dims_list in (shapes, ranks):
        messages = [
            make_message(row, d, sample_codes(row, math.prod(d), i), "typed")
            for i, d in enumerate(dims_list)
        ]
        got = onnx_arrow.to_pylist(onnx_arrow.to_arrow(messages, exact=True), strings="bytes")
        assert isinstance(got, list)
        assert len(got) == len(messages)
        for array, message in zip(got, messages, strict=True):
            assert_same_elements(array, numpy_helper_to_array(message))


def test_to_numpy_of_bool_gives_bool() -> None:
    message = numpy_helper.from_array(np.array([[True, False], [False, True]]))
    got = onnx_arrow.to_numpy(onnx_arrow.to_arrow([message], exact=True))
    assert got.dtype == np.bool_
    assert got.tolist() == [[[True, False], [False, True]]]


# --- the Arrow view -------------------------------------------------------------------------------


@pytest.mark.parametrize("row", SUBBYTE_INT, ids=ids(SUBBYTE_INT))
def test_sub_byte_integers_are_their_values_in_the_storage(row: DType) -> None:
    info = ml_dtypes.iinfo(row.numpy)  # type: ignore[no-untyped-call]
    values = np.arange(int(info.min), int(info.max) + 1)
    message = make_message(row, [values.size], values.astype(row.numpy), "raw")
    array = onnx_arrow.to_arrow([message], exact=True)
    storage = plain(array.value.storage.flatten())
    assert storage.type == pa.from_numpy_dtype(row.arrow_storage)
    assert storage.to_numpy().tolist() == values.tolist()
    assert array.value.type.value_type.extension_name == f"onnx.{row.name.lower()}"


def test_int4_storage_holds_int8_values() -> None:
    values = np.array([-8, -1, 0, 7, 3], dtype=ml_dtypes.int4)
    array = onnx_arrow.to_arrow([numpy_helper.from_array(values)], exact=True)
    storage = plain(array.value.storage.flatten())
    assert storage.type == pa.int8()
    assert storage.to_pylist() == [-8, -1, 0, 7, 3]


def test_complex_is_a_pair_of_floats() -> None:
    values = np.array([1 + 2j, -3.5 - 0j], dtype=np.complex64)
    array = onnx_arrow.to_arrow([numpy_helper.from_array(values)], exact=True)
    assert array.value.type.extension_name == "onnx.fixed_shape_tensor"
    assert array.value.type.value_type.extension_name == "onnx.complex64"
    element = array.value.storage.flatten()  # the plain storage: (real, imaginary) pairs
    assert element.to_pylist() == [[1.0, 2.0], [-3.5, -0.0]]


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_element_arrays_convert_to_the_onnx_numpy_dtype(row: DType) -> None:
    codes = sample_codes(row, 5)
    array = onnx_arrow.to_arrow([make_message(row, [5], codes, "typed")], exact=True)
    elements = plain(array.value.storage.flatten())
    element_type = onnx_arrow.core.element_types.element_type(row)
    if isinstance(element_type, pa.ExtensionType):  # onnx-arrow's own: onnx.bfloat16 ...
        typed = pa.ExtensionArray.from_storage(element_type, elements)
        assert_same_elements(typed.to_numpy(), codes)


# --- declared types -------------------------------------------------------------------------------


def floats(*dims: int) -> TensorProto:
    return numpy_helper.from_array(np.zeros(dims, dtype=np.float32), "x")


def test_declared_static_shape_gives_a_fixed_shape_tensor() -> None:
    declared = helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3])
    array = onnx_arrow.to_arrow([floats(2, 3), floats(2, 3)], declared, exact=True)
    assert array.value.type == pa.fixed_shape_tensor(pa.float32(), [2, 3])
    assert round_trip([floats(2, 3)], declared) == [serialized(floats(2, 3))]
    empty = onnx_arrow.to_arrow([], declared, exact=True)
    assert len(empty) == 0
    assert empty.value.type == pa.fixed_shape_tensor(pa.float32(), [2, 3])
    assert onnx_arrow.from_arrow(empty) == []


def test_declared_scalar_gives_a_rank_zero_fixed_shape() -> None:
    declared = helper.make_tensor_type_proto(TensorProto.FLOAT, [])
    array = onnx_arrow.to_arrow([floats()], declared, exact=True)
    assert array.value.type == pa.fixed_shape_tensor(pa.float32(), [])


def test_declared_symbolic_dims_give_a_variable_shape_tensor() -> None:
    declared = helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", 3])
    messages = [floats(1, 3), floats(4, 3), floats(0, 3)]
    array = onnx_arrow.to_arrow(messages, declared, exact=True)
    value_type = array.value.type
    assert value_type.extension_name == "onnx.variable_shape_tensor"
    assert extension_metadata(value_type) == {"uniform_shape": [None, 3]}
    assert round_trip(messages, declared) == [serialized(m) for m in messages]


def test_declared_unknown_dims_give_a_variable_shape_tensor_without_uniform_shape() -> None:
    declared = helper.make_tensor_type_proto(TensorProto.FLOAT, [None, None])
    array = onnx_arrow.to_arrow([floats(1, 3)], declared, exact=True)
    assert array.value.type.extension_name == "onnx.variable_shape_tensor"
    assert extension_metadata(array.value.type) == {}


def test_declared_zero_dim_gives_a_variable_shape_tensor() -> None:
    declared = helper.make_tensor_type_proto(TensorProto.FLOAT, [0, 3])
    array = onnx_arrow.to_arrow([floats(0, 3)], declared, exact=True)
    value_type = array.value.type
    assert value_type.extension_name == "onnx.variable_shape_tensor"
    assert extension_metadata(value_type) == {"uniform_shape": [0, 3]}
    assert onnx_arrow.from_arrow(parquet_round_trip(array))[0] == floats(0, 3)


def test_declared_without_shape_gives_a_variable_rank_tensor() -> None:
    declared = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    messages = [floats(), floats(2), floats(1, 2, 0)]
    array = onnx_arrow.to_arrow(messages, declared, exact=True)
    assert array.value.type.extension_name == "onnx.variable_rank_tensor"
    assert round_trip(messages, declared) == [serialized(m) for m in messages]


def test_declared_type_of_an_onnx_dtype_uses_onnx_variable_shape() -> None:
    declared = helper.make_tensor_type_proto(TensorProto.BFLOAT16, ["N"])
    message = make_message(dtype_of("BFLOAT16"), [2], sample_codes(dtype_of("BFLOAT16"), 2), "raw")
    array = onnx_arrow.to_arrow([message], declared, exact=True)
    assert array.value.type.extension_name == "onnx.variable_shape_tensor"
    assert array.value.type.uniform_shape is None


@pytest.mark.parametrize(
    ("declared_dims", "fits", "dims"),
    [
        ([2, 3], (2, 3), (3, 2)),
        ([2, 3], (2, 3), (2, 3, 1)),
        ([2, 3], (2, 3), ()),
        (["N", 3], (5, 3), (2, 4)),
        (["N", 3], (5, 3), (3,)),
        ([None, 3], (5, 3), (3, 3, 3)),
        ([0, 3], (0, 3), (1, 3)),
        ([0, 3], (0, 3), (0, 4)),
        ([], (), (1,)),
    ],
    ids=str,
)
def test_declared_shape_refuses_a_value_that_does_not_fit(
    declared_dims: list[Any], fits: tuple[int, ...], dims: tuple[int, ...]
) -> None:
    declared = helper.make_tensor_type_proto(TensorProto.FLOAT, declared_dims)
    bad = floats(*dims)
    before = bad.SerializeToString()
    with pytest.raises(NotRepresentableError, match=r"(^|: )row 1: shape ") as info:
        onnx_arrow.to_arrow([floats(*fits), bad], declared, exact=True)
    assert isinstance(info.value, ValueError)
    assert str(list(dims)) in str(info.value)
    assert bad.SerializeToString() == before


@pytest.mark.parametrize("declared_dims", [[2, 3], ["N", 3], None], ids=str)
def test_declared_dtype_refuses_another_dtype(declared_dims: list[Any] | None) -> None:
    declared = helper.make_tensor_type_proto(TensorProto.INT32, declared_dims)
    with pytest.raises(
        UnsupportedTypeError, match=r"(^|: )row 0: tensor is FLOAT .* INT32"
    ) as info:
        onnx_arrow.to_arrow([floats(2, 3)], declared, exact=True)
    assert isinstance(info.value, TypeError)


# --- values that have no exact ONNX form --------------------------------------------------------


def edited(array: pa.ExtensionArray, index: int, number: float) -> pa.ExtensionArray:
    """``array`` (an onnx.message of a tensor column) with flat element ``index`` set."""
    value = array.value
    storage = value.storage
    fixed = is_fixed(value.type)
    elements = storage.flatten() if fixed else storage.field("data").flatten()
    numbers = plain(elements).to_numpy().copy()
    numbers[index] = number
    new_elements = (
        pa.ExtensionArray.from_storage(elements.type, pa.array(numbers))
        if isinstance(elements, pa.ExtensionArray)
        else pa.array(numbers, elements.type)
    )
    if fixed:
        new_storage = pa.FixedSizeListArray.from_arrays(new_elements, storage.type.list_size)
        new_value = pa.ExtensionArray.from_storage(value.type, new_storage)
    else:
        data = pa.ListArray.from_arrays(
            storage.field("data").offsets, new_elements, type=storage.type.field("data").type
        )
        new_storage = pa.StructArray.from_arrays(
            [data, storage.field("shape")], fields=list(storage.type)
        )
        new_value = ragged_from_storage(value.type, new_storage)
    struct = pa.StructArray.from_arrays(
        [new_value, array.storage.field("envelope")], names=["value", "envelope"]
    )
    return pa.ExtensionArray.from_storage(array.type, struct)


@pytest.mark.parametrize("variable", [False, True], ids=["fixed", "variable"])
@pytest.mark.parametrize(
    ("name", "bad_value", "shown"),
    [
        ("BFLOAT16", 1.1, "not exactly a BFLOAT16 value"),
        ("FLOAT8E4M3FN", 0.3, "not exactly a FLOAT8E4M3FN value"),
        ("FLOAT4E2M1", 5.0, "not exactly a FLOAT4E2M1 value"),
        ("INT4", 9, "outside the INT4 range [-8, 7]"),
        ("UINT2", 4, "outside the UINT2 range [0, 3]"),
    ],
)
def test_values_without_an_exact_code_are_refused(
    name: str, bad_value: float, shown: str, variable: bool
) -> None:
    row = dtype_of(name)
    dims = [[3], [1], [3]] if variable else [[3], [3], [3]]
    messages = [make_message(row, d, sample_codes(row, d[0], i), "raw") for i, d in enumerate(dims)]
    array = onnx_arrow.to_arrow(messages, exact=True)
    assert is_fixed(array.value.type) is not variable
    # element 1 of row 2
    bad = edited(array, dims[0][0] + dims[1][0] + 1, bad_value)
    where = "row 2: element 1"
    with pytest.raises(NotRepresentableError) as info:
        onnx_arrow.from_arrow(bad)
    assert isinstance(info.value, ValueError)
    assert shown in str(info.value)
    assert where in str(info.value)
    with pytest.raises(NotRepresentableError, match=where):
        onnx_arrow.to_pylist(bad)


def with_null(elements: pa.Array, index: int) -> pa.Array:
    """``elements`` with entry ``index`` null (``take`` of a null index works for every type)."""
    indices = [None if i == index else i for i in range(len(elements))]
    return elements.take(pa.array(indices, pa.int64()))


def with_null_element(value: pa.Array, index: int, part: bool) -> pa.Array:
    """A tensor array with flat element ``index`` null, or with ``part`` its imaginary part."""
    storage = value.storage
    fixed = is_fixed(value.type)
    lists = storage if fixed else storage.field("data")
    elements = lists.values
    if part:  # complex: a fixed_size_list of (real, imaginary)
        pairs = plain(elements)
        parts = with_null(pairs.values, 2 * index + 1)
        new_pairs = pa.FixedSizeListArray.from_arrays(parts, type=pairs.type)
        nulled = (
            pa.ExtensionArray.from_storage(elements.type, new_pairs)
            if isinstance(elements, pa.ExtensionArray)
            else new_pairs
        )
    else:
        nulled = with_null(elements, index)
    if fixed:
        new_lists = pa.FixedSizeListArray.from_arrays(nulled, type=storage.type)
        return pa.ExtensionArray.from_storage(value.type, new_lists)
    data = pa.ListArray.from_arrays(lists.offsets, nulled, type=lists.type)
    new_storage = pa.StructArray.from_arrays(
        [data, storage.field("shape")], fields=list(storage.type)
    )
    return ragged_from_storage(value.type, new_storage)


@pytest.mark.parametrize("variable", [False, True], ids=["fixed", "variable"])
@pytest.mark.parametrize(
    ("name", "part"),
    [("FLOAT", False), ("STRING", False), ("BFLOAT16", False), ("COMPLEX64", False),
     ("COMPLEX64", True)],
    ids=["FLOAT", "STRING", "BFLOAT16", "COMPLEX64", "COMPLEX64-part"],
)  # fmt: skip
def test_a_null_element_names_its_row(name: str, part: bool, variable: bool) -> None:
    row = dtype_of(name)
    storage = "typed" if row.arrow_kind is ArrowKind.BINARY else "raw"
    # the empty row 1 of the variable column starts where row 2 does
    dims = [[3], [0], [3]] if variable else [[3], [3], [3]]
    messages = [
        make_message(row, d, sample_codes(row, d[0], i), storage) for i, d in enumerate(dims)
    ]
    value = onnx_arrow.to_arrow(messages, exact=True).value
    assert is_fixed(value.type) is not variable
    # element 1 of row 2
    bad = with_null_element(value, dims[0][0] + dims[1][0] + 1, part)
    pattern = f"^row 2: {name} tensor element 1 is null"
    with pytest.raises(ArrowLayoutError, match=pattern) as info:
        onnx_arrow.from_arrow(bad)
    assert isinstance(info.value, ValueError)
    with pytest.raises(ArrowLayoutError, match=pattern):
        onnx_arrow.to_pylist(bad)


def test_a_null_element_under_a_null_row_is_allowed() -> None:
    value = onnx_arrow.to_arrow([floats(2), floats(2), floats(2)], exact=True).value
    bad = with_null_element(value, 3, part=False)  # element 1 of row 1
    taken = bad.take(pa.array([0, None, 2], pa.int64()))
    with pytest.raises(ArrowLayoutError, match=r"^row 1: FLOAT tensor element 1 is null"):
        onnx_arrow.from_arrow(bad)
    got = onnx_arrow.to_pylist(taken)
    assert got[1] is None
    assert [g.tolist() for g in (got[0], got[2])] == [[0.0, 0.0], [0.0, 0.0]]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns(), st.data())
def test_slices_takes_and_chunks_round_trip(
    messages: list[TensorProto], data: st.DataObject
) -> None:
    array = onnx_arrow.to_arrow(messages, exact=True)
    expected = [serialized(m) for m in messages]
    n = len(messages)
    start = data.draw(st.integers(0, n))
    stop = data.draw(st.integers(start, n))
    sliced = onnx_arrow.from_arrow(array.slice(start, stop - start))
    assert [m.SerializeToString() for m in sliced] == expected[start:stop]
    order = data.draw(st.lists(st.integers(0, n - 1), max_size=6))
    taken = onnx_arrow.from_arrow(array.take(pa.array(order, pa.int64())))
    assert [m.SerializeToString() for m in taken] == [expected[i] for i in order]
    chunked = pa.chunked_array([array.slice(0, start), array.slice(start)], type=array.type)
    assert [m.SerializeToString() for m in onnx_arrow.from_arrow(chunked)] == expected
    got = onnx_arrow.to_pylist(array.slice(start), strings="bytes")
    wanted = [numpy_helper_to_array(m) for m in messages[start:]]
    assert len(got) == len(wanted)
    if isinstance(got, np.ndarray):  # a fixed-shape column, stacked
        if wanted:
            assert_same_elements(got, np.stack(wanted))
    else:
        for one, want in zip(got, wanted, strict=True):
            assert_same_elements(one, want)

"""The public bridge: the canonical default, exact mode, declared types, numpy and Python."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pyarrow as pa
import pytest
from onnx import OptionalProto, TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow import (
    NotRepresentableError,
    UnsupportedTypeError,
    from_arrow,
    to_arrow,
    to_numpy,
    to_pylist,
)


def floats(*shape: int, name: str = "x") -> TensorProto:
    return numpy_helper.from_array(np.arange(np.prod(shape), dtype=np.float32).reshape(shape), name)


def tensor_type(elem_type: int, shape: list[int | str]) -> object:
    return helper.make_tensor_type_proto(elem_type, shape)


# --- the canonical default and exact mode -------------------------------------------------------


def test_the_default_is_the_canonical_value_column() -> None:
    arr = to_arrow([floats(2, 3), floats(2, 3)])
    assert arr.type == pa.fixed_shape_tensor(pa.float32(), [2, 3])
    # pyarrow's own view works on it: it is pyarrow's class, not a wrapper
    np.testing.assert_array_equal(arr.to_numpy_ndarray(), to_numpy(arr))


def test_exact_mode_wraps_the_same_column() -> None:
    messages = [floats(2, 3, name="a"), floats(2, 3, name="b")]
    exact = to_arrow(messages, exact=True)
    assert exact.type.extension_name == "onnx.message"
    assert exact.value.equals(to_arrow(messages))
    assert [m.SerializeToString() for m in from_arrow(exact)] == [
        m.SerializeToString() for m in messages
    ]


def test_the_default_keeps_values_and_drops_names() -> None:
    x = floats(2, 2, name="named")
    x.doc_string = "dropped"
    (back,) = from_arrow(to_arrow([x]))
    assert back == numpy_helper.from_array(numpy_helper.to_array(x))


@pytest.mark.parametrize(
    ("messages", "check"),
    [
        (
            [numpy_helper.from_list([np.ones(2, np.int64)], "s")],
            pa.types.is_list,
        ),
        (
            [numpy_helper.from_dict({1: np.float32(0.5)}, "m")],
            lambda t: pa.types.is_map(t) and t.key_type == pa.int64(),
        ),
        (
            [
                numpy_helper.from_optional(None, "o", dtype=OptionalProto.TENSOR),
                numpy_helper.from_optional(np.ones(2, np.float32), "o"),
            ],
            lambda t: t == pa.fixed_shape_tensor(pa.float32(), [2]),
        ),
    ],
    ids=["sequence", "map", "optional"],
)
def test_containers_default_to_lists_maps_and_nullable_columns(messages, check) -> None:
    arr = to_arrow(messages)
    assert check(arr.type)
    assert not isinstance(arr.type, onnx_arrow.MessageType)


def test_an_optional_column_with_nulls_reads_back_as_optionals() -> None:
    messages = [
        numpy_helper.from_optional(None, dtype=OptionalProto.TENSOR),
        numpy_helper.from_optional(np.ones(2, np.float32)),
    ]
    arr = to_arrow(messages)
    assert arr.null_count == 1
    back = from_arrow(arr)
    assert [type(m) for m in back] == [OptionalProto, OptionalProto]
    assert not back[0].HasField("tensor_value")


# --- the declared type ---------------------------------------------------------------------------


def test_a_column_without_nulls_declared_optional_reads_as_optionals() -> None:
    arr = to_arrow([floats(2)])
    declared = helper.make_optional_type_proto(tensor_type(TensorProto.FLOAT, [2]))
    (back,) = from_arrow(arr, declared)
    assert isinstance(back, OptionalProto)
    assert back.elem_type == OptionalProto.TENSOR
    assert numpy_helper.to_array(back.tensor_value).tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    ("declared", "where", "text"),
    [
        (
            helper.make_optional_type_proto(tensor_type(TensorProto.INT64, [2, 3])),
            "declared.optional_type.tensor_type.elem_type",
            "declared INT64, but the column holds FLOAT",
        ),
        (
            helper.make_sequence_type_proto(tensor_type(TensorProto.FLOAT, [2, 3])),
            "declared",
            "declared sequence_type, but the column holds tensor values",
        ),
        (
            helper.make_map_type_proto(TensorProto.INT64, tensor_type(TensorProto.FLOAT, [])),
            "declared",
            "declared map_type",
        ),
        (
            tensor_type(TensorProto.FLOAT, [2, 4]),
            "declared.tensor_type.shape",
            "declared shape [2, 4], but the column holds tensors of shape [2, 3]",
        ),
        (
            tensor_type(TensorProto.FLOAT, ["n"]),
            "declared.tensor_type.shape",
            "declared shape ['?']",
        ),
    ],
    ids=["dtype", "sequence", "map", "size", "rank"],
)
def test_a_declaration_that_does_not_fit_is_refused(declared, where: str, text: str) -> None:
    arr = to_arrow([floats(2, 3)])
    for column in (arr, to_arrow([floats(2, 3)], exact=True)):
        with pytest.raises(UnsupportedTypeError) as info:
            from_arrow(column, declared)
        assert str(info.value).startswith(f"{where}: ")
        assert text in str(info.value)


def test_nulls_need_an_optional_declaration() -> None:
    messages = [
        numpy_helper.from_optional(None, dtype=OptionalProto.TENSOR),
        numpy_helper.from_optional(np.ones(2, np.float32)),
    ]
    with pytest.raises(UnsupportedTypeError, match=r"absent values \(nulls\) but the declared"):
        from_arrow(to_arrow(messages), tensor_type(TensorProto.FLOAT, [2]))


def test_symbolic_and_unknown_dims_fit_any_size() -> None:
    arr = to_arrow([floats(2, 3)])
    for dims in (["n", 3], [2, "m"], ["n", "m"]):
        assert len(from_arrow(arr, tensor_type(TensorProto.FLOAT, dims))) == 1
    no_shape = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    assert len(from_arrow(arr, no_shape)) == 1


# --- numpy and Python values ---------------------------------------------------------------------


def test_to_numpy_stacks_rows_of_one_shape_in_any_layout() -> None:
    declared = tensor_type(TensorProto.FLOAT, ["n", 3])  # a variable-shape column
    arr = to_arrow([floats(2, 3), floats(2, 3)], declared)
    assert arr.type.extension_name == "onnx.variable_shape_tensor"
    assert to_numpy(arr).shape == (2, 2, 3)


def test_to_numpy_refuses_ragged_rows_null_rows_and_other_kinds() -> None:
    ragged = to_arrow([floats(2, 3), floats(1, 3)])
    with pytest.raises(NotRepresentableError, match=r"row 0 has shape \[2, 3\] and row 1 \[1, 3\]"):
        to_numpy(ragged)
    optional = to_arrow(
        [
            numpy_helper.from_optional(np.ones(2, np.float32)),
            numpy_helper.from_optional(None, dtype=OptionalProto.TENSOR),
        ]
    )
    with pytest.raises(NotRepresentableError, match=r"^row 1: the row is null"):
        to_numpy(optional)
    sequence = to_arrow([numpy_helper.from_list([np.ones(2, np.float32)])])
    with pytest.raises(NotRepresentableError, match="to_pylist"):
        to_numpy(sequence)


def test_to_numpy_of_an_empty_column() -> None:
    empty = to_arrow([floats(2, 3)]).slice(0, 0)
    got = to_numpy(empty)
    assert got.shape == (0, 2, 3)
    assert got.dtype == np.float32


def test_to_numpy_of_a_scalar_is_its_tensor() -> None:
    arr = to_arrow([floats(2, 3), floats(2, 3)])
    assert to_numpy(arr[1]).shape == (2, 3)


@pytest.mark.parametrize(
    "values",
    [
        np.array([0.5, -1.25], dtype=ml_dtypes.bfloat16),
        np.array([0.5, 448.0], dtype=ml_dtypes.float8_e4m3fn),
        np.array([-8, 7], dtype=ml_dtypes.int4),
        np.array([1 + 2j], dtype=np.complex64),
        np.array([True, False]),
    ],
    ids=["bfloat16", "float8", "int4", "complex64", "bool"],
)
def test_to_numpy_gives_the_onnx_dtype(values: np.ndarray) -> None:
    got = to_numpy(to_arrow([numpy_helper.from_array(values)]))
    assert got.dtype == values.dtype
    np.testing.assert_array_equal(got[0], values)


def test_strings_are_str_by_default_and_bytes_on_request() -> None:
    tensor = numpy_helper.from_array(np.array(["caf\u00e9", "", "x"]))
    arr = to_arrow([tensor])
    got = to_numpy(arr)
    assert got.tolist() == [["caf\u00e9", "", "x"]]
    assert [type(v) for v in got[0]] == [str, str, str]
    np.testing.assert_array_equal(got[0], numpy_helper.to_array(tensor))
    assert to_numpy(arr, strings="bytes").tolist() == [[b"caf\xc3\xa9", b"", b"x"]]
    assert to_pylist(arr)[0].tolist() == ["caf\u00e9", "", "x"]


def test_invalid_utf8_has_no_str_form_but_round_trips_exactly() -> None:
    tensor = TensorProto(name="t", dims=[2], data_type=TensorProto.STRING)
    tensor.string_data.extend([b"ok", b"\xff\xfe"])
    exact = to_arrow([tensor], exact=True)
    with pytest.raises(NotRepresentableError, match=r"STRING element 1 .* strings='bytes'"):
        to_numpy(exact)
    with pytest.raises(NotRepresentableError, match=r"^row 0: STRING element 1"):
        to_pylist(exact)
    assert to_pylist(exact, strings="bytes")[0].tolist() == [b"ok", b"\xff\xfe"]
    assert from_arrow(exact)[0].SerializeToString() == tensor.SerializeToString()


def test_string_map_keys_follow_strings() -> None:
    values = numpy_helper.from_list([np.array(1.0, np.float32)])
    mapping = helper.make_map("m", TensorProto.STRING, ["k\u00e9".encode()], values)
    arr = to_arrow([mapping])
    ((key, value),) = to_pylist(arr)[0]
    assert key == "k\u00e9"
    ((key, value),) = to_pylist(arr, strings="bytes")[0]
    assert key == "k\u00e9".encode()
    assert value.tolist() == 1.0


def test_strings_takes_str_or_bytes_only() -> None:
    arr = to_arrow([floats(1)])
    for convert in (to_numpy, to_pylist):
        with pytest.raises(ValueError, match="strings must be 'str' or 'bytes'"):
            convert(arr, strings="utf-8")  # type: ignore[arg-type]


def test_to_pylist_gives_one_value_per_row_for_every_kind() -> None:
    messages = [floats(2, 3), floats(1, 3)]
    rows = to_pylist(to_arrow(messages))
    assert [r.shape for r in rows] == [(2, 3), (1, 3)]
    seq = to_pylist(to_arrow([numpy_helper.from_list([np.ones(2, np.int64)])]))
    assert [t.tolist() for t in seq[0]] == [[1, 1]]


def test_any_iterable_of_messages_is_read_once_each_way() -> None:
    typed = TensorProto(dims=[2], data_type=TensorProto.FLOAT, float_data=[1.0, 2.0])
    rows = to_pylist(to_arrow(m for m in [floats(2), typed]))  # the wire path, from a generator
    assert [r.tolist() for r in rows] == [[0.0, 1.0], [1.0, 2.0]]


@pytest.mark.parametrize("value", [floats(2), 1, None])
def test_to_arrow_takes_a_sequence_and_says_so(value: object) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        to_arrow(value)  # type: ignore[arg-type]
    assert str(info.value).startswith("values: ")
    assert "pass a list of them, e.g. to_arrow([value])" in str(info.value)
    assert to_arrow([floats(2)]).type == to_arrow((floats(2),)).type  # a list, or any sequence


def test_to_arrow_of_a_bare_message_names_its_class() -> None:
    with pytest.raises(UnsupportedTypeError, match=r"^values: values is one TensorProto, not a"):
        to_arrow(floats(2))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "junk",
    [1, None, [1], numpy_helper.from_array(np.zeros(2)), pa.array([1]), pa.chunked_array([[1]])],
)
def test_from_arrow_scalar_takes_a_scalar_only(junk: object) -> None:
    with pytest.raises(
        onnx_arrow.UnsupportedTypeError, match=r"^scalar: expected a pyarrow Scalar"
    ):
        onnx_arrow.from_arrow_scalar(junk)


def test_base_dir_is_checked_once_even_without_external_data() -> None:
    t = numpy_helper.from_array(np.zeros(2, np.float32))
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match=r"^base_dir: expected a path"):
        onnx_arrow.to_arrow([t], base_dir=3)
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match=r"^base_dir: expected a path"):
        onnx_arrow.to_arrow_scalar(t, base_dir=[1])


@pytest.mark.parametrize("layout", ["fixed", "variable"])
def test_a_rank_numpy_cannot_hold_is_refused_located_and_kept_by_arrow(layout: str) -> None:
    from onnx_arrow.core.tensors import NUMPY_MAX_RANK

    deep = helper.make_tensor("x", TensorProto.FLOAT, [1] * 100, [1.0])
    values = [deep] if layout == "fixed" else [deep, helper.make_tensor("y", 1, [2], [1, 2])]
    arr = to_arrow(values)
    exact = to_arrow(values, exact=True)
    assert from_arrow(exact) == values  # Arrow and messages keep the tensor
    with pytest.raises(NotRepresentableError, match=f"at most {NUMPY_MAX_RANK}") as err:
        to_numpy(arr[:1])
    assert "rank 101" in str(err.value)
    assert err.value.where == "column"
    with pytest.raises(NotRepresentableError, match=r"^row 0: .*rank 100") as err:
        to_pylist(arr)
    # one rank below the limit: each row is an ndarray, the stack of them is not
    top = helper.make_tensor("x", TensorProto.FLOAT, [1] * NUMPY_MAX_RANK, [1.0])
    assert to_pylist(to_arrow([top]))[0].ndim == NUMPY_MAX_RANK
    with pytest.raises(NotRepresentableError, match=f"rank {NUMPY_MAX_RANK + 1}"):
        to_numpy(to_arrow([top]))


@pytest.mark.parametrize("layout", ["fixed", "variable"])
def test_an_empty_shape_numpy_cannot_hold_is_refused_located_and_kept_by_arrow(
    layout: str, tmp_path: Path
) -> None:
    """numpy multiplies the dims other than 0 with the item size even for an empty array:
    ``[2**31-1, 2**31-1, 0]`` of float32 is a legal, empty ``.pb`` that numpy refuses to
    shape ("array is too big"); it is a located error, the column keeps it."""
    huge = TensorProto(data_type=TensorProto.FLOAT, dims=[2**31 - 1, 2**31 - 1, 0])
    values = [huge] if layout == "fixed" else [huge, helper.make_tensor("y", 1, [0], [])]
    path = tmp_path / "input_0.pb"
    path.write_bytes(huge.SerializeToString())
    assert from_arrow(to_arrow(values, exact=True)) == values
    for column in (to_arrow(values)[:1], onnx_arrow.read_pb(path)):
        with pytest.raises(NotRepresentableError, match="more than numpy's largest") as err:
            to_numpy(column)
        assert err.value.where == "column"
        assert "[1, 2147483647, 2147483647, 0]" in str(err.value)
    with pytest.raises(NotRepresentableError, match=r"^row 0: the tensor has shape \[2147483647"):
        to_pylist(to_arrow(values))
    # as large as numpy holds: an empty array of that shape
    held = TensorProto(data_type=TensorProto.UINT8, dims=[2**31 - 1, 2**31 - 1, 0])
    assert to_numpy(to_arrow([held])).shape == (1, 2**31 - 1, 2**31 - 1, 0)


def test_absent_optionals_of_no_element_type_read_back_as_to_arrow_wrote_them() -> None:
    from onnx import SequenceProto

    absent = numpy_helper.from_optional(None)  # elem_type UNDEFINED
    seq = SequenceProto(elem_type=SequenceProto.OPTIONAL, optional_values=[absent])
    empty = SequenceProto(elem_type=SequenceProto.OPTIONAL)
    for values in ([seq], [seq, empty], [empty, seq], [absent, absent]):
        column = to_arrow(values)
        assert from_arrow(column) == values  # byte for byte, elem_type 0 written
        assert from_arrow(to_arrow(values, exact=True)) == values
    assert to_arrow([seq]).type == pa.list_(pa.null())
    assert to_pylist(to_arrow([seq, empty])) == [[None], []]
    assert to_pylist(to_arrow([absent])) == [None]

"""Sequences, maps, optionals and sparse tensors: hand-written vectors (the node suite has no
maps or sparse tensors), the three states of a nested optional, errors and the depth limit."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import (
    MapProto,
    OptionalProto,
    SequenceProto,
    SparseTensorProto,
    TensorProto,
    helper,
    numpy_helper,
)

import onnx_arrow
from onnx_arrow.core.containers import MAX_DEPTH
from onnx_arrow.errors import (
    InvalidMessageError,
    NotRepresentableError,
    OnnxArrowError,
    UnsupportedTypeError,
)


def round_trip(messages, type_proto=None):
    array = onnx_arrow.to_arrow(messages, type_proto, exact=True)
    back = onnx_arrow.from_arrow(array)
    assert [m.SerializeToString() for m in back] == [m.SerializeToString() for m in messages]
    # and through Parquet
    buf = io.BytesIO()
    pq.write_table(pa.table({"v": array}), buf)
    read = pq.read_table(io.BytesIO(buf.getvalue())).column("v")
    again = onnx_arrow.from_arrow(read)
    assert [m.SerializeToString() for m in again] == [m.SerializeToString() for m in messages]
    return array


def tensor(values, dtype=np.float32, name=""):
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def zipmap_row(keys, probs, string_keys=False):
    m = MapProto()
    m.key_type = TensorProto.STRING if string_keys else TensorProto.INT64
    if string_keys:
        m.string_keys.extend(keys)
    else:
        m.keys.extend(keys)
    m.values.elem_type = SequenceProto.TENSOR
    m.values.tensor_values.extend(tensor(p) for p in probs)
    return m


def sequence(items, kind, name=""):
    s = SequenceProto()
    if name:
        s.name = name
    s.elem_type = kind
    field = {
        SequenceProto.TENSOR: s.tensor_values,
        SequenceProto.SPARSE_TENSOR: s.sparse_tensor_values,
        SequenceProto.SEQUENCE: s.sequence_values,
        SequenceProto.MAP: s.map_values,
        SequenceProto.OPTIONAL: s.optional_values,
    }[kind]
    field.extend(items)
    return s


# --- sequences ----------------------------------------------------------------------------


def test_sequence_of_tensors_is_a_list_array():
    seqs = [
        sequence([tensor([[1, 2]]), tensor([[3, 4]])], SequenceProto.TENSOR, "s"),
        sequence([tensor([[5, 6]])], SequenceProto.TENSOR),
    ]
    array = round_trip(seqs)
    assert pa.types.is_list(array.value.type)
    assert array.value.type.value_type.extension_name == "arrow.fixed_shape_tensor"
    numpy = onnx_arrow.to_pylist(array, strings="bytes")
    np.testing.assert_array_equal(numpy[0][1], [[3, 4]])


def test_empty_sequence_keeps_its_element_type():
    empty = sequence([], SequenceProto.TENSOR, "empty")
    array = round_trip([empty])
    assert array.value.type == pa.list_(pa.null())
    typed = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, ["N"]))
    array = round_trip([empty], typed)
    assert array.value.type.value_type.extension_name == "onnx.variable_shape_tensor"
    undefined = SequenceProto()
    undefined.name = "u"
    round_trip([undefined])


def test_sequence_of_ragged_ranks_uses_variable_rank():
    seq = sequence([tensor(1.0), tensor([1, 2]), tensor([[1], [2]])], SequenceProto.TENSOR)
    array = round_trip([seq])
    assert array.value.type.value_type.extension_name == "onnx.variable_rank_tensor"


# --- maps -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key_type", "keys"),
    [
        (TensorProto.INT8, [-128, 127, 0]),
        (TensorProto.INT16, [-32768, 32767, 5]),
        (TensorProto.INT32, [-(2**31), 2**31 - 1, 7]),
        (TensorProto.INT64, [-(2**63), 2**63 - 1, 7]),
        (TensorProto.UINT8, [0, 255, 3]),
        (TensorProto.UINT16, [0, 65535, 3]),
        (TensorProto.UINT32, [0, 2**32 - 1, 3]),
        (TensorProto.UINT64, [0, 2**64 - 1, 3]),
    ],
)
def test_every_integer_key_type(key_type, keys):
    m = MapProto()
    m.name = "m"
    m.key_type = key_type
    # MapProto keys are int64: uint64 keys above 2**63 are stored as their two's complement
    m.keys.extend([k - 2**64 if k >= 2**63 else k for k in keys])
    m.values.elem_type = SequenceProto.TENSOR
    m.values.tensor_values.extend(tensor([i]) for i in range(len(keys)))
    array = round_trip([m])
    assert array.value.type.key_type == onnx_arrow.core.element_types.element_type(
        onnx_arrow.dtype_of(key_type)
    )
    assert [k for k, _ in onnx_arrow.to_pylist(array, strings="bytes")[0]] == keys


def test_string_keys_keep_invalid_utf8_order_and_duplicates():
    m = zipmap_row([b"b", b"\xff\xfe", b"b", b""], [0.1, 0.2, 0.3, 0.4], string_keys=True)
    array = round_trip([m])
    assert array.value.type.key_type == pa.binary()
    assert [k for k, _ in onnx_arrow.to_pylist(array, strings="bytes")[0]] == [
        b"b",
        b"\xff\xfe",
        b"b",
        b"",
    ]


def test_zipmap_output_sequence_of_maps():
    """ONNX-ML classifiers: seq(map(int64 or string, float)) per row."""
    for string_keys, keys in ((False, [0, 1, 2]), (True, [b"cat", b"dog", b"eel"])):
        rows = [
            sequence(
                [
                    zipmap_row(keys, [0.1, 0.7, 0.2], string_keys),
                    zipmap_row(keys, [0.5, 0.25, 0.25], string_keys),
                ],
                SequenceProto.MAP,
                "output_probability",
            ),
            sequence([zipmap_row(keys, [1.0, 0.0, 0.0], string_keys)], SequenceProto.MAP),
        ]
        key = TensorProto.STRING if string_keys else TensorProto.INT64
        declared = helper.make_sequence_type_proto(
            helper.make_map_type_proto(key, helper.make_tensor_type_proto(TensorProto.FLOAT, []))
        )
        array = round_trip(rows, declared)
        assert pa.types.is_map(array.value.type.value_type)
        round_trip(rows)


def test_map_of_sequences_and_maps():
    inner = zipmap_row([1, 2], [[1.0], [2.0]])
    outer = MapProto()
    outer.key_type = TensorProto.STRING
    outer.string_keys.extend([b"a", b"b"])
    outer.values.elem_type = SequenceProto.MAP
    outer.values.map_values.extend([inner, inner])
    round_trip([outer])
    seqs = MapProto()
    seqs.key_type = TensorProto.INT32
    seqs.keys.extend([3])
    seqs.values.elem_type = SequenceProto.SEQUENCE
    seqs.values.sequence_values.extend([sequence([tensor([1])], SequenceProto.TENSOR)])
    round_trip([seqs])


# --- optionals ------------------------------------------------------------------------------


def test_optional_tensor_is_a_nullable_column():
    present = numpy_helper.from_optional(np.array([1, 2], dtype=np.int64), "o")
    absent = numpy_helper.from_optional(None, "o", OptionalProto.TENSOR)
    undefined = OptionalProto()
    array = round_trip([present, absent, undefined])
    assert array.value.null_count == 2
    assert onnx_arrow.from_arrow(array)[1].elem_type == OptionalProto.TENSOR
    assert onnx_arrow.from_arrow(array)[2].elem_type == 0


def test_optional_of_optional_keeps_three_states():
    present = OptionalProto(elem_type=OptionalProto.OPTIONAL)
    present.optional_value.elem_type = OptionalProto.TENSOR
    present.optional_value.tensor_value.CopyFrom(tensor([1.0]))
    inner_absent = OptionalProto(elem_type=OptionalProto.OPTIONAL)
    inner_absent.optional_value.elem_type = OptionalProto.TENSOR
    outer_absent = OptionalProto(elem_type=OptionalProto.OPTIONAL)
    array = round_trip([present, inner_absent, outer_absent])
    value = array.value
    assert pa.types.is_struct(value.type)
    assert value.is_valid().to_pylist() == [True, True, False]
    assert value.field("value").is_valid().to_pylist() == [True, False, False]
    # the bare value array (no envelopes) still keeps the states apart
    back = onnx_arrow.from_arrow(value)
    assert [m.HasField("optional_value") for m in back] == [True, True, False]
    assert back[1].optional_value.HasField("tensor_value") is False


def test_sequence_of_optionals():
    seq = sequence(
        [
            numpy_helper.from_optional(np.array([1.0], np.float32)),
            numpy_helper.from_optional(None, "", OptionalProto.TENSOR),
        ],
        SequenceProto.OPTIONAL,
    )
    array = round_trip([seq])
    assert array.value.flatten().null_count == 1


# --- sparse tensors -------------------------------------------------------------------------


def sparse(values, indices, dims, dtype=np.float32):
    s = SparseTensorProto()
    s.values.CopyFrom(tensor(values, dtype, "v"))
    s.indices.CopyFrom(tensor(indices, np.int64, "i"))
    s.dims.extend(dims)
    return s


def test_sparse_linear_and_coordinate_indices():
    linear = sparse([1.5, -2.0], [1, 5], [2, 3])
    coords = sparse([7.0], [[1, 2]], [2, 3])
    empty = sparse([], np.zeros((0, 2)), [4, 4])
    array = round_trip([linear, coords, empty])
    assert array.value.type.extension_name == "onnx.sparse_tensor"
    rows = onnx_arrow.to_pylist(array, strings="bytes")
    assert rows[0]["indices"].shape == (2,)
    assert rows[1]["indices"].shape == (1, 2)
    assert rows[2]["dims"] == (4, 4)
    declared = helper.make_sparse_tensor_type_proto(TensorProto.FLOAT, [2, 3])
    round_trip([linear, coords], declared)
    in_sequence = sequence([linear, coords], SequenceProto.SPARSE_TENSOR)
    round_trip([in_sequence])


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda s: s.indices.CopyFrom(tensor([[1, 2, 3]], np.int64)), "indices have dims"),
        (lambda s: s.indices.CopyFrom(tensor([1, 2], np.int32)), "INT64"),
        (lambda s: s.values.CopyFrom(tensor([[1.0, 2.0]])), "1-D"),
        (lambda s: s.ClearField("values"), "values is not set"),
    ],
)
def test_sparse_errors(build, match):
    s = sparse([1.0, 2.0], [1, 5], [2, 3])
    build(s)
    with pytest.raises(InvalidMessageError, match=match):
        onnx_arrow.to_arrow([s], exact=True)


# --- deep nesting ----------------------------------------------------------------------------


def test_five_levels_deep_sequence_of_maps_of_sequences_of_optionals_of_tensors():
    opt = numpy_helper.from_optional(np.arange(4, dtype=np.int8).reshape(2, 2))
    absent = numpy_helper.from_optional(None, "", OptionalProto.TENSOR)
    m = MapProto(key_type=TensorProto.STRING)
    m.string_keys.extend([b"k", b"\x80"])
    m.values.elem_type = SequenceProto.SEQUENCE
    m.values.sequence_values.extend(
        [sequence([opt, absent], SequenceProto.OPTIONAL), sequence([], SequenceProto.OPTIONAL)]
    )
    outer = sequence([sequence([m], SequenceProto.MAP)], SequenceProto.SEQUENCE, "deep")
    array = round_trip([outer, outer])
    assert array.type.kind == [
        "sequence",
        ["sequence", ["map", "STRING", ["sequence", ["optional", ["tensor"]]]]],
    ]


def nested_optionals(depth):
    m = OptionalProto(elem_type=OptionalProto.TENSOR)
    m.tensor_value.CopyFrom(tensor([1.0]))
    for _ in range(depth - 1):
        outer = OptionalProto(elem_type=OptionalProto.OPTIONAL)
        outer.optional_value.CopyFrom(m)
        m = outer
    return m


def test_nesting_up_to_the_protobuf_limit_round_trips():
    # MAX_DEPTH optionals around one tensor: the tensor sits MAX_DEPTH levels below the root
    m = nested_optionals(MAX_DEPTH)
    back = onnx_arrow.from_arrow(onnx_arrow.to_arrow([m], exact=True))[0]
    assert back.SerializeToString() == m.SerializeToString()


def test_nesting_deeper_than_protobuf_parses_is_refused():
    m = nested_optionals(MAX_DEPTH + 1)
    # protobuf itself writes it but cannot read it back
    with pytest.raises(Exception, match="Exceeded"):
        OptionalProto.FromString(m.SerializeToString())
    with pytest.raises(NotRepresentableError, match="protobuf parses at most"):
        onnx_arrow.to_arrow([m], exact=True)


# --- errors ---------------------------------------------------------------------------------


def test_elem_type_disagreeing_with_the_data_field():
    s = sequence([tensor([1.0])], SequenceProto.TENSOR)
    s.elem_type = SequenceProto.MAP
    with pytest.raises(InvalidMessageError, match=r"row 0: elem_type.*tensor_values"):
        onnx_arrow.to_arrow([s], exact=True)


def test_data_in_two_fields():
    s = sequence([tensor([1.0])], SequenceProto.TENSOR)
    s.ClearField("elem_type")
    s.sequence_values.add()
    with pytest.raises(InvalidMessageError, match="both tensor_values and sequence_values"):
        onnx_arrow.to_arrow([s], exact=True)


def test_map_key_type_not_allowed():
    m = zipmap_row([1], [0.5])
    m.key_type = TensorProto.FLOAT
    with pytest.raises(InvalidMessageError, match=r"row 0: key_type: key_type 1 is not a map key"):
        onnx_arrow.to_arrow([m], exact=True)


def test_map_keys_and_values_of_different_lengths():
    m = zipmap_row([1, 2], [0.5])
    with pytest.raises(InvalidMessageError, match="2 keys but 1 values"):
        onnx_arrow.to_arrow([m], exact=True)


def test_map_key_out_of_range():
    m = zipmap_row([300], [0.5])
    m.key_type = TensorProto.INT8
    with pytest.raises(InvalidMessageError, match=r"keys\[0\] is 300, outside the INT8 range"):
        onnx_arrow.to_arrow([m], exact=True)


def test_map_value_of_a_kind_maps_do_not_hold():
    m = MapProto(key_type=TensorProto.INT64)
    m.keys.extend([1])
    m.values.elem_type = SequenceProto.OPTIONAL
    m.values.optional_values.extend([numpy_helper.from_optional(None, "", 1)])
    with pytest.raises(InvalidMessageError, match="maps hold tensor"):
        onnx_arrow.to_arrow([m], exact=True)


def test_nested_error_names_the_path():
    bad = tensor([1.0, 2.0])
    bad.raw_data = b"\x00" * 3
    s = sequence([tensor([1.0]), bad], SequenceProto.TENSOR)
    with pytest.raises(InvalidMessageError, match=r"row 1: tensor_values\[1\]\.raw_data"):
        onnx_arrow.to_arrow([sequence([], SequenceProto.TENSOR), s], exact=True)


def test_rows_of_different_kinds_or_shapes_disagreeing_with_the_declared_type():
    with pytest.raises(UnsupportedTypeError, match="row 1"):
        onnx_arrow.to_arrow([tensor([1.0]), sequence([], SequenceProto.TENSOR)], exact=True)
    declared = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    )
    with pytest.raises(OnnxArrowError, match="differs from the column's fixed shape"):
        onnx_arrow.to_arrow(
            [sequence([tensor([1.0, 2.0, 3.0])], SequenceProto.TENSOR)], declared, exact=True
        )
    with pytest.raises(UnsupportedTypeError, match="declared type is sequence"):
        onnx_arrow.to_arrow([tensor([1.0])], declared, exact=True)


def test_inputs_are_not_modified():
    s = sequence([tensor([1.0], name="t")], SequenceProto.TENSOR, "s")
    before = s.SerializeToString()
    onnx_arrow.from_arrow(onnx_arrow.to_arrow([s], exact=True))
    assert s.SerializeToString() == before


# --- types ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "type_proto",
    [
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_type_proto(TensorProto.BFLOAT16, [None, 3]),
        helper.make_tensor_type_proto(TensorProto.STRING, None),
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, [4])),
        helper.make_map_type_proto(
            TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.FLOAT, [])
        ),
        helper.make_optional_type_proto(
            helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.BOOL, [1]))
        ),
        helper.make_sparse_tensor_type_proto(TensorProto.FLOAT16, None),
    ],
)
def test_type_proto_to_arrow_and_back(type_proto):
    from onnx_arrow.core.types import kind_of_type, onnx_type

    arrow = onnx_arrow.arrow_type(type_proto)
    back = onnx_type(arrow, kind_of_type(type_proto))
    if type_proto.HasField("sparse_tensor_type"):
        assert back.sparse_tensor_type.elem_type == type_proto.sparse_tensor_type.elem_type
    else:
        assert back == type_proto


def test_declared_type_decides_the_column_whatever_the_rows_hold():
    declared = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", 2])
    )
    empty = onnx_arrow.to_arrow([sequence([], SequenceProto.TENSOR)], declared, exact=True)
    full = onnx_arrow.to_arrow(
        [sequence([tensor([[1, 2]])], SequenceProto.TENSOR)], declared, exact=True
    )
    assert empty.value.type == full.value.type == onnx_arrow.arrow_type(declared)
    assert onnx_arrow.to_arrow([], declared, exact=True).value.type == onnx_arrow.arrow_type(
        declared
    )


def test_container_messages_number_their_shared_fields_alike() -> None:
    # one table of field numbers serves SequenceProto, OptionalProto and MapProto
    def number(message: type, name: str) -> int:
        return int(message.DESCRIPTOR.fields_by_name[name].number)

    for kind in ("tensor", "sparse_tensor", "sequence", "map", "optional"):
        assert number(SequenceProto, f"{kind}_values") == number(OptionalProto, f"{kind}_value")
        assert getattr(SequenceProto, kind.upper()) == getattr(OptionalProto, kind.upper())
    for message in (SequenceProto, OptionalProto, MapProto):
        assert number(message, "name") == 1
    for message, name in ((SequenceProto, "elem_type"), (OptionalProto, "elem_type")):
        assert number(message, name) == number(MapProto, "key_type")


# --- errors name the caller's row -----------------------------------------------------------


def optional(value: TensorProto | None) -> OptionalProto:
    o = OptionalProto(elem_type=OptionalProto.TENSOR)
    if value is not None:
        o.tensor_value.CopyFrom(value)
    return o


def test_an_optional_that_does_not_fit_is_named_by_its_row_not_among_the_present():
    declared = helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    )
    rows = [optional(None), optional(None), optional(tensor([1, 2], np.int64))]
    with pytest.raises(UnsupportedTypeError, match=r"row 2: tensor_value: tensor is INT64"):
        onnx_arrow.to_arrow(rows, declared, exact=True)
    rows[2] = optional(tensor([1.0, 2.0, 3.0]))
    with pytest.raises(NotRepresentableError, match=r"row 2: tensor_value: shape \[3\]"):
        onnx_arrow.to_arrow(rows, declared, exact=True)


def test_a_sequence_element_that_does_not_fit_is_named_by_row_and_field():
    declared = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    )
    good = sequence([tensor([1.0]), tensor([2.0]), tensor([3.0])], SequenceProto.TENSOR)
    bad = sequence([tensor([1], np.int64)], SequenceProto.TENSOR)
    with pytest.raises(UnsupportedTypeError, match=r"row 1: tensor_values\[0\]: tensor is INT64"):
        onnx_arrow.to_arrow([good, bad], declared, exact=True)


def test_mixed_data_types_in_sequences_name_both_rows():
    first = sequence([tensor([1.0]), tensor([2.0]), tensor([3.0])], SequenceProto.TENSOR)
    other = sequence([tensor([1.0]), tensor([1], np.int64)], SequenceProto.TENSOR)
    with pytest.raises(UnsupportedTypeError) as info:
        onnx_arrow.to_arrow([first, other], exact=True)
    message = str(info.value)
    assert "row 1: tensor_values[1]: the tensor is INT64" in message
    assert "but row 0: tensor_values[0] is FLOAT" in message
    assert "element" not in message


def test_mixed_data_types_in_map_values_name_the_row():
    other = zipmap_row([1], [[0.5]])
    other.values.tensor_values.add().CopyFrom(tensor([1], np.int64))
    other.keys.append(2)
    with pytest.raises(
        UnsupportedTypeError, match=r"row 1: values\.tensor_values\[1\]: the tensor"
    ):
        onnx_arrow.to_arrow([zipmap_row([1], [[0.5]]), other], exact=True)


def test_a_sparse_tensor_that_does_not_fit_names_its_row_and_part():
    declared = helper.make_sparse_tensor_type_proto(TensorProto.FLOAT, [2, 3])
    rows = [sparse([1.0], [1], [2, 3]), sparse([1], [1], [2, 3], np.int64)]
    with pytest.raises(UnsupportedTypeError, match=r"row 1: values: tensor is INT64"):
        onnx_arrow.to_arrow(rows, declared, exact=True)


def test_the_first_of_many_rows_that_do_not_fit_is_named():
    declared = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [1])
    )
    rows = [sequence([tensor([1.0])] * 3, SequenceProto.TENSOR) for _ in range(50)]
    for at in (17, 30):
        rows[at] = sequence([tensor([1.0]), tensor([1.0, 2.0])], SequenceProto.TENSOR)
    with pytest.raises(NotRepresentableError, match=r"row 17: tensor_values\[1\]: shape \[2\]"):
        onnx_arrow.to_arrow(rows, declared, exact=True)


def test_build_array_names_the_row_of_a_node_of_the_wrong_kind():
    from onnx_arrow.core.arrays import build_array
    from onnx_arrow.core.containers import decode_value
    from onnx_arrow.core.nodes import OptionalValue

    node, _, kind = decode_value(tensor([1.0, 2.0]).SerializeToString(), "tensor", where="row 0")
    optional_kind = type(kind)("optional", kind)
    arrow_type = onnx_arrow.arrow_type(
        helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    )
    # a bare tensor where an optional belongs is an error, never an absent value
    with pytest.raises(UnsupportedTypeError, match=r"^row 1: expected an optional, got Tensor"):
        build_array([OptionalValue(node), node], optional_kind, arrow_type)
    built = build_array([OptionalValue(node), None, OptionalValue(None)], optional_kind, arrow_type)
    assert built.is_valid().to_pylist() == [True, False, False]


# --- the shared pieces ----------------------------------------------------------------------


def test_map_key_types_are_the_integer_types_and_string():
    from onnx_arrow.core.kinds import MAP_KEY_TYPES

    integers = {f"{sign}INT{bits}" for sign in ("", "U") for bits in (8, 16, 32, 64)}
    assert integers | {"STRING"} == MAP_KEY_TYPES


def test_a_message_and_a_declared_type_refuse_the_same_map_keys_with_their_own_errors():
    m = zipmap_row([1], [0.5])
    m.key_type = TensorProto.DOUBLE
    with pytest.raises(InvalidMessageError, match=r"key_type 11 is not a map key type \(DOUBLE\)"):
        onnx_arrow.to_arrow([m], exact=True)
    declared = helper.make_map_type_proto(
        TensorProto.DOUBLE, helper.make_tensor_type_proto(TensorProto.FLOAT, [])
    )
    with pytest.raises(UnsupportedTypeError, match=r"map_type\.key_type: key_type 11 is not"):
        onnx_arrow.arrow_type(declared)
    declared.map_type.key_type = 999
    with pytest.raises(UnsupportedTypeError, match=r"key_type 999 is not a map key type; ONNX"):
        onnx_arrow.arrow_type(declared)


def test_a_tensor_decodes_alike_from_bytes_and_from_a_view_into_a_larger_buffer():
    from onnx_arrow.core.containers import decode_value

    data = tensor([[1.0, 2.0]], name="t").SerializeToString()
    view = memoryview(b"\x00" * 7 + data + b"\x00")[7:-1]
    for zero_copy in (False, True):
        a, env_a, _ = decode_value(data, "tensor", where="row 0", zero_copy=zero_copy)
        b, env_b, _ = decode_value(view, "tensor", where="row 0", zero_copy=zero_copy)
        assert env_a == env_b
        assert np.array_equal(a.to_numpy(), b.to_numpy())  # type: ignore[union-attr]


def test_encoding_refuses_a_kind_deeper_than_protobuf_parses():
    from onnx_arrow.core.containers import encode_value
    from onnx_arrow.core.kinds import Kind
    from onnx_arrow.core.nodes import SequenceValue

    kind = Kind("tensor")
    for _ in range(MAX_DEPTH + 1):
        kind = Kind("sequence", kind)
    with pytest.raises(NotRepresentableError, match=f"nests {MAX_DEPTH + 1} levels"):
        encode_value(SequenceValue([]), kind, None, where="row 0")
    shallow = Kind("sequence", Kind("sequence", Kind("tensor")))
    assert encode_value(SequenceValue([SequenceValue([])]), shallow, None, where="row 0")


def test_to_arrow_takes_any_sequence_of_messages_and_reads_it_whole():
    rows = (tensor([1.0]), tensor([2.0]))
    array = onnx_arrow.to_arrow(rows, exact=True)
    assert [m.SerializeToString() for m in onnx_arrow.from_arrow(array)] == [
        m.SerializeToString() for m in rows
    ]

"""Any Arrow in: pyarrow objects, the PyCapsule interface, other engines' layouts, bad data."""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pyarrow as pa
import pytest
from fresh_python import fresh_python
from onnx import numpy_helper

import onnx_arrow
from onnx_arrow import ArrowLayoutError, UnsupportedTypeError
from onnx_arrow.core.arrow_input import as_array


def tensors(n: int = 3) -> list:
    return [numpy_helper.from_array(np.full((2, 2), i, np.int32), f"t{i}") for i in range(n)]


def strings() -> list:
    return [numpy_helper.from_array(np.array(["a", "caf\u00e9"]), "s") for _ in range(2)]


class CArray:
    """The least an Arrow producer offers: ``__arrow_c_array__`` (as nanoarrow does)."""

    def __init__(self, array: pa.Array) -> None:
        self._array = array

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        return self._array.__arrow_c_array__(requested_schema)


class CStream:
    """A producer of ``__arrow_c_stream__`` only."""

    def __init__(self, data: pa.ChunkedArray) -> None:
        self._data = data

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self._data.__arrow_c_stream__(requested_schema)


@pytest.mark.parametrize("exact", [False, True], ids=["canonical", "exact"])
def test_pyarrow_objects_and_capsules_read_alike(exact: bool) -> None:
    messages = tensors()
    arr = onnx_arrow.to_arrow(messages, exact=exact)
    expected = onnx_arrow.from_arrow(arr)
    chunked = pa.chunked_array([arr.slice(0, 1), arr.slice(1)])
    for data in (
        chunked,
        pa.table({"t": arr}),
        pa.record_batch({"t": arr}),
        CArray(arr),
        CStream(chunked),
    ):
        assert onnx_arrow.from_arrow(data) == expected, type(data)
        np.testing.assert_array_equal(onnx_arrow.to_numpy(data), onnx_arrow.to_numpy(arr))


@pytest.mark.parametrize("exact", [False, True], ids=["canonical", "exact"])
@pytest.mark.parametrize("make", [tensors, strings], ids=["int32", "string"])
def test_polars_series_and_frames_go_in_as_they_are(make, exact: bool) -> None:
    pl = pytest.importorskip("polars")
    messages = make()
    arr = onnx_arrow.to_arrow(messages, exact=exact)
    frame = pl.from_arrow(pa.table({"t": arr}))
    expected = onnx_arrow.from_arrow(arr)
    assert onnx_arrow.from_arrow(frame["t"]) == expected  # a Series: __arrow_c_stream__
    assert onnx_arrow.from_arrow(frame) == expected  # a one-column DataFrame
    # the C stream of a frame, as pa.table takes it: Polars' binary_view comes back
    table = pa.table(frame)
    assert onnx_arrow.from_arrow(table.column("t")) == expected
    if exact:
        assert messages == expected


def test_a_polars_stream_with_binary_view_envelopes_stays_readable() -> None:
    """pa.table(polars_frame) deserializes onnx.message over a binary_view envelope."""
    pl = pytest.importorskip("polars")
    exact = onnx_arrow.to_arrow(tensors(), exact=True)
    table = pa.table(pl.from_arrow(pa.table({"t": exact, "n": pa.array([1, 2, 3])})))
    envelope = table.schema.field("t").type.storage_type.field("envelope").type
    assert envelope == pa.binary_view()
    assert table.column("n").to_pylist() == [1, 2, 3]
    assert onnx_arrow.from_arrow(table.column("t")) == tensors()


def test_a_duckdb_relation_of_one_column_goes_in() -> None:
    duckdb = pytest.importorskip("duckdb")
    source = pa.table({"t": onnx_arrow.to_arrow(strings())})  # noqa: F841 - read by name
    relation = duckdb.sql("select t from source")
    # DuckDB sees an extension column as its storage only: a fixed_size_list of strings
    with pytest.raises(UnsupportedTypeError, match="is not the Arrow form of an ONNX value"):
        onnx_arrow.from_arrow(relation)


def test_a_table_of_several_columns_and_other_objects_are_refused() -> None:
    arr = onnx_arrow.to_arrow(tensors())
    with pytest.raises(UnsupportedTypeError, match=r"a table of 2 columns \(a, b\)"):
        onnx_arrow.from_arrow(pa.table({"a": arr, "b": arr}))
    with pytest.raises(UnsupportedTypeError, match="__arrow_c_array__") as info:
        onnx_arrow.from_arrow([1, 2, 3])
    assert "builtins.list" in str(info.value)


def _bad_offsets() -> pa.Array:
    """A binary array whose offsets run backwards: reading it unchecked reads wild memory."""
    offsets = pa.py_buffer(np.array([0, 1000, 2], dtype=np.int32).tobytes())
    data = pa.py_buffer(b"ab")
    return pa.Array.from_buffers(pa.binary(), 2, [None, offsets, data])


def test_malformed_arrays_are_refused_before_a_buffer_is_read() -> None:
    bad = _bad_offsets()
    fixed = pa.FixedSizeListArray.from_arrays(bad, 1)
    column = pa.ExtensionArray.from_storage(pa.fixed_shape_tensor(pa.binary(), [1]), fixed)
    for data in (column, pa.chunked_array([column]), CArray(column)):
        for convert in (onnx_arrow.from_arrow, onnx_arrow.to_numpy, onnx_arrow.to_pylist):
            with pytest.raises(ArrowLayoutError, match="malformed and cannot be read safely"):
                convert(data)


def test_malformed_envelopes_from_an_ipc_file_are_refused(tmp_path) -> None:
    exact = onnx_arrow.to_arrow(tensors(2), exact=True)
    envelope = _bad_offsets()
    storage = pa.StructArray.from_arrays(
        [exact.storage.field("value"), envelope], names=["value", "envelope"]
    )
    forged = pa.ExtensionArray.from_storage(exact.type, storage)
    path = tmp_path / "forged.arrow"
    with pa.ipc.new_file(path, pa.schema([("t", forged.type)])) as writer:
        writer.write_batch(pa.record_batch({"t": forged}))
    column = pa.ipc.open_file(path).read_all().column("t")
    with pytest.raises(ArrowLayoutError, match="malformed"):
        onnx_arrow.from_arrow(column)


def test_views_are_read_as_the_layouts_they_stand_for() -> None:
    arr = onnx_arrow.to_arrow(strings())
    viewed = pa.ExtensionArray.from_storage(
        pa.fixed_shape_tensor(pa.binary_view(), [2]),
        pa.FixedSizeListArray.from_arrays(arr.storage.values.cast(pa.binary_view()), 2),
    )
    assert as_array(viewed).type == arr.type
    assert onnx_arrow.from_arrow(viewed) == onnx_arrow.from_arrow(arr)
    utf8 = pa.ExtensionArray.from_storage(
        pa.fixed_shape_tensor(pa.string_view(), [2]),
        pa.FixedSizeListArray.from_arrays(arr.storage.values.cast(pa.string_view()), 2),
    )
    assert onnx_arrow.to_numpy(utf8).tolist() == [["a", "caf\u00e9"]] * 2


def test_importing_onnx_arrow_never_makes_a_file_unreadable(tmp_path) -> None:
    """A file whose onnx.message column is damaged reads in a process that imported
    onnx_arrow; only that column is refused, when converted."""
    exact = onnx_arrow.to_arrow(tensors(2), exact=True)
    field = pa.field(
        "t",
        pa.int32(),
        metadata={
            "ARROW:extension:name": "onnx.message",
            "ARROW:extension:metadata": exact.type.__arrow_ext_serialize__(),
        },
    )
    table = pa.table([pa.array([1, 2], pa.int32()), pa.array([3, 4])], names=["t", "n"])
    table = table.cast(pa.schema([field, pa.field("n", pa.int64())]))
    path = tmp_path / "damaged.arrow"
    with pa.ipc.new_file(path, table.schema) as writer:
        writer.write_table(table)
    code = textwrap.dedent(
        f"""
        import pyarrow as pa
        import onnx_arrow
        table = pa.ipc.open_file({str(path)!r}).read_all()
        assert table.column("n").to_pylist() == [3, 4]
        try:
            onnx_arrow.from_arrow(table.column("t"))
        except onnx_arrow.ArrowLayoutError as exc:
            print(exc)
        """
    )
    done = fresh_python(code)
    assert done.stdout.startswith("onnx.message: storage must be struct<value: T, envelope")


def test_an_empty_chunked_column_of_any_type_is_read() -> None:
    for exact in (False, True):
        arr = onnx_arrow.to_arrow(tensors(), exact=exact)
        empty = pa.chunked_array([], arr.type)
        assert onnx_arrow.from_arrow(empty) == []
        assert onnx_arrow.to_pylist(empty) == []


def test_a_capsule_pyarrow_cannot_import_is_a_located_error_that_says_why() -> None:
    pl = pytest.importorskip("polars")
    from onnx_arrow.core import tensor_types as tt

    storage = pa.StructArray.from_arrays(
        [pa.array([[1.0, 2.0]], pa.list_(pa.float32())), pa.array([[2]], pa.list_(pa.int32(), 1))],
        names=["data", "shape"],
    )
    canonical = tt.ragged_from_storage(tt.canonical_variable_shape_tensor(pa.float32(), 1), storage)
    series = pl.from_arrow(pa.table({"c": canonical}))["c"]  # large_list storage now
    with pytest.raises(ArrowLayoutError, match="takes list storage only"):
        onnx_arrow.from_arrow(series)

    class Broken:
        def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
            raise pa.ArrowInvalid("no schema")

    with pytest.raises(ArrowLayoutError, match=r"\(no schema\); check what produced it$"):
        onnx_arrow.from_arrow(Broken())


def _bad_shapes() -> pa.Array:
    """A variable-shape tensor column whose row 1 claims 3 elements but holds 2."""
    from onnx_arrow.core import tensor_types as tt

    storage = pa.StructArray.from_arrays(
        [
            pa.array([[1.0, 2.0], [3.0, 4.0], [5.0]], pa.list_(pa.float32())),
            pa.array([[2], [3], [1]], pa.list_(pa.int32(), 1)),
        ],
        names=["data", "shape"],
    )
    return tt.ragged_from_storage(tt.variable_shape_tensor(pa.float32(), 1), storage)


def test_views_inside_a_dictionary_are_converted() -> None:
    viewed = pa.array([b"xyz", b"a" * 20, b"xyz"], pa.binary_view()).dictionary_encode()
    got = as_array(viewed)
    assert got.type == pa.dictionary(pa.int32(), pa.binary())
    assert got.to_pylist() == [b"xyz", b"a" * 20, b"xyz"]
    # not an ONNX value: refused, located, never a crash
    with pytest.raises(UnsupportedTypeError, match="is not the Arrow form of an ONNX value"):
        onnx_arrow.from_arrow(viewed)


def test_views_inside_run_end_encoding_are_refused_located() -> None:
    viewed = pa.RunEndEncodedArray.from_arrays(
        pa.array([2, 3], pa.int32()), pa.array([b"x", b"y"], pa.binary_view())
    )
    with pytest.raises(UnsupportedTypeError, match=r"^col: the column is run_end_encoded.*"):
        as_array(viewed, where="col")
    with pytest.raises(UnsupportedTypeError, match="decode its run-end or dictionary encoding"):
        onnx_arrow.from_arrow(viewed)


def test_values_inside_a_dictionary_or_run_end_encoding_are_checked_to_the_row() -> None:
    bad = _bad_shapes()
    with pytest.raises(ArrowLayoutError, match=r"^col: row 1: .*needs 3 elements, data holds 2"):
        as_array(bad, where="col")
    indices = pa.array([0, 0, 2, 1], pa.int32())
    in_dictionary = pa.DictionaryArray.from_arrays(indices, bad)
    with pytest.raises(ArrowLayoutError, match=r"^col: row 3: .*needs 3 elements"):
        as_array(in_dictionary, where="col")
    runs = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3, 5], pa.int32()), bad)
    with pytest.raises(ArrowLayoutError, match=r"^col: row 2: .*needs 3 elements"):
        as_array(runs, where="col")
    assert as_array(runs.slice(0, 2)).to_pylist() == runs.slice(0, 2).to_pylist()
    assert len(as_array(in_dictionary.slice(0, 3))) == 3


def test_values_inside_unions_are_checked_to_the_row() -> None:
    bad = _bad_shapes()
    ints = pa.array([0, 0, 0], pa.int8())
    sparse = pa.UnionArray.from_sparse(pa.array([1, 0, 0], pa.int8()), [bad, ints], ["t", "i"])
    with pytest.raises(ArrowLayoutError, match=r"^row 1: .*needs 3 elements"):
        as_array(sparse)
    # row 0 selects the int, so the sparse union's row 1 alone is at fault
    dense = pa.UnionArray.from_dense(
        pa.array([1, 1, 0], pa.int8()), pa.array([0, 1, 1], pa.int32()), [bad, ints], ["t", "i"]
    )
    with pytest.raises(ArrowLayoutError, match=r"^row 2: .*needs 3 elements"):
        as_array(dense)
    assert len(as_array(dense.slice(0, 2))) == 2


@pytest.mark.parametrize("make", [pa.list_view, pa.large_list_view])
def test_list_views_are_read_as_lists_of_the_same_values(make) -> None:
    """pyarrow 26 casts list views to lists with a wrong offsets buffer: they are rebuilt
    from their sizes, at any depth, out of order and sliced too."""
    views = pa.array([[10], None, [], [11, 12]], make(pa.int64()))
    out_of_order = pa.ListViewArray.from_arrays(
        pa.array([2, 0, 1], pa.int32()), pa.array([1, 1, 0], pa.int32()), pa.array([10, 11, 12])
    )
    nested = pa.array([[[b"a"]], None, [[b"b", b"c"], None]], pa.list_(make(pa.binary_view())))
    for array in (
        views,
        views.slice(1),
        out_of_order,
        pa.StructArray.from_arrays([views], ["a"]).slice(1),
        nested,
        nested.slice(1),
        pa.chunked_array([views, views.slice(2)]),
    ):
        got = as_array(array, where="col")
        got.validate(full=True)
        assert got.to_pylist() == array.to_pylist()
        assert "view" not in str(got.type)


def test_a_sequence_column_of_list_views_converts() -> None:
    seq = onnx_arrow.to_arrow(
        [numpy_helper.from_list([np.zeros(2, np.int64), np.ones(3, np.int64)], "s")]
    )
    viewed = pa.ListViewArray.from_arrays(
        pa.array([0], pa.int32()), pa.array([2], pa.int32()), seq.values
    )
    assert onnx_arrow.from_arrow(viewed) == onnx_arrow.from_arrow(seq)


def test_message_kinds_and_unreadable_types_inside_a_dictionary_are_refused() -> None:
    from onnx_arrow.core.message_type import MessageType

    storage = pa.StructArray.from_arrays(
        [pa.array([[1]], pa.list_(pa.int64())), pa.array([b""], pa.binary())],
        names=["value", "envelope"],
    )
    wrong = pa.ExtensionArray.from_storage(MessageType(storage.type[0].type, ["map"]), storage)
    in_dictionary = pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()), wrong)
    with pytest.raises(ArrowLayoutError, match=r"^col: the onnx.message metadata says map"):
        as_array(in_dictionary, where="col")
    unreadable = MessageType.__arrow_ext_deserialize__(pa.int32(), b'{"version": 1}')
    assert unreadable.unreadable is not None
    column = pa.ExtensionArray.from_storage(unreadable, pa.array([1], pa.int32()))
    in_dictionary = pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()), column)
    with pytest.raises(ArrowLayoutError, match=r"^col: onnx.message: metadata has no 'kind'"):
        as_array(in_dictionary, where="col")


def _variable_rank(shapes: list[list[int] | None], valid: list[bool] | None = None) -> pa.Array:
    """Two float tensors of 2 and 1 elements in the variable-rank layout, shapes forged."""
    from onnx import helper

    column = onnx_arrow.to_arrow(
        [helper.make_tensor("x", 1, [2], [1, 2]), helper.make_tensor("y", 1, [1, 1], [3])]
    )
    assert column.type.extension_name == "onnx.variable_rank_tensor"
    data = column.storage.field("data")
    mask = None if valid is None else pa.array([not v for v in valid])
    storage = pa.StructArray.from_arrays(
        [data, pa.array(shapes, pa.list_(pa.int32()))], names=["data", "shape"], mask=mask
    )
    return pa.ExtensionArray.from_storage(column.type, storage)


@pytest.mark.parametrize(
    ("shapes", "text"),
    [
        ([[2], [-1, -1]], r"^row 1: shape \[-1, -1\] has a negative size"),
        ([[-1, -2], [1, 1]], r"^row 0: shape \[-1, -2\] has a negative size"),
        ([[2], [1, 2]], r"^row 1: shape \[1, 2\] needs 2 elements, data holds 1"),
        ([[2], [2**31 - 1, 2**31 - 1, 2**31 - 1]], r"^row 1: shape .* data holds 1"),
    ],
)
def test_variable_rank_shapes_are_checked_as_variable_shape_ones_are(shapes, text) -> None:
    forged = _variable_rank(shapes)
    for read in (onnx_arrow.from_arrow, onnx_arrow.to_pylist, as_array):
        with pytest.raises(ArrowLayoutError, match=text):
            read(forged)


def test_variable_rank_shapes_under_null_rows_are_not_values() -> None:
    forged = _variable_rank([[2], [-1, -1]], valid=[True, False])
    assert onnx_arrow.to_pylist(forged)[1] is None
    assert _variable_rank([[2], None]).type.extension_name == "onnx.variable_rank_tensor"


def test_a_bool8_byte_other_than_0_and_1_is_read_as_true_never_kept() -> None:
    from onnx import TensorProto

    column = onnx_arrow.to_arrow([numpy_helper.from_array(np.array([True, False]))] * 2)
    bools = pa.ExtensionArray.from_storage(pa.bool8(), pa.array([7, 0, -1, 1], pa.int8()))
    forged = pa.ExtensionArray.from_storage(
        column.type, pa.FixedSizeListArray.from_arrays(bools, 2)
    )
    messages = onnx_arrow.from_arrow(forged)
    assert [m.raw_data for m in messages] == [b"\x01\x00", b"\x01\x01"]  # onnx.proto: 0 or 1
    assert messages[0].data_type == TensorProto.BOOL
    got = onnx_arrow.to_numpy(forged)
    assert got.view(np.uint8).tolist() == [[1, 0], [1, 1]]
    assert onnx_arrow.to_pylist(forged)[1].view(np.uint8).tolist() == [1, 1]


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("data_location", "data_location = EXTERNAL"),
        ("external_data", "external_data"),
        ("segment", "segment"),
    ],
)
def test_an_envelope_never_smuggles_external_data_into_a_message(field, text) -> None:
    from onnx import SequenceProto, TensorProto, helper

    x = helper.make_tensor("x", TensorProto.FLOAT, [2], [1, 2])
    nested = SequenceProto(elem_type=1, tensor_values=[x])
    for value, at in ((x, "row 0"), (nested, "row 0: tensor_values[0]")):
        exact = onnx_arrow.to_arrow([value], exact=True)
        envelope = type(value).FromString(exact.storage.field("envelope")[0].as_py())
        tensor = envelope if value is x else envelope.tensor_values[0]
        if field == "data_location":
            tensor.data_location = TensorProto.EXTERNAL
        elif field == "external_data":
            tensor.external_data.add(key="location", value="../../outside/secret.txt")
        else:
            tensor.segment.begin = 0
        storage = pa.StructArray.from_arrays(
            [exact.storage.field("value"), pa.array([envelope.SerializeToString()])],
            names=["value", "envelope"],
        )
        forged = pa.ExtensionArray.from_storage(exact.type, storage)
        with pytest.raises(ArrowLayoutError, match=rf"^{re.escape(at)}: envelope: .*{text}"):
            onnx_arrow.from_arrow(forged)


def _forged_envelope(value, change) -> pa.Array:
    """``value``'s exact column, its envelope changed by ``change``."""
    exact = onnx_arrow.to_arrow([value], exact=True)
    envelope = type(value).FromString(exact.storage.field("envelope")[0].as_py())
    change(envelope)
    storage = pa.StructArray.from_arrays(
        [exact.storage.field("value"), pa.array([envelope.SerializeToString()])],
        names=["value", "envelope"],
    )
    return pa.ExtensionArray.from_storage(exact.type, storage)


def test_a_container_envelope_never_smuggles_what_its_value_holds() -> None:
    from onnx import OptionalProto, SequenceProto, TensorProto, helper

    x = helper.make_tensor("x", TensorProto.FLOAT, [2], [1, 2])
    m = numpy_helper.from_dict({1: np.float32(0.5), 7: np.float32(2)})
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("v", 1, [2], [1, 2]), helper.make_tensor("i", 7, [2], [0, 3]), [2, 2]
    )
    cases = [
        (m, lambda e: e.keys.extend([5, 6]), "carries map keys"),
        (m, lambda e: e.string_keys.append(b"a"), "carries map keys"),
        (m, lambda e: setattr(e, "key_type", TensorProto.STRING), "key_type is 8, but"),
        (sparse, lambda e: e.dims.append(9), "carries the sparse tensor's dims"),
        (
            SequenceProto(elem_type=1, tensor_values=[x]),
            lambda e: setattr(e, "elem_type", SequenceProto.MAP),
            r"elem_type is 4 \(map\), but the value holds tensor elements",
        ),
        (
            OptionalProto(elem_type=1, tensor_value=x),
            lambda e: setattr(e, "elem_type", OptionalProto.SEQUENCE),
            r"elem_type is 3 \(sequence\)",
        ),
    ]
    for value, change, text in cases:
        assert onnx_arrow.from_arrow(onnx_arrow.to_arrow([value], exact=True)) == [value]
        with pytest.raises(ArrowLayoutError, match=rf"^row 0: envelope: .*{text}"):
            onnx_arrow.from_arrow(_forged_envelope(value, change))
    # an empty sequence's elem_type says what no element shows
    empty = [SequenceProto(elem_type=SequenceProto.MAP), SequenceProto()]
    assert onnx_arrow.from_arrow(onnx_arrow.to_arrow(empty, exact=True)) == empty

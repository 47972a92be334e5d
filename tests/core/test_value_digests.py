"""Per-row digests of portable tables: a value whose bits an engine's writer changed is
refused by row, never read as another value; writers that keep the bits give it back."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow.core import storage
from onnx_arrow.core.value_digests import (
    DIGEST_COLUMN_SUFFIX,
    FLOAT_DIGEST_COLUMN_SUFFIX,
    check_digests,
    check_float_digests,
    digests_of,
    float_digests,
    float_digests_of,
    value_digest,
)
from onnx_arrow.errors import ArrowLayoutError, UnsupportedTypeError

#: NaN (0x7fc00000), -NaN (0xffc00000), 1.0: the bits an engine's writer rewrites.
NAN_BITS = np.array([0x7FC00000, 0xFFC00000, 0x3F800000], np.uint32)


def nan_tensors(n: int = 20) -> list[TensorProto]:
    return [numpy_helper.from_array(NAN_BITS.view(np.float32)) for _ in range(n)]


def bfloat16_nan_tensors(n: int = 20) -> list[TensorProto]:
    bits = np.array([0x7FC0, 0xFFC0, 0x3F80], np.uint16)
    return [
        helper.make_tensor("", TensorProto.BFLOAT16, [3], bits.tobytes(), raw=True)
        for _ in range(n)
    ]


def _serialized(messages: list[Any]) -> list[bytes]:
    return [m.SerializeToString() for m in messages]


def _through(table: pa.Table, path: Path, engine: str) -> pa.Table:
    """``table`` written to Parquet by pyarrow, copied by ``engine``'s own Parquet writer,
    and read back with pyarrow."""
    first = path / "written.parquet"
    pq.write_table(table, first)
    copied = path / f"copied-{engine}.parquet"
    if engine == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        duckdb.sql(f"COPY (SELECT * FROM '{first}') TO '{copied}' (FORMAT parquet)")
    elif engine == "polars":
        pl = pytest.importorskip("polars")
        pl.read_parquet(first).write_parquet(copied)
    else:
        raise ValueError(engine)
    return pq.read_table(copied)


def written_before_checks(table: pa.Table) -> pa.Table:
    """``to_portable(table)`` as an onnx-arrow before float digests wrote it: the search
    for NaNs and negative zeros finds none, so neither the column nor the recorded check."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(storage, "float_digests_of", lambda column: None)
        return onnx_arrow.to_portable(table)


def messages_back(read: pa.Table) -> list[bytes]:
    """What a user gets back: from_portable, then from_arrow of the column."""
    return _serialized(onnx_arrow.from_arrow(onnx_arrow.from_portable(read)["x"]))


def test_value_digest_is_the_stores_file_digest() -> None:
    from onnx_arrow.corpus.digest import file_digest

    for data in (b"", b"\x00" * 7, nan_tensors(1)[0].SerializeToString()):
        assert value_digest(data) == file_digest(data)


def test_a_row_digest_is_of_the_rows_message() -> None:
    messages = nan_tensors(3)
    serialized = _serialized(onnx_arrow.from_arrow(onnx_arrow.to_arrow(messages)))
    digests = digests_of(serialized)
    assert digests.type == pa.binary(16)
    assert digests.to_pylist() == [value_digest(b) for b in serialized]
    portable = onnx_arrow.to_portable(pa.table({"x": onnx_arrow.to_arrow(messages)}), digest=True)
    assert portable["x" + DIGEST_COLUMN_SUFFIX].to_pylist() == digests.to_pylist()


@pytest.mark.parametrize("make", [nan_tensors, bfloat16_nan_tensors])
def test_duckdb_copy_rewrites_nan_bits_and_the_digest_refuses_it(tmp_path: Path, make: Any) -> None:
    """The issue's case: 20 tensors [NaN, -NaN, 1.0] through DuckDB's COPY ... TO."""
    table = pa.table({"x": onnx_arrow.to_arrow(make())})
    messages = _serialized(onnx_arrow.from_arrow(table["x"]))  # the bits, as written
    # without a check (a table written before float digests), the trap: other bits, no error
    unchecked = written_before_checks(table)
    assert "x" + FLOAT_DIGEST_COLUMN_SUFFIX not in unchecked.column_names
    assert messages_back(_through(unchecked, tmp_path, "duckdb")) != messages
    # by default (float digests) and with full digests, a located error that names the
    # column, the row and the trap
    for digest in (False, True):
        read = _through(onnx_arrow.to_portable(table, digest=digest), tmp_path, "duckdb")
        with pytest.raises(ArrowLayoutError) as caught:
            messages_back(read)
        assert caught.value.where == "column 'x', row 0"
        message = str(caught.value)
        assert "20 of the 20 rows" in message
        assert "NaN payloads and signs" in message
        assert "Polars" in message
        assert "integer bit patterns" in message


@pytest.mark.parametrize("make", [nan_tensors, bfloat16_nan_tensors])
@pytest.mark.parametrize("digest", [False, True])
def test_writers_that_keep_the_bits_give_the_same_messages(
    tmp_path: Path, make: Any, digest: bool
) -> None:
    table = pa.table({"x": onnx_arrow.to_arrow(make())})
    messages = _serialized(onnx_arrow.from_arrow(table["x"]))  # the bits, as written
    portable = onnx_arrow.to_portable(table, digest=digest)
    path = tmp_path / "pyarrow.parquet"
    pq.write_table(portable, path)
    assert messages_back(pq.read_table(path)) == messages
    assert messages_back(_through(portable, tmp_path, "polars")) == messages


def test_digest_columns_are_checked_and_dropped() -> None:
    messages = nan_tensors(4)
    table = pa.table({"x": onnx_arrow.to_arrow(messages, exact=True), "n": pa.array([1, 2, 3, 4])})
    portable = onnx_arrow.to_portable(table, digest=True)
    assert portable.column_names == ["x", "n", "x__onnx_arrow_type", "x__onnx_arrow_digest"]
    back = onnx_arrow.from_portable(portable)
    assert back.schema == table.schema
    assert back["n"].equals(table["n"])
    assert _serialized(onnx_arrow.from_arrow(back["x"])) == _serialized(messages)
    # the default writes no digest column
    assert "x" + DIGEST_COLUMN_SUFFIX not in onnx_arrow.to_portable(table).column_names


def _with_bits(portable: pa.Table, row: int, element: int, bits: int) -> pa.Table:
    """``portable`` with one float element of column ``x`` given other bits."""
    values = portable["x"].combine_chunks()
    floats = np.asarray(values.flatten()).view(np.uint32).copy()
    floats[row * 3 + element] = bits
    changed = pa.FixedSizeListArray.from_arrays(pa.array(floats.view(np.float32)), 3)
    return portable.set_column(0, "x", changed)


def test_one_changed_element_is_refused_at_its_row() -> None:
    portable = onnx_arrow.to_portable(
        pa.table({"x": onnx_arrow.to_arrow(nan_tensors(5))}), digest=True
    )
    changed = _with_bits(portable, 3, 1, 0x7FC00000)  # -NaN made NaN, as engines do
    with pytest.raises(ArrowLayoutError, match=r"1 of the 5 rows") as caught:
        onnx_arrow.from_portable(changed)
    assert caught.value.where == "column 'x', row 3"
    # the same element with its own bits again reads
    same = _with_bits(portable, 3, 1, 0xFFC00000)
    assert messages_back(same) == messages_back(portable)


def test_a_null_or_non_binary_digest_is_refused() -> None:
    portable = onnx_arrow.to_portable(
        pa.table({"x": onnx_arrow.to_arrow(nan_tensors(3))}), digest=True
    )
    i = portable.column_names.index("x" + DIGEST_COLUMN_SUFFIX)
    digests = portable.column(i).to_pylist()
    nulled = portable.set_column(
        i, "x" + DIGEST_COLUMN_SUFFIX, pa.array([digests[0], None, digests[2]], pa.binary())
    )
    with pytest.raises(ArrowLayoutError, match=r"records no digest") as caught:
        onnx_arrow.from_portable(nulled)
    assert caught.value.where == "column 'x', row 1"
    numbers = portable.set_column(i, "x" + DIGEST_COLUMN_SUFFIX, pa.array([1, 2, 3]))
    with pytest.raises(ArrowLayoutError, match=r"are int64, not binary"):
        onnx_arrow.from_portable(numbers)


def test_digests_as_engines_read_them_back() -> None:
    """Engines give the fixed-size digests back as binary, large binary or views."""
    serialized = _serialized(nan_tensors(3))
    digests = digests_of(serialized)
    for t in (pa.binary(), pa.large_binary(), pa.binary_view()):
        check_digests(serialized, pa.chunked_array([digests.cast(t)]), where="column 'x'")
        with pytest.raises(ArrowLayoutError, match=r"1 of the 3 rows differ"):
            check_digests([*serialized[:2], b""], digests.cast(t), where="column 'x'")


def test_a_digest_column_name_taken_is_an_error() -> None:
    table = pa.table(
        {
            "x": onnx_arrow.to_arrow(nan_tensors(2)),
            "x" + DIGEST_COLUMN_SUFFIX: pa.array([1, 2]),
        }
    )
    assert "x" + DIGEST_COLUMN_SUFFIX in onnx_arrow.to_portable(table).column_names
    with pytest.raises(ArrowLayoutError, match="hold the digests of column 'x'"):
        onnx_arrow.to_portable(table, digest=True)


def test_a_typed_column_of_no_onnx_values_takes_no_digest() -> None:
    bools = pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, 0], pa.int8()))
    with pytest.raises(UnsupportedTypeError) as caught:
        onnx_arrow.to_portable(pa.table({"b": bools}), digest=True)
    assert caught.value.where is not None
    assert caught.value.where.startswith("column 'b'")


def test_the_exact_form_carries_digests_that_from_arrow_checks(tmp_path: Path) -> None:
    messages = [numpy_helper.from_array(NAN_BITS.view(np.float32), f"t{i}") for i in range(20)]
    column = onnx_arrow.to_arrow(messages, exact=True, digest=True)
    assert column.type.storage_type.names == ["value", "envelope", "digest"]
    assert column.digest.to_pylist() == [value_digest(b) for b in _serialized(messages)]
    assert _serialized(onnx_arrow.from_arrow(column)) == _serialized(messages)
    path = tmp_path / "exact.parquet"
    pq.write_table(pa.table({"x": column}), path)  # pyarrow and Polars keep the bits
    assert _serialized(onnx_arrow.from_arrow(pq.read_table(path)["x"])) == _serialized(messages)
    pl = pytest.importorskip("polars")
    assert _serialized(onnx_arrow.from_arrow(pl.read_parquet(path)["x"])) == _serialized(messages)
    # DuckDB's COPY, the column in a portable table without a check column of its own (as
    # written before float digests): the digests inside the column refuse it
    unchecked = written_before_checks(pa.table({"x": column}))
    back = onnx_arrow.from_portable(_through(unchecked, tmp_path, "duckdb"))
    with pytest.raises(ArrowLayoutError, match="NaN payloads and signs") as caught:
        onnx_arrow.from_arrow(back["x"])
    assert caught.value.where == "row 0"


def test_digests_need_the_exact_form() -> None:
    with pytest.raises(UnsupportedTypeError, match="needs exact=True") as caught:
        onnx_arrow.to_arrow(nan_tensors(1), digest=True)
    assert caught.value.where == "digest"


def test_a_message_type_with_a_digest_of_another_type_is_refused() -> None:
    column = onnx_arrow.to_arrow(nan_tensors(2), exact=True, digest=True)
    storage = column.storage
    numbers = pa.StructArray.from_arrays(
        [storage.field("value"), storage.field("envelope"), pa.array([1, 2])],
        names=["value", "envelope", "digest"],
    )
    read = type(column.type).__arrow_ext_deserialize__(
        numbers.type, column.type.__arrow_ext_serialize__()
    )  # kept as read (a file stays readable), refused where the column is converted
    with pytest.raises(ArrowLayoutError, match="with a digest: fixed_size_binary"):
        onnx_arrow.from_arrow(pa.ExtensionArray.from_storage(read, numbers))


# --- float digests: the check portable tables carry by default ----------------------------


def _floats(values: list[Any], arrow_type: pa.DataType) -> pa.Array:
    return pa.array(values, arrow_type)


def test_float_digests_find_nans_and_negative_zeros_at_any_depth() -> None:
    nan, neg = float("nan"), -0.0
    sequences = pa.list_(pa.list_(pa.float64()))
    column = pa.array([[[1.0], [2.0, neg]], [[0.0]], None, [[], [nan]], [[3.0]]], sequences)
    assert sorted(float_digests(column)) == [0, 3]
    # the same rows in other chunks, or the column sliced, give the same digests
    chunked = pa.chunked_array([column.slice(0, 2), column.slice(2)])
    assert float_digests(chunked) == float_digests(column)
    assert float_digests(column.slice(3)) == {0: float_digests(column)[3]}
    # a map's items, a struct's fields, complex parts, float16
    entries = pa.map_(pa.int64(), pa.float32())
    assert sorted(float_digests(pa.array([[(1, 1.0)], [(2, nan)]], entries))) == [1]
    pairs = pa.list_(pa.float32(), 2)
    assert sorted(float_digests(pa.array([[1.0, 2.0], [neg, 1.0], [1.0, nan]], pairs))) == [1, 2]
    halves = pa.array(np.array([1, np.nan, 0], np.float16))
    assert sorted(float_digests(halves)) == [1]
    assert float_digests(pa.array([[1.0, 0.0]], pa.list_(pa.float32()))) == {}


def test_floats_under_a_null_are_not_the_rows() -> None:
    """Bits under a null are no value's: an engine may write anything there."""
    values = pa.array(np.array([np.nan, 1.0, -0.0, 2.0], np.float32))
    lists = pa.ListArray.from_arrays(
        pa.array([0, 2, 4], pa.int32()), values, mask=pa.array([True, False])
    )
    assert list(float_digests(lists)) == [1]
    nulled = pa.array([float("nan"), None, 1.0], pa.float32())
    assert list(float_digests(nulled)) == [0]


def test_float_digests_tell_bits_and_places() -> None:
    column = pa.array(NAN_BITS.view(np.float32)).cast(pa.float32())
    rows = pa.FixedSizeListArray.from_arrays(column, 3)
    recorded = float_digests_of(rows)
    assert recorded is not None
    assert recorded.type == pa.binary(16)

    def changed(bits: list[int]) -> pa.Array:
        values = pa.array(np.array(bits, np.uint32).view(np.float32))
        return pa.FixedSizeListArray.from_arrays(values, 3)

    check_float_digests(changed([0x7FC00000, 0xFFC00000, 0x3F800000]), recorded, where="x")
    cases = [
        ([0x7FC00000, 0x7FC00000, 0x3F800000], "not those its float digest"),  # -NaN made NaN
        ([0x3F800000, 0xFFC00000, 0x7FC00000], "not those its float digest"),  # places swapped
        ([0x3F800000, 0x3F800000, 0x3F800000], "holds none now"),  # NaNs made numbers
    ]
    for bits, match in cases:
        with pytest.raises(ArrowLayoutError, match=match) as caught:
            check_float_digests(changed(bits), recorded, where="column 'x'")
        assert caught.value.where == "column 'x', row 0"
    # a zero given a sign where none was recorded
    zeros = pa.FixedSizeListArray.from_arrays(pa.array([0.0, 1.0], pa.float32()), 2)
    signed = pa.FixedSizeListArray.from_arrays(pa.array([-0.0, 1.0], pa.float32()), 2)
    with pytest.raises(ArrowLayoutError, match="where it held none") as caught:
        check_float_digests(signed, pa.array([None], pa.binary(16)), where="column 'z'")
    assert caught.value.where == "column 'z', row 0"
    check_float_digests(zeros, pa.array([None], pa.binary(16)), where="column 'z'")
    for t in (pa.binary(), pa.large_binary(), pa.binary_view()):  # as engines give them back
        check_float_digests(rows, recorded.cast(t), where="x")
    with pytest.raises(ArrowLayoutError, match="float digests are int64, not binary"):
        check_float_digests(rows, pa.array([1]), where="x")


def test_to_portable_writes_float_digests_where_a_row_holds_a_nan_or_negative_zero() -> None:
    numbers = [numpy_helper.from_array(np.array([1.0, 0.0], np.float32)) for _ in range(3)]
    signed = [numpy_helper.from_array(np.array([1.0, -0.0], np.float32)), *numbers[:2]]
    table = pa.table(
        {
            "nan": onnx_arrow.to_arrow(nan_tensors(3)),
            "plain": onnx_arrow.to_arrow(numbers),
            "signed": onnx_arrow.to_arrow(signed, exact=True),
            "n": pa.array([np.nan, -0.0, 1.0]),  # a column of the user's own: no check
        }
    )
    portable = onnx_arrow.to_portable(table)
    suffixed = [n for n in portable.column_names if n.endswith(FLOAT_DIGEST_COLUMN_SUFFIX)]
    assert suffixed == ["nan" + FLOAT_DIGEST_COLUMN_SUFFIX, "signed" + FLOAT_DIGEST_COLUMN_SUFFIX]
    assert portable["signed" + FLOAT_DIGEST_COLUMN_SUFFIX].null_count == 2
    back = onnx_arrow.from_portable(portable)
    assert back.schema == table.schema
    for name in ("nan", "plain", "signed"):
        want = _serialized(onnx_arrow.from_arrow(table[name]))
        assert _serialized(onnx_arrow.from_arrow(back[name])) == want
    # the full digests take their place with digest=True
    full = onnx_arrow.to_portable(table, digest=True)
    assert not [n for n in full.column_names if n.endswith(FLOAT_DIGEST_COLUMN_SUFFIX)]
    # a table written before float digests (none) still reads
    old = onnx_arrow.from_portable(written_before_checks(table))
    assert old.schema == table.schema
    for name in ("nan", "plain", "signed"):
        assert _serialized(onnx_arrow.from_arrow(old[name])) == _serialized(
            onnx_arrow.from_arrow(back[name])
        )


def test_a_changed_float_in_a_portable_table_is_refused_at_its_row() -> None:
    portable = onnx_arrow.to_portable(pa.table({"x": onnx_arrow.to_arrow(nan_tensors(5))}))
    changed = _with_bits(portable, 2, 1, 0x7FC00000)  # -NaN made NaN, as engines do
    with pytest.raises(ArrowLayoutError, match=r"1 of the 5 rows differ") as caught:
        onnx_arrow.from_portable(changed)
    assert caught.value.where == "column 'x', row 2"
    assert "NaN payloads and signs" in str(caught.value)


def test_a_float_digest_column_name_taken_is_an_error() -> None:
    taken = "x" + FLOAT_DIGEST_COLUMN_SUFFIX
    table = pa.table({"x": onnx_arrow.to_arrow(nan_tensors(2)), taken: pa.array([1, 2])})
    with pytest.raises(ArrowLayoutError, match="hold the float digests of column 'x'"):
        onnx_arrow.to_portable(table)
    numbers = [numpy_helper.from_array(np.ones(2, np.float32))] * 2
    plain = pa.table({"x": onnx_arrow.to_arrow(numbers), taken: pa.array([1, 2])})
    assert taken in onnx_arrow.to_portable(plain).column_names  # no NaN: no column written


def test_floats_in_a_union_are_refused_with_the_route() -> None:
    union = pa.UnionArray.from_sparse(
        pa.array([0, 1], pa.int8()), [pa.array([1.0, 2.0]), pa.array([1, 2])]
    )
    column = pa.ExtensionArray.from_storage(pa.opaque(union.type, "u", "v"), union)
    with pytest.raises(UnsupportedTypeError, match=r"digest=True") as caught:
        onnx_arrow.to_portable(pa.table({"u": column}))
    assert caught.value.where == "column 'u'"


def test_a_check_column_left_out_is_refused(tmp_path: Path) -> None:
    """The recorded type names the check written beside the column: a projection that
    leaves the check column out is refused, through an engine's writer too."""
    table = pa.table({"x": onnx_arrow.to_arrow(nan_tensors(20))})
    for digest, suffix in ((False, FLOAT_DIGEST_COLUMN_SUFFIX), (True, DIGEST_COLUMN_SUFFIX)):
        portable = onnx_arrow.to_portable(table, digest=digest)
        pq.write_table(portable, tmp_path / "checked.parquet")
        duckdb = pytest.importorskip("duckdb")
        out = tmp_path / "projected.parquet"
        duckdb.sql(
            "COPY (SELECT x, x__onnx_arrow_type FROM "
            f"'{tmp_path / 'checked.parquet'}') TO '{out}' (FORMAT parquet)"
        )
        with pytest.raises(ArrowLayoutError, match="select it with the column") as caught:
            onnx_arrow.from_portable(pq.read_table(out))
        assert caught.value.where == "column 'x'"
        assert "x" + suffix in str(caught.value)


def test_a_check_this_version_does_not_know_is_refused() -> None:
    table = pa.table({"x": onnx_arrow.to_arrow(nan_tensors(2))})
    field = table.schema.field("x").with_metadata({storage.CHECK_KEY: b"sha3"})
    text = base64.b64encode(pa.schema([field]).serialize().to_pybytes()).decode("ascii")
    portable = onnx_arrow.to_portable(table)
    types = pa.DictionaryArray.from_arrays(pa.array([0, 0], pa.int32()), pa.array([text]))
    changed = portable.set_column(
        portable.column_names.index("x__onnx_arrow_type"), "x__onnx_arrow_type", types
    )
    with pytest.raises(ArrowLayoutError, match=r"'sha3'.*newer onnx-arrow") as caught:
        onnx_arrow.from_portable(changed.replace_schema_metadata(None))
    assert caught.value.where == "column 'x__onnx_arrow_type'"


def test_float_digests_of_other_layouts_are_those_of_the_values() -> None:
    """Run-end encoded, dictionary and list-view layouts give the digests of the values
    they stand for (pyarrow 26 casts a list view with a null row to an invalid list: the
    view is read as it is)."""
    nan = float("nan")
    rows = [[1.0], [nan, -0.0], None, [-0.0]]
    lists = float_digests(pa.array(rows, pa.list_(pa.float64())))
    assert sorted(lists) == [1, 3]
    assert float_digests(pa.array(rows, pa.list_view(pa.float64()))) == lists
    assert float_digests(pa.array(rows, pa.large_list_view(pa.float64()))) == lists
    flat = pa.array([1.0, nan, nan, None, -0.0])
    want = float_digests(flat)
    assert sorted(want) == [1, 2, 4]
    assert float_digests(flat.dictionary_encode()) == want
    assert float_digests(pa.compute.run_end_encode(flat)) == want

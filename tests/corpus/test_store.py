"""Reading a store (corpus/store.py): cases, values, models and files, read by case with
the row groups that cannot hold it skipped."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import TensorProto
from store_helpers import rewrite, scattered_store, small_corpus, tree_bytes

from onnx_arrow.corpus import (
    CorpusError,
    FolderSource,
    NodeSuiteSource,
    Store,
    export_store,
    write_store,
)
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.corpus.sources import wheel_data_dir
from onnx_arrow.corpus.store import as_store
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError


def test_reading_one_case_prunes_row_groups(tmp_path):
    path = tmp_path / "small.parquet"

    write_store(FolderSource(wheel_data_dir()), path, options=WriteOptions(row_group_bytes=1))
    store = Store(path)
    assert store.num_row_groups > 10
    case = "simple/test_sequence_model1"
    groups = [i for i in range(store.num_row_groups) if store._may_hold(i, case)]
    assert len(groups) == 1
    assert set(store.read_case(case).column("test_case").to_pylist()) == {case}


def test_typed_view_of_a_case(node_store):
    _, path, _ = node_store
    store = Store(path)
    table = store.case_table("node/test_abs")
    assert table.column_names == ["x", "y"]
    assert table.schema.field("x").type.extension_name == "arrow.fixed_shape_tensor"
    assert table.schema.field("y").metadata == {b"io": b"output", b"index": b"0"}
    seq = store.case_table("node/test_sequence_insert_at_back")
    assert pa.types.is_list(seq.schema.field(0).type)
    feeds = store.case_arrays("node/test_abs")
    np.testing.assert_array_equal(np.abs(feeds[0]["inputs"]["x"]), feeds[0]["outputs"]["y"])


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == object:  # strings: str, as numpy_helper gives them
        return (
            a.shape == b.shape
            and b.dtype == object
            and all(type(x) is str for x in a.ravel())
            and a.ravel().tolist() == b.ravel().tolist()
        )
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_every_value_loads_to_what_numpy_helper_gives(node_store):
    from onnx import OptionalProto, SequenceProto
    from onnx.numpy_helper import to_array, to_list, to_optional

    cases, path, _ = node_store
    source = {f.path: f.data for case in cases for f in case.files}
    decoders = {
        "tensor": lambda b: to_array(TensorProto.FromString(b)),
        "sequence": lambda b: to_list(SequenceProto.FromString(b)),
        "optional": lambda b: to_optional(OptionalProto.FromString(b)),
    }
    seen = 0
    for value in Store(path).values():
        expected = decoders[value.kind.name](source[value.path])
        assert _same(value.to_numpy(), expected), value.path
        seen += 1
    assert seen == sum(p.endswith(".pb") for p in source)


def test_case_arrays_feed_a_runtime(node_store):
    from onnx.reference import ReferenceEvaluator

    _, path, _ = node_store
    store = Store(path)
    for case in (
        "node/test_add",
        "node/test_sequence_insert_at_back",
        "node/test_cast_FLOAT_to_BFLOAT16",
    ):
        model = store.model(case)
        for data_set in store.case_arrays(case):
            got = ReferenceEvaluator(model).run(None, data_set["inputs"])
            for value, (_, expected) in zip(got, data_set["outputs"].items(), strict=True):
                if isinstance(expected, list):
                    assert len(value) == len(expected)
                else:
                    # ml_dtypes NaNs compare unequal; float32 holds every value exactly
                    np.testing.assert_array_equal(
                        np.asarray(value).astype(np.float32), expected.astype(np.float32)
                    )


def test_a_damaged_element_is_reported_with_its_own_file(tmp_path):
    cases = [c for c in NodeSuiteSource() if c.name.startswith("node/test_cast_FLOAT16_to_")]
    assert len(cases) > 2
    path = tmp_path / "store.parquet"
    write_store(cases, path)
    table = pq.read_table(path)
    data = table["data_float16"].to_pylist()
    last = max(i for i, d in enumerate(data) if d)
    data[last][0] = 0.1  # not a float16 value
    column = table.schema.get_field_index("data_float16")
    table = table.set_column(column, "data_float16", pa.array(data, table["data_float16"].type))
    pq.write_table(table, tmp_path / "bad.parquet")
    damaged = f"{table['test_case'][last]}: {table['path'][last]}"
    assert not damaged.startswith(cases[0].name)
    with pytest.raises(OnnxArrowError, match="is not a float16 value") as info:
        list(Store(tmp_path / "bad.parquet").values(cases[0].name))
    assert damaged in str(info.value)
    with pytest.raises(OnnxArrowError, match="is not a float16 value") as info:
        export_store(tmp_path / "bad.parquet", tmp_path / "out")
    assert damaged in str(info.value)


def test_read_case_finds_rows_that_are_not_together(tmp_path):
    path, scattered, tiny = scattered_store(tmp_path)
    for case in ("node", "node/test_tiny"):
        assert Store(scattered).read_case(case).equals(Store(path).read_case(case))
    assert Store(scattered).read_case("node/test_tiny", ["path"]).num_rows == len(tiny)


def test_case_files_rebuild_one_case(tmp_path):
    root = small_corpus(tmp_path / "src")
    path = tmp_path / "store.parquet"
    write_store(FolderSource(root), path)
    files = {f.path: f.data for f in Store(path).case_files("node/test_tiny")}
    assert files == tree_bytes(root)


def test_value_by_path_reads_one_value_and_names_a_path_it_lacks(node_store):
    _, path, _ = node_store
    store = Store(path)
    seq = "node/test_sequence_insert_at_back/test_data_set_0/input_0.pb"
    value = store.value(seq)
    assert value.path == seq
    assert [a.tolist() for a in value.to_numpy()] == [[1, 2, 3, 4], [5, 6, 7], [8, 9]]
    abs_input = store.value("node/test_abs/test_data_set_0/input_0.pb")
    assert abs_input.to_numpy().shape == (3, 4, 5)
    for missing in ("node/test_abs/test_data_set_0/input_9.pb", "node/test_abs/model.onnx"):
        with pytest.raises(CorpusError, match=f"{missing}: no value file of this path"):
            store.value(missing)


def test_a_stored_values_repr_says_what_it_holds_not_its_codes(node_store):
    _, path, _ = node_store
    store = Store(path)
    tensor = store.value("node/test_abs/test_data_set_0/input_0.pb")
    assert repr(tensor) == (
        "StoredValue(path='node/test_abs/test_data_set_0/input_0.pb', io='input', index=0, "
        "name='x', onnx_type='tensor(float)', value=FLOAT [3, 4, 5])"
    )
    seq = store.value("node/test_sequence_insert_at_back/test_data_set_0/input_0.pb")
    assert repr(seq).endswith("value=sequence of 3)")
    assert "codes" not in repr(seq)
    assert "array(" not in repr(seq)


def test_a_store_is_opened_from_a_path_or_a_list_of_its_parts(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)
    for given in (path, str(path), [path], (str(path),)):
        assert Store(given).parts == (path,)
        assert as_store(given, where="f(store)").parts == (path,)
    assert Store(iter([path])).parts == (path,)
    assert as_store((p for p in [path]), where="f(store)").parts == (path,)
    store = Store(path)
    assert as_store(store, where="f(store)") is store


@pytest.mark.parametrize("junk", [1, None, b"store.parquet", TensorProto(), pa.array([1])])
def test_what_is_not_a_store_is_refused_naming_the_argument(junk):
    with pytest.raises(UnsupportedTypeError, match=r"^Store\(path\): expected a store"):
        Store(junk)
    with pytest.raises(UnsupportedTypeError, match=r"^f\(store\): expected a store"):
        as_store(junk, where="f(store)")


def test_a_list_of_parts_has_each_path_checked(tmp_path):
    with pytest.raises(UnsupportedTypeError, match=r"^Store\(path\)\[1\]: expected a path"):
        Store([tmp_path / "a.parquet", 1])
    with pytest.raises(CorpusError, match="no store files given"):
        Store([])


def test_export_to_what_is_not_a_path_is_refused_before_writing(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)
    with pytest.raises(UnsupportedTypeError, match=r"^Store\.export\(dest\): expected a path"):
        Store(path).export(1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "store.parquet"]


def test_a_null_element_refuses_its_own_case_and_no_other_of_its_row_group(tmp_path):
    root = small_corpus(tmp_path / "src")
    shutil.copytree(root / "node" / "test_tiny", root / "node" / "test_tinier")
    path, bad = tmp_path / "store.parquet", tmp_path / "bad.parquet"
    # each case's own data, not a copy of the other's (see test_copies.py for those)
    write_store(FolderSource(root), path, options=WriteOptions(dedup=False))
    table = pq.read_table(path)
    assert Store(path).num_row_groups == 1
    data = table["data_float"].to_pylist()
    last = max(i for i, d in enumerate(data) if d)
    data[last][-1] = None
    column = table.schema.get_field_index("data_float")
    rewrite(path, bad, lambda t: t.set_column(column, "data_float", pa.array(data, t[column].type)))
    damaged, other = table["test_case"][last].as_py(), "node/test_tinier"
    assert damaged != other
    store = Store(bad)
    # the undamaged case reads whole, by every way in
    assert {f.path: f.data for f in store.case_files(other)} == {
        f.path: f.data for f in Store(path).case_files(other)
    }
    assert len(list(store.values(other))) == 2
    assert store.case_arrays(other)[0]["outputs"]["y"].tolist() == [1.0, 2.0]
    for read in (store.case_files, lambda c: list(store.values(c))):
        with pytest.raises(CorpusError, match="data_float holds a null element") as info:
            read(damaged)
        assert f"{damaged}: {table['path'][last]}" in str(info.value)


def test_value_by_path_reads_a_value_beside_its_model(tmp_path):
    root = small_corpus(tmp_path / "src")
    light = root / "light"
    light.mkdir()
    tiny = root / "node" / "test_tiny"
    shutil.copy(tiny / "model.onnx", light / "light_tiny.onnx")
    for io in ("input", "output"):
        shutil.copy(tiny / "test_data_set_0" / f"{io}_0.pb", light / f"light_tiny_{io}_0.pb")
    path = tmp_path / "store.parquet"
    write_store(FolderSource(root), path)
    store = Store(path)
    assert "light/light_tiny" in store.cases()
    value = store.value("light/light_tiny_output_0.pb")
    assert (value.case, value.io, value.index) == ("light/light_tiny", "output", 0)
    assert value.to_numpy().tolist() == [1.0, 2.0]
    assert store.value("node/test_tiny/test_data_set_0/input_0.pb").to_numpy().tolist() == [
        -1.0,
        2.0,
    ]
    with pytest.raises(CorpusError, match=r"light/light_tiny\.onnx: no value file of this"):
        store.value("light/light_tiny.onnx")
    with pytest.raises(UnsupportedTypeError, match=r"Store\.value\(path\): expected"):
        store.value(Path("light/light_tiny_output_0.pb"))  # type: ignore[arg-type]


def test_what_a_store_reads_by_is_checked_before_anything_is_read(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)
    store = Store(path)
    for read in (
        lambda: list(store.values(3)),
        lambda: store.read_case(None),
        lambda: store.case_files(b"node/test_tiny"),
        lambda: store.model(["node/test_tiny"]),
    ):
        with pytest.raises(UnsupportedTypeError, match=r"store\.parquet: a case is named by"):
            read()
    for read, where in (
        (lambda: store.read_columns("path"), r"Store\.read_columns\(columns\): expected a list"),
        (lambda: list(store.row_groups("path")), r"Store\.row_groups\(columns\): expected"),
        (lambda: store.read_case("node/test_tiny", [1]), r"Store\.read_case\(columns\): exp"),
        (lambda: store.read_columns(["path"], roles="value"), r"read_columns\(roles\): exp"),
        (lambda: list(store.files(1.0)), r"Store\.files\(row_group\): expected a row group"),
        (lambda: list(store.files(True)), r"Store\.files\(row_group\): expected a row group"),
    ):
        with pytest.raises(UnsupportedTypeError, match=where):
            read()
    with pytest.raises(CorpusError, match=r"read_columns\(columns\): no column 'p' in a store"):
        store.read_columns(["path", "p"])
    assert store.read_case("node/test_tiny", ("path",)).column_names == ["path"]
    assert store.read_columns(iter(["path"])).num_rows == 4


def test_a_case_is_found_in_its_part_even_where_statistics_say_otherwise(tmp_path):
    root = small_corpus(tmp_path / "src")
    path = tmp_path / "store.parquet"
    write_store(FolderSource(root), path, options=WriteOptions(row_group_cases=1))
    store = Store(path)
    # statistics that exclude the case from every row group (forged, or undecodable)
    store.__dict__["_case_spans"] = [("a", "b")] * store.num_row_groups
    assert {f.path: f.data for f in store.case_files("node/test_tiny")} == tree_bytes(root)
    with pytest.raises(CorpusError, match=r"no case 'node/test_nothing' in the store"):
        store.read_case("node/test_nothing")


def _negative_nans_made_positive(table: pa.Table) -> pa.Table:
    """``table`` with every -NaN of data_float turned to +NaN, as Spark's Parquet writer
    turns every NaN to 0x7fc00000."""
    col = table.column("data_float").combine_chunks()
    values = col.values.to_numpy(zero_copy_only=False).copy()
    bits = values.view(np.uint32)
    bits[np.isnan(values)] = 0x7FC00000
    rewritten = pa.ListArray.from_arrays(col.offsets, pa.array(values), mask=col.is_null())
    i = table.schema.get_field_index("data_float")
    return table.set_column(i, table.schema.field(i), rewritten.cast(col.type))


def test_store_reads_refuse_values_whose_nan_bits_were_rewritten(tmp_path):
    cases = [c for c in NodeSuiteSource() if c.name == "node/test_cast_FLOAT8E4M3FNUZ_to_FLOAT"]
    assert len(cases) == 1
    good, bad = tmp_path / "good.parquet", tmp_path / "bad.parquet"
    write_store(cases, good)
    rewrite(good, bad, _negative_nans_made_positive)
    case = cases[0].name
    # located: the store (and row group, or case), the case and the value's path
    expected = (
        rf"^{re.escape(str(bad))}: (row group 0: |{case}: )?{case}: "
        rf"{case}/test_data_set_0/output_0\.pb: "
    )
    message = "the file rebuilt from the rows is not the file imported (its digest differs"
    nan = "the value holds NaN: an engine's Parquet writer that rewrites NaN bits"
    store = Store(bad)
    paths = [v.path for v in Store(good).values(case)]
    reads = {
        "values": lambda: list(store.values()),
        "values(case)": lambda: list(store.values(case)),
        "case_arrays": lambda: store.case_arrays(case),
        "case_files": lambda: store.case_files(case),
        "files": lambda: list(store.files()),
        "export": lambda: store.export(tmp_path / "out"),
    }
    for what, read in reads.items():
        with pytest.raises(CorpusError) as info:
            read()
        text = str(info.value)
        assert re.search(expected, text), (what, text)
        assert message in text, what
        assert nan in text, what
        assert "import the corpus again, or read the store onnx-arrow wrote" in text, what
    refused = {}
    for path in paths:
        try:
            store.value(path)
        except CorpusError as exc:
            refused[path] = str(exc)
    assert refused
    for path, text in refused.items():
        assert f"{case}: {path}: the file rebuilt" in text
        assert nan in text
    # the store onnx-arrow wrote reads, unchanged
    assert len(Store(good).case_arrays(case)) >= 1
    assert len(list(Store(good).files())) == len(cases[0].files)


def test_a_store_named_by_its_path_again_is_the_one_opened_before_until_it_changes(tmp_path):
    path = tmp_path / "s.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)
    first = as_store(path, where="x")
    assert as_store(str(path), where="x") is first  # footers and last reads kept
    assert as_store([path], where="x") is first  # the list of its one part: the same files
    rewritten = tmp_path / "t.parquet"
    write_store(
        FolderSource(tmp_path / "src"), rewritten, options=WriteOptions(compression_level=9)
    )
    shutil.copy(rewritten, path)  # the same path, other contents
    again = as_store(path, where="x")
    assert again is not first
    assert again.cases() == Store(path).cases()

"""The corpus store: byte-identical round trips of real corpora, queries, safety."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import TensorProto, helper, numpy_helper, save_model
from store_helpers import small_corpus, tree_bytes

from onnx_arrow.core.dtypes import dtype_of_numpy
from onnx_arrow.core.statistics import has_nan_and_inf
from onnx_arrow.corpus import (
    Case,
    CorpusError,
    CorpusFile,
    FolderSource,
    NodeSuiteSource,
    Store,
    export_store,
    write_store,
)
from onnx_arrow.corpus.format import FORMAT_VERSION, METADATA_KEY
from onnx_arrow.corpus.sources import wheel_data_dir
from onnx_arrow.corpus.store import WriteOptions, _BackgroundWriter, _RowGroup
from onnx_arrow.errors import OnnxArrowError


@pytest.fixture(scope="module")
def node_store(tmp_path_factory):
    cases = list(NodeSuiteSource())
    path = tmp_path_factory.mktemp("node") / "node.parquet"
    summary = write_store(cases, path)
    return cases, path, summary


def test_node_suite_exports_byte_identical(node_store, tmp_path):
    cases, path, summary = node_store
    source = {f.path: f.data for case in cases for f in case.files}
    assert summary["cases"] == len(cases) > 1800
    assert summary["warnings"] == []
    export_store(path, tmp_path / "out")
    assert tree_bytes(tmp_path / "out") == source


def test_node_suite_exports_byte_identical_in_several_processes(node_store, tmp_path):
    cases, path, _ = node_store
    assert Store(path).num_row_groups > 1
    seen = []
    counts = export_store(path, tmp_path / "out", jobs=2, progress=lambda f: seen.append(f.path))
    source = {f.path: f.data for case in cases for f in case.files}
    assert tree_bytes(tmp_path / "out") == source
    assert seen == [f.path for f in Store(path).files()]  # in store order
    assert counts == {"files": len(source), "bytes": sum(map(len, source.values()))}
    with pytest.raises(CorpusError, match="no row group 99: the store has"):
        next(Store(path).files(row_group=99))


def test_wheel_model_kinds_export_byte_identical(tmp_path):
    root = wheel_data_dir()
    write_store(FolderSource(root), tmp_path / "wheel.parquet")
    export_store(tmp_path / "wheel.parquet", tmp_path / "out")
    assert tree_bytes(tmp_path / "out") == tree_bytes(root)


def test_values_are_typed_by_the_model_not_the_bytes(node_store):
    _, path, _ = node_store
    table = pq.read_table(path, columns=["test_case", "role", "path", "onnx_type", "value_kind"])
    rows = table.filter(pa.compute.equal(table["test_case"], "node/test_loop16_seq_none"))
    rows = rows.to_pylist()
    values = {r["path"].rsplit("/", 1)[-1]: r for r in rows if r["role"] == "value"}
    assert values["input_2.pb"]["onnx_type"] == "optional(seq(tensor(float)))"
    assert json.loads(values["output_0.pb"]["value_kind"])[0] == "sequence"


def test_store_is_queryable_without_onnx_arrow(node_store):
    duckdb = pytest.importorskip("duckdb")
    polars = pytest.importorskip("polars")
    _, path, _ = node_store
    rows = duckdb.sql(
        f"select path, shape, data_float[1] as first from '{path}' "
        "where test_case = 'node/test_abs' and dtype = 'FLOAT' order by path"
    ).fetchall()
    assert [r[0].rsplit("/", 1)[-1] for r in rows] == ["input_0.pb", "output_0.pb"]
    assert rows[0][1] == [3, 4, 5]
    assert abs(rows[1][2]) == pytest.approx(abs(rows[0][2]))
    frame = polars.read_parquet(path).filter(
        (polars.col("dtype") == "FLOAT8E4M3FN") & (polars.col("role") == "value")
    )
    assert frame.height > 0
    assert frame["data_float8e4m3fn"].list.len().sum() == frame["count"].sum()
    meta = json.loads(pq.read_metadata(path).metadata[METADATA_KEY.encode()])
    assert meta["format_version"] == FORMAT_VERSION


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
    from onnx import OptionalProto, SequenceProto, TensorProto
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


def test_statistics_columns_are_numpys_on_every_tensor_value(node_store):
    # min, max, mean ignore NaN; NaN and Inf are counted for floats; checked per tensor file
    cases, path, _ = node_store
    source = {f.path: f.data for case in cases for f in case.files}
    columns = ["path", "onnx_type", "min", "max", "mean", "nan_count", "inf_count"]
    table = pq.read_table(path, columns=columns, filters=[("role", "=", "value")])
    checked = 0
    for row in table.to_pylist():
        if not row["onnx_type"].startswith("tensor("):
            continue
        codes = numpy_helper.to_array(TensorProto.FromString(source[row["path"]]))
        onnx_dtype = dtype_of_numpy(codes.dtype)
        if codes.dtype.kind in "OSUc":
            assert row["min"] is row["nan_count"] is None, row["path"]
            continue
        x = codes.astype(np.float64).ravel()
        nan = np.isnan(x)
        counts = (int(nan.sum()), int(np.isinf(x).sum()))
        assert (row["nan_count"], row["inf_count"]) == (
            counts if has_nan_and_inf(onnx_dtype) else (None, None)
        ), row["path"]
        kept = x[~nan]
        if not kept.size:
            assert row["min"] is row["max"] is row["mean"] is None, row["path"]
            continue
        assert (row["min"], row["max"]) == (kept.min(), kept.max()), row["path"]
        with np.errstate(invalid="ignore"):
            mean = kept.mean()
        assert row["mean"] == pytest.approx(mean, rel=1e-9, nan_ok=True), row["path"]
        checked += 1
    assert checked > 5000


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


# --- nothing lost, nothing half-done ------------------------------------------------------


def test_interrupted_import_leaves_no_store(tmp_path):
    out = tmp_path / "store.parquet"

    def cases():
        yield from FolderSource(small_corpus(tmp_path / "src"))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_store(cases(), out)
    assert list(tmp_path.iterdir()) == [tmp_path / "src"]


def test_failed_import_keeps_the_previous_store(tmp_path):
    out = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), out)
    before = out.read_bytes()
    bad = tmp_path / "src" / "node" / "test_tiny" / "test_data_set_0" / "input_0.pb"
    bad.write_bytes(b"\x08\x02\x10\x01\x4a\x03abc")  # dims [2], FLOAT, 3 bytes of raw_data
    with pytest.raises(
        OnnxArrowError, match=r"input_0\.pb: does not decode as tensor\(float\).*\(raw_data: "
    ) as info:
        write_store(FolderSource(tmp_path / "src"), out)
    assert "node/test_tiny/test_data_set_0/input_0.pb" in str(info.value)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "store.parquet"]


def test_a_failed_write_stops_the_import_and_leaves_no_store(tmp_path, monkeypatch):
    written = []

    def write_table(self, table, row_group_size=None):
        if written:
            raise OSError(28, "No space left on device")
        written.append(table.num_rows)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", write_table)
    out = tmp_path / "store.parquet"
    options = WriteOptions(row_group_bytes=1)  # a row group per case
    with pytest.raises(OSError, match="No space left") as info:
        write_store(FolderSource(wheel_data_dir()), out, options=options)
    assert info.value.filename == str(out)  # the error names the store
    assert written == [written[0]]
    assert list(tmp_path.iterdir()) == []


def test_an_interrupt_while_writing_leaves_no_store(tmp_path, monkeypatch):
    calls = []

    def write_table(self, table, row_group_size=None):
        calls.append(table.num_rows)

    def interrupted(case):
        if len(calls) >= 3:  # Ctrl-C once the writer thread has written some row groups
            raise KeyboardInterrupt

    monkeypatch.setattr(pq.ParquetWriter, "write_table", write_table)
    out = tmp_path / "store.parquet"
    with pytest.raises(KeyboardInterrupt):
        write_store(
            FolderSource(wheel_data_dir()),
            out,
            options=WriteOptions(row_group_bytes=1),
            progress=interrupted,
        )
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_while_waiting_for_the_writer_thread_waits_until_it_is_out_of_the_writer():
    # On Python 3.11 a Thread.join() interrupted by KeyboardInterrupt marks the thread as
    # stopped while it still runs: the file would be closed under the writer's feet.
    inside, left = threading.Event(), threading.Event()

    def write(group):
        inside.set()
        time.sleep(0.6)  # a row group being encoded, the GIL released
        left.set()

    background = _BackgroundWriter(write)
    background.write(_RowGroup())
    assert inside.wait(10)
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        background.finish()
    timer.join()
    assert left.is_set()


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_interrupted_export_leaves_nothing(tmp_path, jobs):
    store = tmp_path / "store.parquet"
    write_store(FolderSource(wheel_data_dir()), store, options=WriteOptions(row_group_bytes=1))
    assert Store(store).num_row_groups > 2
    written = []

    def interrupted(f):
        written.append(f.path)
        if len(written) == 20:  # Ctrl-C once some files are written
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        export_store(store, tmp_path / "out", progress=interrupted, jobs=jobs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.parquet"]


def test_export_refuses_a_non_empty_folder(tmp_path):
    out = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), out)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("x")
    with pytest.raises(CorpusError, match="not empty"):
        export_store(out, dest)
    export_store(out, dest, force=True)
    assert (dest / "keep.txt").read_text() == "x"
    assert tree_bytes(dest / "node") == {
        k[len("node/") :]: v for k, v in tree_bytes(tmp_path / "src").items()
    }


@pytest.mark.parametrize("hostile", ["fifo", "dev_zero", "symlink_out"])
def test_hostile_folders_neither_hang_nor_read_without_end(tmp_path, hostile):
    root = small_corpus(tmp_path / "src")
    target = root / "node" / "test_tiny" / "test_data_set_0" / "input_1.pb"
    if hostile == "fifo":
        os.mkfifo(target)
    elif hostile == "dev_zero":
        target.symlink_to("/dev/zero")
    else:
        (tmp_path / "secret").write_bytes(b"secret")
        target.symlink_to(tmp_path / "secret")
    signal.alarm(10)
    try:
        with pytest.raises(CorpusError, match=r"input_1\.pb"):
            write_store(FolderSource(root), tmp_path / "out.parquet")
    finally:
        signal.alarm(0)
    assert not (tmp_path / "out.parquet").exists()


def test_file_size_cap(tmp_path):
    root = small_corpus(tmp_path / "src")
    with pytest.raises(CorpusError, match="exceed the limit"):
        write_store(FolderSource(root, max_file_bytes=16), tmp_path / "out.parquet")


# --- a store from someone else ------------------------------------------------------------


def test_a_parquet_file_that_is_not_a_store_is_refused(tmp_path):
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": [1]}), path)
    with pytest.raises(CorpusError, match="not an onnx-arrow store"):
        Store(path)
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    with pytest.raises(CorpusError, match="cannot read as Parquet"):
        Store(tmp_path / "junk.parquet")


def _rewrite(src: Path, dst: Path, change) -> None:
    table = pq.read_table(src)
    table = change(table)
    pq.write_table(table, dst)


def test_unknown_format_version_is_refused(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)

    def bump(table):
        meta = json.loads(table.schema.metadata[METADATA_KEY.encode()])
        meta["format_version"] = 99
        return table.replace_schema_metadata({METADATA_KEY: json.dumps(meta)})

    _rewrite(path, tmp_path / "v99.parquet", bump)
    with pytest.raises(CorpusError, match="format version 99"):
        Store(tmp_path / "v99.parquet")


def test_unsafe_paths_in_a_store_are_refused(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)

    def escape(table):
        paths = ["../../escaped" if p.endswith("README") else p for p in table["path"].to_pylist()]
        return table.set_column(table.schema.get_field_index("path"), "path", pa.array(paths))

    _rewrite(path, tmp_path / "evil.parquet", escape)
    with pytest.raises(CorpusError, match="unsafe file path"):
        export_store(tmp_path / "evil.parquet", tmp_path / "out")
    assert not (tmp_path / "escaped").exists()
    assert not (tmp_path / "out").exists()


def test_a_failing_export_worker_leaves_nothing(tmp_path):
    src = small_corpus(tmp_path / "src")
    for k in range(3):
        shutil.copytree(src / "node" / "test_tiny", src / "node" / f"test_tiny{k}")
    path = tmp_path / "store.parquet"
    write_store(FolderSource(src), path, options=WriteOptions(row_group_bytes=1))

    def twice(table):  # the last case's README takes the path of the first case's
        paths = table["path"].to_pylist()
        readmes = [i for i, p in enumerate(paths) if p.endswith("README")]
        paths[readmes[-1]] = paths[readmes[0]]
        column = table.schema.get_field_index("path")
        return table.set_column(column, "path", pa.array(paths))

    evil = tmp_path / "evil.parquet"
    table = twice(pq.read_table(path))
    pq.write_table(table, evil, row_group_size=table.num_rows // 4)
    assert Store(evil).num_row_groups == 4
    with pytest.raises(CorpusError, match="already written"):
        export_store(evil, tmp_path / "out", jobs=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.parquet", "src", "store.parquet"]


def test_tampered_data_is_reported_with_its_file(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)

    def truncate(table):
        shapes = [[5] if s == [2] else s for s in table["shape"].to_pylist()]
        return table.set_column(
            table.schema.get_field_index("shape"), "shape", pa.array(shapes, pa.list_(pa.int64()))
        )

    _rewrite(path, tmp_path / "bad.parquet", truncate)
    with pytest.raises(
        CorpusError, match=r"node/test_tiny: node/test_tiny/test_data_set_0/input_0\.pb"
    ):
        export_store(tmp_path / "bad.parquet", tmp_path / "out")


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


def test_a_null_element_is_reported_with_its_own_file(tmp_path):
    cases = [c for c in NodeSuiteSource() if c.name.startswith("node/test_abs")]
    path = tmp_path / "store.parquet"
    write_store(cases, path)
    table = pq.read_table(path)
    data = table["data_float"].to_pylist()
    last = max(i for i, d in enumerate(data) if d)
    data[last][-1] = None
    column = table.schema.get_field_index("data_float")
    table = table.set_column(column, "data_float", pa.array(data, table["data_float"].type))
    pq.write_table(table, tmp_path / "bad.parquet")
    damaged = f"{table['test_case'][last]}: {table['path'][last]}"
    with pytest.raises(CorpusError, match="data_float holds a null element") as info:
        export_store(tmp_path / "bad.parquet", tmp_path / "out")
    assert f"bad.parquet: row group 0: {damaged}" in str(info.value)


@pytest.mark.parametrize("location", ["weights.bin", "../../outside.bin"])
def test_external_data_is_kept_as_bytes_and_never_read(tmp_path, location):
    root = small_corpus(tmp_path / "src")
    case = root / "node" / "test_tiny"
    (case / "weights.bin").write_bytes(np.array([-1.0, 2.0], np.float32).tobytes())
    (tmp_path / "outside.bin").write_bytes(b"secret")
    tensor = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[2])
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=location)
    (case / "test_data_set_0" / "input_0.pb").write_bytes(tensor.SerializeToString())
    summary = write_store(FolderSource(root), tmp_path / "store.parquet")
    assert any("external data" in w and "input_0.pb" in w for w in summary["warnings"])
    table = pq.read_table(tmp_path / "store.parquet", columns=["path", "role", "content"])
    contents = b"".join(c or b"" for c in table.column("content").to_pylist())
    assert b"secret" not in contents
    export_store(tmp_path / "store.parquet", tmp_path / "out")
    assert tree_bytes(tmp_path / "out") == tree_bytes(root)


@pytest.mark.parametrize("row_group_bytes", [1, 300_000, 4 << 20])
def test_the_store_is_the_same_whatever_the_number_of_jobs(tmp_path, monkeypatch, row_group_bytes):
    # small tasks, so that workers stop early and row groups are cut inside their pieces
    monkeypatch.setattr("onnx_arrow.corpus.store.TASK_CASES", 7)
    options = WriteOptions(row_group_bytes=row_group_bytes)
    one, two = tmp_path / "one.parquet", tmp_path / "two.parquet"
    seen: dict[int, list[str]] = {1: [], 2: []}
    summary = write_store(
        FolderSource(wheel_data_dir()),
        one,
        options=options,
        progress=lambda c: seen[1].append(c.name),
    )
    assert write_store(
        FolderSource(wheel_data_dir()),
        two,
        options=options,
        jobs=2,
        progress=lambda c: seen[2].append(c.name),
    ) == {**summary, "bytes": two.stat().st_size}
    assert one.read_bytes() == two.read_bytes()
    assert seen[1] == seen[2] == Store(one).cases()  # each case once, in store order
    assert Store(one).num_row_groups > (1 if row_group_bytes < (1 << 20) else 0)


def test_folder_layouts_round_trip(tmp_path):
    root = small_corpus(tmp_path / "src")
    case = root / "node" / "test_tiny"
    # a case folder inside a case folder belongs to the outer case, deep files too
    nested = case / "extra" / "inner"
    nested.mkdir(parents=True)
    (nested / "model.onnx").write_bytes((case / "model.onnx").read_bytes())
    (nested / "notes.txt").write_text("deep\n")
    # a light case (NAME.onnx, NAME_input_K.pb) beside a case folder of the same name
    light = root / "node"
    (light / "test_tiny.onnx").write_bytes((case / "model.onnx").read_bytes())
    (light / "test_tiny_input_0.pb").write_bytes(
        (case / "test_data_set_0" / "input_0.pb").read_bytes()
    )
    (light / "loose.txt").write_text("a file of no case\n")
    out = tmp_path / "store.parquet"
    summary = write_store(FolderSource(root), out)
    assert summary["files"] == 9
    store = Store(out)
    assert store.cases() == ["node", "node/test_tiny"]
    roles = dict(
        zip(
            *store.read_case("node/test_tiny", ["path", "role"]).to_pydict().values(),
            strict=True,
        )
    )
    assert roles["node/test_tiny/model.onnx"] == "model"
    assert roles["node/test_tiny/extra/inner/model.onnx"] == "file"
    assert roles["node/test_tiny_input_0.pb"] == "file"  # typed by no model: kept as bytes
    export_store(out, tmp_path / "dest")
    assert tree_bytes(tmp_path / "dest") == tree_bytes(root)


def test_node_suite_store_is_the_same_in_several_processes(node_store, tmp_path, monkeypatch):
    cases, path, summary = node_store
    monkeypatch.setattr("onnx_arrow.corpus.store.TASK_CASES", 50)  # cuts inside pieces
    two = tmp_path / "two.parquet"
    assert write_store(cases, two, jobs=2) == {**summary, "bytes": two.stat().st_size}
    assert two.read_bytes() == path.read_bytes()


_PEAK_MEMORY = """
import resource, sys
from pathlib import Path
from onnx_arrow.corpus import FolderSource, WriteOptions, export_store, write_store

def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20

mode, small, big, work = sys.argv[1], *(Path(p) for p in sys.argv[2:5])
options = WriteOptions(row_group_bytes=1 << 20)
write_store(FolderSource(small), work / f"small-{mode}.parquet", options=options)
export_store(work / f"small-{mode}.parquet", work / f"small-{mode}")  # modules warmed up
before = max(rss_mib(), peak_mib())
if mode == "import":
    write_store(FolderSource(big), work / "big.parquet", options=options)
else:
    export_store(work / "big.parquet", work / "big-out")
print(peak_mib() - before)
"""


def _big_corpus(root: Path, cases: int, like: Path | None = None) -> Path:
    """Cases of one 1 MiB tensor each; those ``like`` has already are hard links to it."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 1024])
    model = helper.make_model(helper.make_graph([], "g", [x], [x]))
    for k in range(cases):
        name = f"node/test_big_{k:03d}"
        case = root / name
        (case / "test_data_set_0").mkdir(parents=True)
        for rel in ("model.onnx", "test_data_set_0/input_0.pb"):
            if like is not None and (like / name / rel).exists():
                os.link(like / name / rel, case / rel)
        if (case / "model.onnx").exists():
            continue
        save_model(model, case / "model.onnx")
        data = (np.arange(256 * 1024, dtype=np.float32) % 97 + k).reshape(256, 1024)
        tensor = numpy_helper.from_array(data, "x").SerializeToString()
        (case / "test_data_set_0" / "input_0.pb").write_bytes(tensor)
    return root


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads Linux's /proc")
def test_import_and_export_memory_does_not_grow_with_the_corpus(tmp_path):
    # 16 and 80 cases of 1 MiB in row groups of 1 MiB: holding the corpus would cost the
    # larger one 64 MiB more; streaming costs both a few row groups and their buffers, and
    # the Parquet writer keeps each row group's metadata for the footer (about 48 KB)
    small = small_corpus(tmp_path / "small")
    few = _big_corpus(tmp_path / "few", 16)
    many = _big_corpus(tmp_path / "many", 80, like=few)
    grew = {}
    for corpus in (few, many):
        for mode in ("import", "export"):
            work = tmp_path / f"{corpus.name}-{mode}"
            work.mkdir()
            if mode == "export":
                shutil.copy(tmp_path / f"{corpus.name}-import" / "big.parquet", work)
            done = subprocess.run(
                [sys.executable, "-c", _PEAK_MEMORY, mode, str(small), str(corpus), str(work)],
                capture_output=True,
                text=True,
                check=True,
            )
            grew[corpus.name, mode] = float(done.stdout)
    for mode in ("import", "export"):
        assert grew["many", mode] - grew["few", mode] < 32, grew
    assert tree_bytes(tmp_path / "many-export" / "big-out") == tree_bytes(many)


def test_read_case_finds_rows_that_are_not_together(tmp_path):
    root = small_corpus(tmp_path / "src")
    (root / "node" / "loose.txt").write_text("a case of its own: node\n")
    path, scattered = tmp_path / "store.parquet", tmp_path / "scattered.parquet"
    write_store(FolderSource(root), path)
    table = pq.read_table(path)
    tiny = [i for i, c in enumerate(table.column("test_case").to_pylist()) if c != "node"]
    other = [i for i in range(table.num_rows) if i not in tiny]
    # one row of node/test_tiny first, then the other case, then the rest of node/test_tiny
    _rewrite(path, scattered, lambda t: t.take(tiny[:1] + other + tiny[1:]))
    for case in ("node", "node/test_tiny"):
        assert Store(scattered).read_case(case).equals(Store(path).read_case(case))
    assert Store(scattered).read_case("node/test_tiny", ["path"]).num_rows == len(tiny)


def test_case_files_rebuild_one_case(tmp_path):
    root = small_corpus(tmp_path / "src")
    path = tmp_path / "store.parquet"
    write_store(FolderSource(root), path)
    files = {f.path: f.data for f in Store(path).case_files("node/test_tiny")}
    assert files == tree_bytes(root)


def test_import_into_a_missing_folder_names_that_folder(tmp_path):
    missing = tmp_path / "no" / "such"
    with pytest.raises(CorpusError, match="does not exist; create it") as info:
        write_store(FolderSource(small_corpus(tmp_path / "src")), missing / "store.parquet")
    assert str(info.value).startswith(str(missing))


def test_a_store_path_that_is_not_a_regular_file_is_refused_at_once(tmp_path):
    """A FIFO would block the open for ever, as a store or as a dataset store's part."""
    import os
    import subprocess
    import sys

    from onnx_arrow.corpus import CorpusError

    fifo = tmp_path / "store.parquet"
    os.mkfifo(fifo)
    with pytest.raises(CorpusError, match=r"store\.parquet: a FIFO \(named pipe\), not a regular"):
        Store(fifo)
    with pytest.raises(CorpusError, match=r"store\.parquet: a FIFO \(named pipe\), not a regular"):
        Store(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match=r"empty: holds no \.parquet part"):
        Store(tmp_path / "empty")
    done = subprocess.run(
        [sys.executable, "-m", "onnx_arrow", "info", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "FIFO" in done.stderr


def test_a_row_without_a_path_is_refused_naming_it(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)

    def lose_a_path(table):
        paths = [None if p.endswith("README") else p for p in table["path"].to_pylist()]
        return table.set_column(table.schema.get_field_index("path"), "path", pa.array(paths))

    _rewrite(path, tmp_path / "damaged.parquet", lose_a_path)
    with pytest.raises(CorpusError, match=r"row \d+ of the row group has no path \(null\)"):
        export_store(tmp_path / "damaged.parquet", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_file_changed_in_the_store_fails_its_digest(tmp_path):
    path, forged = tmp_path / "store.parquet", tmp_path / "forged.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)

    def change(table: pa.Table) -> pa.Table:
        content = table.column("content").to_pylist()
        roles = table.column("role").to_pylist()
        k = roles.index("file")
        content[k] = content[k] + b"!"
        index = table.schema.get_field_index("content")
        return table.set_column(index, "content", pa.array(content, pa.binary()))

    _rewrite(path, forged, change)
    with pytest.raises(CorpusError, match=r"README: the file rebuilt from the rows is not"):
        export_store(forged, tmp_path / "out")
    assert not (tmp_path / "out").exists()


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


def _float_case(name: str, elements: int) -> Case:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [elements])
    model = helper.make_model(helper.make_graph([], "g", [x], [x]))
    data = numpy_helper.from_array(np.arange(elements, dtype=np.float32), "x").SerializeToString()
    files = [
        CorpusFile(f"{name}/model.onnx", model.SerializeToString()),
        CorpusFile(f"{name}/test_data_set_0/input_0.pb", data),
    ]
    return Case(name, "node", files, f"{name}/model.onnx")


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_large_case_is_a_row_group_of_its_own(tmp_path, jobs):
    """Reading one large case reads no other case's pages; small cases still share."""
    budget = 64 << 10
    quarter = budget // 4 // 4  # elements of float32 in a quarter of the budget
    sizes = [10, 10, quarter - 200, 10, quarter, 10]
    cases = [_float_case(f"node/test_{k}", n) for k, n in enumerate(sizes)]
    out = tmp_path / "store.parquet"
    write_store(cases, out, options=WriteOptions(row_group_bytes=budget), jobs=jobs)
    parquet = pq.ParquetFile(out)
    groups = [
        sorted(set(parquet.read_row_group(i, columns=["test_case"]).column(0).to_pylist()))
        for i in range(parquet.num_row_groups)
    ]
    assert groups == [
        ["node/test_0", "node/test_1", "node/test_2", "node/test_3"],
        ["node/test_4"],
        ["node/test_5"],
    ]
    store = Store(out)
    for case in cases:
        ((value,),) = [list(d["inputs"].values()) for d in store.case_arrays(case.name)]
        assert value.tobytes() == case.files[1].data[-value.nbytes :]


def test_float_columns_have_their_own_level(tmp_path):
    """The levels are given per Parquet column path, and every path is one of the file's (a
    path pyarrow does not know would silently take its default level)."""
    from onnx_arrow.corpus.store import _LEAVES, _levels

    out = tmp_path / "store.parquet"
    cases = [_float_case("node/test_noise", 50_000)]
    write_store(cases, out)
    schema = pq.ParquetFile(out).schema
    assert list(_LEAVES) == [schema.column(i).path for i in range(len(schema))]
    levels = _levels(WriteOptions())
    assert isinstance(levels, dict)
    assert levels["data_float.list.element"] == 1
    assert levels["data_int64.list.element"] == 3
    assert levels["content"] == 3
    assert levels["shape.list.element"] == 3
    assert _levels(WriteOptions(compression_level=7, float_compression_level=None)) == 7
    sizes = set()
    for level in (1, 19):
        path = tmp_path / f"store-{level}.parquet"
        write_store(cases, path, options=WriteOptions(float_compression_level=level))
        sizes.add(path.stat().st_size)
    assert len(sizes) == 2  # the float column's level is the one given

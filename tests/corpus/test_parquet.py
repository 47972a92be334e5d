"""The Parquet writer (corpus/parquet.py): a store any engine queries, written a row group
at a time, and the encoding and compression level of each column."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import TensorProto, helper
from store_helpers import float_case, one_data_set_case

from onnx_arrow.corpus import Store, parquet, write_store
from onnx_arrow.corpus.copies import RESOLVED_POLARS
from onnx_arrow.corpus.format import FORMAT_VERSION, METADATA_KEY, SCHEMA
from onnx_arrow.corpus.options import FLOAT_ENCODINGS, WriteOptions
from onnx_arrow.corpus.parquet import (
    _LEAVES,
    JUDGED_BYTES,
    StoreFile,
    _holds_values,
    _judged,
    float_encodings,
)
from onnx_arrow.errors import CorpusError


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
    # the documented view gives a repeated file's rows the payload of the file it names
    names: dict[str, Any] = {"pl": polars}
    exec(RESOLVED_POLARS.format(store=repr(str(path))), names)
    frame = (
        names["view"]
        .collect()
        .filter((polars.col("dtype") == "FLOAT8E4M3FN") & (polars.col("role") == "value"))
    )
    assert frame.height > 0
    assert frame["data_float8e4m3fn"].list.len().sum() == frame["count"].sum()
    meta = json.loads(pq.read_metadata(path).metadata[METADATA_KEY.encode()])
    assert meta["format_version"] == FORMAT_VERSION


def _unary(op: str) -> Any:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [40_000])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [40_000])
    return helper.make_model(helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g", [x], [y]))


def _relu_case(name: str, seed: int) -> Any:
    """A ReLU case: float32 noise in, max(x, 0) out (half of it exact zeros)."""
    x = np.random.default_rng(seed).standard_normal(40_000).astype(np.float32)
    return one_data_set_case(name, _unary("Relu"), x, np.maximum(x, 0))


def _noise_case(name: str, seed: int) -> Any:
    """A case of float32 noise in and its negation out: nothing repeats."""
    x = np.random.default_rng(seed).standard_normal(40_000).astype(np.float32)
    return one_data_set_case(name, _unary("Neg"), x, -x)


def _float_encodings(path: Path) -> list[str]:
    """The encoding of the data_float column chunk of each row group of a store."""
    meta = pq.ParquetFile(path).metadata
    column = list(_LEAVES).index("data_float.list.element")
    out = []
    for i in range(meta.num_row_groups):
        encodings = meta.row_group(i).column(column).encodings
        out.append("BYTE_STREAM_SPLIT" if "BYTE_STREAM_SPLIT" in encodings else "PLAIN")
    return out


def test_the_leaves_are_the_files_columns(tmp_path):
    """The levels and encodings are given per Parquet column path, and every path is one of
    the file's (a path pyarrow does not know would silently take its default)."""
    out = tmp_path / "store.parquet"
    write_store([float_case("node/test_noise", 1000)], out)
    schema = pq.ParquetFile(out).schema
    assert list(_LEAVES) == [schema.column(i).path for i in range(len(schema))]


def test_the_float_column_takes_the_encoding_that_compresses_its_data_best(tmp_path):
    cases = [_noise_case("node/test_a_noise", 1)]
    cases += [_relu_case(f"node/test_c_relu_{k}", k) for k in range(4)]
    out = tmp_path / "store.parquet"
    options = WriteOptions(row_group_bytes=1)  # a row group per case
    write_store(cases, out, options=options)
    # judged on every row group, not on the first (noise, which byte stream split takes)
    assert _float_encodings(out) == ["PLAIN"] * 5
    sizes = {}
    for encoding in FLOAT_ENCODINGS:
        path = tmp_path / f"{encoding}.parquet"
        write_store(cases, path, options=replace(options, float_encoding=encoding))
        sizes[encoding] = path.stat().st_size
        assert Store(path).case_files("node/test_c_relu_3") == Store(out).case_files(
            "node/test_c_relu_3"
        )
    assert sizes["auto"] == min(sizes["PLAIN"], sizes["BYTE_STREAM_SPLIT"])
    assert set(_float_encodings(tmp_path / "PLAIN.parquet")) == {"PLAIN"}
    assert set(_float_encodings(tmp_path / "BYTE_STREAM_SPLIT.parquet")) == {"BYTE_STREAM_SPLIT"}
    noise = tmp_path / "noise.parquet"
    write_store(cases[:1], noise, options=options)
    assert _float_encodings(noise) == ["BYTE_STREAM_SPLIT"]


def test_the_encodings_are_chosen_on_the_first_row_groups_and_kept(tmp_path, monkeypatch):
    """Row groups are held until they hold JUDGED_BYTES of float data; those after go
    straight to the file, in the encoding chosen."""
    monkeypatch.setattr(parquet, "JUDGED_BYTES", 100_000)
    cases = [_noise_case("node/test_a_noise", 100)]  # 320 KB of floats: judged alone
    cases += [_relu_case(f"node/test_relu_{k}", k) for k in range(3)]
    out = tmp_path / "store.parquet"
    write_store(cases, out, options=WriteOptions(row_group_bytes=1))
    assert _float_encodings(out) == ["BYTE_STREAM_SPLIT"] * 4
    for case in cases:
        got = Store(out).case_files(case.name)
        assert {f.path: f.data for f in got} == {f.path: f.data for f in case.files}
    # held at most HELD_BYTES, whatever their float data
    monkeypatch.setattr(parquet, "JUDGED_BYTES", 1 << 40)
    monkeypatch.setattr(parquet, "HELD_BYTES", 100_000)
    held = tmp_path / "held.parquet"
    write_store(cases, held, options=WriteOptions(row_group_bytes=1))
    assert _float_encodings(held) == ["BYTE_STREAM_SPLIT"] * 4
    monkeypatch.setattr(parquet, "HELD_BYTES", 1 << 40)
    whole = tmp_path / "whole.parquet"
    write_store(cases, whole, options=WriteOptions(row_group_bytes=1))
    assert _float_encodings(whole) == ["PLAIN"] * 4  # all of them judged


def test_a_chunk_is_judged_whole_up_to_judged_bytes_and_on_runs_spread_over_it_past():
    small = np.arange(1000, dtype=np.float32)
    (whole,) = _judged(small)
    assert whole.tolist() == small.tolist()
    large = np.arange(JUDGED_BYTES // 4 * 3, dtype=np.int32)  # 4 bytes each, exact
    runs = _judged(large)
    assert len(runs) == 8
    assert sum(r.nbytes for r in runs) == JUDGED_BYTES
    assert runs[0][0] == 0
    assert runs[-1][-1] == large[-1]
    starts = [int(r[0]) for r in runs]
    assert starts == sorted(starts)
    assert all(np.array_equal(r, np.arange(r[0], r[0] + r.size, dtype=np.int32)) for r in runs)
    # no floats to judge: byte stream split
    for tables in ([], [SCHEMA.empty_table()]):
        assert set(float_encodings(tables, WriteOptions()).values()) == {"BYTE_STREAM_SPLIT"}


def test_the_level_of_each_float_chunk_is_that_of_its_encoding(tmp_path):
    cases = [float_case("node/test_noise", 50_000)]
    sizes = {}
    for encoding in ("BYTE_STREAM_SPLIT", "PLAIN"):
        for float_level, level in ((1, 3), (19, 3), (1, 19)):
            path = tmp_path / f"{encoding}-{float_level}-{level}.parquet"
            options = WriteOptions(
                float_encoding=encoding,
                float_compression_level=float_level,
                compression_level=level,
            )
            write_store(cases, path, options=options)
            sizes[encoding, float_level, level] = path.stat().st_size
    # byte stream split chunks take float_compression_level, plain ones compression_level
    assert sizes["BYTE_STREAM_SPLIT", 1, 3] != sizes["BYTE_STREAM_SPLIT", 19, 3]
    assert sizes["PLAIN", 1, 3] == sizes["PLAIN", 19, 3]
    assert sizes["PLAIN", 1, 3] != sizes["PLAIN", 1, 19]


def test_every_column_is_compressed(tmp_path):
    out = tmp_path / "store.parquet"
    write_store([float_case("node/test_f", 1000)], out)
    group = pq.ParquetFile(out).metadata.row_group(0)
    chunks = [group.column(j) for j in range(group.num_columns)]
    codecs = {chunk.path_in_schema: chunk.compression for chunk in chunks}
    assert set(codecs) == set(_LEAVES)
    assert set(codecs.values()) == {"ZSTD"}
    got = Store(out).case_files("node/test_f")
    assert {f.path: f.data for f in got} == {
        f.path: f.data for f in float_case("node/test_f", 1000).files
    }


@pytest.mark.parametrize("compression", ["snappy", "gzip", "brotli", "lz4", "none"])
def test_a_store_takes_every_compression(tmp_path, compression):
    """Codecs with levels and without (snappy, lz4, none take none)."""
    out = tmp_path / "store.parquet"
    case = float_case("node/test_f", 1000)
    write_store([case], out, options=WriteOptions(compression=compression))
    group = pq.ParquetFile(out).metadata.row_group(0)
    codecs = {group.column(j).compression for j in range(group.num_columns)}
    assert codecs == {"UNCOMPRESSED" if compression == "none" else compression.upper()}
    got = Store(out).case_files("node/test_f")
    assert {f.path: f.data for f in got} == {f.path: f.data for f in case.files}


def test_what_holds_values():
    lists = pa.list_(pa.float32())
    assert not _holds_values(pa.chunked_array([pa.array([None, None], lists)]))
    assert not _holds_values(pa.chunked_array([pa.array([[], None, []], lists)]))
    assert not _holds_values(pa.chunked_array([], lists))
    assert _holds_values(pa.chunked_array([pa.array([[], [0.0]], lists)]))
    sliced = pa.array([[1.0], [], []], lists).slice(1)  # offsets not from 0
    assert not _holds_values(pa.chunked_array([sliced]))
    assert _holds_values(pa.chunked_array([pa.array([[1.0], []], lists).slice(0, 1)]))
    assert not _holds_values(pa.chunked_array([pa.array([None], pa.string())]))
    assert _holds_values(pa.chunked_array([pa.array(["", None], pa.string())]))


def test_the_encodings_given_are_the_ones_written(tmp_path):
    out = tmp_path / "store.parquet"
    write_store([_noise_case("node/test_n", 1)], out)
    table = pq.read_table(out)
    for encoding in ("PLAIN", "BYTE_STREAM_SPLIT"):
        path = tmp_path / f"{encoding}.parquet"
        with StoreFile(str(path), WriteOptions(float_encoding=encoding)) as store:
            store.append(table)
        assert _float_encodings(path) == [encoding]


def test_a_store_of_many_row_groups_reads_as_the_tables_written(tmp_path):
    """Row groups appended one by one: each where the footer says, in every reader."""
    duckdb = pytest.importorskip("duckdb")
    cases = [_relu_case(f"node/test_{k:02d}", k) for k in range(3)]
    cases += [float_case(f"node/test_f{k:02d}", 10 + k) for k in range(17)]
    out = tmp_path / "store.parquet"
    write_store(cases, out, options=WriteOptions(row_group_bytes=1))
    parquet = pq.ParquetFile(out)
    assert parquet.num_row_groups == 20  # more than 15: the list's size after its header
    meta = parquet.metadata
    assert meta.num_rows == sum(meta.row_group(i).num_rows for i in range(20))
    size = out.stat().st_size
    last = 0
    for i in range(20):
        group = meta.row_group(i)
        for j in range(group.num_columns):
            start = group.column(j).dictionary_page_offset or group.column(j).data_page_offset
            assert last <= start < size
            last = start
    table = pq.read_table(out)
    assert table.num_rows == meta.num_rows
    assert table.schema.metadata[METADATA_KEY.encode()]  # the store's metadata, once
    assert duckdb.sql(f"select count(*) from '{out}'").fetchall() == [(meta.num_rows,)]
    for case in cases:
        got = Store(out).case_files(case.name)
        assert {f.path: f.data for f in got} == {f.path: f.data for f in case.files}


def test_a_store_of_no_cases_has_the_stores_schema_and_metadata(tmp_path):
    out = tmp_path / "empty.parquet"
    write_store([], out)
    table = pq.read_table(out)
    assert table.num_rows == 0
    assert table.schema.remove_metadata() == SCHEMA
    assert json.loads(table.schema.metadata[METADATA_KEY.encode()])["format_version"] == (
        FORMAT_VERSION
    )
    assert Store(out).cases() == []


def test_a_table_of_another_schema_is_refused(tmp_path):
    path = tmp_path / "s.parquet"
    with StoreFile(str(path), WriteOptions()) as store:
        store.append(SCHEMA.empty_table())
        with pytest.raises(CorpusError, match="another schema") as refused:
            store.append(pa.table({"x": [1]}))
        assert refused.value.where == f"{path}: row group 1"
        assert "append only tables of onnx_arrow.corpus.format.SCHEMA" in str(refused.value)
        # a table of the store's schema still goes in
        store.append(SCHEMA.empty_table())
    assert pq.ParquetFile(path).num_row_groups == 2

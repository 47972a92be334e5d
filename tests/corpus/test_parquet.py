"""The Parquet writer (corpus/parquet.py): a store any engine queries, written a row group
at a time, and the encoding and compression level of each column chunk."""

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

from onnx_arrow.corpus import Store, write_store
from onnx_arrow.corpus._thrift import ThriftError
from onnx_arrow.corpus.format import FORMAT_VERSION, METADATA_KEY, SCHEMA
from onnx_arrow.corpus.options import FLOAT_ENCODINGS, WriteOptions
from onnx_arrow.corpus.parquet import (
    _LEAVES,
    SAMPLE_BYTES,
    WHOLE_ROWS,
    StoreFile,
    _holds_values,
    _sample,
    encode_row_group,
)


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


def test_each_float_chunk_takes_the_encoding_that_compresses_its_data_best(tmp_path):
    cases = [_relu_case("node/test_a_relu", 0), _noise_case("node/test_b_noise", 1)]
    cases += [_relu_case("node/test_c_relu", 2)]
    out = tmp_path / "store.parquet"
    options = WriteOptions(row_group_bytes=1)  # a row group per case
    write_store(cases, out, options=options)
    # a ReLU's output found in its input: plain; noise: byte stream split
    assert _float_encodings(out) == ["PLAIN", "BYTE_STREAM_SPLIT", "PLAIN"]
    sizes = {}
    for encoding in FLOAT_ENCODINGS:
        path = tmp_path / f"{encoding}.parquet"
        write_store(cases, path, options=replace(options, float_encoding=encoding))
        sizes[encoding] = path.stat().st_size
        assert Store(path).case_files("node/test_c_relu") == Store(out).case_files(
            "node/test_c_relu"
        )
    assert sizes["auto"] < min(sizes["PLAIN"], sizes["BYTE_STREAM_SPLIT"])
    assert set(_float_encodings(tmp_path / "PLAIN.parquet")) == {"PLAIN"}
    assert set(_float_encodings(tmp_path / "BYTE_STREAM_SPLIT.parquet")) == {"BYTE_STREAM_SPLIT"}


def test_a_chunk_of_no_floats_is_byte_stream_split_and_the_choice_samples_every_row():
    empty = pa.table({"data_float": pa.array([None, None], pa.list_(pa.float32()))})
    assert _sample(empty.column("data_float")) is None
    rows = [np.full(n, float(k), np.float32) for k, n in enumerate([100_000, 3, 0, 50_000])]
    column = pa.chunked_array([pa.array(rows, pa.list_(pa.float32()))])
    sample = _sample(column)
    assert sample is not None
    assert sample.nbytes <= SAMPLE_BYTES
    # the first elements of every row that has any, in row order
    assert sorted(set(sample.tolist())) == [0.0, 1.0, 3.0]
    assert sample[0] == 0.0
    assert sample[-1] == 3.0
    # many small tensors: tried whole
    many = [np.full(700, float(k), np.float32) for k in range(WHOLE_ROWS)]
    column = pa.chunked_array([pa.array(many, pa.list_(pa.float32()))])
    whole = _sample(column)
    assert whole is not None
    assert whole.nbytes > SAMPLE_BYTES
    assert whole.tolist() == np.concatenate(many).tolist()


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


def test_a_column_chunk_without_values_is_not_compressed(tmp_path):
    out = tmp_path / "store.parquet"
    write_store([float_case("node/test_f", 1000)], out)
    table = pq.read_table(out)
    group = pq.ParquetFile(out).metadata.row_group(0)
    chunks = [group.column(j) for j in range(group.num_columns)]
    codecs = {chunk.path_in_schema: chunk.compression for chunk in chunks}
    assert set(codecs) == set(_LEAVES)
    for leaf, codec in codecs.items():
        column = table.column(leaf.split(".", 1)[0])
        assert codec == ("ZSTD" if _holds_values(column) else "UNCOMPRESSED"), leaf
    assert codecs["data_float.list.element"] == codecs["test_case"] == "ZSTD"
    assert (
        codecs["data_double.list.element"]
        == codecs["data_complex64.list.element.list.element"]
        == "UNCOMPRESSED"
    )
    got = Store(out).case_files("node/test_f")
    assert {f.path: f.data for f in got} == {
        f.path: f.data for f in float_case("node/test_f", 1000).files
    }


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
        part = encode_row_group(table, WriteOptions(), {"data_float": encoding})
        meta = pq.ParquetFile(pa.BufferReader(part)).metadata.row_group(0)
        leaf = next(
            meta.column(j)
            for j in range(meta.num_columns)
            if meta.column(j).path_in_schema == "data_float.list.element"
        )
        assert encoding in leaf.encodings


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


def test_a_part_of_another_schema_is_refused(tmp_path):
    with StoreFile(str(tmp_path / "s.parquet"), WriteOptions()) as store:
        sink = pa.BufferOutputStream()
        pq.write_table(pa.table({"x": [1]}), sink)
        with pytest.raises(ThriftError, match="another schema") as refused:
            store.append(sink.getvalue().to_pybytes())
        assert refused.value.where == f"{tmp_path / 's.parquet'}: row group 0"
        assert "append only what encode_row_group returns" in str(refused.value)
        with pytest.raises(ThriftError, match="not a Parquet file"):
            store.append(b"PAR1 not parquet")
        # a part of the store's schema still goes in
        store.append(encode_row_group(SCHEMA.empty_table(), WriteOptions()))
    assert pq.ParquetFile(tmp_path / "s.parquet").num_row_groups == 1

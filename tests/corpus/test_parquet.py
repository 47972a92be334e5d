"""The Parquet writer (corpus/parquet.py): a store any engine queries, and the compression
level of each column."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from store_helpers import float_case

from onnx_arrow.corpus import (
    write_store,
)
from onnx_arrow.corpus.format import FORMAT_VERSION, METADATA_KEY
from onnx_arrow.corpus.options import WriteOptions


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


def test_float_columns_have_their_own_level(tmp_path):
    """The levels are given per Parquet column path, and every path is one of the file's (a
    path pyarrow does not know would silently take its default level)."""
    from onnx_arrow.corpus.parquet import _LEAVES, _levels

    out = tmp_path / "store.parquet"
    cases = [float_case("node/test_noise", 50_000)]
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

"""Every row group of a store, written with a page index and without, read by each engine
that reads Parquet (pyarrow, DuckDB, Polars, DataFusion with its page index on) gives
what pyarrow reads: every offset of the file (pages, dictionaries, the page index) is
where it points.  A case's rows are asked for by its name, which engines prune row groups
and pages with (the statistics and the page index), and the store is read whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import TensorProto, helper
from store_helpers import float_case, one_data_set_case

from onnx_arrow.corpus import write_dataset, write_store
from onnx_arrow.corpus.options import WriteOptions


def _relu_case(name: str, seed: int) -> object:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [5_000])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [5_000])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    )
    data = np.random.default_rng(seed).standard_normal(5_000).astype(np.float32)
    return one_data_set_case(name, model, data, np.maximum(data, 0))


def _cases() -> list[object]:
    cases = [_relu_case(f"node/test_relu_{k:02d}", k) for k in range(4)]
    return cases + [float_case(f"node/test_f{k:02d}", 10 + 7 * k) for k in range(14)]


@pytest.fixture(scope="module", params=[False, True], ids=["without-page-index", "page-index"])
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, bool]:
    out = tmp_path_factory.mktemp("readers") / "store.parquet"
    options = WriteOptions(row_group_bytes=1, page_index=request.param)  # a row group a case
    write_store(_cases(), out, options=options)  # type: ignore[arg-type]
    return out, request.param


def _duckdb(path: Path, case: str | None) -> pa.Table:
    duckdb = pytest.importorskip("duckdb")
    where = "" if case is None else f" where test_case = '{case}'"
    relation = duckdb.sql(f"select * from '{path}'{where}")
    if hasattr(relation, "to_arrow_table"):  # DuckDB 1.4 and later
        return relation.to_arrow_table()
    return relation.arrow()


def _polars(path: Path, case: str | None) -> pa.Table:
    pl = pytest.importorskip("polars")
    frame = pl.scan_parquet(path)
    if case is not None:
        frame = frame.filter(pl.col("test_case") == case)
    return frame.collect().to_arrow()


def _datafusion(path: Path, case: str | None) -> pa.Table:
    datafusion = pytest.importorskip("datafusion")
    config = (
        datafusion.SessionConfig()
        .set("datafusion.execution.parquet.enable_page_index", "true")
        .set("datafusion.execution.parquet.pushdown_filters", "true")
    )
    context = datafusion.SessionContext(config)
    context.register_parquet("store", str(path))
    where = "" if case is None else f" where test_case = '{case}'"
    return context.sql(f"select * from store{where}").to_arrow_table()


ENGINES: dict[str, Callable[[Path, str | None], pa.Table]] = {
    "duckdb": _duckdb,
    "polars": _polars,
    "datafusion": _datafusion,
}


def _same(got: pa.Table, want: pa.Table) -> bool:
    schema = want.schema.remove_metadata()
    got = got.select(schema.names).cast(schema)
    return got.sort_by("path").equals(want.sort_by("path"))


def test_the_store_holds_a_page_index_where_asked(store: tuple[Path, bool]) -> None:
    path, asked = store
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == len(_cases()) > 15  # the list's size after its header
    chunks = [
        meta.row_group(i).column(j)
        for i in range(meta.num_row_groups)
        for j in range(meta.num_columns)
    ]
    assert {chunk.has_offset_index for chunk in chunks} == {asked}
    assert asked in {chunk.has_column_index for chunk in chunks}


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_every_row_group_reads_as_pyarrow_reads_it(store: tuple[Path, bool], engine: str) -> None:
    path, _ = store
    parquet = pq.ParquetFile(path)
    whole = parquet.read().replace_schema_metadata(None)
    assert _same(ENGINES[engine](path, None), whole)
    for i in range(parquet.num_row_groups):
        group = parquet.read_row_group(i).replace_schema_metadata(None)
        (case,) = group.column("test_case").unique().to_pylist()
        assert _same(ENGINES[engine](path, case), group), (engine, i, case)


def test_a_dataset_store_appended_to_with_a_page_index_reads_in_every_engine(
    tmp_path: Path,
) -> None:
    cases = _cases()
    options = WriteOptions(row_group_bytes=1, page_index=True)
    out = tmp_path / "store"
    write_dataset(cases[:9], out, options=options)  # type: ignore[arg-type]
    write_dataset(cases[9:], out, options=options, append=True)  # type: ignore[arg-type]
    parts = sorted(out.rglob("*.parquet"))
    assert len(parts) == 2
    for part in parts:
        parquet = pq.ParquetFile(part)
        for engine, read in ENGINES.items():
            for i in range(parquet.num_row_groups):
                group = parquet.read_row_group(i).replace_schema_metadata(None)
                (case,) = group.column("test_case").unique().to_pylist()
                assert _same(read(part, case), group), (engine, part.name, i)

"""The public row decoder: store rows of whole cases, in any order, from any engine."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from store_helpers import same

from onnx_arrow.corpus import (
    REQUIRED_COLUMNS,
    CorpusError,
    NodeSuiteSource,
    Store,
    case_data_sets,
    cases_from_rows,
    write_store,
)
from onnx_arrow.errors import UnsupportedTypeError

#: Tensors of many dtypes, sequences, optionals (absent, empty and present).
_PATTERNS = ("node/test_seq*", "node/test_optional*", "node/test_abs", "node/test_cast_*")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cases = [c for c in NodeSuiteSource() if any(fnmatch.fnmatch(c.name, p) for p in _PATTERNS)]
    path = tmp_path_factory.mktemp("decode") / "store.parquet"
    write_store(cases, path)
    return path


def test_decoded_cases_are_what_the_store_gives(store: Path) -> None:
    s = Store(store)
    decoded = cases_from_rows(pq.read_table(store))
    assert [c.name for c in decoded] == s.cases()
    kinds = set()
    for case in decoded:
        assert case.model == s.model(case.name)
        assert case.kind == "node"
        assert same(case.data_sets(), s.case_arrays(case.name)), case.name
        kinds |= {v.kind.name for v in case.values}
    assert kinds == {"tensor", "sequence", "optional"}


@pytest.mark.parametrize("seed", [0, 1])
def test_shuffled_rows_decode_to_the_same_values(store: Path, seed: int) -> None:
    table = pq.read_table(store)
    shuffled = table.take(np.random.default_rng(seed).permutation(table.num_rows))
    expected = {c.name: c.data_sets() for c in cases_from_rows(table)}
    decoded = cases_from_rows(shuffled)
    assert sorted(c.name for c in decoded) == sorted(expected)
    for case in decoded:
        assert same(case.data_sets(), expected[case.name]), case.name
    # cases come in the order they first appear in the rows
    first = pc.unique(shuffled.column("test_case")).to_pylist()
    assert [c.name for c in decoded] == first


def test_rows_from_polars_pandas_and_duckdb_decode(store: Path) -> None:
    import duckdb

    table = pq.read_table(store)
    expected = {c.name: c.data_sets() for c in cases_from_rows(table)}
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    assert frame.schema["content"] == pl.Binary  # exported as binary_view, lists as large_list
    relation = duckdb.sql(f"SELECT * FROM read_parquet('{store}') WHERE kind = 'node'")
    for rows in (frame, table.to_pandas(types_mapper=pd.ArrowDtype), relation):
        decoded = cases_from_rows(rows)
        assert {c.name for c in decoded} == set(expected)
        for case in decoded:
            assert same(case.data_sets(), expected[case.name]), (type(rows), case.name)


def _case_rows(table: pa.Table, case: str) -> pa.Table:
    return table.filter(pc.equal(table.column("test_case"), case))


def test_a_duplicated_row_is_refused_naming_it(store: Path) -> None:
    table = pq.read_table(store)
    rows = _case_rows(table, "node/test_abs")
    with pytest.raises(CorpusError, match=r"node/test_abs: case_row 2 appears more than once"):
        cases_from_rows(pa.concat_tables([table, rows.slice(2, 1)]))


def test_a_missing_row_is_refused_naming_it(store: Path) -> None:
    table = pq.read_table(store)
    rows = _case_rows(table, "node/test_abs")
    keep = np.ones(rows.num_rows, dtype=bool)
    keep[1] = False
    with pytest.raises(CorpusError, match=r"node/test_abs: 2 of its 3 rows .*case_row 1 missing"):
        cases_from_rows(rows.filter(pa.array(keep)))


def test_part_of_a_case_is_refused(store: Path) -> None:
    table = pq.read_table(store)
    sequences = _case_rows(table, "node/test_sequence_insert_at_back")
    assert sequences.num_rows > 4
    with pytest.raises(CorpusError, match=r"whole cases"):
        cases_from_rows(sequences.slice(0, sequences.num_rows - 1), where="task 7")
    with pytest.raises(CorpusError, match=r"^task 7: node/test_sequence_insert_at_back:"):
        cases_from_rows(sequences.slice(1), where="task 7")


def test_rows_of_two_stores_of_one_case_are_refused(store: Path) -> None:
    table = pq.read_table(store)
    rows = _case_rows(table, "node/test_abs")
    forged = rows.set_column(
        rows.schema.get_field_index("case_rows"),
        "case_rows",
        pa.array([9] * rows.num_rows, pa.int32()),
    )
    with pytest.raises(CorpusError, match=r"disagree on case_rows"):
        cases_from_rows(pa.concat_tables([rows.slice(0, 1), forged.slice(1)]))


def test_missing_and_mistyped_columns_are_refused(store: Path) -> None:
    table = pq.read_table(store)
    with pytest.raises(CorpusError, match=r"no column 'case_row'"):
        cases_from_rows(table.drop_columns(["case_row"]))
    shape = table.column("shape").cast(pa.list_(pa.string()))
    with pytest.raises(CorpusError, match=r"column shape is list<item: string>"):
        cases_from_rows(table.set_column(table.schema.get_field_index("shape"), "shape", shape))
    with pytest.raises(CorpusError, match=r"rows of type str"):
        cases_from_rows("store.parquet")
    nulls = table.set_column(
        table.schema.get_field_index("case_row"), "case_row", pa.nulls(table.num_rows, pa.int32())
    )
    with pytest.raises(CorpusError, match=r"rows have no case_row"):
        cases_from_rows(nulls)


def test_no_rows_decode_to_no_cases(store: Path) -> None:
    assert cases_from_rows(pq.read_table(store, columns=list(REQUIRED_COLUMNS)).slice(0, 0)) == []


def test_case_data_sets_take_a_model_and_stored_values(store: Path) -> None:
    s = Store(store)
    model, values = s.model("node/test_abs"), list(s.values("node/test_abs"))
    arrays = case_data_sets(model, iter(values))  # any iterable, read as it is checked
    assert same(arrays, s.case_arrays("node/test_abs"))
    for junk in (None, values[0], model.graph, b""):
        with pytest.raises(UnsupportedTypeError, match=r"^case_data_sets\(model\): expected"):
            case_data_sets(junk, values)
    with pytest.raises(UnsupportedTypeError, match=r"^case_data_sets\(values\): expected"):
        case_data_sets(model, None)
    with pytest.raises(UnsupportedTypeError, match=r"^case_data_sets\(values\)\[1\]: "):
        case_data_sets(model, [values[0], model])
    lazy = (v for v in [values[0], 1])
    with pytest.raises(UnsupportedTypeError, match=r"^case_data_sets\(values\)\[1\]: "):
        case_data_sets(model, lazy)


def test_a_claimed_row_count_is_checked_against_the_rows_before_any_allocation(
    store: Path,
) -> None:
    import tracemalloc

    rows = _case_rows(pq.read_table(store), "node/test_abs")
    claimed = 2**31 - 1
    forged = rows.set_column(
        rows.schema.get_field_index("case_rows"),
        "case_rows",
        pa.array([claimed] * rows.num_rows, pa.int32()),
    )
    tracemalloc.start()
    try:
        with pytest.raises(
            CorpusError,
            match=rf"node/test_abs: 3 of its {claimed} rows are here \(case_row 3, 4, 5, 6, 7 "
            rf"\.\.\. \({claimed - 3} in all\) missing\)",
        ):
            cases_from_rows(forged)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"{peak} bytes allocated to check {rows.num_rows} rows"


def _nan_sign_cleared(table: pa.Table, column: str) -> tuple[pa.Table, set[tuple[str, str]]]:
    """``table`` with every -NaN of a float data column turned to +NaN, as an engine's
    Parquet writer may rewrite NaN bits, and the (case, path) of the rows it changed."""
    col = table.column(column).combine_chunks()
    values = col.values.to_numpy(zero_copy_only=False).copy()
    bits = values.view(np.uint32 if values.dtype == np.float32 else np.uint64)
    negative = np.isnan(values) & np.signbit(values)
    bits[negative] &= bits.dtype.type(np.iinfo(bits.dtype).max >> 1)
    offsets = col.offsets.to_numpy()
    rows = {int(np.searchsorted(offsets, k, side="right")) - 1 for k in np.flatnonzero(negative)}
    changed = {
        (table.column("test_case")[r].as_py(), table.column("path")[r].as_py()) for r in rows
    }
    rewritten = pa.ListArray.from_arrays(col.offsets, pa.array(values), mask=col.is_null())
    i = table.schema.get_field_index(column)
    return table.set_column(i, table.schema.field(i), rewritten.cast(col.type)), changed


@pytest.mark.parametrize("column", ["data_float", "data_float16", "data_float8e4m3fn"])
def test_rows_whose_nan_bits_were_rewritten_are_refused_naming_the_file(
    store: Path, column: str
) -> None:
    table = pq.read_table(store, columns=list(REQUIRED_COLUMNS))
    rewritten, changed = _nan_sign_cleared(table, column)
    assert changed  # the store holds -NaN in this column
    case = sorted(changed)[0][0]
    rows = rewritten.filter(pc.equal(rewritten.column("test_case"), case))
    with pytest.raises(CorpusError) as info:  # the files its copies name among the sources
        cases_from_rows(rows, where="task 3", sources=rewritten)
    message = str(info.value)
    assert any(
        message.startswith(f"task 3: {case}: {p}: the file") for c, p in changed if c == case
    )
    assert ": the file rebuilt from the rows is not the file imported (its digest " in message
    assert "differ from the digest recorded at import (BLAKE2b-128 " in message
    assert "the value holds NaN: an engine's Parquet writer that rewrites NaN bits" in message
    assert "import the corpus again, or read the store onnx-arrow wrote" in message
    # the unchanged rows pass; without the digest column (a store written before digests)
    # the same rows decode unchecked
    own = table.filter(pc.equal(table["test_case"], case))
    assert [c.name for c in cases_from_rows(own, sources=table)] == [case]
    assert cases_from_rows(rows.drop_columns(["digest"]), sources=table)[0].name == case


def test_a_float8_nan_code_rewritten_is_refused(store: Path) -> None:
    """Code 0xff (-NaN) turned to 0x7f (+NaN) in data_float8e4m3fn, as DuckDB's dictionary
    writer gives every NaN the bits of the first."""
    table = pq.read_table(store, columns=list(REQUIRED_COLUMNS))
    rewritten, changed = _nan_sign_cleared(table, "data_float8e4m3fn")
    for case in sorted({c for c, _ in changed}):
        rows = rewritten.filter(pc.equal(rewritten.column("test_case"), case))
        with pytest.raises(CorpusError, match=r"the value holds NaN"):
            cases_from_rows(rows, sources=rewritten)
    untouched = rewritten.filter(
        pc.invert(
            pc.is_in(rewritten.column("test_case"), pa.array(sorted({c for c, _ in changed})))
        )
    )
    assert len(cases_from_rows(untouched, sources=table)) == len(Store(store).cases()) - len(
        {c for c, _ in changed}
    )


def test_a_store_rewritten_by_duckdbs_parquet_writer_is_refused_naming_the_file(
    store: Path, tmp_path: Path
) -> None:
    """DuckDB's COPY gives every NaN of a dictionary-encoded float column the bits of the
    first: the float8 casts' -NaN codes come back as +NaN, no error from DuckDB."""
    import duckdb

    copy = tmp_path / "copy.parquet"
    duckdb.sql(f"COPY (SELECT * FROM read_parquet('{store}')) TO '{copy}' (FORMAT parquet)")
    with pytest.raises(CorpusError) as info:
        cases_from_rows(pq.read_table(copy), where="copy.parquet")
    message = str(info.value)
    assert re.match(r"copy\.parquet: (node/test_cast\w+): \1/test_data_set_0/\w+\.pb: ", message)
    assert "the bytes rebuilt from the rows differ from the digest recorded at import" in message
    assert "the value holds NaN: an engine's Parquet writer that rewrites NaN bits" in message


@pytest.mark.parametrize("backend", ["numpy", "pyarrow"])
def test_dask_partitions_of_either_backend_decode(store: Path, backend: str) -> None:
    """Dask's default backend holds integers with nulls as float64 and lists as object
    cells of ndarrays (NaN elements among them); its pyarrow backend holds Arrow dtypes:
    both decode to the store's values."""
    dd = pytest.importorskip("dask.dataframe")
    expected = {c.name: c.data_sets() for c in cases_from_rows(pq.read_table(store))}
    kwargs = {"dtype_backend": "pyarrow"} if backend == "pyarrow" else {}
    frame = dd.read_parquet(str(store), **kwargs)
    parts = [part.compute() for part in frame.to_delayed()]
    if backend == "numpy":
        assert str(parts[0]["data_set"].dtype) == "float64"  # its nulls made it float
    decoded = [c for part in parts for c in cases_from_rows(part)]
    assert sorted(c.name for c in decoded) == sorted(expected)
    for case in decoded:
        assert same(case.data_sets(), expected[case.name]), case.name


def test_a_float_that_is_no_integer_in_an_integer_column_names_the_route(store: Path) -> None:
    frame = pq.read_table(store).to_pandas()
    frame["data_set"] = frame["data_set"].astype("float64")
    frame.loc[frame.index[1], "data_set"] = 0.5
    with pytest.raises(CorpusError, match=r"column data_set: .*0\.5.*dtype_backend=\"pyarrow\""):
        cases_from_rows(frame, where="partition 3")

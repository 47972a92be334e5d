"""The engines beyond the interchange matrix: Hugging Face datasets, Dask's pyarrow backend,
Lance, DataFusion (both ways it reads Parquet) and Polars on complex tensors, each column
kind in the three forms (canonical, exact, portable), with the real engines; and stores
read by DataFusion (a dataset folder) and Ray (one block).

Each cell has one measured outcome (:func:`expected`), as in ``tests/test_interchange.py``:

``same``
    the same messages as the original column (``from_portable`` first for the portable
    form: the types come from the rows' type columns, no schema needed; passing the schema
    gives the same);
``error``
    an :class:`onnx_arrow.OnnxArrowError` that names the route that works;
``engine-fails``
    the engine raises (or panics) before onnx-arrow sees the data: the route that works is
    pinned beside it (the portable form, or an engine option).

The writer round trips (:func:`measure_writer`): each (column, form), written to Parquet by
pyarrow, written again by an engine's own Parquet writer (DuckDB's ``COPY ... TO``, Polars'
``write_parquet``, Spark's ``write.parquet``) and read back by pyarrow, the forms including
the digests (``to_arrow(exact=True, digest=True)``, ``to_portable(digest=True)``), and a
column of 20 FLOAT tensors ``[NaN, -NaN, 1.0]``, whose NaN bits DuckDB's and Spark's writers
rewrite: there the portable form is a located error by default (its float digests) and with
the full digests alike.

No cell may be silently wrong.  The full matrix is slow (``pytest -m slow``);
by default a row of it per engine runs (for the writers: the NaN column).
``PYTHONPATH=.:tests python tests/test_engines.py`` prints the matrix as measured, with the
interchange matrix's counts beside it.

Dask's ``read_parquet`` fails in Dask itself on the exact form, bool tensors, sequences,
maps and sparse tensors: it builds its metadata from an empty table, which pyarrow 26
cannot make of ``onnx.message`` or of an extension type nested in another;
``dd.from_map`` over frames of Arrow dtypes (:func:`read_arrow_backed`) takes its metadata
from a partition, and gives every column the same.
DataFusion reads Parquet with ``skip_metadata=True`` by default, which drops the extension
types of top-level columns (nested ones survive: sequences and maps come back the same);
``read_parquet(path, skip_metadata=False)`` keeps them.  Lance refuses ``arrow.bool8``
inside a tensor and panics writing any ``fixed_size_list<binary>`` (a STRING tensor of one
shape), in every form; it drops the not-null flag of a complex tensor's parts, which
onnx-arrow accepts.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import helper, numpy_helper
from test_interchange import COLUMNS as INTERCHANGE_COLUMNS
from test_interchange import EXPECTED as INTERCHANGE_EXPECTED

import onnx_arrow
from onnx_arrow.errors import OnnxArrowError


def _sparse() -> Any:
    values = numpy_helper.from_array(np.array([1.5, np.nan], np.float32), "v")
    return helper.make_sparse_tensor(values, numpy_helper.from_array(np.int64([1, 3]), "i"), [4])


COLUMNS: dict[str, Callable[[], list[Any]]] = {
    **INTERCHANGE_COLUMNS,
    "sparse": lambda: [_sparse(), _sparse()],
    "complex64": lambda: [
        numpy_helper.from_array(np.array([1 + 2j, -3j, np.nan], np.complex64), "c")
        for _ in range(2)
    ],
}
FORMS = ("canonical", "exact", "portable")
ENGINES = (
    "datasets",
    "dask_pyarrow",
    "dask_from_map",
    "lance",
    "datafusion",
    "datafusion_metadata",
    "polars",
)


def read_arrow_backed(path: str) -> Any:
    """A Parquet file as a pandas frame of Arrow dtypes: the partitions of Dask's
    ``from_map`` route, whose metadata Dask takes from a partition (its ``read_parquet``
    builds it from an empty table, which pyarrow 26 cannot make of every type)."""
    import pandas as pd

    return pq.read_table(path).to_pandas(types_mapper=pd.ArrowDtype)


def _original(column: str, form: str) -> pa.Array:
    return onnx_arrow.to_arrow(COLUMNS[column](), exact=form == "exact")


def _reference(column: str, form: str) -> list[bytes]:
    if form == "exact":
        return [m.SerializeToString() for m in COLUMNS[column]()]
    return [m.SerializeToString() for m in onnx_arrow.from_arrow(_original(column, form))]


def _table(column: str, form: str) -> pa.Table:
    table = pa.table({column: _original(column, form)})
    return onnx_arrow.to_portable(table) if form == "portable" else table


def _through(engine: str, table: pa.Table, folder: Path) -> pa.Table:
    """What ``engine`` hands back of ``table``, written as Parquet (Lance: its own format)
    under ``folder``."""
    path = folder / "data.parquet"
    pq.write_table(table, path)
    if engine == "datasets":
        datasets = pytest.importorskip("datasets")
        return datasets.Dataset.from_parquet(str(path), cache_dir=str(folder / "cache")).data.table
    if engine == "dask_pyarrow":
        dd = pytest.importorskip("dask.dataframe")
        frame = dd.read_parquet(str(path), dtype_backend="pyarrow").compute()
        return pa.Table.from_pandas(frame, preserve_index=False)
    if engine == "dask_from_map":
        dd = pytest.importorskip("dask.dataframe")
        frame = dd.from_map(read_arrow_backed, [str(path)]).compute()
        return pa.Table.from_pandas(frame, preserve_index=False)
    if engine == "lance":
        lance = pytest.importorskip("lance")
        lance.write_dataset(table, folder / "data.lance")
        return lance.dataset(folder / "data.lance").to_table()
    if engine.startswith("datafusion"):
        datafusion = pytest.importorskip("datafusion")
        context = datafusion.SessionContext()
        skip = engine == "datafusion"  # DataFusion's default
        return pa.table(context.read_parquet(str(path), skip_metadata=skip))
    assert engine == "polars"
    pl = pytest.importorskip("polars")
    return pa.table(pl.from_arrow(table))


@dataclass(frozen=True)
class Outcome:
    kind: str  # same, error, engine-fails, leaks, wrong
    detail: str = ""  # the exception's type name
    message: str = ""


def measure(engine: str, column: str, form: str, folder: Path) -> Outcome:
    table = _table(column, form)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            read = _through(engine, table, folder)
    except pytest.skip.Exception:
        raise
    except BaseException as exc:  # Lance panics: pyo3's PanicException is a BaseException
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        return Outcome("engine-fails", type(exc).__name__, str(exc))
    try:
        if form == "portable":
            schema = pa.table({column: _original(column, "canonical")}).schema
            with_schema = _messages(onnx_arrow.from_portable(read, schema).column(column))
            read = onnx_arrow.from_portable(read)
            assert _messages(read.column(column)) == with_schema
        got = _messages(read.column(column))
    except OnnxArrowError as exc:
        return Outcome("error", type(exc).__name__, str(exc))
    except Exception as exc:
        return Outcome("leaks", type(exc).__name__, str(exc))
    want = _reference(column, "exact" if form == "exact" else "canonical")
    return Outcome("same") if got == want else Outcome("wrong", "", f"{len(got)} rows differ")


def _messages(column: Any) -> list[bytes]:
    return [m.SerializeToString() for m in onnx_arrow.from_arrow(column)]


WRITERS = ("duckdb_copy", "polars_write", "spark_write")
WRITER_FORMS = ("canonical", "exact", "exact_digest", "portable", "portable_digest")
#: 20 FLOAT tensors [NaN (0x7fc00000), -NaN (0xffc00000), 1.0]: the bits engines' writers
#: rewrite (DuckDB's COPY once it dictionary-encodes, at 20 rows; Spark's writer always).
NAN_BITS = np.array([0x7FC00000, 0xFFC00000, 0x3F800000], np.uint32)
WRITER_COLUMNS: dict[str, Callable[[], list[Any]]] = {
    **COLUMNS,
    "nan_bits": lambda: [numpy_helper.from_array(NAN_BITS.view(np.float32), "n")] * 20,
}


def _writer_table(column: str, form: str) -> pa.Table:
    exact = form.startswith("exact")
    values = WRITER_COLUMNS[column]()
    table = pa.table(
        {column: onnx_arrow.to_arrow(values, exact=exact, digest=form == "exact_digest")}
    )
    if form.startswith("portable"):
        return onnx_arrow.to_portable(table, digest=form == "portable_digest")
    return table


def _writer_reference(column: str, form: str) -> list[bytes]:
    values = WRITER_COLUMNS[column]()
    if form.startswith("exact"):
        return [m.SerializeToString() for m in values]
    return _messages(onnx_arrow.to_arrow(values))


def _rewritten(writer: str, path: Path, folder: Path, spark: Any) -> pa.Table:
    """``path`` read and written again by ``writer``'s own Parquet writer, read back by
    pyarrow."""
    out = folder / f"{writer}.parquet"
    if writer == "duckdb_copy":
        duckdb = pytest.importorskip("duckdb")
        duckdb.sql(f"COPY (SELECT * FROM '{path}') TO '{out}' (FORMAT parquet)")
    elif writer == "polars_write":
        pl = pytest.importorskip("polars")
        pl.read_parquet(path).write_parquet(out)
    else:
        assert writer == "spark_write"
        spark.read.parquet(str(path)).write.parquet(str(out))
    return pq.read_table(out)


def measure_writer(writer: str, column: str, form: str, folder: Path, spark: Any = None) -> Outcome:
    """What comes back of a (column, form) written to Parquet by pyarrow, written again by
    ``writer``, and read by pyarrow (``from_portable`` first for the portable forms)."""
    path = folder / "data.parquet"
    pq.write_table(_writer_table(column, form), path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            read = _rewritten(writer, path, folder, spark)
    except pytest.skip.Exception:
        raise
    except Exception as exc:
        return Outcome("engine-fails", type(exc).__name__, str(exc))
    try:
        if form.startswith("portable"):
            read = onnx_arrow.from_portable(read)
        got = _messages(read.column(column))
    except OnnxArrowError as exc:
        return Outcome("error", type(exc).__name__, str(exc))
    except Exception as exc:
        return Outcome("leaks", type(exc).__name__, str(exc))
    want = _writer_reference(column, form)
    return Outcome("same") if got == want else Outcome("wrong", "", f"{len(got)} rows differ")


@dataclass(frozen=True)
class Expect:
    kind: str
    detail: str = ""
    match: str = ""


SAME = Expect("same")
#: what from_arrow says of a column an engine gave back as storage: the routes that work
STORAGE_ONLY = Expect(
    "error", "UnsupportedTypeError", r"skip_metadata=False.*onnx_arrow\.to_portable"
)


def expected(engine: str, column: str, form: str) -> Expect:
    """The outcome measured with datasets 5.2, dask 2026.8, pylance 14.0, datafusion 55,
    polars 2.1 (pyarrow 26)."""
    if form == "portable" and not (engine == "lance" and column == "string"):
        return SAME  # every engine, every kind: the types from the rows' type columns
    if engine == "datasets":  # no datasets dtype for any extension type: to_portable works
        return Expect("engine-fails", "ValueError", "does not have a datasets dtype equivalent")
    if engine == "dask_pyarrow":  # Dask's empty metadata table: to_portable works
        if form == "exact" or column in ("bool", "sequence", "map", "sparse"):
            return Expect("engine-fails", "ArrowNotImplementedError")
        return SAME
    if engine == "lance":
        if column == "string":  # every form: Lance panics writing fixed_size_list<binary>
            return Expect("engine-fails", "PanicException", "compute_stat")
        if column == "bool":  # arrow.bool8 in a tensor: to_portable works
            return Expect("engine-fails", "OSError", "arrow.bool8")
        return SAME
    if engine == "datafusion":  # skip_metadata=True drops top-level extension types
        if form == "canonical" and column in ("sequence", "map"):
            return SAME  # nested extension types survive
        return STORAGE_ONLY
    return SAME  # dask_from_map, datafusion_metadata (skip_metadata=False), polars


def expected_writer(writer: str, column: str, form: str) -> Expect:
    """The outcome of a writer round trip, measured with duckdb 2.0, polars 2.1 and pyspark
    4.3 (pyarrow 26)."""
    if writer == "polars_write":
        return SAME  # Polars keeps the extension types and every bit
    if writer == "spark_write" and column == "float16":
        return Expect("engine-fails", "AnalysisException", "FLOAT16")  # refuses the file
    if not form.startswith("portable"):  # the writers keep storage only: to_portable works
        return Expect("error", "UnsupportedTypeError", r"onnx_arrow\.to_portable")
    if column == "nan_bits":  # the writers rewrite every NaN to 0x7fc00000
        # refused by the float digests (the default) and by the full digests alike
        return Expect("error", "ArrowLayoutError", r"row 0: .*NaN payloads and signs")
    return SAME


def _writer_cells(writers: tuple[str, ...], default_only: bool) -> list[Any]:
    """Every writer cell; by default the NaN column, in every form."""
    out = []
    for writer in writers:
        for column in WRITER_COLUMNS:
            if default_only and column != "nan_bits":
                continue
            for form in WRITER_FORMS:
                out.append(pytest.param(writer, column, form, id=f"{writer}-{column}-{form}"))
    return out


def _check_writer(writer: str, column: str, form: str, tmp_path: Path, spark: Any = None) -> None:
    got = measure_writer(writer, column, form, tmp_path, spark)
    want = expected_writer(writer, column, form)
    assert (got.kind, got.detail if want.detail else "") == (want.kind, want.detail), got
    if want.match:
        assert re.search(want.match, got.message, re.DOTALL), got.message


@pytest.mark.parametrize(
    ("writer", "column", "form"), _writer_cells(("duckdb_copy", "polars_write"), True)
)
def test_writer(writer: str, column: str, form: str, tmp_path: Path) -> None:
    _check_writer(writer, column, form, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("writer", "column", "form"), _writer_cells(("duckdb_copy", "polars_write"), False)
)
def test_writer_matrix(writer: str, column: str, form: str, tmp_path: Path) -> None:
    _check_writer(writer, column, form, tmp_path)


@pytest.mark.slow
def test_spark_writer_matrix(tmp_path: Path) -> None:
    """Spark's own Parquet writer, every cell in one session (its start takes most of it)."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime: no `java` on PATH")
    from pyspark.sql import SparkSession
    from spark_helpers import end_spark_jvm

    session = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    spark = session.getOrCreate()
    try:
        for k, (column, form) in enumerate((c, f) for c in WRITER_COLUMNS for f in WRITER_FORMS):
            folder = tmp_path / str(k)
            folder.mkdir()
            _check_writer("spark_write", column, form, folder, spark)
    finally:
        end_spark_jvm()


def _cells(default_only: bool) -> list[Any]:
    """Every cell; by default one column kind per engine (its failures' kinds first)."""
    firsts = {
        "datasets": ("map",),
        "dask_pyarrow": ("bool",),
        "dask_from_map": ("map",),
        "lance": ("string", "bool", "complex64"),
        "datafusion": ("float",),
        "datafusion_metadata": ("bfloat16",),
        "polars": ("complex64",),
    }
    out = []
    for engine in ENGINES:
        for column in COLUMNS:
            if default_only != (column in firsts[engine]):
                continue
            for form in FORMS:
                out.append(pytest.param(engine, column, form, id=f"{engine}-{column}-{form}"))
    return out


def _check(engine: str, column: str, form: str, tmp_path: Path) -> None:
    got = measure(engine, column, form, tmp_path)
    want = expected(engine, column, form)
    assert (got.kind, got.detail if want.detail else "") == (want.kind, want.detail), got
    if want.match:
        assert re.search(want.match, got.message, re.DOTALL), got.message


@pytest.mark.parametrize(("engine", "column", "form"), _cells(default_only=True))
def test_engine(engine: str, column: str, form: str, tmp_path: Path) -> None:
    _check(engine, column, form, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(("engine", "column", "form"), _cells(default_only=False))
def test_engine_matrix(engine: str, column: str, form: str, tmp_path: Path) -> None:
    _check(engine, column, form, tmp_path)


def test_lance_takes_string_tensors_as_lists(tmp_path: Path) -> None:
    """Lance panics writing a ``fixed_size_list<binary>``: the portable table with such a
    column cast to ``list<binary>`` (which ``from_portable`` casts back) reads the same."""
    lance = pytest.importorskip("lance")
    portable = _table("string", "portable")
    i = portable.column_names.index("string")
    as_lists = portable.set_column(i, "string", portable.column(i).cast(pa.list_(pa.binary())))
    lance.write_dataset(as_lists, tmp_path / "strings.lance")
    back = onnx_arrow.from_portable(lance.dataset(tmp_path / "strings.lance").to_table())
    assert _messages(back.column("string")) == _reference("string", "canonical")


@pytest.mark.slow
def test_spark_reads_portable_tables_the_same(tmp_path: Path) -> None:
    """Spark keeps storage only: every kind of portable column comes back the same, its
    types from the type columns (FLOAT16 aside: Spark refuses a file holding it)."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession
    from spark_helpers import end_spark_jvm

    session = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    spark = session.getOrCreate()
    try:
        for column in COLUMNS:
            if column == "float16":
                continue
            path = tmp_path / f"{column}.parquet"
            pq.write_table(_table(column, "portable"), path)
            back = onnx_arrow.from_portable(spark.read.parquet(str(path)).toArrow())
            assert _messages(back.column(column)) == _reference(column, "canonical"), column
    finally:
        end_spark_jvm()


def test_a_null_where_the_type_declares_none_is_refused() -> None:
    """A complex tensor whose parts an engine made nullable reads the same (Polars, Lance);
    one with a null part is refused, never read as a number."""
    from onnx_arrow.core.extension_metadata import CDataHolder
    from onnx_arrow.errors import ArrowLayoutError

    column = _original("complex64", "canonical")
    loose = pa.list_(pa.list_(pa.float32(), 2), 3)  # the parts' not-null flag dropped
    metadata = {
        b"ARROW:extension:name": column.type.extension_name.encode(),
        b"ARROW:extension:metadata": column.type.__arrow_ext_serialize__(),
    }
    for parts, same in (
        ([[[1.0, 2.0], [-0.0, -3.0], [float("nan"), 0.0]]] * 2, True),
        ([[[1.0, None], [-0.0, -3.0], [float("nan"), 0.0]]] * 2, False),
    ):
        storage = pa.array(parts, loose)
        engine_made = pa.array(CDataHolder(storage, pa.field("c", loose, metadata=metadata)))
        if same:
            assert _messages(engine_made) == _reference("complex64", "canonical")
        else:
            with pytest.raises(ArrowLayoutError, match=r"null in field 'item'.*declares not null"):
                onnx_arrow.from_arrow(engine_made)


def test_polars_keeps_the_types_unregistered() -> None:
    """Polars (2.1) keeps an extension type it has no class for as ``pl.Extension`` (name,
    storage, metadata) and hands it back unchanged, so onnx-arrow registers none of its
    types with ``pl.register_extension_type`` (an unstable API): importing onnx-arrow
    changes nothing in Polars."""
    pl = pytest.importorskip("polars")
    column = _original("bfloat16", "canonical")
    frame = pl.from_arrow(pa.table({"x": column}))
    assert isinstance(frame.schema["x"], pl.Extension)
    assert pl.get_extension_type(column.type.extension_name) is None
    assert frame.to_arrow().column("x").type == column.type


# --- stores: DataFusion on a dataset folder, Ray's blocks ---------------------------------------


@pytest.fixture(scope="module")
def dataset_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import fnmatch

    from onnx_arrow.corpus import NodeSuiteSource, write_dataset

    patterns = ("node/test_abs", "node/test_cast_FLOAT*", "node/test_sequence_insert*")
    cases = [c for c in NodeSuiteSource() if any(fnmatch.fnmatch(c.name, p) for p in patterns)]
    root = tmp_path_factory.mktemp("engines") / "store"
    write_dataset(cases, root, part_cases=4, by_kind=True)
    return root


@pytest.mark.parametrize("engine", ["datasets", "lance", "datafusion"])
def test_store_rows_from_the_engines_decode_as_the_store(
    dataset_store: Path, engine: str, tmp_path: Path
) -> None:
    """A store's columns are plain Arrow: Hugging Face datasets, Lance and DataFusion hand
    its rows back, and ``cases_from_rows`` decodes them to what ``Store`` gives."""
    from store_helpers import same

    from onnx_arrow.corpus import Store, cases_from_rows

    part = sorted(dataset_store.rglob("*.parquet"))[0]
    if engine == "datasets":
        datasets = pytest.importorskip("datasets")
        rows = datasets.Dataset.from_parquet(str(part), cache_dir=str(tmp_path)).data.table
    elif engine == "lance":
        lance = pytest.importorskip("lance")
        lance.write_dataset(pq.read_table(part), tmp_path / "part.lance")
        rows = lance.dataset(tmp_path / "part.lance").to_table()
    else:
        datafusion = pytest.importorskip("datafusion")
        rows = pa.table(datafusion.SessionContext().read_parquet(str(part)))
    decoded = cases_from_rows(rows, where=engine)
    store = Store(dataset_store)
    assert decoded
    for case in decoded:
        assert case.model == store.model(case.name)
        assert same(case.data_sets(), store.case_arrays(case.name)), case.name


def test_datafusion_reads_a_dataset_store_with_subdirectories_listed(dataset_store: Path) -> None:
    """A dataset store keeps its parts in a folder per kind: DataFusion lists none of them
    by default (its own error, no rows), and every one with
    ``listing_table_ignore_subdirectory`` false, whose rows decode as the store's."""
    datafusion = pytest.importorskip("datafusion")
    from onnx_arrow.corpus import Store, cases_from_rows

    with pytest.raises(Exception, match="No files found"):  # DataFusion's own
        datafusion.SessionContext().read_parquet(str(dataset_store))
    key = "datafusion.execution.listing_table_ignore_subdirectory"
    context = datafusion.SessionContext(datafusion.SessionConfig().set(key, "false"))
    rows = pa.table(context.read_parquet(str(dataset_store)))
    decoded = cases_from_rows(rows, where="datafusion")
    store = Store(dataset_store)
    assert sorted(c.name for c in decoded) == sorted(store.cases())
    for case in decoded:
        assert case.model == store.model(case.name)


@pytest.mark.slow
def test_ray_reads_a_store_as_one_block_and_groups_hand_whole_cases(dataset_store: Path) -> None:
    """Ray Data reads a store (its parts too) as one block, so a map over its blocks runs
    as one task; ``groupby("test_case").map_groups`` hands each call whole cases (the route
    of the recipes), and every case decodes."""
    ray = pytest.importorskip("ray")
    from onnx_arrow.corpus import REQUIRED_COLUMNS, Store

    source = str(dataset_store)  # where the files a group's copies name are

    def case_names(rows: pa.Table) -> pa.Table:  # a local function: Ray pickles it by value
        from onnx_arrow.corpus import cases_from_rows

        names = [c.name for c in cases_from_rows(rows, where="a Ray group", sources=source)]
        return pa.table({"case": pa.array(names, pa.string())})

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        rows = ray.data.read_parquet(str(dataset_store)).select_columns(list(REQUIRED_COLUMNS))
        assert rows.materialize().num_blocks() == 1
        groups = rows.groupby("test_case").map_groups(case_names, batch_format="pyarrow")
        names = sorted(r["case"] for r in groups.take_all())
    finally:
        ray.shutdown()
    assert names == sorted(Store(dataset_store).cases())


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    counts: Counter[tuple[str, str]] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for k, (engine, column, form) in enumerate(
            (e, c, f) for e in ENGINES for c in COLUMNS for f in FORMS
        ):
            folder = Path(tmp) / str(k)
            folder.mkdir()
            got = measure(engine, column, form, folder)
            label = "same" if got.kind == "same" else got.kind
            counts[(engine, label)] += 1
            if got.kind != expected(engine, column, form).kind:
                print(f"differs from the pinned outcome: {engine} {column} {form}: {got}")
        for k, (writer, column, form) in enumerate(
            (w, c, f) for w in WRITERS[:2] for c in WRITER_COLUMNS for f in WRITER_FORMS
        ):
            folder = Path(tmp) / f"writer-{k}"
            folder.mkdir()
            got = measure_writer(writer, column, form, folder)
            counts[(writer, got.kind)] += 1
            if got.kind != expected_writer(writer, column, form).kind:
                print(f"differs from the pinned outcome: {writer} {column} {form}: {got}")
    for (_, _, route), want in INTERCHANGE_EXPECTED.items():
        counts[(f"interchange:{route}", want.kind)] += 1
    kinds = ("same", "error", "engine-fails", "leaks", "wrong")
    print(f"{'engine':28}" + "".join(f"{k:>14}" for k in kinds))
    for engine in sorted({e for e, _ in counts}):
        print(f"{engine:28}" + "".join(f"{counts[(engine, k)]:>14}" for k in kinds))
    print("silently wrong:", sum(n for (_, k), n in counts.items() if k == "wrong"))


#: Cases of a small store for fastparquet: float, float16, a sequence, an optional, uint32.
FASTPARQUET_CASES = (
    "node/test_abs",
    "node/test_cast_FLOAT_to_FLOAT16",
    "node/test_sequence_insert_at_back",
    "node/test_optional_has_element_empty_optional_input",
    "node/test_bitshift_right_uint32",
)


@pytest.fixture(scope="module")
def fastparquet_stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The small store written with each float encoding fixed."""
    import fnmatch

    from onnx_arrow.corpus import NodeSuiteSource, WriteOptions, write_store

    cases = [
        c
        for c in NodeSuiteSource()
        if any(fnmatch.fnmatchcase(c.name, p) for p in FASTPARQUET_CASES)
    ]
    assert len(cases) == len(FASTPARQUET_CASES)
    root = tmp_path_factory.mktemp("fastparquet")
    out = {}
    for encoding in ("PLAIN", "BYTE_STREAM_SPLIT"):
        out[encoding] = root / f"{encoding}.parquet"
        write_store(cases, out[encoding], options=WriteOptions(float_encoding=encoding))
    return out


def _same_cells(got: Any, want: pa.ChunkedArray) -> list[int]:
    """The rows where fastparquet's cells (pandas objects) are not pyarrow's values: floats
    by their bits, a null as NaN or NA in either."""
    import pandas as pd

    bad = []
    for i, (g, w) in enumerate(zip(got, want.to_pylist(), strict=True)):
        if w is None:
            ok = g is None or g is pd.NA or (isinstance(g, float) and np.isnan(g))
        elif isinstance(w, list):
            element = want.type.value_type
            expected = pa.array(w, element).to_numpy(zero_copy_only=False)
            values = np.asarray(g, dtype=expected.dtype)
            ok = values.shape == expected.shape and values.tobytes() == expected.tobytes()
        elif isinstance(w, float) and np.isnan(w):
            ok = isinstance(g, float) and np.isnan(g)
        else:
            ok = g == w
        if not ok:
            bad.append(i)
    return bad


def test_fastparquet_reads_a_store_written_plain(fastparquet_stores: dict[str, Path]) -> None:
    """``import --float-encoding PLAIN``: fastparquet reads every column of every row group,
    every value the same as pyarrow's, bit for bit; uint32 tensor elements come as int32
    (the same bits: fastparquet drops the unsigned annotation inside a list)."""
    fastparquet = pytest.importorskip("fastparquet")
    path = fastparquet_stores["PLAIN"]
    frame = fastparquet.ParquetFile(str(path)).to_pandas()
    table = pq.read_table(path)
    assert list(frame.columns) == table.column_names
    for name in table.column_names:
        assert _same_cells(frame[name], table.column(name)) == [], name
    uint32 = [
        v for v, w in zip(frame["data_uint32"], table["data_uint32"], strict=True) if w.is_valid
    ]
    assert uint32
    assert {np.asarray(v).dtype for v in uint32} == {np.dtype(np.int32)}


def test_fastparquet_refuses_byte_stream_split(fastparquet_stores: dict[str, Path]) -> None:
    """fastparquet 2026.9 has no decoder for BYTE_STREAM_SPLIT (Parquet encoding 9): a
    float column in it is refused, the rest of the store reads."""
    fastparquet = pytest.importorskip("fastparquet")
    path = fastparquet_stores["BYTE_STREAM_SPLIT"]
    store = fastparquet.ParquetFile(str(path))
    table = pq.read_table(path)
    refused = {}
    for name in table.column_names:
        try:
            store.to_pandas(columns=[name])
        except NotImplementedError as exc:
            refused[name] = str(exc)
    assert set(refused.values()) == {"Encoding 9"}
    assert "data_float" in refused
    assert all(name.startswith("data_") for name in refused)
    rest = [n for n in table.column_names if n not in refused]
    frame = store.to_pandas(columns=rest)
    for name in rest:
        assert _same_cells(frame[name], table.column(name)) == [], name

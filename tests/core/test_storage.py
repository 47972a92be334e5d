"""The storage-only form: zero-copy both ways, readable by DuckDB, Polars and plain Parquet."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import SequenceProto, TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow.core.storage_form import storage_type
from onnx_arrow.core.walk import walk
from onnx_arrow.errors import ArrowLayoutError


def _has_extension(t: pa.DataType) -> bool:
    return any(isinstance(x, pa.BaseExtensionType) for x in walk(t))


def nested_column():
    bf = helper.make_tensor("w", TensorProto.BFLOAT16, [2], [1.5, -2.0])
    seq = SequenceProto(name="s", elem_type=SequenceProto.TENSOR)
    seq.tensor_values.extend([bf, bf])
    return onnx_arrow.to_arrow([seq, seq], exact=True)


def test_storage_form_has_no_extension_and_round_trips():
    array = nested_column()
    storage = onnx_arrow.to_storage(array)
    assert not _has_extension(storage.type)
    back = onnx_arrow.from_storage(storage, array.type)
    assert back.type == array.type
    assert [m.SerializeToString() for m in onnx_arrow.from_arrow(back)] == [
        m.SerializeToString() for m in onnx_arrow.from_arrow(array)
    ]


def test_storage_view_is_zero_copy():
    t = numpy_helper.from_array(np.arange(1000, dtype=np.float32), "x")
    array = onnx_arrow.to_arrow([t], exact=True).value
    storage = onnx_arrow.to_storage(array)
    assert storage.values.buffers()[1].address == array.storage.values.buffers()[1].address


def test_tables_and_chunked_arrays():
    array = nested_column()
    table = pa.table({"v": pa.chunked_array([array, array])}, metadata={b"k": b"v"})
    plain = onnx_arrow.to_storage(table)
    assert plain.schema.metadata == {b"k": b"v"}
    assert not _has_extension(plain.schema.field("v").type)
    buf = io.BytesIO()
    pq.write_table(plain, buf)
    read = pq.read_table(io.BytesIO(buf.getvalue())).column("v")
    restored = onnx_arrow.from_storage(read, array.type)
    assert len(onnx_arrow.from_arrow(restored)) == 4


def test_engines_read_exotic_dtypes_as_numbers():
    duckdb = pytest.importorskip("duckdb")
    polars = pytest.importorskip("polars")
    plain = onnx_arrow.to_storage(pa.table({"v": nested_column()}))
    rows = duckdb.sql("select v.value[1] as first from plain").fetchall()
    assert list(rows[0][0]) == [1.5, -2.0]
    frame = polars.from_arrow(plain)
    assert frame["v"].struct.field("value").to_list()[0][1] == [1.5, -2.0]


def test_from_storage_rejects_a_different_layout():
    array = nested_column()
    with pytest.raises(ArrowLayoutError, match="storage of"):
        onnx_arrow.from_storage(pa.array([1, 2]), array.type)
    assert storage_type(pa.int8()) == pa.int8()


# --- portable tables: storage every engine reads, types restored from the metadata -------------


def portable_columns() -> dict[str, pa.Array]:
    import ml_dtypes

    floats = [
        numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3) + i) for i in range(3)
    ]
    ragged = [
        numpy_helper.from_array(np.arange(n * 4, dtype=np.int64).reshape(n, 4)) for n in (1, 2, 3)
    ]
    bf16 = [numpy_helper.from_array(np.array([0.5, -1.25], ml_dtypes.bfloat16)) for _ in range(3)]
    words = [numpy_helper.from_array(np.array(["a", "caf\u00e9"])) for _ in range(3)]
    seqs = [numpy_helper.from_list([np.ones(k, np.float32) for k in (1, 2)]) for _ in range(3)]
    maps = [numpy_helper.from_dict({1: np.float32(0.5), 7: np.float32(i)}) for i in range(3)]
    opts = [
        numpy_helper.from_optional(None, dtype=1),
        numpy_helper.from_optional(np.ones(2, np.float32)),
        numpy_helper.from_optional(np.zeros(2, np.float32)),
    ]
    return {
        "float": onnx_arrow.to_arrow(floats),
        "ragged": onnx_arrow.to_arrow(ragged),
        "bf16": onnx_arrow.to_arrow(bf16),
        "words": onnx_arrow.to_arrow(words),
        "seq": onnx_arrow.to_arrow(seqs),
        "map": onnx_arrow.to_arrow(maps),
        "opt": onnx_arrow.to_arrow(opts),
        "exact": onnx_arrow.to_arrow(floats, exact=True),
        "n": pa.array([1, 2, 3]),
    }


def _engine_read(engine: str, path: str) -> pa.Table:
    if engine == "pyarrow":
        return pq.read_table(path, use_threads=False)
    if engine == "polars":
        pl = pytest.importorskip("polars")
        return pl.read_parquet(path).to_arrow()
    if engine == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        return duckdb.sql(f"select * from '{path}'").to_arrow_table()
    if engine == "pandas":
        import pandas as pd

        # Arrow-backed columns: numpy object cells turn maps into lists of pairs
        frame = pd.read_parquet(path, dtype_backend="pyarrow")
        return pa.Table.from_pandas(frame, preserve_index=False)
    if engine == "datasets":  # Hugging Face datasets: no map type, maps as their entries
        datasets = pytest.importorskip("datasets")
        return datasets.Dataset.from_parquet(path, cache_dir=str(Path(path).parent)).data.table
    dd = pytest.importorskip("dask.dataframe")
    if engine == "dask-numpy":  # object cells: maps as lists of entries, each a dict
        frame = dd.read_parquet(path).compute()
    else:
        frame = dd.read_parquet(path, dtype_backend="pyarrow").compute()
    return pa.Table.from_pandas(frame, preserve_index=False)


@pytest.mark.parametrize(
    "engine", ["pyarrow", "polars", "duckdb", "pandas", "dask", "dask-numpy", "datasets"]
)
def test_portable_tables_come_back_exact_from_every_engine(tmp_path, engine: str) -> None:
    table = pa.table(portable_columns())
    portable = onnx_arrow.to_portable(table)
    assert not any(_has_extension(f.type) for f in portable.schema)
    path = str(tmp_path / "portable.parquet")
    pq.write_table(portable, path)
    read = _engine_read(engine, path)
    # engines that drop the table's metadata (DuckDB, pandas' conversion) keep the type
    # columns: the types come from the rows, or from the schema where it is passed
    for schema in (None, table.schema):
        back = onnx_arrow.from_portable(read, schema)
        assert back.column_names == table.column_names
        for name in table.column_names:
            want = table.column(name)
            got = back.column(name)
            assert got.type == want.type, name
            if name == "n":
                assert got.to_pylist() == want.to_pylist()
            else:
                assert onnx_arrow.from_arrow(got) == onnx_arrow.from_arrow(want), name


def _tensor_column(dtype: str, shape: tuple[int, ...]) -> pa.Array:
    import ml_dtypes

    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    values = [
        (np.arange(np.prod(shape)) / 10 + k).reshape(shape).astype(np_dtype) for k in range(3)
    ]
    return onnx_arrow.to_arrow([numpy_helper.from_array(v) for v in values])


#: Two files of one folder with a column ``x`` of the same storage and different types
MIXED = {
    "dtypes": (_tensor_column("float32", (4,)), _tensor_column("bfloat16", (4,))),
    "shapes": (_tensor_column("float32", (2, 3)), _tensor_column("float32", (3, 2))),
    "widths": (_tensor_column("float32", (2, 3)), _tensor_column("float64", (2, 3))),
}


def _folder_read(engine: str, folder: Path) -> pa.Table:
    """The folder's files read as one table, as ``engine`` reads a folder."""
    if engine == "pyarrow":
        return pq.read_table(folder, use_threads=False)
    if engine == "pyarrow.dataset":
        import pyarrow.dataset as ds

        return ds.dataset(folder, format="parquet").to_table()
    if engine == "polars":
        pl = pytest.importorskip("polars")
        return pl.read_parquet(folder / "*.parquet").to_arrow()
    if engine == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        return duckdb.sql(f"select * from read_parquet('{folder}/*.parquet')").to_arrow_table()
    import pandas as pd

    frame = pd.read_parquet(folder, dtype_backend="pyarrow")
    return pa.Table.from_pandas(frame, preserve_index=False)


FOLDER_ENGINES = ["pyarrow", "pyarrow.dataset", "polars", "duckdb", "pandas"]


#: The folders an engine refuses itself (no value is read): Polars will not read a folder
#: whose files' element types differ unless told to downcast
ENGINE_REFUSES = {("polars", "widths"): "SchemaError"}


@pytest.mark.parametrize("engine", FOLDER_ENGINES)
@pytest.mark.parametrize("mixed", sorted(MIXED))
def test_a_folder_of_two_types_is_refused_at_the_first_row_of_the_other(
    tmp_path: Path, engine: str, mixed: str
) -> None:
    """Whatever type an engine gave the column (the first file's, through its metadata or
    the first row's type), ``from_portable`` refuses the second file's rows by row: never
    the first file's type on the second file's values.  Each file on its own reads the
    same."""
    first, second = MIXED[mixed]
    for k, column in enumerate((first, second)):
        pq.write_table(onnx_arrow.to_portable(pa.table({"x": column})), tmp_path / f"{k}.parquet")
    refusal = ENGINE_REFUSES.get((engine, mixed))
    if refusal is not None:
        with pytest.raises(Exception) as refused:
            _folder_read(engine, tmp_path)
        assert type(refused.value).__name__ == refusal
    else:
        read = _folder_read(engine, tmp_path)
        for schema in (None, pa.table({"x": first}).schema):
            with pytest.raises(ArrowLayoutError, match=MIXED_ROWS):
                onnx_arrow.from_portable(read, schema)
    for k, column in enumerate((first, second)):
        back = onnx_arrow.from_portable(_folder_read(engine, _single(tmp_path, k)))
        assert onnx_arrow.from_arrow(back.column("x")) == onnx_arrow.from_arrow(column)


MIXED_ROWS = r"^column 'x': row 3 \(and 3 rows in all\) was written as .*read each file on its own"


def _single(folder: Path, k: int) -> Path:
    out = folder / f"alone-{k}"
    out.mkdir()
    (folder / f"{k}.parquet").rename(out / f"{k}.parquet")
    return out


def test_without_metadata_type_columns_or_schema_the_schema_to_pass_is_named() -> None:
    table = pa.table({"x": portable_columns()["float"]})
    bare = onnx_arrow.to_portable(table).drop_columns(["x__onnx_arrow_type"])
    with pytest.raises(
        ArrowLayoutError, match=r"schema=typed\.schema.*the columns .x. may be typed"
    ):
        onnx_arrow.from_portable(bare.replace_schema_metadata(None))
    assert onnx_arrow.from_portable(
        onnx_arrow.to_portable(table).replace_schema_metadata(None)
    ).equals(table)


def test_a_type_column_that_is_no_type_is_a_located_error() -> None:
    table = onnx_arrow.to_portable(pa.table({"x": portable_columns()["float"]}))
    forged = table.set_column(1, "x__onnx_arrow_type", pa.array(["bm90IGEgc2NoZW1h"] * 3))
    with pytest.raises(ArrowLayoutError, match=r"^column 'x__onnx_arrow_type': unreadable"):
        onnx_arrow.from_portable(forged)
    nulls = table.set_column(1, "x__onnx_arrow_type", pa.array([None] * 3, pa.string()))
    with pytest.raises(ArrowLayoutError, match=r"row 0 is null"):
        onnx_arrow.from_portable(nulls)
    with pytest.raises(ArrowLayoutError, match=r"rename it"):
        onnx_arrow.to_portable(
            pa.table({"x": portable_columns()["float"], "x__onnx_arrow_type": [1, 2, 3]})
        )


def test_from_portable_says_what_is_missing_or_wrong() -> None:
    table = pa.table({"float": portable_columns()["float"]})
    with pytest.raises(ArrowLayoutError, match=r"no onnx_arrow\.portable metadata"):
        onnx_arrow.from_portable(onnx_arrow.to_storage(table))
    forged = onnx_arrow.to_portable(table).replace_schema_metadata(
        {b"onnx_arrow.portable": b'{"version": 9, "columns": {}}'}
    )
    with pytest.raises(ArrowLayoutError, match=r"unreadable onnx_arrow\.portable metadata"):
        onnx_arrow.from_portable(forged)
    wrong = _engine_changed(table, "float", pa.array([[1.0]] * 3))
    with pytest.raises(ArrowLayoutError, match="column 'float': the column is list<item: double>"):
        onnx_arrow.from_portable(wrong, table.schema)
    with pytest.raises(ArrowLayoutError, match="column 'float': the column comes without its type"):
        onnx_arrow.from_portable(wrong.drop_columns(["float__onnx_arrow_type"]), table.schema)


def _engine_changed(table: pa.Table, name: str, column: pa.Array) -> pa.Table:
    """``to_portable(table)`` as an engine gave it back: column ``name`` changed to
    ``column``, the metadata dropped."""
    portable = onnx_arrow.to_portable(table)
    i = portable.column_names.index(name)
    return portable.set_column(i, name, column).replace_schema_metadata(None)


def test_polars_data_goes_in_wherever_pyarrow_data_does() -> None:
    """A Polars Series or DataFrame is taken through the Arrow PyCapsule protocol, as
    from_arrow takes it: a Series as a column, a DataFrame as a table."""
    pl = pytest.importorskip("polars")
    array = onnx_arrow.to_arrow([numpy_helper.from_array(np.arange(4, dtype=np.int32))])
    storage = onnx_arrow.to_storage(array)
    series = pl.from_arrow(storage)
    assert onnx_arrow.to_storage(series).to_pylist() == storage.to_pylist()
    back = onnx_arrow.from_storage(series, array.type)
    assert onnx_arrow.from_arrow(back) == onnx_arrow.from_arrow(array)
    frame = pl.from_arrow(pa.table({"x": storage}))
    plain = onnx_arrow.to_storage(frame)
    assert isinstance(plain, pa.Table)
    assert plain.column_names == ["x"]
    table = pa.table({"x": array})
    portable = onnx_arrow.to_portable(pl.from_arrow(onnx_arrow.to_portable(table)))
    assert portable.schema.field("x").type == storage.type
    # Polars keeps no schema metadata: the schema is passed back
    restored = onnx_arrow.from_portable(pl.from_arrow(portable), table.schema)
    assert restored.column("x").type == array.type
    assert onnx_arrow.from_arrow(restored.column("x")) == onnx_arrow.from_arrow(array)


@pytest.mark.parametrize(
    "junk", [1, None, [1], "x", pa.int64(), helper.make_tensor_type_proto(1, [2])]
)
def test_junk_is_refused_naming_the_argument(junk: object) -> None:
    from onnx_arrow.errors import UnsupportedTypeError

    array = onnx_arrow.to_arrow([numpy_helper.from_array(np.arange(4, dtype=np.int32))])
    table = pa.table({"x": array})
    calls = {
        "data": lambda: onnx_arrow.to_storage(junk),
        "table": lambda: onnx_arrow.to_portable(junk),
    }
    if junk is not None:
        calls["arrow_type"] = lambda: onnx_arrow.from_storage(onnx_arrow.to_storage(array), junk)
        calls["schema"] = lambda: onnx_arrow.from_portable(onnx_arrow.to_portable(table), junk)
    for where, call in calls.items():
        if isinstance(junk, pa.DataType) and where == "arrow_type":
            continue  # a type: the storage does not fit it, an ArrowLayoutError
        with pytest.raises(UnsupportedTypeError, match=rf"^{where}: "):
            call()


@pytest.mark.parametrize(
    "blob", [b"not a schema", b"", b"\xff\xff\xff\xff\x10\x00\x00\x00" + bytes(16)]
)
def test_a_recorded_schema_that_is_no_schema_is_a_located_error(blob: bytes) -> None:
    import base64
    import json

    table = onnx_arrow.to_portable(pa.table({"float": portable_columns()["float"]}))
    recorded = {"version": 2, "columns": {"float": base64.b64encode(blob).decode()}}
    forged = table.replace_schema_metadata({b"onnx_arrow.portable": json.dumps(recorded)})
    with pytest.raises(ArrowLayoutError, match=r"^schema metadata: unreadable onnx_arrow"):
        onnx_arrow.from_portable(forged)


def test_a_version_one_table_is_refused_saying_what_it_is_and_the_route() -> None:
    import json

    typed = pa.table({"float": portable_columns()["float"]})
    portable = onnx_arrow.to_portable(typed)
    columns = json.loads(portable.schema.metadata[b"onnx_arrow.portable"])["columns"]
    # as version 1 wrote it: the metadata alone, no type columns
    old = portable.drop_columns(["float__onnx_arrow_type"]).replace_schema_metadata(
        {b"onnx_arrow.portable": json.dumps({"version": 1, "columns": columns})}
    )
    for schema in (None, typed.schema):
        with pytest.raises(ArrowLayoutError, match=r"^schema metadata: a portable table of ver"):
            onnx_arrow.from_portable(old, schema)
    # the route the message names, for one file's table
    column = onnx_arrow.from_storage(old["float"], typed.schema.field("float").type)
    assert pa.table({"float": column}).equals(typed)


def test_a_cast_back_that_is_not_exact_is_refused_naming_the_column_and_value() -> None:
    table = pa.table({"x": onnx_arrow.to_arrow([numpy_helper.from_array(np.float32([0.1, 2]))])})
    metadata = onnx_arrow.to_portable(table).schema.metadata
    # 0.1 is no float32
    widened = _engine_changed(table, "x", pa.array([[0.1, 2.0]], pa.list_(pa.float64())))
    for read, schema in (
        (widened.replace_schema_metadata(metadata), None),
        (widened, table.schema),
    ):
        with pytest.raises(ArrowLayoutError, match=r"^column 'x': .*element 0\.1 would become"):
            onnx_arrow.from_portable(read, schema)
    # a widening that holds the same values casts back: the float32 values, exactly
    exact = _engine_changed(
        table, "x", pa.array([[np.float32(0.1).item(), float("nan")]], pa.large_list(pa.float64()))
    )
    back = onnx_arrow.from_portable(exact, table.schema)
    got = onnx_arrow.to_numpy(back["x"])
    assert got[0, 0] == np.float32(0.1)
    assert np.isnan(got[0, 1])
    ints = pa.table({"x": onnx_arrow.to_arrow([numpy_helper.from_array(np.int8([1, 2]))])})
    narrowed = _engine_changed(ints, "x", pa.array([[1, 300]], pa.list_(pa.int64())))
    with pytest.raises(ArrowLayoutError, match=r"^column 'x': "):
        onnx_arrow.from_portable(narrowed, ints.schema)


def test_a_schema_of_another_type_is_refused_naming_it() -> None:
    """A schema whose type for a column has the same storage but is not the one written
    (BFLOAT16 for FLOAT, another shape) is refused, never used on the rows."""
    floats, bf16 = MIXED["dtypes"]
    portable = onnx_arrow.to_portable(pa.table({"x": floats}))
    wrong = pa.table({"x": bf16}).schema
    for read in (portable, portable.replace_schema_metadata(None)):
        with pytest.raises(ArrowLayoutError, match=r"row 0 .*bfloat16.*\(the schema passed\)"):
            onnx_arrow.from_portable(read, wrong)


def _type_text(arrow_type: pa.DataType) -> str:
    """What a type column records of ``arrow_type``: base64 of its IPC schema."""
    import base64

    return base64.b64encode(pa.schema([pa.field("x", arrow_type)]).serialize()).decode()


@pytest.mark.parametrize(
    ("recorded", "says"),
    [
        ("float64", "its elements are float, which no engine makes of double elements"),
        ("int64", "its elements are float, which no engine makes of int64 elements"),
        ("storage", "column 'x__onnx_arrow_type', row 0: the recorded type is fixed_size_list"),
    ],
)
def test_a_type_column_recording_another_dtype_or_an_untyped_storage_is_refused(
    recorded: str, says: str
) -> None:
    """A type column (the metadata dropped, as engines do) that records FLOAT tensors as
    DOUBLE or INT64 ones (every float32 element casts to them exactly), or as the plain
    storage (the column would come back untyped), is refused at its column and row."""
    x = onnx_arrow.to_arrow([numpy_helper.from_array(np.array([1.0, 2.0], "f4"))] * 3)
    portable = onnx_arrow.to_portable(pa.table({"x": x})).replace_schema_metadata(None)
    if recorded == "storage":
        forged = portable.schema.field("x").type
    else:
        other = numpy_helper.from_array(np.array([1, 2], recorded))
        forged = onnx_arrow.to_arrow([other]).type
    texts = pa.array([_type_text(forged)] * 3).dictionary_encode()
    table = portable.set_column(1, "x__onnx_arrow_type", texts)
    with pytest.raises(ArrowLayoutError, match=re.escape(says)) as err:
        onnx_arrow.from_portable(table)
    assert str(err.value).startswith("column 'x")
    if recorded != "storage":
        assert "(recorded by its row 0)" in str(err.value)
    metadata = {
        b"onnx_arrow.portable": json.dumps({"version": 2, "columns": {"x": texts[0].as_py()}})
    }
    with pytest.raises(ArrowLayoutError, match="column 'x'"):
        onnx_arrow.from_portable(
            table.drop_columns(["x__onnx_arrow_type"]).replace_schema_metadata(metadata)
        )
    # an engine's widening (float32 elements read back as double) is still cast back exactly
    widened = portable.set_column(0, "x", portable.column("x").cast(pa.list_(pa.float64())))
    assert onnx_arrow.from_portable(widened).column("x").equals(pa.chunked_array([x]))

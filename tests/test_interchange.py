"""The interchange matrix: every kind of column, both forms, through the engines users have.

Each column (two or three rows of one kind of value) goes, in both forms (the canonical
value column of ``to_arrow(messages)`` and the ``onnx.message`` column of
``to_arrow(messages, exact=True)``), through each route below, and what comes back is
handed to :func:`onnx_arrow.from_arrow`:

``parquet``
    pyarrow Parquet, written and read in this process (onnx-arrow imported).
``fresh_reader``
    Parquet written here, read by ``pq.read_table`` in a fresh interpreter that never
    imports onnx-arrow and writes the table to an Arrow IPC file, read back here (a Ray
    or Dask worker that has not registered the types).
``polars_series`` / ``polars_stream``
    ``pl.from_arrow(table)``, then the ``Series`` itself (PyCapsule stream), or
    ``pa.table(frame)`` (the C stream into pyarrow).
``duckdb_arrow`` / ``duckdb_relation``
    ``duckdb.sql("select c from 'file.parquet'")``, then its Arrow table, or the
    relation itself (``__arrow_c_stream__``).
``pandas``
    ``pd.read_parquet(..., dtype_backend="pyarrow")``, then ``pa.Table.from_pandas``.
``dask``
    ``dask.dataframe.read_parquet(...).compute()``, then ``pa.Table.from_pandas``.

Every cell has one measured outcome in :data:`EXPECTED`:

``same``
    the same messages as from the original column: for the canonical form those
    ``from_arrow`` gives of the original array, for the exact form the original messages,
    compared as serialized bytes;
``error``
    an :class:`onnx_arrow.OnnxArrowError` that says what is wrong;
``engine-fails``
    the engine raises before onnx-arrow sees the data (its exception type is recorded);
``leaks``
    ``from_arrow`` itself raises, but not an :class:`onnx_arrow.OnnxArrowError`: no cell
    is expected to; one that does fails the test.

Anything else is silently wrong: other messages and no error.  Those cells are marked
``xfail(strict=True)`` with what happens, so that they fail (XPASS) once fixed.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from google.protobuf.message import Message
from onnx import SequenceProto, TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow.errors import OnnxArrowError

# --- the columns ---------------------------------------------------------------------------------


def _t(array: Any, name: str) -> TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def _floats(*values: float) -> np.ndarray[Any, Any]:
    return np.array(values, dtype=np.float32)


COLUMNS: dict[str, Callable[[], list[Message]]] = {
    "float": lambda: [_t(np.arange(6, dtype=np.float32).reshape(2, 3) + i, "x") for i in range(2)],
    "zero_size": lambda: [_t(np.zeros((0, 3), np.float32), "z") for _ in range(2)],
    "scalar": lambda: [_t(np.float32(v), "s") for v in (1.5, -2.0, 0.25)],
    "int64_ragged": lambda: [
        _t(np.arange(4, dtype=np.int64).reshape(1, 4), "ids"),
        _t(np.arange(8, dtype=np.int64).reshape(2, 4) - 3, "ids"),
    ],
    "bool": lambda: [_t(np.array([True, False, True]), "b"), _t(np.array([False] * 3), "b")],
    "string": lambda: [
        _t(np.array(["caf\u00e9", "\u65e5\u672c"]), "w"),
        _t(np.array(["", "ascii"]), "w"),
    ],
    "bfloat16": lambda: [
        _t(np.array([0.5, -1.25, 3.0], ml_dtypes.bfloat16), "h"),
        _t(np.array([1.0, 2.0, -0.0], ml_dtypes.bfloat16), "h"),
    ],
    "float8e4m3fn": lambda: [
        _t(np.array([0.5, -1.25, 3.0], ml_dtypes.float8_e4m3fn), "f8"),
        _t(np.array([1.0, 448.0, -2.0], ml_dtypes.float8_e4m3fn), "f8"),
    ],
    "int4": lambda: [
        _t(np.array([1, -8, 7], ml_dtypes.int4), "q"),
        _t(np.array([0, 3, -1], ml_dtypes.int4), "q"),
    ],
    "float16": lambda: [
        _t(np.array([[0.5, -1.5], [2.0, 65504.0]], np.float16), "f"),
        _t(np.array([[1.0, 0.0], [-0.0, 3.0]], np.float16), "f"),
    ],
    "sequence": lambda: [
        numpy_helper.from_list([_floats(1.0, 2.0)], "seq"),
        numpy_helper.from_list([_floats(3.0), _floats(4.0, 5.0, 6.0)], "seq"),
        helper.make_sequence("seq", SequenceProto.TENSOR, []),
    ],
    "map": lambda: [
        numpy_helper.from_dict({1: _floats(1.0, 2.0), 7: _floats(3.0, 4.0)}, "m"),
        numpy_helper.from_dict({-2: _floats(0.5, 0.25)}, "m"),
    ],
    "optional": lambda: [
        numpy_helper.from_optional(_floats(1.5, 2.0), "o"),
        numpy_helper.from_optional(None, "o", dtype=TensorProto.FLOAT),
        numpy_helper.from_optional(_floats(-1.0, 0.0), "o"),
    ],
}

FORMS = ("canonical", "exact")
ROUTES = (
    "parquet",
    "fresh_reader",
    "polars_series",
    "polars_stream",
    "duckdb_arrow",
    "duckdb_relation",
    "pandas",
    "dask",
)


def original(column: str, form: str) -> pa.Array:
    return onnx_arrow.to_arrow(COLUMNS[column](), exact=form == "exact")


def reference(column: str, form: str) -> list[bytes]:
    """What ``from_arrow`` must give: of the canonical array, or the messages themselves."""
    if form == "exact":
        messages = COLUMNS[column]()
    else:
        messages = onnx_arrow.from_arrow(original(column, form))
    return [m.SerializeToString() for m in messages]


# --- the routes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Files:
    """The Parquet file of each (column, form), and what the fresh reader made of it."""

    folder: Path
    #: One Dask read per file, kept (its exception too)
    dask_frames: dict[Path, Any] = field(default_factory=dict)

    def parquet(self, column: str, form: str) -> Path:
        return self.folder / f"{column}-{form}.parquet"

    def ipc(self, column: str, form: str) -> Path:
        return self.folder / f"{column}-{form}.arrow"


#: Run in a fresh interpreter: Parquet in, Arrow IPC out, onnx-arrow never imported.
FRESH_READER = textwrap.dedent(
    """
    import sys
    import pyarrow as pa
    import pyarrow.parquet as pq

    for source, target in zip(sys.argv[1::2], sys.argv[2::2]):
        try:
            table = pq.read_table(source, use_threads=False)
            with pa.ipc.new_file(target, table.schema) as writer:
                writer.write_table(table)
        except Exception as exc:
            with open(target + ".error", "w") as out:
                out.write(type(exc).__name__)
    assert not any(m.startswith("onnx_arrow") for m in sys.modules), "onnx_arrow imported"
    print("ok")
    """
)


def write_files(folder: Path) -> Files:
    """Every Parquet file, then one fresh interpreter that reads them all back to IPC."""
    files = Files(folder)
    pairs = []
    for column in COLUMNS:
        for form in FORMS:
            pq.write_table(pa.table({column: original(column, form)}), files.parquet(column, form))
            pairs += [str(files.parquet(column, form)), str(files.ipc(column, form))]
    done = subprocess.run(
        [sys.executable, "-c", FRESH_READER, *pairs],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    return files


class EngineFailed(Exception):
    """The engine raised before onnx-arrow was given the data."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _dask_frame(files: Files, path: Path) -> Any:
    if path not in files.dask_frames:
        dd = pytest.importorskip("dask.dataframe")
        try:
            files.dask_frames[path] = dd.read_parquet(str(path)).compute()
        except Exception as exc:
            files.dask_frames[path] = exc
    frame = files.dask_frames[path]
    if isinstance(frame, Exception):
        raise frame
    return frame


def _through_engine(route: str, column: str, table: pa.Table, path: Path, files: Files) -> Any:
    """What the route hands back of ``table`` (or of ``path``, its Parquet file)."""
    if route == "parquet":
        return pq.read_table(path, use_threads=False).column(column)
    if route == "fresh_reader":
        ipc = path.with_suffix(".arrow")
        error = Path(f"{ipc}.error")
        if error.exists():
            raise EngineFailed(error.read_text())
        with pa.ipc.open_file(ipc) as reader:
            return reader.read_all().column(column)
    if route.startswith("polars"):
        pl = pytest.importorskip("polars")
        frame = pl.from_arrow(table)
        return frame[column] if route == "polars_series" else pa.table(frame).column(column)
    if route.startswith("duckdb"):
        duckdb = pytest.importorskip("duckdb")
        relation = duckdb.sql(f"select {column} from '{path}'")
        if route == "duckdb_relation":
            assert hasattr(relation, "__arrow_c_stream__")
            return relation
        return relation.to_arrow_table().column(column)
    if route == "pandas":
        import pandas as pd

        frame = pd.read_parquet(path, dtype_backend="pyarrow")
    else:
        assert route == "dask"
        frame = _dask_frame(files, path)
    return pa.Table.from_pandas(frame, preserve_index=False).column(column)


@dataclass(frozen=True)
class Outcome:
    kind: str  # same, error, engine-fails, leaks (not an OnnxArrowError), wrong
    detail: str = ""  # the exception's type name, or how the messages differ
    message: str = ""  # the exception's message


def measure(column: str, form: str, route: str, files: Files) -> Outcome:
    """What happens to ``column`` in ``form`` through ``route``."""
    table = pa.table({column: original(column, form)})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the engines' own warnings are not measured
            data = _through_engine(route, column, table, files.parquet(column, form), files)
    except EngineFailed as exc:
        return Outcome("engine-fails", exc.name)
    except pytest.skip.Exception:
        raise
    except Exception as exc:
        return Outcome("engine-fails", type(exc).__name__, str(exc))
    try:
        got = [m.SerializeToString() for m in onnx_arrow.from_arrow(data)]
    except OnnxArrowError as exc:
        return Outcome("error", type(exc).__name__, str(exc))
    except Exception as exc:
        return Outcome("leaks", type(exc).__name__, str(exc))
    want = reference(column, form)
    if got == want:
        return Outcome("same")
    return Outcome("wrong", _difference(want, got))


def _difference(want: list[bytes], got: list[bytes]) -> str:
    if len(want) != len(got):
        return f"{len(got)} rows instead of {len(want)}"
    i = next(i for i, (a, b) in enumerate(zip(want, got, strict=True)) if a != b)
    return f"row {i}: {got[i]!r} instead of {want[i]!r}"


# --- the measured outcomes -----------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    kind: str
    detail: str = ""  # error class or engine exception type, or what goes wrong
    match: str = ""  # a regular expression the error message must match


SAME = Expect("same")


def error(cls: str, match: str) -> Expect:
    return Expect("error", cls, match)


def fails(exc_type: str, match: str = "") -> Expect:
    return Expect("engine-fails", exc_type, match)


def wrong(what: str) -> Expect:
    return Expect("wrong", what)


def not_onnx(arrow_type: str) -> Expect:
    """Refused: the engine gave back plain Arrow (``arrow_type`` ...) that is no ONNX value."""
    return error(
        "UnsupportedTypeError", f"^{re.escape(arrow_type)}.* is not the Arrow form of an ONNX value"
    )


#: Measured with pyarrow 26.0.1, polars 2.1.0, duckdb 2.0.1, pandas 3.1.1, dask 2026.8.0.
#: DuckDB drops every extension type (fixed-size lists become lists), so its columns are
#: plain Arrow that from_arrow refuses.  Dask builds its metadata with an empty table, which
#: pyarrow cannot make of a Python extension type (onnx.message) or of an extension type
#: nested in another (arrow.bool8 in arrow.fixed_shape_tensor); the rest it hands over as
#: ndarray cells that come back as plain lists.
EXPECTED: dict[tuple[str, str, str], Expect] = {
    # float: arrow.fixed_shape_tensor<float>[2,3]
    ("float", "canonical", "parquet"): SAME,
    ("float", "canonical", "fresh_reader"): SAME,
    ("float", "canonical", "polars_series"): SAME,
    ("float", "canonical", "polars_stream"): SAME,
    ("float", "canonical", "duckdb_arrow"): not_onnx("float"),
    ("float", "canonical", "duckdb_relation"): not_onnx("float"),
    ("float", "canonical", "pandas"): SAME,
    ("float", "canonical", "dask"): not_onnx("float"),
    ("float", "exact", "parquet"): SAME,
    ("float", "exact", "fresh_reader"): SAME,
    ("float", "exact", "polars_series"): SAME,
    ("float", "exact", "polars_stream"): SAME,
    ("float", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("float", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("float", "exact", "pandas"): SAME,
    ("float", "exact", "dask"): fails("ArrowNotImplementedError"),
    # zero_size: arrow.variable_shape_tensor<float>, uniform_shape [0,3]
    ("zero_size", "canonical", "parquet"): SAME,
    ("zero_size", "canonical", "fresh_reader"): SAME,
    ("zero_size", "canonical", "polars_series"): SAME,
    ("zero_size", "canonical", "polars_stream"): SAME,
    ("zero_size", "canonical", "duckdb_arrow"): not_onnx("struct<data:"),
    ("zero_size", "canonical", "duckdb_relation"): not_onnx("struct<data:"),
    ("zero_size", "canonical", "pandas"): SAME,
    ("zero_size", "canonical", "dask"): not_onnx("struct<data:"),
    ("zero_size", "exact", "parquet"): SAME,
    ("zero_size", "exact", "fresh_reader"): SAME,
    ("zero_size", "exact", "polars_series"): SAME,
    ("zero_size", "exact", "polars_stream"): SAME,
    ("zero_size", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("zero_size", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("zero_size", "exact", "pandas"): SAME,
    ("zero_size", "exact", "dask"): fails("ArrowNotImplementedError"),
    # scalar: arrow.fixed_shape_tensor<float>[]
    ("scalar", "canonical", "parquet"): SAME,
    ("scalar", "canonical", "fresh_reader"): SAME,
    ("scalar", "canonical", "polars_series"): SAME,
    ("scalar", "canonical", "polars_stream"): SAME,
    ("scalar", "canonical", "duckdb_arrow"): not_onnx("float"),
    ("scalar", "canonical", "duckdb_relation"): not_onnx("float"),
    ("scalar", "canonical", "pandas"): SAME,
    ("scalar", "canonical", "dask"): not_onnx("float"),
    ("scalar", "exact", "parquet"): SAME,
    ("scalar", "exact", "fresh_reader"): SAME,
    ("scalar", "exact", "polars_series"): SAME,
    ("scalar", "exact", "polars_stream"): SAME,
    ("scalar", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("scalar", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("scalar", "exact", "pandas"): SAME,
    ("scalar", "exact", "dask"): fails("ArrowNotImplementedError"),
    # int64_ragged: arrow.variable_shape_tensor<int64>, uniform_shape [null,4]
    ("int64_ragged", "canonical", "parquet"): SAME,
    ("int64_ragged", "canonical", "fresh_reader"): SAME,
    ("int64_ragged", "canonical", "polars_series"): SAME,
    ("int64_ragged", "canonical", "polars_stream"): SAME,
    ("int64_ragged", "canonical", "duckdb_arrow"): not_onnx("struct<data:"),
    ("int64_ragged", "canonical", "duckdb_relation"): not_onnx("struct<data:"),
    ("int64_ragged", "canonical", "pandas"): SAME,
    ("int64_ragged", "canonical", "dask"): not_onnx("struct<data:"),
    ("int64_ragged", "exact", "parquet"): SAME,
    ("int64_ragged", "exact", "fresh_reader"): SAME,
    ("int64_ragged", "exact", "polars_series"): SAME,
    ("int64_ragged", "exact", "polars_stream"): SAME,
    ("int64_ragged", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("int64_ragged", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("int64_ragged", "exact", "pandas"): SAME,
    ("int64_ragged", "exact", "dask"): fails("ArrowNotImplementedError"),
    # bool: arrow.fixed_shape_tensor<arrow.bool8>[3]
    ("bool", "canonical", "parquet"): SAME,
    ("bool", "canonical", "fresh_reader"): SAME,
    ("bool", "canonical", "polars_series"): SAME,
    ("bool", "canonical", "polars_stream"): SAME,
    ("bool", "canonical", "duckdb_arrow"): not_onnx("int8"),
    ("bool", "canonical", "duckdb_relation"): not_onnx("int8"),
    ("bool", "canonical", "pandas"): SAME,
    ("bool", "canonical", "dask"): fails("ArrowNotImplementedError"),
    ("bool", "exact", "parquet"): SAME,
    ("bool", "exact", "fresh_reader"): SAME,
    ("bool", "exact", "polars_series"): SAME,
    ("bool", "exact", "polars_stream"): SAME,
    ("bool", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("bool", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("bool", "exact", "pandas"): SAME,
    ("bool", "exact", "dask"): fails("ArrowNotImplementedError"),
    # string: arrow.fixed_shape_tensor<binary>[2]
    ("string", "canonical", "parquet"): SAME,
    ("string", "canonical", "fresh_reader"): SAME,
    ("string", "canonical", "polars_series"): SAME,
    ("string", "canonical", "polars_stream"): SAME,
    ("string", "canonical", "duckdb_arrow"): not_onnx("binary"),
    ("string", "canonical", "duckdb_relation"): not_onnx("binary"),
    ("string", "canonical", "pandas"): SAME,
    ("string", "canonical", "dask"): not_onnx("binary"),
    ("string", "exact", "parquet"): SAME,
    ("string", "exact", "fresh_reader"): SAME,
    ("string", "exact", "polars_series"): SAME,
    ("string", "exact", "polars_stream"): SAME,
    ("string", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("string", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("string", "exact", "pandas"): SAME,
    ("string", "exact", "dask"): fails("ArrowNotImplementedError"),
    # bfloat16: arrow.fixed_shape_tensor<onnx.bfloat16>[3]
    ("bfloat16", "canonical", "parquet"): SAME,
    ("bfloat16", "canonical", "fresh_reader"): SAME,
    ("bfloat16", "canonical", "polars_series"): SAME,
    ("bfloat16", "canonical", "polars_stream"): SAME,
    ("bfloat16", "canonical", "duckdb_arrow"): not_onnx("float"),
    ("bfloat16", "canonical", "duckdb_relation"): not_onnx("float"),
    ("bfloat16", "canonical", "pandas"): SAME,
    ("bfloat16", "canonical", "dask"): not_onnx("float"),
    ("bfloat16", "exact", "parquet"): SAME,
    ("bfloat16", "exact", "fresh_reader"): SAME,
    ("bfloat16", "exact", "polars_series"): SAME,
    ("bfloat16", "exact", "polars_stream"): SAME,
    ("bfloat16", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("bfloat16", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("bfloat16", "exact", "pandas"): SAME,
    ("bfloat16", "exact", "dask"): fails("ArrowNotImplementedError"),
    # float8e4m3fn: arrow.fixed_shape_tensor<onnx.float8e4m3fn>[3]
    ("float8e4m3fn", "canonical", "parquet"): SAME,
    ("float8e4m3fn", "canonical", "fresh_reader"): SAME,
    ("float8e4m3fn", "canonical", "polars_series"): SAME,
    ("float8e4m3fn", "canonical", "polars_stream"): SAME,
    ("float8e4m3fn", "canonical", "duckdb_arrow"): not_onnx("float"),
    ("float8e4m3fn", "canonical", "duckdb_relation"): not_onnx("float"),
    ("float8e4m3fn", "canonical", "pandas"): SAME,
    ("float8e4m3fn", "canonical", "dask"): not_onnx("float"),
    ("float8e4m3fn", "exact", "parquet"): SAME,
    ("float8e4m3fn", "exact", "fresh_reader"): SAME,
    ("float8e4m3fn", "exact", "polars_series"): SAME,
    ("float8e4m3fn", "exact", "polars_stream"): SAME,
    ("float8e4m3fn", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("float8e4m3fn", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("float8e4m3fn", "exact", "pandas"): SAME,
    ("float8e4m3fn", "exact", "dask"): fails("ArrowNotImplementedError"),
    # int4: arrow.fixed_shape_tensor<onnx.int4>[3]
    ("int4", "canonical", "parquet"): SAME,
    ("int4", "canonical", "fresh_reader"): SAME,
    ("int4", "canonical", "polars_series"): SAME,
    ("int4", "canonical", "polars_stream"): SAME,
    ("int4", "canonical", "duckdb_arrow"): not_onnx("int8"),
    ("int4", "canonical", "duckdb_relation"): not_onnx("int8"),
    ("int4", "canonical", "pandas"): SAME,
    ("int4", "canonical", "dask"): not_onnx("int8"),
    ("int4", "exact", "parquet"): SAME,
    ("int4", "exact", "fresh_reader"): SAME,
    ("int4", "exact", "polars_series"): SAME,
    ("int4", "exact", "polars_stream"): SAME,
    ("int4", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("int4", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("int4", "exact", "pandas"): SAME,
    ("int4", "exact", "dask"): fails("ArrowNotImplementedError"),
    # float16: arrow.fixed_shape_tensor<halffloat>[2,2]
    ("float16", "canonical", "parquet"): SAME,
    ("float16", "canonical", "fresh_reader"): SAME,
    ("float16", "canonical", "polars_series"): SAME,
    ("float16", "canonical", "polars_stream"): SAME,
    ("float16", "canonical", "duckdb_arrow"): not_onnx("float"),
    ("float16", "canonical", "duckdb_relation"): not_onnx("float"),
    ("float16", "canonical", "pandas"): SAME,
    ("float16", "canonical", "dask"): not_onnx("halffloat"),
    ("float16", "exact", "parquet"): SAME,
    ("float16", "exact", "fresh_reader"): SAME,
    ("float16", "exact", "polars_series"): SAME,
    ("float16", "exact", "polars_stream"): SAME,
    ("float16", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("float16", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("float16", "exact", "pandas"): SAME,
    ("float16", "exact", "dask"): fails("ArrowNotImplementedError"),
    # sequence: list<arrow.variable_shape_tensor<float>>
    ("sequence", "canonical", "parquet"): SAME,
    ("sequence", "canonical", "fresh_reader"): SAME,
    ("sequence", "canonical", "polars_series"): SAME,
    ("sequence", "canonical", "polars_stream"): SAME,
    ("sequence", "canonical", "duckdb_arrow"): not_onnx("struct<data:"),
    ("sequence", "canonical", "duckdb_relation"): not_onnx("struct<data:"),
    ("sequence", "canonical", "pandas"): SAME,
    ("sequence", "canonical", "dask"): fails("ArrowNotImplementedError"),
    ("sequence", "exact", "parquet"): SAME,
    ("sequence", "exact", "fresh_reader"): SAME,
    ("sequence", "exact", "polars_series"): SAME,
    ("sequence", "exact", "polars_stream"): SAME,
    ("sequence", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("sequence", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("sequence", "exact", "pandas"): SAME,
    ("sequence", "exact", "dask"): fails("ArrowNotImplementedError"),
    # map: map<int64, arrow.fixed_shape_tensor<float>[2]>
    ("map", "canonical", "parquet"): SAME,
    ("map", "canonical", "fresh_reader"): SAME,
    ("map", "canonical", "polars_series"): SAME,
    ("map", "canonical", "polars_stream"): SAME,
    ("map", "canonical", "duckdb_arrow"): not_onnx("float"),
    ("map", "canonical", "duckdb_relation"): not_onnx("float"),
    ("map", "canonical", "pandas"): SAME,
    ("map", "canonical", "dask"): fails("ArrowNotImplementedError"),
    ("map", "exact", "parquet"): SAME,
    ("map", "exact", "fresh_reader"): SAME,
    ("map", "exact", "polars_series"): SAME,
    ("map", "exact", "polars_stream"): SAME,
    ("map", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("map", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("map", "exact", "pandas"): SAME,
    ("map", "exact", "dask"): fails("ArrowNotImplementedError"),
    # optional: arrow.fixed_shape_tensor<float>[2] with a null
    ("optional", "canonical", "parquet"): SAME,
    ("optional", "canonical", "fresh_reader"): SAME,
    ("optional", "canonical", "polars_series"): SAME,
    ("optional", "canonical", "polars_stream"): SAME,
    ("optional", "canonical", "duckdb_arrow"): not_onnx("float"),
    ("optional", "canonical", "duckdb_relation"): not_onnx("float"),
    ("optional", "canonical", "pandas"): SAME,
    ("optional", "canonical", "dask"): not_onnx("float"),
    ("optional", "exact", "parquet"): SAME,
    ("optional", "exact", "fresh_reader"): SAME,
    ("optional", "exact", "polars_series"): SAME,
    ("optional", "exact", "polars_stream"): SAME,
    ("optional", "exact", "duckdb_arrow"): not_onnx("struct<value:"),
    ("optional", "exact", "duckdb_relation"): not_onnx("struct<value:"),
    ("optional", "exact", "pandas"): SAME,
    ("optional", "exact", "dask"): fails("ArrowNotImplementedError"),
}


# --- the test ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    return write_files(tmp_path_factory.mktemp("interchange"))


def _cells() -> list[Any]:
    out = []
    for (column, form, route), expect in EXPECTED.items():
        marks = []
        if expect.kind == "wrong":
            marks.append(pytest.mark.xfail(strict=True, reason=f"silently wrong: {expect.detail}"))
        out.append(
            pytest.param(column, form, route, expect, marks=marks, id=f"{column}-{form}-{route}")
        )
    return out


def test_the_table_has_every_cell() -> None:
    assert set(EXPECTED) == {(c, f, r) for c in COLUMNS for f in FORMS for r in ROUTES}


@pytest.mark.parametrize(("column", "form", "route", "expect"), _cells())
def test_interchange(column: str, form: str, route: str, expect: Expect, files: Files) -> None:
    got = measure(column, form, route, files)
    if expect.kind == "wrong":
        # fixed once the cell comes back the same, or refuses with an onnx-arrow error
        assert got.kind in ("same", "error"), got
        return
    assert (got.kind, got.detail) == (expect.kind, expect.detail), got
    if expect.match:
        assert re.search(expect.match, got.message), got.message

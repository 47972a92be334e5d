"""Store rows as an engine hands them to a worker, back to the values of whole cases.

:func:`cases_from_rows` is the decoder for code that reads a store with another
engine (Dask, Ray, Spark, DuckDB, Polars) and hands a batch of rows to a worker:
it takes the rows of one or more whole cases in any order, checks that every row of
each case is there exactly once (the ``case_rows`` and ``case_row`` columns say how
many rows a case has and where each sits), puts them back in their order and
decodes them as :class:`~onnx_arrow.corpus.Store` does, each value checked against
the ``digest`` its row recorded at import (the bytes rebuilt from the rows must be the
file imported: an engine's Parquet writer that rewrote NaN bits is refused, located).

>>> import onnx_arrow.corpus as corpus
>>> corpus.REQUIRED_COLUMNS[:4]
('test_case', 'kind', 'case_rows', 'case_row')
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.core.model import as_array
from onnx_arrow.corpus.case import (
    CaseHead,
    StoredCase,
    case_data_sets,
    case_tolerance,
    complete_case,
    read_case_head,
)
from onnx_arrow.corpus.copies import resolve, rows_of
from onnx_arrow.corpus.format import ORDINAL_COLUMNS, SCHEMA, TOLERANCE_COLUMNS
from onnx_arrow.corpus.index import check_case_names
from onnx_arrow.corpus.rows import VALUE_COLUMNS, StoredValue, values_from_batch
from onnx_arrow.corpus.sources import CorpusError
from onnx_arrow.corpus.store import Store, as_store

__all__ = [
    "REQUIRED_COLUMNS",
    "StoredCase",
    "case_data_sets",
    "case_tolerance",
    "cases_from_rows",
]

#: The columns :func:`cases_from_rows` needs; any others are ignored.  ``digest`` may be
#: left out only for the rows of a store written before digests were recorded (format
#: version 2 stores that lack the column): its values are then not checked; ``copy_of``
#: only for the rows of a store of format version 4 or older (which holds no copies).  ``declared``
#: is read too where the rows have it (see :func:`cases_from_rows`).
REQUIRED_COLUMNS: Final = (
    "test_case",
    "kind",
    *ORDINAL_COLUMNS,
    *TOLERANCE_COLUMNS,
    *(c for c in VALUE_COLUMNS if c != "test_case"),
    "content",
    "digest",
    "copy_of",
)
_OPTIONAL: Final = ("digest", "copy_of")
#: Columns the decoder reads where the rows have them: ``declared`` gives a case's
#: :attr:`~onnx_arrow.corpus.StoredCase.contradictions` (none without it).
_READ_IF_GIVEN: Final = ("declared",)

_WHOLE_CASES: Final = (
    "hand the decoder whole cases: split the store's rows by test_case (each row group "
    "of a store holds whole cases)"
)


def cases_from_rows(data: Any, *, where: str = "rows", sources: Any = None) -> list[StoredCase]:
    """Decode store rows of whole cases, in any order, into the cases :meth:`Store.case
    <onnx_arrow.corpus.Store.case>` gives: their models, data sets, made inputs, files
    kept as bytes with why, and tolerances.

    Parameters
    ----------
    data
        Rows of a corpus store with at least the :data:`REQUIRED_COLUMNS` (and
        ``declared``, if the case's ``contradictions`` are wanted as the store gives
        them; without it they are empty): a
        ``pyarrow.Table`` or ``RecordBatch``, a pandas ``DataFrame`` (a Dask
        partition), or any object of the Arrow PyCapsule interface (a Polars
        ``DataFrame``, a DuckDB relation).  The layouts other engines produce
        (``large_list``, ``binary_view``, ``large_string``, dictionaries) are taken
        as the store's own types.
    where
        Names the rows in errors: the part file, partition or task they came from.
    sources
        Where the files that copies name are found when ``data`` lacks their rows (a
        file whose bytes repeat an earlier file's is stored once; the rows of the repeat
        name it in ``copy_of``: see the store format's Repeated files): the
        :class:`~onnx_arrow.corpus.Store` (or its path), or rows of the store that hold
        them, of any type ``data`` may be.  None: ``data`` holds them.

    Returns
    -------
    list of StoredCase
        One per case, in the order the cases first appear in ``data``.

    Raises
    ------
    CorpusError
        If a column is missing or of another type, or a case's rows are not all there
        exactly once: a missing row (part of a case), a duplicated row, a row count
        that disagrees with ``case_rows``; the error names the case and rows.  Or if
        the file rebuilt from a value's rows is not the file imported (its ``digest``
        differs: NaN bits rewritten by an engine's Parquet writer, say); the error names
        the case and path.  Or if a row is a copy of a file (``copy_of``) whose rows are
        neither in ``data`` nor in ``sources``, or names a file that does not hold its
        bytes (itself, a copy, a file of another dtype or size); the error names the case
        and path.
    """
    table = _conformed(_table(data, where), where)
    if table.num_rows == 0:
        return []
    table = resolve(table, _fetch(sources, where), where=where, hint=_SOURCES)
    table = _in_case_order(table, where)
    batch = table.combine_chunks().to_batches()[0]
    cases = batch.column("test_case").to_pylist()
    heads: dict[str, CaseHead] = {}
    i = 0
    while i < len(cases):  # the rows of each case are together now, in their order
        count = batch.column("case_rows")[i].as_py()
        rows = batch.slice(i, count)
        heads[cases[i]] = read_case_head(cases[i], rows, where=f"{where}: {cases[i]}")
        i += count
    values: dict[str, list[StoredValue]] = {case: [] for case in heads}
    checked = [*VALUE_COLUMNS, *(c for c in _OPTIONAL if c in batch.schema.names)]
    for value in values_from_batch(batch.select(checked), where=where):
        values[value.case].append(value)
    return [complete_case(head, values[case]) for case, head in heads.items()]


_SOURCES: Final = (
    "hand the decoder the rows of the file it names too (its path is copy_of), or pass "
    "sources= (the store, or rows that hold that file)"
)


def _fetch(sources: Any, where: str) -> Callable[[set[str], list[str]], pa.Table | None] | None:
    """How the files the copies name are found outside the rows: in ``sources``."""
    if sources is None:
        return None
    if isinstance(sources, Store | str | os.PathLike):
        store = as_store(sources, where="cases_from_rows(sources)")
        return lambda paths, _: store.file_rows(paths)
    rows = _conformed(_table(sources, f"{where} (sources)"), f"{where} (sources)")

    def fetch(paths: set[str], _: list[str]) -> pa.Table:
        return rows_of(rows, paths)

    return fetch


def _table(data: Any, where: str) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if type(data).__module__.startswith("pandas") and hasattr(data, "columns"):
        return _pandas_table(data, where)
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        try:
            return pa.table(data)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise CorpusError(
                f"the rows cannot be read as an Arrow table ({exc})", where=where
            ) from None
    raise CorpusError(
        f"rows of type {type(data).__name__}: expected a pyarrow Table or RecordBatch, a "
        "pandas DataFrame, or an object with __arrow_c_stream__ (a Polars DataFrame)",
        where=where,
    )


#: The largest integer every float64 holds exactly: an integer column that Dask's numpy
#: backend made float holds larger ones only rounded
_EXACT_IN_FLOAT: Final = 2**53


def _pandas_table(frame: Any, where: str) -> pa.Table:
    """A pandas DataFrame (a Dask partition) as Arrow, its required columns in the store's
    types.  Columns of Arrow dtypes (``dtype_backend="pyarrow"``) convert as they are.
    Dask's default numpy backend gives integer columns with nulls as float64 (NaN for
    null) and list columns as object cells of ndarrays: the integers are taken back where
    every value is an integer float64 holds exactly (else an error naming the column and
    value), and a tensor's elements keep their NaNs, never read as nulls."""
    columns, names = [], []
    for name in frame.columns:
        if name not in REQUIRED_COLUMNS and name not in _READ_IF_GIVEN:
            continue
        series = frame[name]
        target = SCHEMA.field(name).type
        at = f"{where}: column {name}"
        try:
            if not isinstance(series.dtype, np.dtype):  # Arrow-backed, or pandas' own
                column = pa.array(series, from_pandas=True)
            elif series.dtype.kind == "f" and pa.types.is_integer(target):
                column = _integers_from_floats(series.to_numpy(), target, at)
            elif series.dtype == object and pa.types.is_list(target):
                column = pa.array(series.to_numpy(), type=target, from_pandas=False)
            else:
                column = pa.array(series.to_numpy(), from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise CorpusError(
                f"column {name} ({series.dtype}) does not convert to the store's {target} "
                f'({exc}); read the store with dtype_backend="pyarrow" (Dask: '
                'dd.read_parquet(path, dtype_backend="pyarrow"))',
                where=where,
            ) from None
        columns.append(column)
        names.append(str(name))
    return pa.Table.from_arrays(columns, names=names)


def _integers_from_floats(values: np.ndarray[Any, Any], target: pa.DataType, at: str) -> pa.Array:
    present = values[~np.isnan(values)]
    bad = present[(present != np.round(present)) | (np.abs(present) > _EXACT_IN_FLOAT)]
    if bad.size:
        raise CorpusError(
            f"the column is float64 (Dask's numpy backend holds integers with nulls so) and "
            f"holds {bad[0]!r}, which is no integer a float64 holds exactly; read the store "
            'with dtype_backend="pyarrow" (Dask: dd.read_parquet(path, dtype_backend="pyarrow"))',
            where=at,
        )
    return pa.array(values, type=target, from_pandas=True)


def _conformed(table: pa.Table, where: str) -> pa.Table:
    """The required columns, valid, in the store's types."""
    names = set(table.schema.names)
    missing = [c for c in REQUIRED_COLUMNS if c not in names and c not in _OPTIONAL]
    if missing:
        raise CorpusError(
            f"the rows have no column {', '.join(map(repr, missing))}; read the store with "
            "at least onnx_arrow.corpus.REQUIRED_COLUMNS",
            where=where,
        )
    columns = []
    present = [c for c in (*REQUIRED_COLUMNS, *_READ_IF_GIVEN) if c in names]
    for name in present:
        target = SCHEMA.field(name).type
        if name == "test_case":  # as a store's readers check it, in the same words
            check_case_names(table.column(name), where=where)
        column = as_array(table.column(name), where=f"{where}: column {name}")
        if column.type != target:
            if _loosely(column.type) != _loosely(target):
                raise CorpusError(
                    f"column {name} is {column.type}; the store's is {target}: hand the "
                    "decoder the column as the engine read it from the store, not converted",
                    where=where,
                )
            try:
                column = column.cast(target, safe=True)
            except pa.ArrowException as exc:
                raise CorpusError(
                    f"column {name} ({column.type}) does not fit the store's {target} ({exc})",
                    where=where,
                ) from None
        columns.append(column)
    return pa.Table.from_arrays(columns, names=present)


def _loosely(t: pa.DataType) -> pa.DataType:
    """``t`` with the 64-bit-offset, dictionary and list layouts of other engines made
    plain, and integers of any width (Spark widens unsigned integers, uint64 to
    ``decimal(20, 0)``) as one: two types alike in this form hold the same values if a
    safe cast succeeds, and the cast refuses a value that does not fit."""
    if pa.types.is_integer(t) or (pa.types.is_decimal(t) and t.scale == 0):
        return pa.int64()
    if pa.types.is_dictionary(t):
        return _loosely(t.value_type)
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_list(t) or pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        # DuckDB gives a fixed-size list (complex elements) as a list: the cast checks sizes
        return pa.list_(_loosely(t.value_type))
    return t


def _in_case_order(table: pa.Table, where: str) -> pa.Table:
    """The rows sorted case by case (cases as they first appear) and by ``case_row``,
    every row of each case checked to be there once."""
    for name in ORDINAL_COLUMNS:
        nulls = table.column(name).null_count
        if nulls:
            raise CorpusError(
                f"{nulls} rows have no {name}; every row of a store has one", where=where
            )
    rank = pc.dictionary_encode(table.column("test_case")).combine_chunks()
    order = pc.sort_indices(
        pa.table({"rank": rank.indices, "row": table.column("case_row")}),
        sort_keys=[("rank", "ascending"), ("row", "ascending")],
    )
    table = table.take(order)
    codes = rank.indices.to_numpy()[order.to_numpy()]
    names = rank.dictionary.to_pylist()
    got = table.column("case_row").to_numpy()
    want = table.column("case_rows").to_numpy()
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    stops = np.r_[starts[1:], len(codes)]
    for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
        _check_whole(names[codes[start]], got[start:stop], want[start:stop], where)
    return table


def _check_whole(
    case: str, got: np.ndarray[Any, Any], want: np.ndarray[Any, Any], where: str
) -> None:
    """The rows of ``case`` (``case_row`` sorted) are 0 .. case_rows - 1, each once."""
    at = f"{where}: {case}"
    if (want != want[0]).any():
        raise CorpusError(
            f"its rows disagree on case_rows ({sorted(set(want.tolist()))}); the rows come "
            "from different stores or were changed",
            where=at,
        )
    total = int(want[0])
    repeated = got[1:][got[1:] == got[:-1]]
    if repeated.size:
        raise CorpusError(
            f"case_row {_listed(np.unique(repeated))} appears more than once; each row of a "
            "case must be handed over once (was the store read twice, or two stores of the "
            "same case joined?)",
            where=at,
        )
    if got.size != total or (got.size and (got[0] != 0 or got[-1] != total - 1)):
        # the rows here say what is missing: nothing is allocated for the count they claim
        extra = got[(got < 0) | (got >= total)]
        what = (
            f"case_row {_listed(extra)} is outside 0 .. {total - 1}"
            if extra.size
            else f"case_row {_missing(got, total)} missing"
        )
        raise CorpusError(
            f"{got.size} of its {total} rows are here ({what}): {_WHOLE_CASES}", where=at
        )


def _missing(got: np.ndarray[Any, Any], total: int) -> str:
    """The first few of 0 .. total - 1 not in ``got`` (sorted, unique, within range), and
    how many are missing, found without a list of the ``total`` claimed."""
    gaps: list[int] = []
    expected = 0
    for row in [*got.tolist(), total]:
        while expected < row and len(gaps) < 5:
            gaps.append(expected)
            expected += 1
        expected = max(expected, row + 1)
        if len(gaps) == 5:
            break
    shown = ", ".join(map(str, gaps))
    count = total - got.size
    return shown + (f" ... ({count} in all)" if count > 5 else "")


def _listed(values: np.ndarray[Any, Any]) -> str:
    shown = ", ".join(map(str, values[:5].tolist()))
    return shown + (f" ... ({values.size} in all)" if values.size > 5 else "")

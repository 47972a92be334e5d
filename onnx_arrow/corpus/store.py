"""Reading a corpus store: :class:`Store`, its cases, values, files and models, over one
Parquet file or the parts of a dataset store, validated as it reads them.

Written by :func:`~onnx_arrow.corpus.write.write_store` (one file) and
:func:`~onnx_arrow.corpus.dataset.write_dataset` (a dataset store); exported back to a
folder tree by :func:`~onnx_arrow.corpus.export.export_store`.
"""

from __future__ import annotations

import functools
import os
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.core.model import contradiction, declared_type
from onnx_arrow.corpus.arguments import check_path, type_name
from onnx_arrow.corpus.case import (
    StoredCase,
    case_tolerance,
    complete_case,
    parse_model_row,
    read_case_head,
)
from onnx_arrow.corpus.copies import StoreSources
from onnx_arrow.corpus.format import (
    CASES_KEY,
    DATA_COLUMNS,
    SCHEMA,
    TOLERANCE_COLUMNS,
    case_runs,
)
from onnx_arrow.corpus.index import case_index
from onnx_arrow.corpus.parts import (
    Part,
    by_parts,
    keep_read,
    kept_read,
    open_part,
    part_paths,
    read_back,
)
from onnx_arrow.corpus.rows import (
    VALUE_COLUMNS,
    StoredFile,
    StoredValue,
    columns_of,
    files_from_batch,
    values_from_batch,
)
from onnx_arrow.corpus.sources import CorpusError, Tolerance
from onnx_arrow.corpus.tree import check_tree_paths, name_max, write_tree
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = ["Store", "as_store", "check_store_path"]

#: The columns that rebuild files: the values' columns and the bytes of the others.
_FILE_COLUMNS: Final = (*VALUE_COLUMNS, "content", "digest")

#: A case whose rows are not all together (a store onnx-arrow did not write).
_SCATTERED: Final = (-1, -1)
#: The columns a row group is read with first: all but the data columns, of which only
#: those of the dtypes its rows hold are read then (a case of floats reads one of them).
_LIGHT_COLUMNS: Final = tuple(c for c in SCHEMA.names if c not in DATA_COLUMNS)
_SCHEMA_NAMES: Final = SCHEMA.names
#: The data column of each dtype, by the name the ``dtype`` column gives it.
_DATA_COLUMN_OF: Final = {row.name: column for column, row in DATA_COLUMNS.items()}


def _runs(cases: list[str | None]) -> dict[str, tuple[int, int]]:
    """Where each case's rows are: ``(start, stop)``, or :data:`_SCATTERED`."""
    runs: dict[str, tuple[int, int]] = {}
    start = 0
    for i in range(1, len(cases) + 1):
        if i == len(cases) or cases[i] != cases[start]:
            name = cases[start]
            if name is not None:
                runs[name] = _SCATTERED if name in runs else (start, i)
            start = i
    return runs


@dataclass
class _ReadGroups:
    """Row groups read together: their rows, where each case's rows are, and their value
    columns converted (on first use) for all their cases."""

    groups: tuple[int, ...]
    table: pa.Table
    where: str
    #: the columns that decode their values: with ``digest`` where their parts record it
    value_columns: tuple[str, ...] = VALUE_COLUMNS

    @functools.cached_property
    def runs(self) -> dict[str, tuple[int, int]]:
        return _runs(self.table.column("test_case").to_pylist())

    @functools.cached_property
    def columns(self) -> Any:
        batch = self.table.select(list(self.value_columns)).combine_chunks().to_batches()[0]
        return columns_of(batch, where=self.where)


class Store:
    """An onnx-arrow corpus store, validated when opened: one Parquet file, or a dataset
    of part files.

    Parameters
    ----------
    path
        The store's Parquet file; a dataset store's folder (every ``.parquet`` file
        under it, not hidden, not starting with ``_``, is a part: ``part-N.parquet``
        files in the order of N, then any others by path); or a list of Parquet files,
        read as the parts of one store in that order.

    Raises
    ------
    CorpusError
        If a part is not a store: missing or foreign metadata, a format version this
        onnx-arrow does not read (a newer one, or one older than version 2: a part of
        version 2 reads as the current version, the columns it lacks as nulls; see the
        store format's Older versions), a schema that differs from its version's; if
        a folder holds no part, or a part is a symlink; if a row names no case (a null
        or invalid UTF-8 ``test_case``), or a case is in two parts (a part added twice,
        a case split over two parts).  The error names the part.  Every reader of a
        store opens it here, so all refuse what one refuses.  A part whose footer holds
        an index of cases that agrees with the footer is not read for this: its index
        lists its cases, and the rows of a case are checked against it when read (see
        the store format's The index of cases).
    UnsupportedTypeError
        If ``path`` is not a path or a list of paths (see :func:`check_store_path`).
    """

    def __init__(self, path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> None:
        path = check_store_path(path, where="Store(path)")
        if isinstance(path, str | os.PathLike):
            self.path = Path(path)
            paths = part_paths(self.path)
        else:
            paths = [Path(p) for p in path]
            if not paths:
                raise CorpusError("no store files given; pass at least one .parquet file")
            self.path = paths[0] if len(paths) == 1 else Path(os.path.commonpath(paths))
        self._last_read: _ReadGroups | None = None
        self._parts = [open_part(p) for p in paths]
        #: The rows that repeated files (copies) take their payload from.
        self._sources = StoreSources(self._parts)
        #: The store's metadata (its first part's; every part has the same format version).
        self.metadata = self._parts[0].metadata
        #: Every row group of the store: (part, row group in the part).
        self._groups = [(k, i) for k, part in enumerate(self._parts) for i in range(part.groups)]
        #: The part of each case, in store order, checked once: every reader reads the
        #: same store.
        self._case_part = {
            name: k for k, names in enumerate(case_index(self._parts)) for name in names
        }

    @property
    def parts(self) -> tuple[Path, ...]:
        """The store's Parquet files: one, or a dataset's parts in store order."""
        return tuple(part.path for part in self._parts)

    @property
    def digests(self) -> bool:
        """Whether every part records its files' digests (stores of format version 2
        written before digests were recorded do not)."""
        return all("digest" not in part.missing for part in self._parts)

    @property
    def nbytes(self) -> int:
        """The size of the store's files, in bytes."""
        return sum(part.path.stat().st_size for part in self._parts)

    @property
    def num_row_groups(self) -> int:
        """Row groups in the store, over all its parts; each holds whole cases."""
        return len(self._groups)

    def row_groups(self, columns: Sequence[str] | None = None) -> Iterator[pa.RecordBatch]:
        """The row groups (only ``columns``, if given), one at a time, fully validated."""
        columns = _column_names(columns, where="Store.row_groups(columns)")
        for i in range(self.num_row_groups):
            yield from self._row_group(i, columns)

    def _row_group(self, i: int, columns: Sequence[str] | None) -> Iterator[pa.RecordBatch]:
        k, local = self._groups[i]
        part = self._parts[k]
        table = part.read([local], columns)
        if part.index is not None and "test_case" in table.column_names:
            # the cases were listed from the index: a reader of every row checks it
            self._validate(table.select(["test_case"]), f"row group {local}", part.path)
            _check_runs(table.column("test_case"), part.index[local], part.path, local)
        where = f"{part.path}: row group {local}"
        table = self._sources.complete(k, [local], table, where=where)
        return self._batches(table, f"row group {local}", part.path)

    def read_columns(
        self, columns: Sequence[str], *, roles: Sequence[str] | None = None
    ) -> pa.Table:
        """Some columns of every row (of these ``roles`` only, if given), validated, as one
        table: all parts, in store order.  Row groups without such a role are skipped."""
        names = _column_names(columns, where="Store.read_columns(columns)")
        if roles is not None:
            roles = _names(roles, what="roles", where="Store.read_columns(roles)")
        tables = [part.read(None, names, roles) for part in self._parts]
        for part, table in zip(self._parts, tables, strict=True):
            self._validate(table, "the columns read", part.path)
        tables = [
            self._sources.complete(k, None, table, roles, where=str(self._parts[k].path))
            for k, table in enumerate(tables)
        ]
        return pa.concat_tables(tables)

    def model_batches(self) -> Iterator[tuple[Path, pa.RecordBatch]]:
        """The model rows (``test_case``, ``path``, ``role``, ``content``), a row group at
        a time, each with the part it is in."""
        columns = ["test_case", "path", "role", "content"]
        for i in range(self.num_row_groups):
            k, _ = self._groups[i]
            for batch in self._row_group(i, columns):
                yield self._parts[k].path, batch.filter(pc.equal(batch.column("role"), "model"))

    def _batches(self, table: pa.Table, what: str, path: Path) -> Iterator[pa.RecordBatch]:
        """The rows as one batch (a value never straddles two batches), fully validated: a
        store may come from anyone."""
        self._validate(table, what, path)
        yield from table.combine_chunks().to_batches()

    def _validate(self, table: pa.Table, what: str, path: Path) -> None:
        """Full Arrow validation of rows read from a part."""
        for batch in table.to_batches():
            try:
                batch.validate(full=True)
            except pa.ArrowInvalid as exc:
                raise CorpusError(
                    f"{what} is invalid Arrow data ({exc}); the store is damaged: "
                    "import the corpus again",
                    where=str(path),
                ) from None

    def cases(self) -> list[str]:
        """The names of the cases, in store order (checked when the store was opened: each
        in one part)."""
        return list(self._case_part)

    def read_case(self, case: str, columns: Sequence[str] | None = None) -> pa.Table:
        """The rows of one case, fully validated; row groups that cannot hold it are not
        read."""
        columns = _column_names(columns, where="Store.read_case(columns)")
        read, span = self._locate(case)
        table = read.table
        if span is _SCATTERED:  # not written by onnx-arrow, which keeps a case's rows together
            rows = table.filter(pc.equal(table.column("test_case"), case))
        else:
            rows = table.slice(span[0], span[1] - span[0])
        return rows.select(list(columns)) if columns else rows

    def _locate(self, case: str) -> tuple[_ReadGroups, tuple[int, int]]:
        """The row groups that hold ``case`` (read), and where its rows are in them."""
        if not isinstance(case, str):
            raise UnsupportedTypeError(
                f"a case is named by its test_case (str), got {type_name(case)}",
                where=str(self.path),
            )
        part = self._case_part.get(case)
        if part is None:
            raise CorpusError(f"no case {case!r} in the store", where=str(self.path))
        if self._parts[part].index is not None:
            return self._indexed(case, part)
        ours = [i for i, (k, _) in enumerate(self._groups) if k == part]
        groups = tuple(i for i in ours if self._may_hold(i, case))
        read = self._read_groups(groups) if groups else None
        span = None if read is None else read.runs.get(case)
        if read is None or span is None:  # statistics that do not say the truth: read all
            read = self._read_groups(tuple(ours))
            span = read.runs.get(case)
        if span is None:  # the part held it when the store was opened
            raise CorpusError(
                f"case {case!r} is no longer in the store; it changed after it was opened",
                where=str(self.path),
            )
        return read, span

    def _indexed(self, case: str, k: int) -> tuple[_ReadGroups, tuple[int, int]]:
        """The row group that holds ``case`` in part ``k`` by the part's index of cases
        (read), and where its rows are in it: the one row group, checked against the
        rows read (their ``test_case`` runs, and the case's ``case_rows`` and
        ``case_row``), so that an index that does not tell the truth is a located error,
        never another case's rows."""
        local, start, stop = self._index_spans[case]
        first = next(i for i, (p, _) in enumerate(self._groups) if p == k)
        read = self._read_groups((first + local,))
        span = read.runs.get(case)
        where = f"{self._parts[k].path}: row group {local}"
        table = read.table
        if span == (start, stop):
            n = stop - start
            rows = table.column("case_rows").slice(start, n).to_numpy(zero_copy_only=False)
            order = table.column("case_row").slice(start, n).to_numpy(zero_copy_only=False)
            if (rows == n).all() and (order == np.arange(n)).all():
                return read, span
            said = f"its {n} rows say the case has {rows[0]} (case_rows) in another order"
        else:
            held = "none of it" if span is None else f"rows {span[0]} to {span[1]}"
            said = f"its rows hold {held}"
        raise CorpusError(
            f"the store's index of cases ({CASES_KEY} in the file's footer) puts case "
            f"{case!r} at rows {start} to {stop} of the row group, and {said}: the file was "
            "changed after it was written; import the corpus again",
            where=where,
        )

    @functools.cached_property
    def _index_spans(self) -> dict[str, tuple[int, int, int]]:
        """Per case of the parts with an index of cases: its row group in its part and
        its rows in it."""
        return {
            name: (local, start, stop)
            for part in self._parts
            for local, spans in enumerate(part.index or ())
            for name, start, stop in spans
        }

    def _read_groups(self, groups: tuple[int, ...]) -> _ReadGroups:
        """Row groups, read and validated once for calls on their cases (by any store of
        the same bytes, :func:`read_back`): the columns but the data columns, then the
        data columns of the dtypes their rows hold (the others read as nulls)."""
        if self._last_read is not None and self._last_read.groups == groups:
            return self._last_read
        by_part = by_parts(self._groups[i] for i in groups)
        now = read_back(self._parts, by_part)
        kept = None if now is None else kept_read(now)
        if kept is not None and kept.groups == groups:
            self._last_read = kept
            return kept
        tables, fetched = [], self._sources.fetches
        for k, local_groups in by_part.items():
            part = self._parts[k]
            table = _read_rows(part, local_groups)
            what = "row group " + ", ".join(map(str, local_groups))
            self._validate(table, what, part.path)
            where = f"{part.path}: {what}"
            tables.append(self._sources.resolve(k, table, where=where, groups=local_groups))
        where = str(self._parts[next(iter(by_part))].path)
        checked = all("digest" not in self._parts[k].missing for k in by_part)
        columns = (*VALUE_COLUMNS, "digest") if checked else VALUE_COLUMNS
        read = self._last_read = _ReadGroups(groups, pa.concat_tables(tables), where, columns)
        # copies filled from other row groups: rows read_back does not compare, not kept
        keep_read(now if self._sources.fetches == fetched else None, read, read.table.nbytes)
        return read

    def _case_columns(self, case: str) -> tuple[Any, tuple[int, int] | None]:
        """The value columns of the row groups that hold ``case``, converted once for all
        their cases, and where its rows are in them; None where they are not together."""
        read, span = self._locate(case)
        return (None, None) if span is _SCATTERED else (read.columns, span)

    def _may_hold(self, group: int, case: str) -> bool:
        span = self._case_spans[group]
        return span is None or span[0] <= case <= span[1]

    @functools.cached_property
    def _case_spans(self) -> list[tuple[str, str] | None]:
        """Per row group, the smallest and largest case in it, if its statistics say."""
        spans: list[tuple[str, str] | None] = []
        for k, local in self._groups:
            stats = self._parts[k].file.metadata.row_group(local).column(0).statistics
            try:
                has = stats is not None and stats.has_min_max
                span = (stats.min, stats.max) if has else None
            except (ValueError, pa.ArrowException):  # not UTF-8: no help in finding a case
                span = None
            spans.append(span if span and all(isinstance(x, str) for x in span) else None)
        return spans

    def files(self, row_group: int | None = None) -> Iterator[StoredFile]:
        """Every file of the corpus (or of one row group), rebuilt byte for byte, in store
        order."""
        groups = range(self.num_row_groups)
        if row_group is not None:
            if not isinstance(row_group, int) or isinstance(row_group, bool):
                raise UnsupportedTypeError(
                    f"expected a row group's number (int), got {type_name(row_group)}",
                    where="Store.files(row_group)",
                )
            if row_group not in groups:
                raise CorpusError(
                    f"no row group {row_group}: the store has {len(groups)}, numbered from 0",
                    where=str(self.path),
                )
            groups = range(row_group, row_group + 1)
        for i in groups:
            k, local = self._groups[i]
            for batch in self._row_group(i, self._file_columns(k)):
                where = f"{self._parts[k].path}: row group {local}"
                yield from files_from_batch(batch, where=where)

    def _file_columns(self, k: int) -> tuple[str, ...]:
        """The columns that rebuild the files of part ``k``: with their digests, to check
        them, unless the part's format version recorded none."""
        if "digest" in self._parts[k].missing:
            return tuple(c for c in _FILE_COLUMNS if c != "digest")
        return _FILE_COLUMNS

    def values(self, case: str | None = None) -> Iterator[StoredValue]:
        """Every value of the store (or of one case), decoded straight from its columns.

        ``StoredValue.to_numpy()`` gives what ``onnx.numpy_helper`` gives for the
        file; only the columns values need are read, and each value's file is rebuilt
        from them and checked against the digest recorded at import (where the store
        records digests), so that rows an engine's writer changed are refused, located.
        """
        if case is not None:
            yield from self._case_values(case)
            return
        for i in range(self.num_row_groups):
            k, local = self._groups[i]
            for batch in self._row_group(i, self._value_columns(k)):
                where = f"{self._parts[k].path}: row group {local}"
                yield from values_from_batch(batch, where=where)

    def _case_values(self, case: str, path: str | None = None) -> Iterator[StoredValue]:
        """The values of ``case``, or the value of its file ``path`` only."""
        cols, span = self._case_columns(case)
        where = str(self.path)
        if span is not None:  # the case's rows in its row groups, converted once
            yield from values_from_batch(cols, where=where, rows=range(*span), path=path)
            return
        columns = self._value_columns(self._case_part[case])
        table = self.read_case(case, columns).combine_chunks()
        for batch in table.to_batches():
            yield from values_from_batch(batch, where=where, path=path)

    def _value_columns(self, k: int) -> tuple[str, ...]:
        """The columns that decode the values of part ``k``: with their digests, to check
        each value's file, unless the part's format version recorded none."""
        return VALUE_COLUMNS if "digest" in self._parts[k].missing else (*VALUE_COLUMNS, "digest")

    def value(self, path: str) -> StoredValue:
        """The value of one value file, by its path (a catalog row's ``path``): any value
        the store decoded, in a case folder or beside its model (``light/NAME_output_0.pb``).

        The store's value paths are read once (two columns); then only the rows of the
        case that holds the path.

        Raises
        ------
        CorpusError
            If the store has no value file at ``path`` (no such file, or a file kept as
            bytes: :meth:`case_files` gives those).
        UnsupportedTypeError
            If ``path`` is not a ``str``.
        """
        if not isinstance(path, str):
            raise UnsupportedTypeError(
                f"expected a value file's path in the store (str), got {type_name(path)}",
                where="Store.value(path)",
            )
        case = self._value_cases.get(path)
        if case is not None:
            for value in self._case_values(case, path):
                return value
        raise CorpusError(
            "no value file of this path in the store (a path of a value the store decoded, "
            "as the catalog lists them; case_files gives the files kept as bytes)",
            where=f"{self.path}: {path}",
        )

    @functools.cached_property
    def _value_cases(self) -> dict[str, str]:
        """The case of each value file, by its path."""
        table = self.read_columns(["test_case", "path"], roles=["value"])
        paths, cases = (table.column(c).to_pylist() for c in ("path", "test_case"))
        return dict(zip(paths, cases, strict=True))

    def case_files(self, case: str) -> list[StoredFile]:
        """The files of one case, rebuilt byte for byte."""
        columns = self._file_columns(self._case_part.get(case, 0))
        table = self.read_case(case, columns).combine_chunks()
        where = f"{self.path}: {case}"
        return [f for batch in table.to_batches() for f in files_from_batch(batch, where=where)]

    def tolerance(self, case: str) -> Tolerance | None:
        """The case's own tolerances (``rtol``, ``atol``) as its source stated them (onnx's
        ``TestCase``, the case folder's ``data.json``); None when it stated none."""
        rows = self.read_case(case, list(TOLERANCE_COLUMNS))
        return case_tolerance(rows, where=f"{self.path}: {case}")

    def model(self, case: str) -> ModelProto:
        """The model of a case (parsed as :meth:`case` parses it, its values not read)."""
        part = self._case_part.get(case) if isinstance(case, str) else None
        checked = part is not None and "digest" not in self._parts[part].missing
        table = self.read_case(case, ["path", "role", "content", *(["digest"] * checked)])
        roles = table.column("role").to_pylist()
        if "model" not in roles:
            raise CorpusError("the case has no model", where=f"{self.path}: {case}")
        return parse_model_row(table, roles.index("model"), where=f"{self.path}: {case}")

    def case_table(self, case: str) -> pa.Table:
        """A case as an Arrow table: a row per data set, a column per model input and output.

        Columns are typed by what the model declares (fixed-shape tensors, lists,
        maps, nullable columns), or by what the values hold where one contradicts it
        (its ``declared`` column says so), named as the graph names them; each field's
        metadata says ``io`` and ``index``.  The data sets are :meth:`case`'s that hold
        stored values (the values outside a ``test_data_set_N`` folder first, as a
        ``light/`` model's); inputs onnx's runner makes are not stored, and not here.
        """
        # imported here: the conversions to Arrow types, which no other reader needs
        from onnx_arrow.core.model import arrow_type, build_array, infer_arrow_type, kind_of_type

        stored = self.case(case)
        model = stored.model
        if model is None:
            raise CorpusError("the case has no model", where=f"{self.path}: {case}")
        slots: dict[tuple[str, int], dict[int | None, StoredValue]] = {}
        for data_set in stored.sets:
            for io, by_index in (("input", data_set.inputs), ("output", data_set.expected)):
                for index, value in by_index.items():
                    slots.setdefault((io, index), {})[data_set.number] = value
        held = {n for by_number in slots.values() for n in by_number}
        data_sets = [d.number for d in stored.sets if d.number in held]
        columns, fields = [], []
        for io, index in sorted(slots, key=lambda slot: (slot[0] != "input", slot[1])):
            values = slots[(io, index)]
            type_proto = declared_type(model, io, index)
            missing = [n for n in data_sets if n not in values]
            where = f"{self.path}: {case}: {io} {index}"
            if missing or type_proto is None:
                raise CorpusError(
                    f"missing from data sets {missing}" if missing else "the model declares none",
                    where=where,
                )
            try:
                nodes = [values[n].node for n in data_sets]
                kind = kind_of_type(type_proto)
                # values that contradict the declaration are typed by what they hold
                own = any(contradiction(type_proto, node, kind) for node in nodes)
                typed = infer_arrow_type(nodes, kind) if own else arrow_type(type_proto)
                column = build_array(nodes, kind, typed)
            except OnnxArrowError as exc:
                raise exc.at(where) from None
            graph_values = model.graph.input if io == "input" else model.graph.output
            columns.append(column)
            fields.append(
                pa.field(
                    graph_values[index].name, column.type, metadata={"io": io, "index": str(index)}
                )
            )
        return pa.Table.from_arrays(columns, schema=pa.schema(fields))

    def case(self, case: str) -> StoredCase:
        """One case, read in one pass over its rows: its model (parsed once), its data
        sets (a data set per ``test_data_set_N`` folder, and the values outside any such
        folder as one more, numbered None and listed first), the files the store keeps
        as bytes with why, the inputs onnx's runner makes for a ``light/`` model test
        without input files, its declarations and its own tolerance (see
        :class:`~onnx_arrow.corpus.StoredCase`).  The rows of the same case handed
        back by an engine give the same case (:func:`~onnx_arrow.corpus.cases_from_rows`).

        Raises
        ------
        CorpusError
            If the store has no such case, its rows disagree on a tolerance, its model
            does not parse, or a value's file is not the one imported (its digest).
        UnsupportedTypeError
            If ``case`` is not a ``str``.
        """
        read, span = self._locate(case)
        where = f"{self.path}: {case}"
        table = read.table
        if span is _SCATTERED:  # not written by onnx-arrow, which keeps a case's rows together
            rows = table.filter(pc.equal(table.column("test_case"), case))
        else:
            rows = table.slice(span[0], span[1] - span[0])
        head = read_case_head(case, rows, where=where)
        if span is _SCATTERED:
            columns = list(self._value_columns(self._case_part[case]))
            batches = rows.select(columns).combine_chunks().to_batches()
            values = [v for b in batches for v in values_from_batch(b, where=str(self.path))]
        else:
            values = list(values_from_batch(read.columns, where=str(self.path), rows=range(*span)))
        return complete_case(head, values)

    def case_arrays(self, case: str) -> list[dict[str, dict[str, Any]]]:
        """Per data set, the inputs and outputs as numpy values, ready to feed a runtime.

        Each data set is ``{"inputs": {name: value}, "outputs": {name: value}}``,
        named as the model's graph names them: tensors as ndarrays, sequences as
        lists, optionals as a value or None, maps as dicts.  The data sets are those of
        :meth:`case` (the values outside a ``test_data_set_N`` folder as one, first),
        the inputs onnx's runner makes for a ``light/`` model test among the inputs:
        what ``compare`` feeds.  Files kept as bytes are not among them
        (``Store.case(case).kept`` says why each was kept).
        """
        stored = self.case(case)
        if stored.model is None:
            raise CorpusError("the case has no model", where=f"{self.path}: {case}")
        return stored.data_sets()

    def export(self, dest: str | os.PathLike[str], *, force: bool = False) -> dict[str, int]:
        """Write the corpus back as a folder tree, byte for byte (see :func:`export_store`)."""
        check_path(dest, where="Store.export(dest)")
        where = str(self.path)
        check_tree_paths(self.file_paths(), where=where, longest=name_max(dest))
        return write_tree(self.files(), dest, force=force, where=where)

    def file_rows(self, paths: Iterable[str]) -> pa.Table:
        """Every column of the rows of the files at ``paths`` (those the store holds),
        their element rows included: the rows copies name (see the store format's
        Repeated files), read by the row groups that hold them."""
        wanted = set(paths)
        found = [self._sources.rows(k, wanted) for k in range(len(self._parts))]
        tables = [t for t in found if t is not None] or [SCHEMA.empty_table()]
        return pa.concat_tables(tables, promote_options="permissive")  # parts' list layouts

    def file_paths(self) -> list[str | None]:
        """The path of every file of the store, in store order (its rows but the element
        rows, whose paths are their value's), read without rebuilding any file."""
        table = self.read_columns(["path"], roles=["model", "value", "file"])
        paths: list[str | None] = table.column("path").to_pylist()
        return paths


def _check_runs(
    column: pa.ChunkedArray, spans: list[tuple[str, int, int]], path: Path, group: int
) -> None:
    """Refuse a row group whose ``test_case`` runs are not those its part's index of
    cases lists (validated Arrow: a null, or a name the index does not give, differs)."""
    runs = case_runs(column.to_pylist())
    listed = [(name, stop - start) for name, start, stop in spans]
    if runs != listed:
        pairs = enumerate(zip(runs, listed, strict=False))
        at = next((i for i, (a, b) in pairs if a != b), min(len(runs), len(listed)))
        said = repr(runs[at][0]) if at < len(runs) else "no more cases"
        raise CorpusError(
            f"the store's index of cases ({CASES_KEY} in the file's footer) disagrees with "
            f"the row group's test_case column at its case {at} (the column holds {said}): "
            "the file was changed after it was written; import the corpus again",
            where=f"{path}: row group {group}",
        )


def _read_rows(part: Part, groups: list[int]) -> pa.Table:
    """Row groups of ``part`` in the store's schema: every column but the data columns,
    and the data columns of the dtypes their rows hold (the others are null in their
    rows, and come back as nulls).  The data columns of the dtypes the footer's
    statistics span are read with the others; any other dtype the rows hold is read
    after."""
    threads = len(groups) > 1
    span = part.dtype_span(groups)
    hinted = (
        [] if span is None else [c for d, c in _DATA_COLUMN_OF.items() if span[0] <= d <= span[1]]
    )
    table = part.read(groups, [*_LIGHT_COLUMNS, *hinted], threads=threads)
    held = set(pc.unique(table.column("dtype")).to_pylist())
    rest = [c for d, c in _DATA_COLUMN_OF.items() if d in held and c not in hinted]
    more = part.read(groups, rest, threads=threads) if rest else table
    n, read, later = table.num_rows, set(table.column_names), set(rest)
    columns = [
        table.column(c) if c in read
        else more.column(c) if c in later
        else _nulls(_file_type(part, c), n)
        for c in _SCHEMA_NAMES
    ]  # fmt: skip
    return pa.Table.from_arrays(columns, names=_SCHEMA_NAMES)


def _file_type(part: Part, column: str) -> pa.DataType:
    """The type of ``column`` as ``part``'s file reads it (its schema's, else the store's)."""
    at = part.schema.get_field_index(column)
    return (part.schema if at >= 0 else SCHEMA).field(column).type


def _nulls(type_: pa.DataType, rows: int) -> pa.Array:
    """``rows`` nulls of ``type_``: one array for row groups of as many rows, up to
    :data:`_SHARED_NULLS` rows (Arrow arrays are immutable)."""
    return _shared_nulls(type_, rows) if rows <= _SHARED_NULLS else pa.nulls(rows, type_)


#: The most rows of the null columns kept to be shared (a few KiB each).
_SHARED_NULLS: Final = 4096


@functools.lru_cache(maxsize=128)
def _shared_nulls(type_: pa.DataType, rows: int) -> pa.Array:
    return pa.nulls(rows, type_)


def _names(names: object, *, what: str, where: str) -> list[str]:
    """``names`` as a list of ``str``: any iterable of them, not one ``str`` alone."""
    if isinstance(names, str | bytes) or not isinstance(names, Iterable):
        raise UnsupportedTypeError(
            f"expected a list of {what} (str), got {type_name(names)}", where=where
        )
    listed = list(names)
    bad = next((n for n in listed if not isinstance(n, str)), None)
    if bad is not None:
        raise UnsupportedTypeError(f"expected {what} as str, got {type_name(bad)}", where=where)
    return listed


def _column_names(columns: object, *, where: str) -> list[str] | None:
    """``columns`` (None for all) as a list of the store's column names, each checked."""
    if columns is None:
        return None
    names = _names(columns, what="column names", where=where)
    unknown = [c for c in names if c not in SCHEMA.names]
    if unknown:
        raise CorpusError(
            f"no column {unknown[0]!r} in a store; its columns are {', '.join(SCHEMA.names[:8])} "
            "... (docs/store-format.md)",
            where=where,
        )
    return names


def check_store_path(
    path: object, *, where: str
) -> str | os.PathLike[str] | list[str | os.PathLike[str]]:
    """``path`` if it is what :class:`Store` opens, a path or an iterable of paths (read
    into a list, each checked), else an error at ``where`` (the argument, as
    ``export_store(store)``)."""
    if isinstance(path, str | os.PathLike):
        return check_path(path, where=where)
    if (
        isinstance(path, bytes)
        or not isinstance(path, Iterable)
        or hasattr(path, "__arrow_c_array__")
        or hasattr(path, "__arrow_c_stream__")
    ):
        raise UnsupportedTypeError(
            "expected a store: its Parquet file or dataset folder (str or os.PathLike), or "
            f"a list of its part files, got {type_name(path)}",
            where=where,
        )
    return [check_path(p, where=f"{where}[{i}]") for i, p in enumerate(path)]


def as_store(store: object, *, where: str) -> Store:
    """``store`` as a :class:`Store`: a store itself, or what :class:`Store` opens (a path,
    or a list of part files), checked and opened; an error names ``where`` (the
    argument, as ``export_store(store)``).

    A path given again finds the store opened the last time, its footers read and its
    last row groups decoded, as long as none of its files changed (the same file, size
    and modification time): the :data:`_REUSED` stores most recently given by path are
    kept, so that calls that each name the store by its path open it once."""
    if isinstance(store, Store):
        return store
    path = check_store_path(store, where=where)
    key = _store_key(path)
    if key is None:
        return Store(path)
    found = _OPENED.get(key)
    if found is not None:
        _OPENED.move_to_end(key)
        return found
    opened = Store(path)
    _OPENED[key] = opened
    while len(_OPENED) > _REUSED:
        _OPENED.popitem(last=False)
    return opened


#: How many stores :func:`as_store` keeps open for paths given again.
_REUSED: Final = 2
_OPENED: OrderedDict[tuple[Any, ...], Store] = OrderedDict()


def _store_key(
    path: str | os.PathLike[str] | list[str | os.PathLike[str]],
) -> tuple[Any, ...] | None:
    """What names a store's files as they are now: each part's absolute path, device,
    inode, size and modification time; None where a part cannot be read (then
    :class:`Store` says why)."""
    try:
        parts = part_paths(Path(path)) if isinstance(path, str | os.PathLike) else map(Path, path)
        key = []
        for part in parts:
            st = os.stat(part)
            key.append((os.path.abspath(part), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    except (OSError, OnnxArrowError):
        return None
    return tuple(key)

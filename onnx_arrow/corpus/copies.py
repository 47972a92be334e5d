"""Repeated files stored once: the rows of a file whose bytes repeat an earlier file's in
the same store file name that file in ``copy_of`` and leave their payload (data columns,
envelope, content) null; readers take the payload back from the rows named.

The writer's side is :class:`Copies` (one per store file, handed its row groups in
order); the readers' side is :func:`resolve`, which gives a table's copy rows the payload
of the rows they name, found in the table itself or through a ``fetch`` of the rows of
other row groups (:class:`StoreSources` for a store's parts).  :func:`resolved_rows` is
the public form: rows as an engine hands them, their copies filled in.

A copy names a file that is no copy, of the same role, and, row by row (matched by
``element``), of the same dtype and size; a row that names anything else (a path the
store lacks, itself, a copy, a row of another dtype or size) is a located error, found
without following one name to another, so that no store can make a reader loop.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.corpus.columns import numbers, strings
from onnx_arrow.corpus.format import DATA_COLUMNS
from onnx_arrow.corpus.parts import Part
from onnx_arrow.corpus.sources import CorpusError

__all__ = [
    "COPY_KEYS",
    "MIN_COPY_BYTES",
    "PAYLOAD_COLUMNS",
    "RESOLVED_POLARS",
    "RESOLVED_SQL",
    "Copies",
    "StoreSources",
    "resolve",
    "rows_of",
]

#: The smallest file stored as a copy: a smaller one is stored whole, as its copy would
#: save less than a reader spends reading it from another row group (on a store of 60
#: ReLU cases of one 150-byte model, a fresh ``Store(path).case(name)`` took 1.38x as
#: long with the model's copies; the node suite kept twice, its files under it stored
#: whole, is 7% larger: 0.36x its tar.zst instead of 0.34x).
MIN_COPY_BYTES = 1024
#: The columns a copy's rows leave null and take from the rows they name.
PAYLOAD_COLUMNS: Final = ("envelope", "content", *DATA_COLUMNS)
#: The columns that find a copy's source rows: its ``copy_of`` and ``element``, the
#: source's ``path`` and ``element``; ``role`` is compared.
COPY_KEYS: Final = ("copy_of", "path", "element", "role")
#: The store's rows, each with its payload (a copy's taken from the rows it names), as a
#: DuckDB query of the store ``{store}`` (a file, or ``'folder/**/*.parquet'``): every
#: column, payload last, with DuckDB's ``filename`` (copies are within one file).
RESOLVED_SQL: Final = """\
WITH
  rows AS (
    SELECT COLUMNS(lambda c: c NOT IN ('envelope', 'content')
                             AND c NOT LIKE 'data\\_%' ESCAPE '\\'),
           coalesce(copy_of, path) AS _from, coalesce(element, '') AS _element
    FROM read_parquet({store}, filename = true)),
  payload AS (
    SELECT filename AS _file, path AS _from, coalesce(element, '') AS _element,
           COLUMNS(lambda c: c IN ('envelope', 'content') OR c LIKE 'data\\_%' ESCAPE '\\')
    FROM read_parquet({store}, filename = true) WHERE copy_of IS NULL)
SELECT rows.* EXCLUDE (_from, _element), payload.* EXCLUDE (_file, _from, _element)
FROM rows LEFT JOIN payload
  ON rows.filename = payload._file AND rows._from = payload._from
     AND rows._element = payload._element"""
#: The same rows as a Polars ``LazyFrame``, ``view``, of the store ``{store}``, with a
#: column ``file`` (the part each row is in).
RESOLVED_POLARS: Final = """\
import polars as pl
import polars.selectors as cs

rows = pl.scan_parquet({store}, include_file_paths="file")
payload = cs.by_name("envelope", "content") | cs.starts_with("data_")
key = [
    pl.coalesce("copy_of", "path").alias("_from"),
    pl.col("element").fill_null("").alias("_element"),
]
sources = rows.filter(pl.col("copy_of").is_null()).select("file", *key, payload)
view = (
    rows.select(~payload, *key)
    .join(sources, on=["file", "_from", "_element"], how="left")
    .drop("_from", "_element")
)"""
#: The data column of each dtype, by the name the ``dtype`` column gives it.
_DATA_COLUMN_OF: Final = {row.name: column for column, row in DATA_COLUMNS.items()}
#: Columns compared between a copy's row and its source's, where the rows have them.
_COMPARED: Final = ("role", "dtype", "count", "nbytes", "digest")
#: The roles a file starts with (element rows follow their value row).
_FILE_ROLES: Final = frozenset(("model", "value", "file"))

_DAMAGED: Final = (
    "the store is damaged or was changed after it was written; import the corpus again"
)


class Copies:
    """The files of one store file seen so far, by their digest and size: :meth:`mark`
    turns the rows of a file seen before (of :data:`MIN_COPY_BYTES` or more) into a copy
    of the first file with its bytes, when its rows are alike (the same role, value kind,
    and element rows of the same dtypes and sizes: the same bytes read under another
    model may decode otherwise)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[bytes, int], tuple[str, tuple[Any, ...]]] = {}
        #: Files stored as copies, and the bytes of their files.
        self.files = 0
        self.bytes = 0

    def mark(self, table: pa.Table) -> pa.Table:
        """``table`` (a row group, in store order) with its repeated files' rows made
        copies: ``copy_of`` set, payload null."""
        n = table.num_rows
        if n == 0:
            return table
        cols = {
            c: table.column(c).to_pylist()
            for c in ("role", "path", "digest", "nbytes", "value_kind", "element", "dtype", "count")
        }
        roles, paths = cols["role"], cols["path"]
        copy_of: list[str | None] = [None] * n
        i = 0
        while i < n:
            end = i + 1
            while end < n and roles[end] == "element" and paths[end] == paths[i]:
                end += 1
            digest, size = cols["digest"][i], cols["nbytes"][i]
            if roles[i] in _FILE_ROLES and digest is not None and (size or 0) >= MIN_COPY_BYTES:
                shape = tuple(
                    (cols["element"][k], cols["dtype"][k], cols["count"][k]) for k in range(i, end)
                )
                alike = (roles[i], cols["value_kind"][i], shape)
                first = self._seen.setdefault((digest, size), (paths[i], alike))
                if first[0] != paths[i] and first[1] == alike:
                    copy_of[i:end] = [first[0]] * (end - i)
                    self.files += 1
                    self.bytes += size
            i = end
        if all(c is None for c in copy_of):
            return table
        # built from buffers: pyarrow.array's first call imports pandas (a third of a
        # second of an import)
        names = strings(copy_of)
        mask = names.is_valid()
        copies = int(pc.sum(mask).as_py())
        out = table
        for name in PAYLOAD_COLUMNS:
            column = table.column(name)
            # only the columns the copies hold a payload in are rewritten
            if column.null_count < n and column.filter(mask).null_count < copies:
                at = out.schema.get_field_index(name)
                # a null scalar taken from an array: pa.scalar imports pandas
                nulled = pc.if_else(mask, pa.nulls(1, column.type)[0], column)
                out = out.set_column(at, out.schema.field(at), nulled)
        at = out.schema.get_field_index("copy_of")
        return out.set_column(at, out.schema.field(at), names)


def _key(path: object, element: object) -> tuple[object, str]:
    return path, element if isinstance(element, str) else ""


def resolve(
    table: pa.Table,
    fetch: Callable[[set[str], list[str]], pa.Table | None] | None,
    *,
    where: str,
    hint: str = _DAMAGED,
) -> pa.Table:
    """``table`` with each copy row's payload columns (those the table has) taken from the
    row it names: a row of ``table`` itself, or of the rows ``fetch`` gives for the paths
    ``table`` lacks, with at least the columns it is given (None: no more rows to look
    in).  The table needs the :data:`COPY_KEYS` columns where it holds a copy; a copy
    that names no row, itself, a copy, or a row of another role, dtype or size is a
    :class:`CorpusError` located at ``where``, the case and the path, whose advice is
    ``hint``."""
    names = table.column_names
    if "copy_of" not in names:
        return table
    copy_column = table.column("copy_of")
    n = table.num_rows
    if copy_column.null_count == n:
        return table
    payload = [c for c in PAYLOAD_COLUMNS if c in names]
    missing = [c for c in COPY_KEYS if c not in names]
    if missing:
        raise CorpusError(
            f"the rows hold copies (copy_of) but no column {', '.join(missing)} to find "
            "their source rows by; read them too",
            where=where,
        )
    copied = copy_column.is_valid()
    for name in payload:
        held = pc.and_(copied, table.column(name).is_valid())
        if pc.any(held).as_py():
            i = pc.index(held, True).as_py()
            path = table.column("path")[i].as_py()
            raise CorpusError(
                f"the row is a copy of {table.column('copy_of')[i].as_py()!r} (copy_of) and "
                f"holds a {name} of its own: {_DAMAGED}",
                where=f"{where}: {path}",
            )
    copies = copy_column.to_pylist()
    wanted = {c for c in copies if c is not None}
    paths = table.column("path").to_pylist()
    elements = table.column("element").to_pylist()
    rows: dict[tuple[object, str], int] = {}
    for i, path in enumerate(paths):
        if path in wanted:
            rows.setdefault(_key(path, elements[i]), i)
    fetched: pa.Table | None = None
    absent = wanted - set(paths)
    if absent and fetch is not None:
        fetched = fetch(absent, _needed(table, copy_column))
    sources = table
    if fetched is not None and fetched.num_rows:
        fetched = _like(fetched, table, where)
        sources = pa.concat_tables([table, fetched])
        for k, (path, element) in enumerate(
            zip(
                fetched.column("path").to_pylist(),
                fetched.column("element").to_pylist(),
                strict=True,
            )
        ):
            if path in absent:
                rows.setdefault(_key(path, element), n + k)
    cases = table.column("test_case").to_pylist() if "test_case" in names else None

    def refuse(i: int, j: int | None, problem: str) -> CorpusError:
        at = f"{where}: {cases[i]}: {paths[i]}" if cases else f"{where}: {paths[i]}"
        element = elements[i]
        advice = hint if j is None else _DAMAGED
        return CorpusError(f"{problem}: {advice}", where=at + (f": {element}" if element else ""))

    take = np.arange(n, dtype=np.int64)
    mine: list[int] = []
    for i, name in enumerate(copies):
        if name is None:
            continue
        j = rows.get(_key(name, elements[i]))
        if j is None or j == i or name == paths[i]:
            raise refuse(i, j, _problem(j, name, elements[i], None, {}))
        take[i] = j
        mine.append(i)
    # the rows named, compared with the copies' own (only those rows are converted)
    checked = ["copy_of", *(c for c in _COMPARED if c in names)]
    ours = table.select(checked).take(_indices(np.asarray(mine)))
    theirs = sources.select(checked).take(_indices(take[mine]))
    values = {c: (ours.column(c).to_pylist(), theirs.column(c).to_pylist()) for c in checked}
    chained = values.pop("copy_of")[1]
    for k, i in enumerate(mine):
        if chained[k] is not None or any(a[k] != b[k] for a, b in values.values()):
            pair = {c: (a[k], b[k]) for c, (a, b) in values.items()}
            problem = _problem(int(take[i]), copies[i], elements[i], chained[k], pair)
            raise refuse(i, int(take[i]), problem)
    if not payload:
        return table
    indices = _indices(take)
    out = table
    for name in payload:
        at = out.schema.get_field_index(name)
        out = out.set_column(at, out.schema.field(at), sources.column(name).take(indices))
    return out


def _problem(
    j: int | None,
    name: str,
    element: str | None,
    named_copy_of: str | None,
    pair: dict[str, tuple[Any, Any]],
) -> str:
    """What is wrong with a copy row naming row ``j`` (None: it names no row): its own
    file, a copy (``named_copy_of``), or a row whose columns differ (``pair``: per
    column, the copy's value and the named row's)."""
    said = f"the row is a copy of {name!r} (copy_of)"
    if j is None:
        part = f" with element {element!r}" if element else ""
        return f"{said}, and no row of that path{part} is among the rows read"
    if named_copy_of is not None:
        return (
            f"{said}, itself a copy of {named_copy_of!r}: a copy names the file that "
            "holds the bytes, never another copy"
        )
    for column, (mine, theirs) in pair.items():
        if mine != theirs:
            return (
                f"{said}, whose row holds another {column} ({theirs!r}, this row "
                f"{mine!r}): a copy names a file of the same bytes"
            )
    return f"{said}, which names its own file"


def _needed(table: pa.Table, copy_column: pa.ChunkedArray) -> list[str]:
    """The columns the rows copies name are read with: those that find and compare them,
    and the payload columns of the copies' roles and dtypes (a copied model needs the
    named row's content, a copied FLOAT tensor its data_float)."""
    names = table.column_names
    rows = table.select(["role", *(["dtype"] if "dtype" in names else [])])
    rows = rows.filter(copy_column.is_valid())
    roles = set(rows.column("role").to_pylist())
    if "dtype" in names:
        dtypes = set(rows.column("dtype").to_pylist()) - {None}
        data = [_DATA_COLUMN_OF[d] for d in sorted(dtypes) if d in _DATA_COLUMN_OF]
    else:  # the rows do not say which: all of them
        data = list(DATA_COLUMNS)
    payload = [
        *(["content"] if roles & {"model", "file"} else []),
        *(["envelope"] if "value" in roles else []),
        *data,
    ]
    wanted = [*COPY_KEYS, *_COMPARED, "test_case", *payload]
    return [c for c in names if c in wanted]


def _like(fetched: pa.Table, table: pa.Table, where: str) -> pa.Table:
    """``fetched`` with ``table``'s columns, in its types."""
    columns = []
    for field in table.schema:
        if field.name not in fetched.column_names:
            columns.append(pa.nulls(fetched.num_rows, field.type))
            continue
        column = fetched.column(field.name)
        if column.type != field.type:
            try:
                column = column.cast(field.type, safe=True)
            except pa.ArrowException as exc:
                raise CorpusError(
                    f"the source rows' column {field.name} is {column.type}, the rows' "
                    f"{field.type} ({exc}); hand over rows read alike",
                    where=where,
                ) from None
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=table.schema)


#: Row groups of source rows kept read, per store: at most this many, and beyond the last
#: one read, at most :data:`_KEPT_BYTES` of them.
_KEPT_GROUPS: Final = 4
_KEPT_BYTES: Final = 64 << 20


class StoreSources:
    """The source rows of a store's copies: copies name files of their own part, found by
    the row group of each path (the part's ``path`` column, read once at the first copy),
    of which the columns the copies need are read; the last :data:`_KEPT_GROUPS` row
    groups read (by a reader, or for copies) are kept, within :data:`_KEPT_BYTES`."""

    def __init__(self, parts: Sequence[Part]) -> None:
        self._parts = parts
        self._paths: dict[int, dict[str, int]] = {}
        self._kept: collections.OrderedDict[tuple[int, int], pa.Table] = collections.OrderedDict()
        self._column: dict[int, int | None] = {}
        #: How many times rows were taken from row groups for copies (:meth:`rows`).
        self.fetches = 0

    def may_hold(self, k: int, groups: Sequence[int] | None) -> bool:
        """Whether row groups of part ``k`` (all when None) may hold a copy: not where the
        part's version has no ``copy_of``, or its footer's statistics count as many nulls
        as rows (onnx-arrow writes none for the column: they cost a corpus of one model
        under many data sets 0.15% of its store, and the column, mostly null, reads in
        no time)."""
        part = self._parts[k]
        if "copy_of" in part.missing:
            return False
        meta = part.file.metadata
        if k not in self._column:
            self._column[k] = next(
                (i for i in range(meta.num_columns) if meta.schema.column(i).path == "copy_of"),
                None,
            )
        at = self._column[k]
        if at is None:
            return True
        for g in range(part.groups) if groups is None else groups:
            group = meta.row_group(g)
            stats = group.column(at).statistics
            if stats is None or not stats.has_null_count or stats.null_count < group.num_rows:
                return True
        return False

    def resolve(
        self, k: int, table: pa.Table, *, where: str, groups: Sequence[int] | None = None
    ) -> pa.Table:
        """Rows of part ``k`` with their copies' payload filled in (see :func:`resolve`);
        rows of one row group (``groups``) are kept, as the rows later copies may name."""
        resolved = resolve(table, lambda paths, need: self.rows(k, paths, need), where=where)
        if groups is not None and len(groups) == 1:
            self._keep((k, groups[0]), resolved)
        return resolved

    def complete(
        self,
        k: int,
        groups: Sequence[int] | None,
        table: pa.Table,
        roles: Sequence[str] | None = None,
        *,
        where: str,
    ) -> pa.Table:
        """``table`` (some columns of row groups ``groups`` of part ``k``, of ``roles``)
        with its copies' payload filled in: the columns that find them read too where
        ``table`` lacks them.  A table without payload columns is returned as it is."""
        names = table.column_names
        if not any(c in names for c in PAYLOAD_COLUMNS):
            return table
        groups = None if roles is not None else groups  # rows of some roles are not kept
        if not self.may_hold(k, groups):
            if groups is not None and len(groups) == 1 and "copy_of" not in names:
                nulls = pa.nulls(table.num_rows, pa.string())
                self._keep((k, groups[0]), table.append_column("copy_of", nulls))
            return table
        extra = [c for c in (*COPY_KEYS, "test_case") if c not in names]
        full = table
        if extra:
            more = _valid(self._parts[k].read(groups, extra, roles, threads=False), where)
            full = pa.Table.from_arrays(
                [*table.columns, *more.columns], names=[*names, *more.column_names]
            )
        return self.resolve(k, full, where=where, groups=groups).select(names)

    def rows(self, k: int, paths: set[str], need: Sequence[str] = ()) -> pa.Table | None:
        """The rows of part ``k`` whose path is one of ``paths`` (None where none is), with
        at least the columns ``need`` (more where a row group was read whole)."""
        if k not in self._paths:
            part = self._parts[k]
            read = _valid(part.read(None, ["path"]), str(part.path))
            column = read.column("path").to_pylist()
            counts = [part.file.metadata.row_group(g).num_rows for g in range(part.groups)]
            groups = np.repeat(np.arange(len(counts)), counts).tolist()
            if len(groups) != len(column):
                raise CorpusError(
                    f"the part's path column has {len(column)} rows, its row groups "
                    f"{len(groups)}: {_DAMAGED}",
                    where=str(part.path),
                )
            self._paths[k] = {p: g for p, g in zip(column, groups, strict=True) if p is not None}
        where = self._paths[k]
        found = sorted({where[p] for p in paths if p in where})
        self.fetches += bool(found)
        tables = [rows_of(self._group(k, group, need), paths) for group in found]
        if need:  # row groups kept with other columns than those read whole
            tables = [t.select(list(need)) for t in tables]
        return pa.concat_tables(tables) if tables else None

    def _group(self, k: int, group: int, need: Sequence[str]) -> pa.Table:
        """Row group ``group`` of part ``k``: as kept, where it was kept with the columns
        ``need``, else those columns read."""
        kept = self._kept.get((k, group))
        if kept is not None and all(c in kept.column_names for c in need):
            self._kept.move_to_end((k, group))
            return kept
        part = self._parts[k]
        rows = _valid(
            part.read([group], list(need) or None, threads=False),
            f"{part.path}: row group {group}",
        )
        self._keep((k, group), rows)
        return rows

    def _keep(self, key: tuple[int, int], rows: pa.Table) -> None:
        self._kept[key] = rows
        self._kept.move_to_end(key)
        while len(self._kept) > _KEPT_GROUPS or (
            len(self._kept) > 1 and sum(t.nbytes for t in self._kept.values()) > _KEPT_BYTES
        ):
            self._kept.popitem(last=False)


def rows_of(table: pa.Table, paths: set[str]) -> pa.Table:
    """The rows of ``table`` whose ``path`` is one of ``paths``."""
    return table.filter(pc.is_in(table.column("path"), value_set=strings(sorted(paths))))


def _indices(values: np.ndarray[Any, Any]) -> pa.Array:
    """``values`` as an Arrow int64 array, made from their buffer (see corpus.columns)."""
    return numbers(np.asarray(values, dtype=np.int64), pa.int64())


def _valid(table: pa.Table, where: str) -> pa.Table:
    """``table``, fully validated: rows read from a store may come from anyone."""
    try:
        table.validate(full=True)
    except pa.ArrowInvalid as exc:
        raise CorpusError(
            f"rows read are invalid Arrow data ({exc}): {_DAMAGED}", where=where
        ) from None
    return table

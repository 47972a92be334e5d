"""The storage-only form of onnx-arrow columns: one call away, zero-copy, both ways.

Some readers do not handle extension types nested inside others (dask's
``read_parquet``), and engines without onnx-arrow see extension columns as their
storage anyway.  :func:`to_storage` gives that form (every extension type,
canonical or onnx-arrow's own, replaced by its storage, at any depth) over the
same buffers, without a copy; :func:`from_storage` puts the types back.
:func:`to_portable` and :func:`from_portable` do the same for tables, recording the
types in the schema metadata and, on every row, in a type column beside each typed column,
so that rows keep their type through engines that drop metadata or mix files.

These are the public entry points: they take any Arrow data through the gate of
:mod:`onnx_arrow.core.arrow_input` (a Polars ``Series`` or ``DataFrame`` too), and
leave the retyping itself to :mod:`onnx_arrow.core.storage_form`.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.core._json import load_json
from onnx_arrow.core.arrow_input import arrow_column, arrow_schema, arrow_table, arrow_type_arg
from onnx_arrow.core.extension_types import describe_type
from onnx_arrow.core.storage_form import Data, portable_type, retyped, storage_type, stored, typed
from onnx_arrow.core.value_digests import (
    DIGEST_COLUMN_SUFFIX,
    FLOAT_DIGEST_COLUMN_SUFFIX,
    check_digests,
    check_float_digests,
    digests_of,
    float_digests_of,
)
from onnx_arrow.core.values import from_arrow_serialized
from onnx_arrow.core.walk import child_arrays, child_fields
from onnx_arrow.errors import ArrowLayoutError, OnnxArrowError

__all__ = [
    "PORTABLE_KEY",
    "TYPE_COLUMN_SUFFIX",
    "from_portable",
    "from_storage",
    "to_portable",
    "to_storage",
]


def to_storage(data: Data) -> Data:
    """The storage-only form of an array, chunked array, table or record batch (zero-copy).

    Other Arrow data (a Polars ``Series`` or ``DataFrame``, anything with
    ``__arrow_c_array__`` or ``__arrow_c_stream__``) is taken as pyarrow imports it: a
    table-like object as a ``Table``, a column as an ``Array`` or ``ChunkedArray``.

    >>> import numpy as np, onnx_arrow
    >>> from onnx import numpy_helper
    >>> arr = onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(2, np.float32))])
    >>> to_storage(arr).type
    FixedSizeListType(fixed_size_list<item: float>[2])
    >>> exact = onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(2, np.float32))], exact=True)
    >>> to_storage(exact).type
    StructType(struct<value: fixed_size_list<item: float>[2], envelope: binary>)

    Raises
    ------
    UnsupportedTypeError
        If ``data`` is no Arrow data.
    """
    if not isinstance(data, pa.Array | pa.ChunkedArray | pa.Table | pa.RecordBatch):
        imported: Any = (
            arrow_table(data, where="data")
            if hasattr(data, "columns") and hasattr(data, "__arrow_c_stream__")
            else arrow_column(data, where="data")
        )
        return stored(imported)
    return stored(data)


def from_storage(data: Any, arrow_type: pa.DataType) -> pa.Array:
    """Give a storage-only column its types back (zero-copy).

    ``data`` is any Arrow column :func:`to_storage` takes (a Polars ``Series`` too).

    Raises
    ------
    UnsupportedTypeError
        If ``data`` is no Arrow column, or ``arrow_type`` no pyarrow ``DataType``.
    ArrowLayoutError
        If ``data`` is not the storage form of ``arrow_type``.
    """
    arrow_type = arrow_type_arg(arrow_type, function="from_storage", where="arrow_type")
    return typed(arrow_column(data, where="data"), arrow_type)


# --- portable tables -----------------------------------------------------------------------------

#: The schema metadata key of a portable table: JSON, ``{"version": 2, "columns": {name:
#: base64 of the column's Arrow IPC schema}}``.  The IPC schema is Arrow's own flatbuffer
#: description of the column's type, read back with ``pyarrow.ipc.read_schema``; never pickle.
PORTABLE_KEY: Final = b"onnx_arrow.portable"
PORTABLE_VERSION: Final = 2

#: The name of the column that holds a typed column's type on every row, after the
#: column's own name: ``x`` has ``x__onnx_arrow_type``.  Each row holds the same text as
#: the metadata (base64 of the column's Arrow IPC schema), dictionary-encoded, so that a
#: row keeps its type wherever an engine takes it: into a table of other files' rows,
#: through an engine that drops the schema metadata.
TYPE_COLUMN_SUFFIX: Final = "__onnx_arrow_type"

#: The field metadata key, in a column's recorded type, that names the check of its bits
#: written beside it (``float_digest`` or ``digest``), so that a table an engine's
#: projection left it out of is refused, not read unchecked.  Tables written before
#: checks record none, and read as they are.
CHECK_KEY: Final = b"onnx_arrow.check"

#: Each check: the suffix of its column, and what it holds.
_CHECKS: Final = {
    "float_digest": (FLOAT_DIGEST_COLUMN_SUFFIX, "float digests"),
    "digest": (DIGEST_COLUMN_SUFFIX, "digests"),
}


def to_portable(table: Any, *, digest: bool = False) -> pa.Table:
    """A table that engines which keep storage only read with the exact values.

    Every column is its storage (:func:`to_storage`: plain lists, structs, maps and
    numbers, zero-copy), and each column that had a type of its own gets a sibling column
    (its name and ``__onnx_arrow_type``) that records that type on every row
    (dictionary-encoded: a few bytes a row in memory, next to nothing in Parquet); the
    schema metadata records the types too.  :func:`from_portable` gives the typed table
    back, and checks every row's type against the one it gives the column, so that rows
    of files of different types read as one table (a folder through ``pq.read_table``,
    Polars, DuckDB or pandas) are refused by row, never read as the wrong type.  Dask,
    Ray, DuckDB and Spark read such a table as plain Arrow.

    Engines' own Parquet writers rewrite the bits of some floats (every NaN's payload and
    sign: Spark's writer, DuckDB's ``COPY`` once it dictionary-encodes).  So each typed
    column that holds a NaN or a negative zero also gets a float digest column (its name
    and ``__onnx_arrow_float_digest``): on each row that holds one, the BLAKE2b-128 of the
    place and bits of each such float, null on the others
    (:mod:`onnx_arrow.core.value_digests`), which :func:`from_portable` checks, so that
    such a change is refused by row, never read as other values.  Finding them is one
    pass over each float buffer, no message built: this check is always on.

    With ``digest=True`` each typed column instead gets a digest column (its name and
    ``__onnx_arrow_digest``): on every row the BLAKE2b-128 of the row's value as one
    serialized ONNX message, which :func:`from_portable` checks: every bit of every value,
    not only the floats engines are known to rewrite.  It is off by default: it turns every
    row into its message twice, once here and once in :func:`from_portable` (both checks
    measured in ``benchmarks/bench_digest.py``).

    >>> import numpy as np, onnx_arrow
    >>> from onnx import numpy_helper
    >>> t = pa.table({"x": onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(2, "f4"))])})
    >>> portable = to_portable(t)
    >>> portable.schema.field("x").type
    FixedSizeListType(fixed_size_list<item: float>[2])
    >>> portable.column_names
    ['x', 'x__onnx_arrow_type']
    >>> from_portable(portable).equals(t)
    True

    Raises
    ------
    UnsupportedTypeError
        If ``table`` is no Arrow table.
    ArrowLayoutError
        If the table already has a column of the name a type or digest column would take.
    UnsupportedTypeError
        If a typed column holds floats inside a union (no float digest for them).
    UnsupportedTypeError, OnnxArrowError
        With ``digest=True``, if a typed column holds no ONNX values, or a row's value is
        no message (located at the column and row).
    """
    table = arrow_table(table, where="table")
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    checks = _checks(table, digest)
    columns = {
        f.name: _type_text(f, checks[f.name][0] if f.name in checks else None)
        for f in table.schema
        if storage_type(f.type) != f.type
    }
    plain = stored(table)
    for i, f in enumerate(table.schema):
        layout = portable_type(f.type)
        if layout != plain.schema.field(i).type:  # maps, as lists of their entries
            column = plain.column(i)
            chunks = [retyped(c, layout) for c in column.chunks]
            plain = plain.set_column(i, f.name, pa.chunked_array(chunks, type=layout))
    for name, text in columns.items():
        column = name + TYPE_COLUMN_SUFFIX
        _free(table, column, f"record the type of column {name!r}")
        indices = pa.array(np.zeros(len(table), np.int32))
        plain = plain.append_column(
            column, pa.DictionaryArray.from_arrays(indices, pa.array([text], pa.string()))
        )
    for name, (check, data) in checks.items():
        suffix, what = _CHECKS[check]
        _free(table, name + suffix, f"hold the {what} of column {name!r}")
        plain = plain.append_column(name + suffix, data)
    metadata = dict(table.schema.metadata or {})
    metadata[PORTABLE_KEY] = json.dumps({"version": PORTABLE_VERSION, "columns": columns})
    return plain.replace_schema_metadata(metadata)


def _checks(table: pa.Table, digest: bool) -> dict[str, tuple[str, pa.Array]]:
    """The check of each typed column's bits, by column: its name and its column."""
    out = {}
    for f in table.schema:
        if storage_type(f.type) == f.type:
            continue
        if digest:
            out[f.name] = ("digest", digests_of(_serialized(table.column(f.name), f.name)))
            continue
        try:
            floats = float_digests_of(table.column(f.name))
        except OnnxArrowError as exc:
            raise exc.at(f"column {f.name!r}") from None
        if floats is not None:  # a NaN or a negative zero: their bits are at risk
            out[f.name] = ("float_digest", floats)
    return out


def _serialized(column: pa.ChunkedArray, name: str) -> list[bytes]:
    """Each row's value of column ``name``, as one serialized message."""
    try:
        return from_arrow_serialized(column)[1]
    except OnnxArrowError as exc:
        raise exc.at(f"column {name!r}") from None


def _free(table: pa.Table, column: str, what: str) -> None:
    if column in table.column_names:
        raise ArrowLayoutError(
            f"the table has a column {column!r}, the name of the column that would {what}; "
            "rename it",
            where=f"column {column!r}",
        )


def _type_text(f: pa.Field, check: str | None) -> str:
    if check is not None:
        f = f.with_metadata({**(f.metadata or {}), CHECK_KEY: check.encode()})
    return base64.b64encode(pa.schema([f]).serialize().to_pybytes()).decode("ascii")


def from_portable(table: Any, schema: pa.Schema | None = None) -> pa.Table:
    """The typed table of :func:`to_portable`, from the table itself or as an engine gave it
    back.

    Each column's type comes from ``schema`` where given, else from the table's metadata,
    else (an engine that drops metadata: Polars, DuckDB, pandas) from the column's type
    column; every row's recorded type is checked against it, so rows that another table
    wrote (files of different types read as one) are a located error, not values read as
    the wrong type.  Each column is checked against the storage of its type too (the large
    and view layouts engines produce are cast to it; anything else is an error naming the
    column).  Where a column has a float digest column (written where it held a NaN or a
    negative zero), every row's NaNs and negative zeros are checked against it; where it
    has a digest column (``to_portable(table, digest=True)``), every row's value is
    checked against its digest.  The recorded type names the check written, so a column
    read without its check column is refused; tables written before checks are read as
    they are.  The type and digest columns are not in the table given back.

    ``table`` is any table :func:`to_portable` takes (a Polars ``DataFrame`` too).

    Raises
    ------
    UnsupportedTypeError
        If ``table`` is no Arrow table, or ``schema`` no pyarrow ``Schema``.
    ArrowLayoutError
        If the metadata or a type column is unreadable; if a row's recorded type is not the
        column's (named with the rows and both types); if a typed column comes without its
        type column, or without the digest or float digest column its recorded type says
        was written beside it (an engine's projection left it out: select it too); if the
        table
        holds neither metadata nor type columns and no ``schema`` is given (the message
        names the schema to pass); if a type column or the metadata records a type that
        is its own storage (to_portable records typed columns alone); or if a column is
        not the storage of its type: one whose layout an engine changed is cast back only
        where the cast is exact (a ``list<double>`` from a ``fixed_size_list<float>``
        holding a double that is no float is refused, never rounded), and elements only
        from the wider type an engine makes of them (float32 elements recorded as DOUBLE
        or INT64 are refused, though each would cast exactly); or if a row's value is
        not the one its digest was taken of, or its NaNs and negative zeros not those of
        its float digest (named with the column, the row, and the engine-writer trap: NaN
        payloads and signs rewritten by Spark's or DuckDB's Parquet writer).
    """
    table = arrow_table(table, where="table")
    if schema is not None:
        schema = arrow_schema(schema, where="schema")
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    type_columns = _siblings(table, TYPE_COLUMN_SUFFIX)  # beside it, with its name and the suffix
    digest_columns = _siblings(table, DIGEST_COLUMN_SUFFIX)
    float_columns = _siblings(table, FLOAT_DIGEST_COLUMN_SUFFIX)
    recording = (
        set(type_columns.values()) | set(digest_columns.values()) | set(float_columns.values())
    )
    recorded = _portable_types(table, schema is None and not type_columns)
    given = {} if schema is None else {f.name: (f, "the schema passed") for f in schema}
    columns, fields = [], []
    for f, column in zip(table.schema, table.columns, strict=True):
        if f.name in recording:
            continue
        source = given.get(f.name) or recorded.get(f.name)
        if f.name in type_columns:
            rows = table.column(type_columns[f.name])
            source, checks = _check_rows(f.name, rows, source)
            for check in checks:
                _check_column(table, f.name, check)
        elif source is not None and storage_type(source[0].type) != source[0].type:
            raise ArrowLayoutError(
                f"the column comes without its type column {f.name + TYPE_COLUMN_SUFFIX!r}, "
                "which records the type of every row (an engine's projection may have left "
                "it out): select it with the column",
                where=f"column {f.name!r}",
            )
        if source is None or storage_type(source[0].type) == source[0].type:
            back, field = column, f
        else:
            back, field = _typed_back(f.name, column, source), source[0]
        if f.name in digest_columns:
            digests = table.column(digest_columns[f.name])
            check_digests(_serialized(back, f.name), digests, where=f"column {f.name!r}")
        if f.name in float_columns:
            floats = table.column(float_columns[f.name])
            check_float_digests(back, floats, where=f"column {f.name!r}")
        columns.append(back)
        fields.append(field)
    metadata = {k: v for k, v in (table.schema.metadata or {}).items() if k != PORTABLE_KEY}
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=metadata or None))


def _check_column(table: pa.Table, name: str, check: str) -> None:
    """Refuse a column whose recorded type names a check of its bits that is not beside
    it."""
    suffix, what = _CHECKS[check]
    if name + suffix not in table.column_names:
        raise ArrowLayoutError(
            f"the column comes without its column of {what} {name + suffix!r}, which its "
            "recorded type says was written beside it to check its bits (an engine's "
            "projection may have left it out): select it with the column",
            where=f"column {name!r}",
        )


def _siblings(table: pa.Table, suffix: str) -> dict[str, str]:
    """The columns beside another that record something of it: by that column's name."""
    return {
        name[: -len(suffix)]: name
        for name in table.column_names
        if name.endswith(suffix) and name[: -len(suffix)] in table.column_names
    }


def _typed_back(
    name: str, column: pa.ChunkedArray, source: tuple[pa.Field, str]
) -> pa.ChunkedArray:
    """``column`` as an engine gave it back, cast to the storage of its recorded type
    (``source``: the field, and what recorded it) where the cast is exact, and typed."""
    target, origin = source[0].type, source[1]
    layout = portable_type(target)
    if pa.types.is_map(column.type) and not pa.types.is_map(layout):
        column = _with_entries(column)  # a map as written before maps were lists of entries
    try:
        plain = column.cast(layout)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise ArrowLayoutError(
            f"the column is {column.type}, which is not the portable storage of its recorded "
            f"type {describe_type(target)} ({exc})",
            where=f"column {name!r}",
        ) from None
    for chunk in column.chunks:
        inexact = _inexact(chunk, layout)
        if inexact is not None:
            raise ArrowLayoutError(
                f"the column is {column.type}, and cast back to the storage of its "
                f"recorded type {describe_type(target)} (recorded by {origin}) it would not "
                f"hold the same values: {inexact}",
                where=f"column {name!r}",
            )
    storage = storage_type(target)
    if storage != layout:  # the maps, from the lists of their entries (the same buffers)
        plain = pa.chunked_array([retyped(c, storage) for c in plain.chunks], type=storage)
        try:
            plain.validate(full=True)
        except pa.ArrowInvalid as exc:
            raise ArrowLayoutError(
                f"the column's map entries are no map ({exc}): a key is null or the engine "
                "changed the entries",
                where=f"column {name!r}",
            ) from None
    return typed(plain, target)


def _with_entries(column: pa.ChunkedArray) -> pa.ChunkedArray:
    layout = portable_type(column.type)
    return pa.chunked_array([retyped(c, layout) for c in column.chunks], type=layout)


def _check_rows(
    name: str, rows: pa.ChunkedArray, source: tuple[pa.Field, str] | None
) -> tuple[tuple[pa.Field, str], set[str]]:
    """The field of column ``name`` (``source``, or the one its rows record where none is
    given), every row's recorded type checked to be its type; and the checks of the
    column's bits that any row's recorded type names."""
    where = f"column {name!r}"
    texts: dict[str, pa.Field] = {}
    checks: set[str] = set()
    first: dict[str, int] = {}
    counts: dict[str, int] = {}
    offset = 0
    for chunk in rows.chunks:
        for text, (at, count) in _distinct(chunk, where=f"{where}{TYPE_COLUMN_SUFFIX}").items():
            first.setdefault(text, offset + at)
            counts[text] = counts.get(text, 0) + count
        offset += len(chunk)
    for text, at in first.items():
        texts[text], check = _read_type_text(text, where=f"column {name + TYPE_COLUMN_SUFFIX!r}")
        _check_typed(texts[text].type, where=f"column {name + TYPE_COLUMN_SUFFIX!r}, row {at}")
        checks.update([check] if check else [])
    if source is None:
        if not texts:
            raise ArrowLayoutError(
                "the column has no rows and no recorded type; pass the schema of the table "
                "to_portable was given",
                where=where,
            )
        text = min(first, key=first.__getitem__)
        source = (texts[text].with_name(name), f"its row {first[text]}")
    for text, field in texts.items():
        if field.type != source[0].type:
            raise ArrowLayoutError(
                f"row {first[text]} (and {counts[text]} rows in all) was written as "
                f"{describe_type(field.type)}, but the column is read as "
                f"{describe_type(source[0].type)} ({source[1]}): the table holds rows of "
                "tables of different types, as a folder of files read as one table does "
                "(engines give every row the first file's type); read each file on its own, "
                "with from_portable for each",
                where=where,
            )
    return source, checks


def _check_typed(recorded: pa.DataType, *, where: str) -> None:
    """Refuse a recorded type that is its own storage: :func:`to_portable` records the
    types of typed columns alone, so such a record is forged, and would leave the column
    untyped."""
    if storage_type(recorded) == recorded:
        raise ArrowLayoutError(
            f"the recorded type is {recorded}, a storage with no type of its own; "
            "to_portable records the types of typed columns alone, so the record is not "
            "to_portable's",
            where=where,
        )


def _distinct(chunk: pa.Array, *, where: str) -> dict[str, tuple[int, int]]:
    """Each text of a type column's chunk: the row it first comes at, and how many rows
    hold it (a dictionary's texts read once, not once per row)."""
    if pa.types.is_dictionary(chunk.type):
        indices, dictionary = chunk.indices, chunk.dictionary
    else:
        encoded = pc.dictionary_encode(chunk)
        indices, dictionary = encoded.indices, encoded.dictionary
    if not (
        pa.types.is_string(dictionary.type)
        or pa.types.is_large_string(dictionary.type)
        or pa.types.is_string_view(dictionary.type)
    ):
        raise ArrowLayoutError(f"the column is {chunk.type}, not text", where=where)
    if indices.null_count:
        raise ArrowLayoutError(
            f"row {pc.index(indices.is_null(), True).as_py()} is null, not the type of its row",
            where=where,
        )
    out: dict[str, tuple[int, int]] = {}
    counts = pc.value_counts(indices)
    for entry in counts:
        index = entry["values"].as_py()
        text = dictionary[index].as_py()
        at = pc.index(indices, index).as_py()
        before = out.get(text)
        count = entry["counts"].as_py()
        out[text] = (min(at, before[0]), before[1] + count) if before else (at, count)
    return out


def _read_type_text(text: str, *, where: str) -> tuple[pa.Field, str | None]:
    """The field a recorded type holds, and the check of the column's bits it names."""
    try:
        field = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text, validate=True))).field(0)
    except (ValueError, IndexError, TypeError, OSError, pa.ArrowException) as exc:
        # OSError: what pyarrow raises for an IPC message that is no flatbuffer
        raise ArrowLayoutError(
            f"unreadable recorded type {text[:40]!r} ({exc}); write the table with "
            "onnx_arrow.to_portable",
            where=where,
        ) from None
    metadata = dict(field.metadata or {})
    raw = metadata.pop(CHECK_KEY, None)
    if raw is None:
        return field, None
    check = raw.decode("utf-8", "replace")
    if check not in _CHECKS:
        raise ArrowLayoutError(
            f"the recorded type names a check of the column's bits, {check[:40]!r}, that "
            f"this onnx-arrow does not know (it knows {', '.join(_CHECKS)}): the table was "
            "written by a newer onnx-arrow; read it with that one",
            where=where,
        )
    return field.with_metadata(metadata) if metadata else field.remove_metadata(), check


def _portable_types(table: pa.Table, needed: bool) -> dict[str, tuple[pa.Field, str]]:
    """The types the metadata records, by column name, each with where it came from; an
    error where there is no metadata and it is ``needed``, and for metadata of version 1
    (written before rows recorded their types: they cannot be checked)."""
    raw = (table.schema.metadata or {}).get(PORTABLE_KEY)
    if raw is None:
        if not needed:
            return {}
        nested = [f.name for f in table.schema if pa.types.is_nested(f.type)]
        which = f" (the columns {', '.join(map(repr, nested))} may be typed)" if nested else ""
        raise ArrowLayoutError(
            f"the table has no {PORTABLE_KEY.decode()} metadata and no type columns (the "
            "engine that gave it may have dropped both, or the table is not to_portable's); "
            "pass the schema of the table to_portable was given, as from_portable(table, "
            "schema=typed.schema): a pyarrow Schema with a field for each typed column, of "
            f"the type onnx_arrow.to_arrow gave it{which}",
            where="schema metadata",
        )
    try:
        parsed = load_json(raw, what="the metadata", where=None, error=ValueError)
        if parsed.get("version") == 1:
            return _version_one()
        if parsed.get("version") != PORTABLE_VERSION:
            raise ValueError(f"version {parsed.get('version')!r}, not {PORTABLE_VERSION}")
        out = {
            name: (
                _read_type_text(blob, where="schema metadata")[0].with_name(name),
                "its metadata",
            )
            for name, blob in parsed["columns"].items()
        }
    except _VersionOne:
        raise
    except ArrowLayoutError as exc:
        raise ArrowLayoutError(
            f"unreadable {PORTABLE_KEY.decode()} metadata ({exc.message}); write the table "
            "with onnx_arrow.to_portable",
            where="schema metadata",
        ) from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ArrowLayoutError(
            f"unreadable {PORTABLE_KEY.decode()} metadata ({exc}); write the table with "
            "onnx_arrow.to_portable",
            where="schema metadata",
        ) from None
    return _typed_records(out)


def _typed_records(records: dict[str, tuple[pa.Field, str]]) -> dict[str, tuple[pa.Field, str]]:
    for name, (field, _) in records.items():
        _check_typed(field.type, where=f"schema metadata, column {name!r}")
    return records


def _version_one() -> dict[str, tuple[pa.Field, str]]:
    """Metadata of version 1, refused as what it is."""
    raise _VersionOne(
        "a portable table of version 1, written by an onnx-arrow before each row recorded "
        "its type: its metadata may be another file's (a folder read as one table takes the "
        "first file's), so it is not trusted; read the file with the onnx-arrow that wrote "
        "it and write it again with this one's to_portable, or, for one file's table, type "
        "each column with onnx_arrow.from_storage(table[name], arrow_type)",
        where="schema metadata",
    )


class _VersionOne(ArrowLayoutError):
    """The refusal of version-1 metadata without a schema, said as it is."""


def _inexact(source: pa.Array, target: pa.DataType) -> str | None:
    """Where ``source`` cast to ``target`` would not hold its values exactly (the first
    element that changes, in words), or None: layouts may change (large lists, views,
    fixed-size lists, dictionaries and run-end encoding cast to what they stand for),
    element values may not."""
    kids = child_arrays(source)
    fields = child_fields(target)
    if not kids and not fields:
        return None if source.type == target else _inexact_leaf(source, target)
    if _encodes(source.type) and not _encodes(target):
        return _inexact(kids[-1], target)  # the values a dictionary or run-end array stands for
    if len(kids) != len(fields):
        return None  # another structure: the cast has refused it, or holds no element
    for kid, field in zip(kids, fields, strict=True):
        found = _inexact(kid, field.type)
        if found is not None:
            return found
    return None


def _numbers(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)


def _encodes(t: pa.DataType) -> bool:
    return pa.types.is_dictionary(t) or pa.types.is_run_end_encoded(t)


def _inexact_leaf(source: pa.Array, target: pa.DataType) -> str | None:
    """:func:`_inexact` of a leaf: cast there and back, compared (a NaN stays a NaN).  Of
    numbers, only the element type an engine widens to is cast back (a float column read
    as double, an int32 as int64): elements narrower than the recorded type, or of
    another kind (float32 recorded as int64, int32 as float64), were not written as it."""
    widened = _numbers(source.type) and _numbers(target)
    if widened and not np.can_cast(target.to_pandas_dtype(), source.type.to_pandas_dtype()):
        return (
            f"its elements are {source.type}, which no engine makes of {target} elements "
            "(it widens them, never narrows them or changes their kind): the recorded type "
            "is not the one the column was written as"
        )
    try:
        back = source.cast(target).cast(source.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        return f"its {source.type} elements do not cast to {target} ({exc})"
    same = pc.equal(back, source)
    if pa.types.is_floating(source.type):
        same = pc.or_(same, pc.and_(pc.is_nan(back), pc.is_nan(source)))
    same = same.fill_null(True)  # null elements stay null
    if pc.all(same).as_py():
        return None
    i = int(pc.index(same, False).as_py())
    return (
        f"its {source.type} element {source[i].as_py()!r} would become "
        f"{back[i].as_py()!r} as {target}; the engine changed the column's element type, so "
        "read it with one that keeps it"
    )

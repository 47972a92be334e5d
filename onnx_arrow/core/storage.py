"""The storage-only form of onnx-arrow columns: one call away, zero-copy, both ways.

Some readers do not handle extension types nested inside others (dask's
``read_parquet``), and engines without onnx-arrow see extension columns as their
storage anyway.  :func:`to_storage` gives that form (every extension type,
canonical or onnx-arrow's own, replaced by its storage, at any depth) over the
same buffers, without a copy; :func:`from_storage` puts the types back.
:func:`to_portable` and :func:`from_portable` do the same for tables, recording the
types in the schema metadata.

These are the public entry points: they take any Arrow data through the gate of
:mod:`onnx_arrow.core.arrow_input` (a Polars ``Series`` or ``DataFrame`` too), and
leave the retyping itself to :mod:`onnx_arrow.core.storage_form`.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.core._json import load_json
from onnx_arrow.core.arrow_input import arrow_column, arrow_schema, arrow_table, arrow_type_arg
from onnx_arrow.core.storage_form import Data, storage_type, stored, typed
from onnx_arrow.core.walk import child_arrays, child_fields
from onnx_arrow.errors import ArrowLayoutError

__all__ = [
    "PORTABLE_KEY",
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

#: The schema metadata key of a portable table: JSON, ``{"version": 1, "columns": {name:
#: base64 of the column's Arrow IPC schema}}``.  The IPC schema is Arrow's own flatbuffer
#: description of the column's type, read back with ``pyarrow.ipc.read_schema``; never pickle.
PORTABLE_KEY: Final = b"onnx_arrow.portable"
PORTABLE_VERSION: Final = 1


def to_portable(table: Any) -> pa.Table:
    """A table that engines which keep storage only read with the exact values.

    Every column is its storage (:func:`to_storage`: plain lists, structs, maps and
    numbers, zero-copy), and the schema metadata records each column's full type, so
    that :func:`from_portable` gives the typed table back.  Dask, Ray, DuckDB and Spark
    read such a table as plain Arrow and keep table metadata where they keep any;
    where an engine drops it, pass the original schema to :func:`from_portable`.

    >>> import numpy as np, onnx_arrow
    >>> from onnx import numpy_helper
    >>> t = pa.table({"x": onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(2, "f4"))])})
    >>> portable = to_portable(t)
    >>> portable.schema.field("x").type
    FixedSizeListType(fixed_size_list<item: float>[2])
    >>> from_portable(portable).equals(t)
    True
    """
    table = arrow_table(table, where="table")
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    columns = {
        f.name: base64.b64encode(pa.schema([f]).serialize().to_pybytes()).decode("ascii")
        for f in table.schema
        if storage_type(f.type) != f.type
    }
    metadata = dict(table.schema.metadata or {})
    metadata[PORTABLE_KEY] = json.dumps({"version": PORTABLE_VERSION, "columns": columns})
    return stored(table).replace_schema_metadata(metadata)


def from_portable(table: Any, schema: pa.Schema | None = None) -> pa.Table:
    """The typed table of :func:`to_portable`, from the table itself or as an engine gave it
    back: the types come from its metadata, or from ``schema`` where the engine dropped it.

    Each column is checked against the storage of its type first (the large and view
    layouts engines produce are cast to it; anything else is an error naming the column).

    ``table`` is any table :func:`to_portable` takes (a Polars ``DataFrame`` too).

    Raises
    ------
    UnsupportedTypeError
        If ``table`` is no Arrow table, or ``schema`` no pyarrow ``Schema``.
    ArrowLayoutError
        If the metadata is unreadable, or a column is not the storage of its type: one
        whose layout an engine changed is cast back only where the cast is exact (a
        ``list<double>`` from a ``fixed_size_list<float>`` holding a double that is no
        float is refused, never rounded).
    """
    table = arrow_table(table, where="table")
    if schema is not None:
        schema = arrow_schema(schema, where="schema")
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    types = _portable_types(table) if schema is None else {f.name: f for f in schema}
    columns, fields = [], []
    for f, column in zip(table.schema, table.columns, strict=True):
        original = types.get(f.name)
        if original is None or storage_type(original.type) == original.type:
            columns.append(column)
            fields.append(f)
            continue
        target = original.type
        try:
            plain = column.cast(storage_type(target))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise ArrowLayoutError(
                f"the column is {column.type}, which is not the storage of its recorded type "
                f"{target} ({exc})",
                where=f"column {f.name!r}",
            ) from None
        for chunk in column.chunks:
            inexact = _inexact(chunk, storage_type(target))
            if inexact is not None:
                raise ArrowLayoutError(
                    f"the column is {column.type}, and cast back to the storage of its "
                    f"recorded type {target} it would not hold the same values: {inexact}; "
                    "the engine changed the column's element type, so read it with one that "
                    "keeps it",
                    where=f"column {f.name!r}",
                )
        columns.append(typed(plain, target))
        fields.append(original)
    metadata = {k: v for k, v in (table.schema.metadata or {}).items() if k != PORTABLE_KEY}
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=metadata or None))


def _portable_types(table: pa.Table) -> dict[str, pa.Field]:
    raw = (table.schema.metadata or {}).get(PORTABLE_KEY)
    if raw is None:
        raise ArrowLayoutError(
            f"the table has no {PORTABLE_KEY.decode()} metadata (the engine that gave it may "
            "have dropped it); pass the schema of the table to_portable was given",
            where="schema metadata",
        )
    try:
        parsed = load_json(raw, what="the metadata", where=None, error=ValueError)
        if parsed.get("version") != PORTABLE_VERSION:
            raise ValueError(f"version {parsed.get('version')!r}, not {PORTABLE_VERSION}")
        return {
            name: pa.ipc.read_schema(pa.py_buffer(base64.b64decode(blob))).field(0)
            for name, blob in parsed["columns"].items()
        }
    except (ValueError, KeyError, TypeError, AttributeError, OSError, pa.ArrowException) as exc:
        # OSError: what pyarrow raises for an IPC message that is no flatbuffer
        raise ArrowLayoutError(
            f"unreadable {PORTABLE_KEY.decode()} metadata ({exc}); write the table with "
            "onnx_arrow.to_portable",
            where="schema metadata",
        ) from None


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


def _encodes(t: pa.DataType) -> bool:
    return pa.types.is_dictionary(t) or pa.types.is_run_end_encoded(t)


def _inexact_leaf(source: pa.Array, target: pa.DataType) -> str | None:
    """:func:`_inexact` of a leaf: cast there and back, compared (a NaN stays a NaN)."""
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
        f"{back[i].as_py()!r} as {target}"
    )

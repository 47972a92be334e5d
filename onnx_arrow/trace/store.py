"""The trace store: Parquet, one row per traced value per backend, its data in the typed
columns the corpus store keeps (``data_float``, ``data_bfloat16`` ...: the Arrow storage
of each ONNX element type, FLOAT16 widened exactly to float32), each value's comparison
beside it, and the trace's description and verdict as JSON in the file's metadata.

Rows are written a chunk at a time (:class:`TraceWriter`), so the writer holds one chunk;
the metadata, verdict included, is added when the file is closed.  :func:`read_trace`
reads the rows and the metadata, :func:`read_value` one value's data back as numpy.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from onnx_arrow.core.model import (
    DTYPES,
    NUMPY_MAX_RANK,
    ArrowKind,
    DType,
    codes_to_storage,
    dtype_of,
    dtype_of_numpy,
    load_json,
    storage_to_codes,
    string_bytes,
)
from onnx_arrow.corpus.format import data_column, data_storage_dtype
from onnx_arrow.errors import CompareError, OnnxArrowError, TraceError

__all__ = [
    "TRACE_COLUMNS",
    "TRACE_FORMAT",
    "TRACE_FORMAT_VERSION",
    "TRACE_METADATA_KEY",
    "TRACE_SCHEMA",
    "TraceWriter",
    "TracedValue",
    "describe_value",
    "read_trace",
    "read_trace_metadata",
    "read_value",
]

#: The name of the format, in the file's metadata.
TRACE_FORMAT: Final = "onnx-arrow trace"
#: Its version; a reader refuses versions it does not know.
TRACE_FORMAT_VERSION: Final = 1
#: The Parquet key-value metadata key holding the trace's JSON description and verdict.
TRACE_METADATA_KEY: Final = "onnx_arrow_trace"

#: The columns before the data columns: name, Arrow type, what it holds.
TRACE_COLUMNS: Final[dict[str, tuple[pa.DataType, str]]] = {
    "case": (pa.string(), "the store's case traced: node/test_abs"),
    "data_set": (pa.int32(), "N of test_data_set_N; null for inputs made as onnx's runner does"),
    "side": (pa.string(), "'backend' (the one traced, A) or 'against' (the one it is held to, B)"),
    "backend": (pa.string(), "the backend's name"),
    "position": (pa.int32(), "the node's position in topological order, from 0"),
    "node": (pa.string(), "the node's name, else OpType#position"),
    "op_type": (pa.string(), "the node's op type (domain::OpType outside the default domain)"),
    "output_index": (pa.int32(), "which output of the node the value is, from 0"),
    "value": (pa.string(), "the value's name"),
    "kind": (pa.string(), "tensor, sequence, map or optional (only tensors have data)"),
    "dtype": (pa.string(), "ONNX element type of a tensor: FLOAT, BFLOAT16 ..."),
    "shape": (pa.list_(pa.int64()), "dims of a tensor"),
    "count": (pa.int64(), "elements of a tensor"),
    "status": (pa.string(), "the comparison of the value: match, mismatch, nan_mismatch ..."),
    "diverges": (pa.bool_(), "the value does not match under the rule"),
    "inputs_agree": (pa.bool_(), "every value the node reads matches (fed ones always do)"),
    "rule": (pa.string(), "what judged it: 'tolerance' (rtol, atol) or 'ulp' (max_ulp_budget)"),
    "rtol": (pa.float64(), "the relative tolerance of the case"),
    "atol": (pa.float64(), "the absolute tolerance of the case"),
    "max_ulp_budget": (pa.int64(), "the ULP budget, where ULPs judged"),
    "max_abs_error": (pa.float64(), "largest |A - B|"),
    "max_rel_error": (pa.float64(), "largest |A - B| / |B|"),
    "max_ulp": (pa.uint64(), "largest ULP distance (floats of one dtype)"),
    "max_ulp_index": (pa.string(), "where the largest ULP distance is: [i, j]"),
    "n_beyond": (pa.int64(), "elements beyond the rule"),
    "worst_index": (pa.string(), "the element furthest beyond the rule"),
    "worst_backend": (pa.string(), "its value on the traced backend (A)"),
    "worst_against": (pa.string(), "its value on the other (B)"),
    "detail": (pa.string(), "where the value differs, in words"),
}

_DATA_FIELDS: Final = [
    pa.field(data_column(r), pa.list_(data_storage_dtype(r))) for r in DTYPES.values()
]

#: The schema of a trace store: the columns above, then one data column per ONNX dtype.
TRACE_SCHEMA: Final = pa.schema(
    [pa.field(name, t) for name, (t, _) in TRACE_COLUMNS.items()] + _DATA_FIELDS
)


@dataclass
class TracedValue:
    """One value as one backend gave it, and its other columns (``fields``: where it is,
    its comparison); the kind, dtype, shape and count are the value's own."""

    fields: dict[str, Any]
    value: Any


def describe_value(value: Any) -> dict[str, Any]:
    """The kind, dtype, shape and count columns of a value as a backend gives it.

    Raises
    ------
    TraceError
        If a tensor's numpy dtype is none of ONNX's element types.
    """
    if value is None:
        return {"kind": "optional"}
    if isinstance(value, dict):
        return {"kind": "map"}
    if isinstance(value, list | tuple):
        return {"kind": "sequence"}
    array = np.asarray(value)
    try:
        dtype = dtype_of_numpy(array.dtype).name
    except OnnxArrowError as exc:
        raise TraceError(
            f"a value of numpy dtype {array.dtype} has no ONNX element type: {exc.message}"
        ) from None
    return {"kind": "tensor", "dtype": dtype, "shape": list(array.shape), "count": array.size}


def _storage(array: np.ndarray[Any, Any], row: DType) -> np.ndarray[Any, Any] | list[bytes]:
    """A tensor's elements as its data column holds them, flat."""
    flat = np.ascontiguousarray(array).reshape(-1)
    if row.arrow_kind is ArrowKind.BINARY:
        return [string_bytes(x, "a string element") for x in flat]
    storage = codes_to_storage(flat, row)
    return storage.astype(row.store_storage) if row.store_widens else storage


class TraceWriter:
    """Writes a trace store a chunk at a time, beside its path; the metadata is added and
    the file renamed into place on :meth:`close`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        # written beside its target, renamed into place once closed: never half a trace
        self._partial = self.path.with_name(f".{self.path.name}.partial")
        self._writer = pq.ParquetWriter(self._partial, TRACE_SCHEMA, compression="zstd")
        self.rows = 0

    def write(self, values: Sequence[TracedValue]) -> None:
        """Write the rows of ``values``: their fields, and the data of the tensors."""
        n = len(values)
        if n > 1 and _elements(values) > _MAX_ELEMENTS:  # 32-bit list offsets: split
            self.write(values[: n // 2])
            self.write(values[n // 2 :])
            return
        columns: dict[str, Any] = {}
        described = [describe_value(v.value) for v in values]
        for name, (t, _) in TRACE_COLUMNS.items():
            columns[name] = pa.array(
                [described[i].get(name, v.fields.get(name)) for i, v in enumerate(values)], t
            )
        by_column: dict[str, list[tuple[int, Any]]] = {}
        for i, v in enumerate(values):
            array = v.value
            if describe_value(array)["kind"] != "tensor":
                continue
            array = np.asarray(array)
            row = dtype_of_numpy(array.dtype)
            by_column.setdefault(data_column(row), []).append((i, _storage(array, row)))
        arrays = [columns[name] for name in TRACE_COLUMNS]
        for f in _DATA_FIELDS:
            arrays.append(_data_array(f, n, by_column.get(f.name, [])))
        batch = pa.RecordBatch.from_arrays(arrays, schema=TRACE_SCHEMA)
        self._writer.write_batch(batch)
        self.rows += n

    def close(self, metadata: Mapping[str, Any]) -> None:
        """Add the trace's description (``metadata``, as JSON) and close the file."""
        doc = {"format": TRACE_FORMAT, "format_version": TRACE_FORMAT_VERSION, **metadata}
        self._writer.add_key_value_metadata({TRACE_METADATA_KEY: json.dumps(doc, indent=1)})
        self._writer.close()
        os.replace(self._partial, self.path)

    def abort(self) -> None:
        """Close the file unfinished and remove it (a file ``path`` held before stays)."""
        self._writer.close()
        self._partial.unlink(missing_ok=True)


#: Elements a data column of one batch holds at most (its list offsets are 32-bit).
_MAX_ELEMENTS: Final = np.iinfo(np.int32).max


def _elements(values: Sequence[TracedValue]) -> int:
    return sum(int(np.size(v.value)) for v in values if describe_value(v.value)["kind"] == "tensor")


def _data_array(f: pa.Field, n: int, parts: list[tuple[int, Any]]) -> pa.Array:
    if not parts:
        return pa.nulls(n, f.type)
    counts = np.zeros(n, dtype=np.int64)
    valid = np.zeros(n, dtype=bool)
    item = f.type.value_type
    width = item.list_size if pa.types.is_fixed_size_list(item) else 1  # complex: 2 numbers
    for i, storage in parts:
        counts[i] = len(storage) // width
        valid[i] = True
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if pa.types.is_binary(item):
        flat = pa.array([b for _, s in parts for b in s], pa.binary())
    else:
        values = np.concatenate([s for _, s in parts])
        if pa.types.is_fixed_size_list(item):
            flat = pa.FixedSizeListArray.from_arrays(pa.array(values), type=item)
        else:
            flat = pa.array(values, item)
    return pa.ListArray.from_arrays(
        pa.array(offsets.astype(np.int32)), flat, type=f.type, mask=pa.array(~valid)
    )


def read_trace_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The description and verdict a trace store keeps in its metadata.

    Raises
    ------
    CompareError
        If the file is not a trace store (of a version this reader knows).
    """
    try:
        kv = pq.read_metadata(path).metadata or {}
    except (OSError, pa.ArrowException) as exc:
        raise CompareError(f"cannot read {os.fspath(path)} as Parquet: {exc}") from None
    raw = kv.get(TRACE_METADATA_KEY.encode())
    if raw is None:
        raise CompareError(
            f"{os.fspath(path)} is not a trace store (no {TRACE_METADATA_KEY!r} metadata); "
            "write one with 'onnx-arrow trace'"
        )
    doc = load_json(raw, what="trace metadata", where=os.fspath(path), error=CompareError)
    if not isinstance(doc, dict):
        raise CompareError(
            f"{TRACE_METADATA_KEY!r} metadata is JSON of {type(doc).__name__}, not an object",
            where=os.fspath(path),
        )
    if doc.get("format") != TRACE_FORMAT or doc.get("format_version") != TRACE_FORMAT_VERSION:
        raise CompareError(
            f"{os.fspath(path)}: format {doc.get('format')!r} version "
            f"{doc.get('format_version')!r}; this reader knows {TRACE_FORMAT!r} version "
            f"{TRACE_FORMAT_VERSION}"
        )
    return doc


def read_trace(
    path: str | os.PathLike[str], columns: Sequence[str] | None = None
) -> tuple[pa.Table, dict[str, Any]]:
    """The rows of a trace store (``columns`` of them, all by default) and its metadata."""
    metadata = read_trace_metadata(path)
    return pq.read_table(path, columns=list(columns) if columns else None), metadata


def read_value(path: str | os.PathLike[str], value: str, side: str) -> np.ndarray[Any, Any]:
    """The data of tensor ``value`` as backend ``side`` (``backend`` or ``against``) gave it.

    Raises
    ------
    CompareError
        If the store has no such row, or the value is not a tensor.
    """
    read_trace_metadata(path)
    rows = pq.read_table(path, filters=[("value", "=", value), ("side", "=", side)])
    if rows.num_rows == 0:
        raise CompareError(f"{os.fspath(path)} has no value {value!r} on side {side!r}")
    dtype = rows.column("dtype")[0].as_py()
    if dtype is None:
        kind = rows.column("kind")[0].as_py()
        raise CompareError(f"{os.fspath(path)}: {value!r} is a {kind}, which has no data column")
    row = dtype_of(dtype)
    cell = rows.column(data_column(row)).combine_chunks()
    flat = pc.list_flatten(cell)
    where = f"{os.fspath(path)}: {value} ({side})"
    if row.arrow_kind is ArrowKind.BINARY:
        strings = np.array(flat.to_pylist(), dtype=object)
        return strings.reshape(_shape(rows.column("shape")[0].as_py(), strings.size, where))
    if pa.types.is_fixed_size_list(flat.type):
        flat = flat.flatten()
    numbers = flat.to_numpy(zero_copy_only=False)
    if row.store_widens:
        numbers = numbers.astype(row.arrow_storage)
    codes = storage_to_codes(numbers, row, where=where)
    return codes.reshape(_shape(rows.column("shape")[0].as_py(), codes.size, where))


def _shape(shape: list[int] | None, size: int, where: str) -> tuple[int, ...]:
    """A value's recorded ``shape``, checked to be dims of 0 or more of its ``size``
    elements that numpy can shape (a store changed after it was written is an error, never
    a value of another shape: ``[-1, 6]`` reshaped as numpy would)."""
    if (
        shape is None
        or len(shape) > NUMPY_MAX_RANK
        or any(d < 0 for d in shape)
        or math.prod(shape) != size
        or math.prod(d or 1 for d in shape) * 16 > np.iinfo(np.intp).max  # empty, too big
    ):
        raise CompareError(
            f"its shape {shape} is not dims of 0 or more holding its {size} elements (of a "
            f"rank up to {NUMPY_MAX_RANK}); the trace store was changed after it was written",
            where=where,
        )
    return tuple(shape)

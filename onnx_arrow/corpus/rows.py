"""Cases to store rows and back: the decoding and encoding at the heart of the store.

Writing: every file of a case becomes one row (``model``, ``file``), except value
files, which become a ``value`` row and, for containers, one ``element`` row per
tensor inside.  A value is kept decoded only if encoding it again gives the file's
bytes exactly; otherwise its bytes are kept as they are (``file``).

Reading: rows are grouped back by file and each file's bytes are rebuilt.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
import pyarrow as pa
from onnx import TypeProto

from onnx_arrow.core.containers import (
    MESSAGE_CLASS,
    TENSOR,
    Kind,
    Node,
    assemble,
    decode_value,
    encode_value,
    flatten,
    python_value,
)
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of
from onnx_arrow.core.tensors import (
    Tensor,
    codes_to_storage,
    decode_tensor_fast,
    storage_to_codes,
)
from onnx_arrow.core.types import kind_of_type
from onnx_arrow.corpus.format import COLUMNS, DATA_COLUMNS, SCHEMA, data_column, is_float
from onnx_arrow.corpus.sources import Case, CorpusError, declared_type, value_slot
from onnx_arrow.errors import NotRepresentableError, OnnxArrowError

__all__ = [
    "VALUE_COLUMNS",
    "RowBuilder",
    "StoredFile",
    "StoredValue",
    "declared_type_text",
    "files_from_batch",
    "onnx_type_string",
    "values_from_batch",
]

_STATS: Final = ("min", "max", "mean", "nan_count", "inf_count")
_PLAIN: Final = [name for name in COLUMNS if name not in _STATS]
_TENSOR_KIND: Final = Kind(TENSOR)


def onnx_type_string(type_proto: TypeProto) -> str:
    """ONNX's own notation of a value type: ``seq(tensor(float))``, ``map(int64,tensor(float))``."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        return f"tensor({_elem_name(type_proto.tensor_type.elem_type)})"
    if which == "sparse_tensor_type":
        return f"sparse_tensor({_elem_name(type_proto.sparse_tensor_type.elem_type)})"
    if which == "sequence_type":
        return f"seq({onnx_type_string(type_proto.sequence_type.elem_type)})"
    if which == "optional_type":
        return f"optional({onnx_type_string(type_proto.optional_type.elem_type)})"
    if which == "map_type":
        key = _elem_name(type_proto.map_type.key_type)
        return f"map({key},{onnx_type_string(type_proto.map_type.value_type)})"
    return "undefined"


def declared_type_text(type_proto: TypeProto) -> str:
    """:func:`onnx_type_string` with the declared dims: ``tensor(float) [N, 3]``."""
    text = onnx_type_string(type_proto)
    if type_proto.WhichOneof("value") == "tensor_type":
        tensor = type_proto.tensor_type
        if tensor.HasField("shape"):
            dims = [
                str(d.dim_value) if d.HasField("dim_value") else d.dim_param or "?"
                for d in tensor.shape.dim
            ]
            text += f" [{', '.join(dims)}]"
        else:
            text += " (any shape)"
    return text


def _elem_name(elem_type: int) -> str:
    row = DTYPES.get(elem_type)
    return row.name.lower() if row is not None else f"undefined({elem_type})"


def _widen(codes: np.ndarray[Any, Any], row: DType) -> np.ndarray[Any, Any]:
    """Codes to the numbers of the data column (FLOAT16 widened to float32, exactly)."""
    if row.name == "FLOAT16":
        return codes.astype(np.float32)
    return codes_to_storage(codes, row)


def _narrow(values: np.ndarray[Any, Any], row: DType, where: str) -> np.ndarray[Any, Any]:
    if row.name == "FLOAT16":
        codes = values.astype(np.float16)
        inexact = np.flatnonzero(codes.astype(np.float32).view(np.uint32) != values.view(np.uint32))
        if inexact.size:
            raise NotRepresentableError(
                f"element {int(inexact[0])} ({values[inexact[0]]!r}) is not a float16 value",
                where=where,
            )
        return codes
    return storage_to_codes(values, row, where=where)


@dataclass
class RowBuilder:
    """Accumulates the rows of some cases and turns them into one record batch."""

    keep_undecodable: bool = False
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    data: dict[int, list[tuple[int, np.ndarray[Any, Any]]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    _decoded: dict[tuple[str, bytes], Any] = field(default_factory=dict, repr=False)

    @property
    def num_rows(self) -> int:
        return len(self.rows)

    def add_case(self, case: Case) -> None:
        model = case.model()
        slots: dict[tuple[str, int], tuple[Kind, str] | None] = {}
        for f in case.files:
            if f.path == case.model_path:
                self._row(case, f.path, "model", nbytes=len(f.data), content=f.data)
                continue
            slot = value_slot(case, f.path)
            if slot is None:
                self._row(case, f.path, "file", nbytes=len(f.data), content=f.data)
                continue
            key = (slot[1], slot[2])
            if key not in slots:
                type_proto = declared_type(model, *key)
                slots[key] = (
                    None
                    if type_proto is None
                    else (kind_of_type(type_proto, where=f.path), onnx_type_string(type_proto))
                )
            declared = slots[key]
            if declared is None:
                self.warnings.append(
                    f"{f.path}: the model declares no {slot[1]} {slot[2]}; kept as bytes"
                )
                self._row(case, f.path, "file", nbytes=len(f.data), content=f.data)
                continue
            self._add_value(case, f.path, f.data, slot, *declared)

    def _add_value(
        self,
        case: Case,
        path: str,
        data: bytes,
        slot: tuple[int | None, str, int],
        declared: Kind,
        type_text: str,
    ) -> None:
        key = (declared.name, data)
        decoded = self._decoded.get(key)
        if decoded is None:  # a repeated file (test data repeats a lot) is decoded once
            decoded = self._decoded[key] = self._decode(path, data, declared)
        elif decoded is False:
            self.warnings.append(f"{path}: the same bytes as a file kept as they are; kept too")
        if decoded is False:
            self._row(case, path, "file", nbytes=len(data), content=data)
            return
        node, envelope, kind, name = decoded
        data_set, io, index = slot
        # a tensor value carries its data on its own row; a container's tensors follow it
        own = node if isinstance(node, Tensor) else None
        self._row(
            case, path, "value", len(data), data_set, io, index, "", name, type_text,
            _kind_json(kind), envelope, own,
        )  # fmt: skip
        if own is not None:
            return
        for element, tensor in flatten(node, kind):
            tensor_type = _TENSOR_TYPES[tensor.dtype.onnx]
            self._row(
                case, path, "element", None, data_set, io, index, element, None, tensor_type,
                None, None, tensor,
            )  # fmt: skip

    def _decode(
        self, path: str, data: bytes, declared: Kind
    ) -> tuple[Node, bytes, Kind, str | None] | Literal[False]:
        """The value, envelope, kind and name of a value file; False to keep its bytes."""
        try:
            fast = (
                decode_tensor_fast(data, where=path, canonical=True)
                if declared == _TENSOR_KIND
                else None
            )
            node: Node
            if fast is not None:  # exact by construction: see decode_tensor_fast
                node = Tensor(fast.dtype, fast.dims, fast.codes)
                envelope, kind, exact = fast.envelope or b"", _TENSOR_KIND, True
            else:
                node, envelope, kind = decode_value(
                    data, declared.name, where=path, external=_keep_external
                )
                exact = encode_value(node, kind, envelope, where=path) == data
        except _ExternalData:
            # its bytes refer to another file of the corpus, which is stored as it is too
            self.warnings.append(f"{path}: holds external data; kept as bytes")
            return False
        except OnnxArrowError as exc:
            if not self.keep_undecodable:
                raise exc if exc.where and exc.where.startswith(path) else exc.at(path) from None
            self.warnings.append(f"{exc}; kept as bytes")
            return False
        if not exact:
            self.warnings.append(
                f"{path}: not in protobuf's canonical form, so its bytes are kept as they are"
            )
            return False
        return node, envelope, kind, _envelope_name(envelope, kind)

    def _row(
        self,
        case: Case,
        path: str,
        role: str,
        nbytes: int | None = None,
        data_set: int | None = None,
        io: str | None = None,
        index: int | None = None,
        element: str | None = None,
        name: str | None = None,
        onnx_type: str | None = None,
        value_kind: str | None = None,
        envelope: bytes | None = None,
        tensor: Tensor | None = None,
        content: bytes | None = None,
    ) -> None:
        dtype = shape = count = None
        if tensor is not None:
            storage = _widen(tensor.codes, tensor.dtype)
            self.data.setdefault(tensor.dtype.onnx, []).append((len(self.rows), storage))
            dtype, shape, count = tensor.dtype.name, tensor.dims, tensor.codes.size
        # one tuple per row, in the order of _PLAIN; to_batch turns them into columns
        self.rows.append(
            (
                case.name, case.kind, path, role, data_set, io, index, element, name,
                onnx_type, dtype, shape, count, nbytes, value_kind, envelope, content,
            )
        )  # fmt: skip

    def to_batch(self) -> pa.RecordBatch:
        """The accumulated rows as one record batch of the store schema."""
        n = self.num_rows
        arrays: list[pa.Array] = []
        stats = _statistics(self.data, n)
        plain = dict(zip(_PLAIN, zip(*self.rows, strict=True), strict=True)) if n else {}
        for f in SCHEMA:
            if f.name in stats:
                arrays.append(pa.array(stats[f.name], f.type))
            elif f.name in DATA_COLUMNS:
                arrays.append(self._data_array(f, n))
            else:
                arrays.append(pa.array(plain.get(f.name, ()), f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)

    def _data_array(self, f: pa.Field, n: int) -> pa.Array:
        row = DATA_COLUMNS[f.name]
        entries = self.data.get(row.onnx, [])
        counts = np.zeros(n, dtype=np.int64)
        valid = np.zeros(n, dtype=bool)
        for i, storage in entries:
            counts[i] = storage.size // (2 if row.arrow_kind is ArrowKind.COMPLEX else 1)
            valid[i] = True
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        if offsets[-1] > np.iinfo(np.int32).max:
            raise CorpusError(
                f"more than 2**31 {row.name} elements in one row group; write the store with "
                "a smaller WriteOptions.row_group_bytes"
            )
        item_type = f.type.value_type
        flat = _flat_values([s for _, s in entries], row, item_type)
        return pa.ListArray.from_arrays(
            pa.array(offsets.astype(np.int32)), flat, type=f.type, mask=pa.array(~valid)
        )


def _flat_values(parts: list[np.ndarray[Any, Any]], row: DType, item_type: pa.DataType) -> pa.Array:
    if row.arrow_kind is ArrowKind.BINARY:
        return pa.array([b for p in parts for b in p], pa.binary())
    if parts:
        values = np.concatenate(parts)
    else:
        values = np.empty(0, dtype=np.float32 if row.name == "FLOAT16" else row.arrow_storage)
    if row.arrow_kind is ArrowKind.COMPLEX:
        return pa.FixedSizeListArray.from_arrays(pa.array(values), type=item_type)
    return pa.array(values, item_type)


def _statistics(
    data: dict[int, list[tuple[int, np.ndarray[Any, Any]]]], n: int
) -> dict[str, list[Any]]:
    """min, max, mean (NaN ignored), NaN and Inf counts of every tensor, a dtype at a time."""
    names = ("min", "max", "mean", "nan_count", "inf_count")
    out: dict[str, list[Any]] = {k: [None] * n for k in names}
    for onnx, entries in data.items():
        row = DTYPES[onnx]
        if row.arrow_kind in (ArrowKind.BINARY, ArrowKind.COMPLEX):
            continue
        sizes = np.array([s.size for _, s in entries], dtype=np.int64)
        nonempty = sizes > 0
        if not nonempty.any():
            continue
        values = np.concatenate([s for _, s in entries]).astype(np.float64)
        starts = (np.cumsum(sizes) - sizes)[nonempty]
        nan = np.isnan(values)
        counts = {
            "nan_count": np.add.reduceat(nan.astype(np.int64), starts),
            "inf_count": np.add.reduceat(np.isinf(values).astype(np.int64), starts),
        }
        with np.errstate(invalid="ignore", over="ignore"):
            totals = np.add.reduceat(np.where(nan, 0.0, values), starts)
        result = {
            "min": np.fmin.reduceat(values, starts),
            "max": np.fmax.reduceat(values, starts),
            "mean": totals / np.maximum(sizes[nonempty] - counts["nan_count"], 1),
        }
        non_nan = sizes[nonempty] - counts["nan_count"]
        rows = [i for (i, _), keep in zip(entries, nonempty, strict=True) if keep]
        floaty = is_float(row)
        for j, i in enumerate(rows):
            if non_nan[j] > 0:
                for key, arr in result.items():
                    out[key][i] = float(arr[j])
            if floaty:
                for key, arr in counts.items():
                    out[key][i] = int(arr[j])
        if floaty:  # empty float tensors: zero NaN and Inf
            for (i, _), keep in zip(entries, nonempty, strict=True):
                if not keep:
                    out["nan_count"][i] = out["inf_count"][i] = 0
    return out


def _envelope_name(envelope: bytes, kind: Kind) -> str | None:
    """The name field of a value's envelope (sparse tensors have none)."""
    if kind.name == "sparse_tensor":
        return None
    message = MESSAGE_CLASS[kind.name].FromString(envelope)  # type: ignore[attr-defined]
    return message.name if message.HasField("name") else None


class _ExternalData(Exception):
    """A value whose tensor data lives in another file (kept as bytes, never read here)."""


def _keep_external(entries: Any, length: int) -> Any:
    raise _ExternalData


@functools.lru_cache(maxsize=1024)
def _kind_json(kind: Kind) -> str:
    return json.dumps(kind.to_json())


_TENSOR_TYPES: Final = {row.onnx: f"tensor({row.name.lower()})" for row in DTYPES.values()}


# --- reading -------------------------------------------------------------------------

#: The columns needed to rebuild values (not files): no model bytes, no statistics.
VALUE_COLUMNS: Final = (
    "test_case", "path", "role", "data_set", "io", "index", "element", "name", "onnx_type",
    "dtype", "shape", "value_kind", "envelope", *DATA_COLUMNS,
)  # fmt: skip


@dataclass
class StoredFile:
    """One file of a store: its case, path and bytes."""

    case: str
    path: str
    data: bytes


@dataclass
class StoredValue:
    """One value of a store, decoded: where it comes from, its kind and its value."""

    case: str
    path: str
    data_set: int | None
    io: str
    index: int
    name: str | None
    onnx_type: str
    kind: Kind
    node: Node
    envelope: bytes

    def to_numpy(self) -> Any:
        """The value as ``onnx.numpy_helper`` gives it: an ndarray for a tensor, a list for
        a sequence, a dict for a map, None for an absent optional (see
        :func:`~onnx_arrow.core.containers.python_value`).  Arrays are read-only views
        into the store's columns where the dtype allows; copy them to write."""
        return python_value(self.node, maps_as_dicts=True)

    def to_bytes(self) -> bytes:
        """The value's file, byte for byte."""
        return encode_value(self.node, self.kind, self.envelope, where=self.path)


def _damaged(message: str, *, where: str) -> CorpusError:
    """An error in a store's rows: it was damaged or changed after it was written."""
    return CorpusError(
        f"{message}; the store is damaged or was changed after it was written: "
        "import the corpus again",
        where=where,
    )


class _Columns:
    """A batch's columns, each converted once; tensors are slices of the data columns."""

    def __init__(self, batch: pa.RecordBatch) -> None:
        names = set(batch.schema.names)
        self.batch = batch
        self.plain = {
            name: batch.column(name).to_pylist()
            for name in _PLAIN
            if name in names and name != "content"
        }
        self._data: dict[int, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], Any]] = {}

    def bytes_at(self, column: str, i: int) -> bytes | None:
        return self.batch.column(column)[i].as_py()

    def tensor(self, i: int, where: str) -> Tensor:
        dtype_name = self.plain["dtype"][i]
        shape = self.plain["shape"][i]
        if dtype_name is None or shape is None:
            raise _damaged("a tensor row has no dtype or shape", where=where)
        try:
            row = dtype_of(dtype_name)
        except OnnxArrowError as exc:
            raise exc.at(where) from None
        if row.onnx not in self._data:
            self._data[row.onnx] = self._column_codes(row, where)
        offsets, valid, codes = self._data[row.onnx]
        piece = codes[offsets[i] : offsets[i + 1]]
        count = math.prod(shape)
        if not valid[i] or piece.size != count:
            raise _damaged(
                f"{data_column(row)} holds {piece.size if valid[i] else 'no'} elements "
                f"but shape {shape} needs {count}",
                where=where,
            )
        return Tensor(row, tuple(shape), piece)

    def _column_codes(
        self, row: DType, where: str
    ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], Any]:
        """A data column's offsets, validity and element codes, converted once."""
        array = self.batch.column(data_column(row))
        valid = np.asarray(array.is_valid(), dtype=bool)
        offsets = array.offsets.to_numpy()
        flat = _flat_numpy(array, row)
        try:
            return offsets, valid, _narrow(flat, row, data_column(row))
        except OnnxArrowError:
            # on the error path only: find the row that holds the value
            per = 2 if row.arrow_kind is ArrowKind.COMPLEX else 1
            for k in range(len(offsets) - 1):
                _narrow(flat[offsets[k] * per : offsets[k + 1] * per], row, where)
            raise


def _flat_numpy(array: pa.Array, row: DType) -> np.ndarray[Any, Any]:
    values = array.values
    if row.arrow_kind is ArrowKind.BINARY:
        out = np.empty(len(values), dtype=object)
        out[:] = values.to_pylist()
        return out
    if row.arrow_kind is ArrowKind.COMPLEX:
        values = values.flatten()
    if values.null_count:
        raise _damaged(f"{data_column(row)} holds null elements", where=data_column(row))
    return values.to_numpy(zero_copy_only=False)


def _value_end(roles: list[str], paths: list[str], start: int) -> int:
    end = start + 1
    while end < len(roles) and roles[end] == "element" and paths[end] == paths[start]:
        end += 1
    return end


def values_from_batch(batch: pa.RecordBatch, *, where: str) -> Iterator[StoredValue]:
    """The values of a record batch of the store (the columns of :data:`VALUE_COLUMNS`)."""
    cols = _Columns(batch)
    roles, paths = cols.plain["role"], cols.plain["path"]
    i = 0
    while i < len(roles):
        if roles[i] != "value":
            i += 1
            continue
        end = _value_end(roles, paths, i)
        yield _stored_value(cols, i, end, f"{where}: {cols.plain['test_case'][i]}: {paths[i]}")
        i = end


def _stored_value(cols: _Columns, start: int, stop: int, where: str) -> StoredValue:
    p = cols.plain
    kind_text = p["value_kind"][start]
    envelope = p["envelope"][start]
    if kind_text is None or envelope is None or p["io"][start] not in ("input", "output"):
        raise _damaged("a value row has no value_kind, envelope or io", where=where)
    kind = _parse_kind(kind_text, where)
    node: Node
    if kind.name == TENSOR:
        node = cols.tensor(start, where)
    else:
        leaves = iter(
            [cols.tensor(k, f"{where}: {p['element'][k]}") for k in range(start + 1, stop)]
        )
        node = assemble(kind, envelope, leaves, where=where)
        if next(leaves, None) is not None:
            raise _damaged(
                "the value has more element rows than its envelope describes", where=where
            )
    return StoredValue(
        p["test_case"][start], p["path"][start], p["data_set"][start], p["io"][start],
        p["index"][start], p["name"][start], p["onnx_type"][start], kind, node, envelope,
    )  # fmt: skip


def _parse_kind(text: str, where: str) -> Kind:
    try:
        return _kind_from_text(text)
    except json.JSONDecodeError:
        raise _damaged(f"value_kind is not JSON: {text[:60]!r}", where=where) from None
    except OnnxArrowError as exc:
        raise exc.at(where) from None


@functools.lru_cache(maxsize=1024)
def _kind_from_text(text: str) -> Kind:
    return Kind.from_json(json.loads(text), where="value_kind")


def files_from_batch(batch: pa.RecordBatch, *, where: str) -> Iterator[StoredFile]:
    """Rebuild the files of a record batch of the store, in row order."""
    cols = _Columns(batch)
    roles, paths, cases = cols.plain["role"], cols.plain["path"], cols.plain["test_case"]
    i = 0
    while i < len(roles):
        role, path = roles[i], paths[i]
        at = f"{where}: {cases[i]}: {path}"
        if role in ("model", "file"):
            content = cols.bytes_at("content", i)
            if content is None:
                raise _damaged(f"a {role} row has no content", where=at)
            yield StoredFile(cases[i], path, content)
            i += 1
            continue
        if role != "value":
            raise _damaged(
                f"row role {role!r} where a file starts; expected model, value or file", where=at
            )
        end = _value_end(roles, paths, i)
        yield StoredFile(cases[i], path, _stored_value(cols, i, end, at).to_bytes())
        i = end

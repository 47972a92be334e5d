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
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.core.model import (
    DTYPES,
    STATISTICS,
    TENSOR,
    ArrowKind,
    DType,
    Kind,
    MapValue,
    Node,
    OptionalValue,
    SequenceValue,
    Strings,
    Tensor,
    assemble,
    check_strings,
    codes_to_storage,
    contradiction,
    contradiction_message,
    declared_kind,
    declared_type,
    decode_tensor_fast,
    decode_value,
    diagnosis,
    dtype_of,
    encode_value,
    flatten,
    holds_model,
    lfs_pointer,
    load_json,
    message_class,
    onnx_type_string,
    statistics_by_dtype,
    storage_to_codes,
    undeclared_tensor_type,
)
from onnx_arrow.corpus import columns
from onnx_arrow.corpus.digest import check_digest, digest_beside, digest_of
from onnx_arrow.corpus.digest import damaged as _damaged
from onnx_arrow.corpus.format import (
    COLUMNS,
    DATA_COLUMNS,
    ORDINAL_COLUMNS,
    SCHEMA,
    TOLERANCE_COLUMNS,
    data_column,
    shape_problem,
    store_order,
)
from onnx_arrow.corpus.sources import (
    Case,
    CorpusError,
    Tolerance,
    tolerance_of,
    value_slots,
)
from onnx_arrow.errors import NotRepresentableError, OnnxArrowError

if TYPE_CHECKING:
    from onnx import TypeProto

__all__ = [
    "VALUE_COLUMNS",
    "RowBuilder",
    "StoredFile",
    "StoredValue",
    "columns_of",
    "contradictions",
    "files_from_batch",
    "parse_kind",
    "values_from_batch",
]

_PLAIN: Final = [
    name
    for name in COLUMNS  # copy_of is set as the row group is written (corpus/copies.py)
    if name not in (*STATISTICS, *ORDINAL_COLUMNS, *TOLERANCE_COLUMNS, "copy_of")
]
_TENSOR_KIND: Final = Kind(TENSOR)
_UNDECLARED: Final = "as the model declares no type for"


def _widen(codes: np.ndarray[Any, Any], row: DType) -> np.ndarray[Any, Any]:
    """Codes to the numbers of the data column: the Arrow storage, widened exactly to the
    row's store storage where that is wider (FLOAT16 to float32)."""
    storage = codes_to_storage(codes, row)
    return storage.astype(row.store_storage) if row.store_widens else storage


def _narrow(
    values: np.ndarray[Any, Any], row: DType, where: str, bits: bool = False
) -> np.ndarray[Any, Any]:
    """The numbers of a data column back to codes (``bits``: see :class:`_Columns`);
    raises where a widened number is not exactly a value of the row's Arrow storage."""
    if row.store_widens:
        narrowed = values.astype(row.arrow_storage)
        same = np.dtype(f"u{values.dtype.itemsize}")
        inexact = np.flatnonzero(narrowed.astype(values.dtype).view(same) != values.view(same))
        if inexact.size:
            raise NotRepresentableError(
                f"element {int(inexact[0])} ({values[inexact[0]]!r}) is not a "
                f"{row.name.lower()} value",
                where=where,
            )
        values = narrowed
    return storage_to_codes(values, row, where=where, bits=bits)


@dataclass(frozen=True, slots=True)
class _Leaf:
    """A distinct tensor of a row group: what the rows that hold it store."""

    dtype: DType
    shape: tuple[int, ...]
    count: int
    storage: np.ndarray[Any, Any]  # the numbers of its data column


@dataclass(frozen=True, slots=True)
class _Value:
    """A value file decoded, once per distinct file of a row group."""

    name: str | None
    kind_json: str
    envelope: bytes
    leaf: int  # the leaf a tensor value holds on its own row; -1 for a container
    elements: tuple[tuple[str, str, int], ...]  # a container's tensors: path, type, leaf
    onnx_type: str | None = None  # its own type, where it contradicts the declared one
    declared: str | None = None  # the declared type, where the value contradicts it


@dataclass
class RowBuilder:
    """Accumulates the rows of some cases and turns them into one record batch.

    A row is a tuple in the order of the plain columns; a tensor's data and
    statistics come from its leaf, which identical files of the row group share:
    test data repeats a lot, and each distinct file is decoded once.
    """

    keep_undecodable: bool = False
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    row_leaf: list[int] = field(default_factory=list)
    leaves: list[_Leaf] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Bytes of the files added so far.
    source_bytes: int = 0
    #: Per case added, in order: its rows, source bytes, files and warnings.
    cases: list[tuple[int, int, int, int]] = field(default_factory=list)
    #: Per case added, in order: its own tolerances (see ``tolerance_of``).
    tolerances: list[Tolerance | None] = field(default_factory=list)
    _decoded: dict[tuple[str, bytes, int, bytes, bytes], list[tuple[bytes, _Value | None]]] = field(
        default_factory=dict, repr=False
    )

    @property
    def num_rows(self) -> int:
        return len(self.rows)

    def add_case(self, case: Case) -> None:
        rows, size, warnings = len(self.rows), self.source_bytes, len(self.warnings)
        tolerance = tolerance_of(case)
        self._add_files(case)
        self.tolerances.append(tolerance)
        self.cases.append(
            (
                len(self.rows) - rows,
                self.source_bytes - size,
                len(case.files),
                len(self.warnings) - warnings,
            )
        )

    def _add_files(self, case: Case) -> None:
        model, pointer = case.model(), case.model_pointer
        if pointer is not None:  # a checkout without Git LFS: its files as they are
            self.warnings.append(
                f"{case.model_path}: {pointer}; the case is stored without a model"
            )
        slots = value_slots(case, model)
        declarations: dict[tuple[str, int], tuple[Kind, str, TypeProto] | None] = {}
        for f in store_order(case.files, slots):
            path, data = f.path, f.data
            self.source_bytes += len(data)
            if path == case.model_path and pointer is None:
                self._file_row(case, path, "model", data)
                continue
            slot = slots.get(path)
            if slot is None:
                if model is None and path.endswith(".pb") and holds_model(data):
                    self.warnings.append(
                        f"{path}: holds an ONNX model (a ModelProto), not a value: rename it "
                        "model.onnx so that it types its case's data sets; kept as a file"
                    )
                self._file_row(case, path, "file", data)
                continue
            if slot.index is None:
                self.warnings.append(f"{path}: {slot.reason}; kept as bytes")
                self._file_row(case, path, "file", data)
                continue
            key = (slot.io, slot.index)
            if key not in declarations:
                type_proto = declared_type(model, *key)
                found = declared_kind(type_proto, path)
                declarations[key] = (
                    None if found is None or type_proto is None else (*found, type_proto)
                )
            declared, said = declarations[key], "the type the model declares for"
            if declared is None and (found := undeclared_tensor_type(data)) is not None:
                # read as onnx's runner reads a file the model does not type: a TensorProto
                declared, said = (_TENSOR_KIND, onnx_type_string(found), found), _UNDECLARED
            if declared is None:
                self.warnings.append(
                    f"{path}: the model declares no type for {slot.what}, and "
                    f"{lfs_pointer(data) or 'the file is no TensorProto'}; kept as bytes"
                )
                self._file_row(case, path, "file", data)
                continue
            kind, type_text, type_proto = declared
            # files are told apart by their ends, then their bytes: hashing all of a file
            # of megabytes costs more than comparing it
            memo = (type_text, type_proto.SerializeToString(), len(data), data[:64], data[-64:])
            seen = self._decoded.setdefault(memo, [])
            if hit := [v for d, v in seen if d == data]:
                value = hit[0]
                if value is None:
                    self.warnings.append(
                        f"{path}: the same bytes as a file kept as they are; kept too"
                    )
            else:  # a repeated file (test data repeats a lot) is decoded once
                what = f"{type_text}, {said} {slot.what}"
                value = self._decode(path, data, kind, what, type_proto)
                seen.append((data, value))
            if value is None:
                self._file_row(case, path, "file", data)
                continue
            own = value.leaf
            self.rows.append(
                (
                    case.name, case.kind, path, "value", slot.data_set, slot.io, slot.index, "",
                    value.name, value.onnx_type or type_text, value.declared,
                    *self._tensor_fields(own), len(data), digest_beside(data), value.kind_json,
                    value.envelope, None,
                )
            )  # fmt: skip
            self.row_leaf.append(own)
            for element, tensor_type, leaf in value.elements:
                self.rows.append(
                    (
                        case.name, case.kind, path, "element", slot.data_set, slot.io,
                        slot.index, element, None, tensor_type, None,
                        *self._tensor_fields(leaf), None, None, None, None, None,
                    )
                )  # fmt: skip
                self.row_leaf.append(leaf)

    def _file_row(self, case: Case, path: str, role: str, data: bytes) -> None:
        # one tuple per row, in the order of _PLAIN; to_batch turns them into columns
        self.rows.append(
            (
                case.name, case.kind, path, role, None, None, None, None, None, None, None,
                None, None, None, len(data), digest_beside(data), None, None, data,
            )
        )  # fmt: skip
        self.row_leaf.append(-1)

    def _tensor_fields(self, leaf: int) -> tuple[str | None, tuple[int, ...] | None, int | None]:
        if leaf < 0:
            return None, None, None
        t = self.leaves[leaf]
        return t.dtype.name, t.shape, t.count

    def _leaf(self, tensor: Tensor) -> int:
        self.leaves.append(
            _Leaf(tensor.dtype, tensor.dims, tensor.codes.size, _widen(tensor.codes, tensor.dtype))
        )
        return len(self.leaves) - 1

    def _decode(
        self, path: str, data: bytes, declared: Kind, what: str, type_proto: TypeProto
    ) -> _Value | None:
        """A value file decoded; None to keep its bytes as they are.  ``what`` names the
        declared type for an error: ``tensor(float) [3], the type ... for input 0``.  A
        value that contradicts ``type_proto`` is kept with its own type, the declaration
        recorded beside it (the ``declared`` column)."""
        try:
            fast = decode_tensor_fast(data, canonical=True) if declared == _TENSOR_KIND else None
            node: Node
            if fast is not None:  # exact by construction: see decode_tensor_fast
                node, envelope, kind, exact = fast, fast.envelope or b"", _TENSOR_KIND, True
            else:
                node, envelope, kind = decode_value(
                    data, declared.name, where=path, external=_keep_external
                )
                exact = encode_value(node, kind, envelope, where=path) == data
        except _ExternalData:
            # its bytes refer to another file of the corpus, which is stored as it is too
            self.warnings.append(f"{path}: holds external data; kept as bytes")
            return None
        except OnnxArrowError as exc:
            said = diagnosis(data, declared.name)
            if said is not None:  # what it is, not the numbers its bytes make as another
                exc.message, exc.where = said, path
            if not self.keep_undecodable and lfs_pointer(data) is None:
                # the same object, relocated: the traceback keeps the frame that found it
                detail = said or str(exc).removeprefix(f"{path}: ")
                exc.where, exc.message = (
                    path,
                    (
                        f"does not decode as {what} ({detail}); keep_undecodable "
                        "(import --keep-undecodable) keeps such a file as bytes, with a warning"
                    ),
                )
                exc.args = (f"{path}: {exc.message}",)
                raise exc from None
            self.warnings.append(
                f"{path}: does not decode as {what} ({said}); kept as bytes"
                if said is not None
                else f"{exc}; kept as bytes"
            )
            return None
        if not exact:
            self.warnings.append(
                f"{path}: not in protobuf's canonical form, so its bytes are kept as they are"
            )
            return None
        name = _envelope_name(envelope, kind)
        clash = contradiction(type_proto, node, kind)
        own, said = (None, None) if clash is None else (clash.onnx_type, clash.declared)
        if isinstance(node, Tensor):
            return _Value(name, _kind_json(kind), envelope, self._leaf(node), (), own, said)
        elements = tuple(
            (element, _TENSOR_TYPES[tensor.dtype.onnx], self._leaf(tensor))
            for element, tensor in flatten(node, kind)
        )
        return _Value(name, _kind_json(kind), envelope, -1, elements, own, said)

    def to_batch(self) -> pa.RecordBatch:
        """The accumulated rows as one record batch of the store schema."""
        n = self.num_rows
        row_leaf = np.asarray(self.row_leaf, dtype=np.int64)
        stats = columns.statistics_columns(
            statistics_by_dtype([t.dtype for t in self.leaves], [t.storage for t in self.leaves]),
            row_leaf,
        )
        plain = dict(zip(_PLAIN, zip(*self.rows, strict=True), strict=True)) if n else {}
        plain["digest"] = tuple(digest_of(d) for d in plain.get("digest", ()))  # computed beside
        rows_of: dict[int, list[int]] = {}  # dtype -> rows holding a tensor of it
        for i, leaf in enumerate(self.row_leaf):
            if leaf >= 0:
                rows_of.setdefault(self.leaves[leaf].dtype.onnx, []).append(i)
        per_case = np.asarray([c[0] for c in self.cases], dtype=np.int32)
        if per_case.sum() != n:
            raise AssertionError(f"{per_case.sum()} rows counted by case, {n} built")
        starts = np.repeat(np.cumsum(per_case) - per_case, per_case)
        ordinals = {
            "case_rows": columns.numbers(np.repeat(per_case, per_case), pa.int32()),
            "case_row": columns.numbers(np.arange(n) - starts, pa.int32()),
        }
        for name in TOLERANCE_COLUMNS:  # stated once per case, repeated on its rows
            stated = [None if t is None else getattr(t, name) for t in self.tolerances]
            valid = np.repeat(np.array([x is not None for x in stated], bool), per_case)
            each = np.repeat(np.array([x or 0.0 for x in stated], np.float64), per_case)
            ordinals[name] = columns.numbers(each, pa.float64(), valid)
        arrays: list[pa.Array] = []
        for f in SCHEMA:
            if f.name in ordinals:
                arrays.append(ordinals[f.name])
            elif f.name in stats:
                arrays.append(stats[f.name])
            elif f.name in DATA_COLUMNS:
                rows = rows_of.get(DATA_COLUMNS[f.name].onnx)
                arrays.append(pa.nulls(n, f.type) if rows is None else self._data_array(f, n, rows))
            else:
                got = plain.get(f.name)
                arrays.append(pa.nulls(n, f.type) if got is None else columns.of_items(got, f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)

    def _data_array(self, f: pa.Field, n: int, rows: list[int]) -> pa.Array:
        row = DATA_COLUMNS[f.name]
        leaves = [self.leaves[self.row_leaf[i]] for i in rows]
        counts = np.zeros(n, dtype=np.int64)
        counts[rows] = [t.count for t in leaves]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        if offsets[-1] > np.iinfo(np.int32).max:
            # row groups are cut between cases only, so this is one case (or the last few)
            cases = sorted({self.rows[i][0] for i in rows})
            raise CorpusError(
                f"{offsets[-1]} {row.name} elements in one row group, more than the 2**31 a "
                "data column holds (32-bit list offsets); a case this large cannot be stored: "
                "split its data sets into cases of their own",
                where=", ".join(cases[-3:]),
            )
        valid = np.zeros(n, dtype=bool)
        valid[rows] = True
        flat = _flat_values([t.storage for t in leaves], row, f.type.value_type)
        return columns.lists(counts, flat, f.type, valid)


def contradictions(table: pa.Table | pa.RecordBatch) -> list[str]:
    """What each value of store rows that contradicts its declaration holds, in the words of
    :class:`~onnx_arrow.errors.DeclarationWarning` (from the ``declared`` column)."""
    names = table.schema.names
    if "declared" not in names or table.column("declared").null_count == len(table):
        return []
    flagged = table.filter(pc.is_valid(table.column("declared")))
    out = []
    for path, own, shape, declared in zip(
        *(flagged.column(c).to_pylist() for c in ("path", "onnx_type", "shape", "declared")),
        strict=True,
    ):
        holds = own if shape is None else f"{own} [{', '.join(map(str, shape))}]"
        out.append(contradiction_message(path, holds, declared))
    return out


def _flat_values(parts: list[np.ndarray[Any, Any]], row: DType, item_type: pa.DataType) -> pa.Array:
    if row.arrow_kind is ArrowKind.BINARY:
        return columns.binaries([b for p in parts for b in p])
    values = np.concatenate(parts) if parts else _widen(np.empty(0, row.numpy), row)
    if row.arrow_kind is ArrowKind.COMPLEX:
        return pa.FixedSizeListArray.from_arrays(
            columns.numbers(values, item_type.value_type), type=item_type
        )
    return columns.numbers(values, item_type)


def _envelope_name(envelope: bytes, kind: Kind) -> str | None:
    """The name field of a value's envelope (sparse tensors have none)."""
    if kind.name == "sparse_tensor":
        return None
    message = message_class(kind.name).FromString(envelope)
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

    def to_numpy(self, *, strings: Strings = "str") -> Any:
        """The value as ``onnx.numpy_helper`` gives it: an ndarray for a tensor, a list for
        a sequence, a dict for a map, None for an absent optional, STRING elements as
        ``str`` (or, with ``strings="bytes"``, the bytes as stored; see
        :func:`~onnx_arrow.core.containers.python_value`).  Arrays are read-only views
        into the store's columns where the dtype allows; copy them to write."""
        from onnx_arrow.core.model import python_value  # imports onnx

        try:
            return python_value(self.node, maps_as_dicts=True, strings=check_strings(strings))
        except OnnxArrowError as exc:
            raise exc.at(self.path) from None

    def to_bytes(self) -> bytes:
        """The value's file, byte for byte."""
        return encode_value(self.node, self.kind, self.envelope, where=self.path)

    def __repr__(self) -> str:
        # where it is and what it holds; the elements are to_numpy()'s to show
        return (
            f"StoredValue(path={self.path!r}, io={self.io!r}, index={self.index}, "
            f"name={self.name!r}, onnx_type={self.onnx_type!r}, value={_node_text(self.node)})"
        )


def _node_text(node: Node | None) -> str:
    """What a decoded value holds, in a few words: ``FLOAT [3, 4]``, ``sequence of 3``."""
    if node is None:
        return "absent"
    if isinstance(node, Tensor):
        return f"{node.dtype.name} {list(node.dims)}"
    if isinstance(node, SequenceValue):
        return f"sequence of {len(node.items)}"
    if isinstance(node, MapValue):
        return f"map of {len(node.values)} {node.key.name} keys"
    if isinstance(node, OptionalValue):
        return "optional, absent" if node.value is None else f"optional, {_node_text(node.value)}"
    return f"sparse {node.values.dtype.name} {list(node.dims)}"


#: A data column converted: offsets, validity, element codes, null elements (or None).
_Codes = tuple[
    np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any] | None
]


def columns_of(batch: pa.RecordBatch, *, where: str) -> _Columns:
    """A batch's columns converted for :func:`values_from_batch`, to read it a part at a
    time without converting it again; ``where`` prefixes the location in errors."""
    return _Columns(batch, where)


class _Columns:
    """A batch's columns, each converted once; tensors are slices of the data columns (with
    ``bits``, an ml_dtypes type's codes are its bits, all a file is rebuilt from)."""

    def __init__(self, batch: pa.RecordBatch, where: str, bits: bool = False) -> None:
        names = set(batch.schema.names)
        self.batch, self.where, self.bits = batch, where, bits
        # the plain columns rebuilding a value needs; content is read row by row
        self.plain = {
            name: batch.column(name).to_pylist()
            for name in (*VALUE_COLUMNS, "digest")
            if name in names and name not in DATA_COLUMNS
        }
        self._data: dict[int, _Codes] = {}

    def bytes_at(self, column: str, i: int) -> bytes | None:
        return self.batch.column(column)[i].as_py()

    def tensor(self, i: int, where: str) -> Tensor:
        dtype_name = self.plain["dtype"][i]
        shape = self.plain["shape"][i]
        if dtype_name is None or shape is None:
            raise _damaged("a tensor row has no dtype or shape", where=where)
        if (problem := shape_problem(shape)) is not None:
            raise _damaged(f"the tensor row's shape {shape} {problem}", where=where)
        try:
            row = dtype_of(dtype_name)
        except OnnxArrowError as exc:
            raise exc.at(where) from None
        if row.onnx not in self._data:
            self._data[row.onnx] = self._column_codes(row)
        offsets, valid, codes, null = self._data[row.onnx]
        start, stop = offsets[i], offsets[i + 1]
        if null is not None and null[start:stop].any():
            # a null in another row of the column does not stop this row being read
            raise _damaged(f"{data_column(row)} holds a null element", where=where)
        piece = codes[start:stop]
        count = math.prod(shape)
        if not valid[i] or piece.size != count:
            raise _damaged(
                f"{data_column(row)} holds {piece.size if valid[i] else 'no'} elements "
                f"but shape {shape} needs {count}",
                where=where,
            )
        return Tensor(row, tuple(shape), piece)

    def _column_codes(self, row: DType) -> _Codes:
        """A data column's offsets (from 0, over this batch's rows only), validity, element
        codes and null elements (None if there are none), converted once."""
        array = self.batch.column(data_column(row))
        valid = columns.validity_of(array)
        # a slice's offsets are into the whole child array: take the rows' elements only
        offsets = columns.values_of(array.offsets).astype(np.int64)
        base = int(offsets[0]) if offsets.size else 0
        offsets = offsets - base
        elements = array.values.slice(base, int(offsets[-1]) if offsets.size else 0)
        flat, null = _flat_numpy(elements, row)
        try:
            return offsets, valid, _narrow(flat, row, data_column(row), self.bits), null
        except OnnxArrowError:
            # on the error path only: find the row that holds the value, of any case
            per = 2 if row.arrow_kind is ArrowKind.COMPLEX else 1
            for k in range(len(offsets) - 1):
                piece = flat[offsets[k] * per : offsets[k + 1] * per]
                _narrow(piece, row, self._row_where(k), self.bits)
            raise

    def _row_where(self, k: int) -> str:
        p = self.plain
        element = f": {p['element'][k]}" if p["role"][k] == "element" else ""
        return f"{self.where}: {p['test_case'][k]}: {p['path'][k]}{element}"


def _flat_numpy(
    values: pa.Array, row: DType
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any] | None]:
    """A data column's elements as one numpy array, a null element filled with a one of
    its type (a value of every dtype), and which elements were null (None when none
    was): a row that holds one is refused when it is read, the others read as they are."""
    null: np.ndarray[Any, Any] | None = None
    if row.arrow_kind is ArrowKind.COMPLEX:
        # an element is a pair of numbers: null if the pair is, or either of its numbers
        pairs = ~columns.validity_of(values)
        values = values.values.slice(values.offset * 2, len(values) * 2)
        numbers = ~columns.validity_of(values)
        if pairs.any() or numbers.any():
            null = pairs | numbers.reshape(-1, 2).any(axis=1)
    elif values.null_count:
        null = ~columns.validity_of(values)
    if values.null_count:
        one = b"" if row.arrow_kind is ArrowKind.BINARY else 1
        values = pc.fill_null(values, pa.scalar(one, values.type))
    if row.arrow_kind is ArrowKind.BINARY:
        out = np.empty(len(values), dtype=object)
        out[:] = values.to_pylist()
        return out, null
    return columns.numbers_of(values), null


def _value_end(roles: list[str], paths: list[str], start: int) -> int:
    end = start + 1
    while end < len(roles) and roles[end] == "element" and paths[end] == paths[start]:
        end += 1
    return end


def values_from_batch(
    batch: pa.RecordBatch | _Columns,
    *,
    where: str,
    rows: range | None = None,
    path: str | None = None,
) -> Iterator[StoredValue]:
    """The values of a record batch of the store (the columns of :data:`VALUE_COLUMNS`), or
    of its ``rows`` only, or the value of the file ``path`` only (no other is decoded);
    the batch may come converted already (:func:`columns_of`).  When the batch has the
    ``digest`` column, each value's file is rebuilt and checked against it
    (:func:`check_digest`)."""
    cols = batch if isinstance(batch, _Columns) else _Columns(batch, where)
    roles, paths = cols.plain["role"], cols.plain["path"]
    digests = cols.plain.get("digest")
    i, stop = (0, len(roles)) if rows is None else (rows.start, rows.stop)
    while i < stop:
        if roles[i] != "value":
            i += 1
            continue
        end = _value_end(roles, paths, i)
        if path is not None and paths[i] != path:
            i = end
            continue
        at = f"{where}: {cols.plain['test_case'][i]}: {paths[i]}"
        value = _stored_value(cols, i, end, at)
        if digests is not None:
            check_digest(_rebuilt(value, at), digests[i], where=at, value=value)
        yield value
        i = end


def _stored_value(cols: _Columns, start: int, stop: int, where: str) -> StoredValue:
    p = cols.plain
    kind_text = p["value_kind"][start]
    envelope = p["envelope"][start]
    if kind_text is None or envelope is None or p["io"][start] not in ("input", "output"):
        raise _damaged("a value row has no value_kind, envelope or io", where=where)
    kind = parse_kind(kind_text, where)
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


def parse_kind(text: str, where: str) -> Kind:
    try:
        return _kind_from_text(text)
    except OnnxArrowError as exc:
        raise exc.at(where) from None
    except ValueError as exc:
        raise _damaged(f"{exc}: {text[:60]!r}", where=where) from None


@functools.lru_cache(maxsize=1024)
def _kind_from_text(text: str) -> Kind:
    return Kind.from_json(
        load_json(text, what="value_kind", where=None, error=ValueError), where="value_kind"
    )


def files_from_batch(batch: pa.RecordBatch, *, where: str) -> Iterator[StoredFile]:
    """Rebuild the files of a record batch of the store, in row order, each checked
    against its row's ``digest`` when the batch has that column."""
    cols = _Columns(batch, where, bits=True)
    roles, paths, cases = cols.plain["role"], cols.plain["path"], cols.plain["test_case"]
    names = batch.schema.names
    digests = batch.column("digest").to_pylist() if "digest" in names else None
    i = 0
    while i < len(roles):
        role, path = roles[i], paths[i]
        if not isinstance(path, str) or not isinstance(cases[i], str):
            raise _damaged(
                f"row {i} of the row group has no {'path' if cases[i] else 'test_case'} "
                "(null); every row names its case and file",
                where=where,
            )
        at = f"{where}: {cases[i]}: {path}"
        if role in ("model", "file"):
            content = cols.bytes_at("content", i)
            if content is None:
                raise _damaged(f"a {role} row has no content", where=at)
            yield StoredFile(cases[i], path, _checked(content, digests, i, at))
            i += 1
            continue
        if role != "value":
            raise _damaged(
                f"row role {role!r} where a file starts; expected model, value or file", where=at
            )
        end = _value_end(roles, paths, i)
        try:
            value = _stored_value(cols, i, end, at)
        except OnnxArrowError as exc:
            raise (exc if at in str(exc) else exc.at(at)) from None
        data = _rebuilt(value, at)
        if digests is not None:
            check_digest(data, digests[i], where=at, value=value)
        yield StoredFile(cases[i], path, data)
        i = end


def _rebuilt(value: StoredValue, where: str) -> bytes:
    """The bytes of a value's file, rebuilt from its rows."""
    try:
        return value.to_bytes()
    except OnnxArrowError as exc:
        raise (exc if where in str(exc) else exc.at(where)) from None


def _checked(data: bytes, digests: list[bytes | None] | None, i: int, where: str) -> bytes:
    """A rebuilt file, checked against the digest its row recorded (when read)."""
    if digests is not None:
        check_digest(data, digests[i], where=where)
    return data

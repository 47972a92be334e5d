"""pandas adapter: onnx-arrow columns as pandas Series and DataFrames, shapes and dtypes kept.

pyarrow's own ``to_pandas()`` flattens every tensor into a flat list of numbers and
turns BOOL into int8.  This module keeps what a value is:

* :func:`to_pandas` keeps the Arrow array as it is behind a ``pd.ArrowDtype`` column
  (the default, ``cells="arrow"``: zero-copy, exact through ``pd.concat``, pickling,
  ``DataFrame({...})`` and renames), or gives a column whose cells are ndarrays of the
  right shape and ONNX numpy dtype (``cells="numpy"``, ml_dtypes for bfloat16, float8,
  int4 ...); :func:`from_pandas` goes back, and says so when numpy cells have lost what
  only the Arrow column held.
* The ``onnx`` Series accessor, registered when this module is imported, works on
  both kinds of columns: ``.onnx.to_numpy()`` (one stacked array, zero-copy where the
  Arrow buffer allows), ``.onnx.shape``, ``.onnx.dtype``, ``.onnx.stats()``,
  ``.onnx.to_float32()`` and ``.onnx.to_arrow()``.
* :func:`catalog` gives one row per value of a corpus store, ready for one-line
  questions.

Absent values are ``None`` in numpy cells and null in Arrow cells, never NaN; the
catalog's numbers are nullable (``Int64``, ``Float64``).  ``import onnx_arrow`` does
not import pandas: this module is imported on its own, ``import onnx_arrow.pandas``.

Examples
--------
>>> import numpy as np
>>> import onnx_arrow
>>> import onnx_arrow.pandas as oap
>>> from onnx import numpy_helper
>>> x = [numpy_helper.from_array(np.full((2, 3), i, np.float32), f"x{i}") for i in range(4)]
>>> s = oap.to_pandas(onnx_arrow.to_arrow(x, exact=True), cells="numpy")
>>> s[1]
array([[1., 1., 1.],
       [1., 1., 1.]], dtype=float32)
>>> s.onnx.to_numpy().shape, s.onnx.dtype
((4, 2, 3), 'FLOAT')
>>> s.onnx.stats()["mean"].tolist()
[0.0, 1.0, 2.0, 3.0]
>>> onnx_arrow.from_arrow(s.onnx.to_arrow()) == x
True
"""

from __future__ import annotations

import json
import math
import operator
import os
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa
import pyarrow.compute as pc
from onnx import ModelProto
from pandas.arrays import FloatingArray

from onnx_arrow._summary import DECODED_FLOATS, op_types
from onnx_arrow.core.model import (
    DTYPES,
    MAP,
    MAX_ELEMENTS,
    OPTIONAL,
    SEQUENCE,
    SPARSE_TENSOR,
    STATISTICS,
    TENSOR,
    ArrowKind,
    DType,
    Kind,
    MapValue,
    MessageType,
    Node,
    OptionalValue,
    SequenceValue,
    SparseTensorType,
    SparseValue,
    Tensor,
    as_array,
    build_array,
    decode_value,
    describe_type,
    dtype_of_arrow,
    dtype_of_numpy,
    encode_value,
    infer_arrow_type,
    load_json,
    python_value,
    stacked_codes,
    statistics_by_dtype,
    tensor_layout,
    unwrap,
    value_rows,
)
from onnx_arrow.corpus.rows import parse_kind
from onnx_arrow.corpus.sources import CorpusError, graph_values
from onnx_arrow.corpus.store import Store
from onnx_arrow.errors import (
    NotRepresentableError,
    OnnxArrowError,
    OnnxArrowWarning,
    UnsupportedTypeError,
)

__all__ = [
    "ATTRS_KEY",
    "CATALOG_COLUMNS",
    "Cells",
    "OnnxSeriesAccessor",
    "catalog",
    "from_pandas",
    "to_pandas",
]

#: The key of ``Series.attrs`` / ``DataFrame.attrs`` under which :func:`to_pandas`
#: records each column's ONNX kind and Arrow type (by column name).
ATTRS_KEY: Final = "onnx_arrow"

#: What the cells of a column from :func:`to_pandas` are.
Cells = Literal["numpy", "arrow"]

_TENSOR_KIND: Final = Kind(TENSOR)
_OPTIONAL_TENSOR: Final = Kind(OPTIONAL, _TENSOR_KIND)
#: Element rows of the store that are not values of their container: map keys, sparse
#: dims and indices.
_NOT_VALUE_ELEMENT: Final = r"(^|\.)(keys|dims|indices)$"


# --- Arrow columns ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Column:
    """An onnx-arrow Arrow column: as given, its value array, kind and envelopes."""

    array: pa.Array
    values: pa.Array
    kind: Kind
    envelopes: pa.Array | None


def _column(data: pa.Array | pa.ChunkedArray, where: str) -> _Column:
    # checked as every entry point of the core checks Arrow data, then unwrapped
    array = as_array(data, where=where)
    try:
        kind, values, envelopes = unwrap(array)
    except OnnxArrowError as exc:
        raise exc.at(where) if where else exc from None
    return _Column(array, values, kind, envelopes)


def _leaf_dtype(t: pa.DataType) -> DType | None:
    """The dtype of the tensors a column of type ``t`` holds (a map's values, not its keys)."""
    if isinstance(t, MessageType):
        return _leaf_dtype(t.value_type)
    tensor = tensor_layout(t)
    if tensor is not None:
        return dtype_of_arrow(tensor.value_type)
    if isinstance(t, SparseTensorType):
        return _leaf_dtype(t.storage_type.field("values").type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _leaf_dtype(t.value_type)
    if pa.types.is_map(t):
        return _leaf_dtype(t.item_type)
    if pa.types.is_struct(t) and t.num_fields == 1:
        return _leaf_dtype(t.field(0).type)
    return None


def _is_tensor_kind(kind: Kind) -> bool:
    """A tensor, or an optional tensor: a column whose cells are ndarrays or None."""
    return kind in (_TENSOR_KIND, _OPTIONAL_TENSOR)


def _stacked(values: pa.Array, kind: Kind) -> np.ndarray[Any, Any] | None:
    if not _is_tensor_kind(kind) or tensor_layout(values.type) is None:
        return None
    return stacked_codes(values)


# --- numpy cells -----------------------------------------------------------------------


def _freeze(cell: Any) -> None:
    """Make every array in a cell read-only, so that a changed cell is a new object."""
    if isinstance(cell, np.ndarray):
        cell.flags.writeable = False
    elif isinstance(cell, list | tuple):
        for item in cell:
            _freeze(item)
    elif isinstance(cell, dict):
        for item in cell.values():
            _freeze(item)


def _duplicate_keys(node: Node | None) -> bool:
    if isinstance(node, MapValue):
        return len(set(node.keys.tolist())) < len(node.keys) or any(
            _duplicate_keys(v) for v in node.values
        )
    if isinstance(node, SequenceValue):
        return any(_duplicate_keys(v) for v in node.items)
    if isinstance(node, OptionalValue):
        return _duplicate_keys(node.value)
    return False


def _hides_absence(node: Node | None) -> bool:
    """A present optional holding an absent one: its cell is None, like an absent value."""
    if isinstance(node, OptionalValue):
        inner = node.value
        return (isinstance(inner, OptionalValue) and inner.value is None) or _hides_absence(inner)
    if isinstance(node, SequenceValue):
        return any(_hides_absence(v) for v in node.items)
    if isinstance(node, MapValue):
        return any(_hides_absence(v) for v in node.values)
    return False


def _row(labels: pd.Index | None, i: int) -> str:
    """Where row ``i`` is for people: by its label in ``labels`` (``row 3``, ``row 'a'``),
    by its position when there are none."""
    label = i if labels is None else labels[i]
    if isinstance(label, np.generic):
        label = label.item()  # repr 3, not np.int64(3)
    return f"row {label!r}"


def _cells(
    col: _Column, *, warn: bool = True, stacklevel: int = 4, labels: pd.Index | None = None
) -> list[Any]:
    """The numpy cells of a column: ndarrays, lists, dicts (or pairs), None when absent.

    With ``warn``, a present optional holding an absent one (None, like an absent
    value) is reported, at its label in ``labels`` if given.
    """
    stacked = _stacked(col.values, col.kind)
    if stacked is not None:
        stacked.flags.writeable = False
        return [stacked[i, ...] for i in range(len(stacked))]
    nodes = value_rows(col.values, col.kind)
    hidden = next((i for i, n in enumerate(nodes) if _hides_absence(n)), None) if warn else None
    if hidden is not None:
        warnings.warn(
            f"{_row(labels, hidden)}: a present optional holding an absent optional becomes "
            "None in a numpy cell, the same as an absent value; use cells='arrow' to tell "
            "them apart (.onnx.to_arrow() keeps unchanged rows exactly either way)",
            OnnxArrowWarning,
            stacklevel=stacklevel,
        )
    dicts = not any(_duplicate_keys(n) for n in nodes)
    out = [python_value(n, maps_as_dicts=dicts) for n in nodes]
    for cell in out:
        _freeze(cell)
    return out


def _missing(cell: Any) -> bool:
    """None, pd.NA, or the NaN pandas fills an object column with (reindex, shift)."""
    return cell is None or cell is pd.NA or (type(cell) is float and math.isnan(cell))


def _object_series(cells: Sequence[Any], index: pd.Index | None, name: Hashable) -> pd.Series:
    out = np.empty(len(cells), dtype=object)
    for i, cell in enumerate(cells):  # element-wise: equal-shape arrays must not broadcast
        out[i] = cell
    return pd.Series(out, index=index, name=name, dtype=object, copy=False)


class _Same:
    """Compares equal only to a wrapper of the very same object (and keeps it alive)."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def _snapshot(cell: Any) -> Any:
    """The structure of a cell with every leaf by identity: unchanged cells compare equal."""
    if isinstance(cell, list):
        return ("list", tuple(_snapshot(v) for v in cell))
    if isinstance(cell, tuple):
        return ("tuple", tuple(_snapshot(v) for v in cell))
    if isinstance(cell, dict):
        return ("dict", tuple((_Same(k), _snapshot(v)) for k, v in cell.items()))
    return _Same(cell)


# --- column records -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _ColumnInfo:
    """What :func:`to_pandas` knew about a column, kept in ``attrs`` under :data:`ATTRS_KEY`.

    ``source`` is the Arrow column, ``index`` its labels in pandas, ``cells`` the cells
    handed out and ``snapshots`` their structure (for cells that are lists or dicts):
    a row whose label and cell are unchanged goes back to Arrow as its source row,
    exactly.  Copies share the record (pandas deep-copies ``attrs`` on every operation).
    """

    kind: Kind
    arrow_type: pa.DataType | None
    field: pa.Field | None = None
    source: _Column | None = None
    index: pd.Index | None = None
    cells: tuple[Any, ...] = ()
    snapshots: tuple[Any, ...] | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> _ColumnInfo:
        return self

    def __repr__(self) -> str:  # not the source column and every cell: printing attrs
        return (
            f"_ColumnInfo(kind={self.kind}, arrow_type={self.arrow_type}, rows={len(self.cells)})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled: the type as an IPC schema (never a pickled Arrow object); rows are
        # rebuilt from their cells after unpickling
        fields = [self.field or pa.field("", pa.null())]
        if self.arrow_type is not None:
            fields.append(pa.field("type", self.arrow_type))
        schema = pa.schema(fields).serialize().to_pybytes()
        return _restore_info, (json.dumps(self.kind.to_json()), schema)

    def positions(self, index: pd.Index) -> np.ndarray[Any, Any]:
        """The source row of each label of ``index`` (-1 where there is none)."""
        if self.source is None or self.index is None or not self.index.is_unique:
            return np.full(len(index), -1, dtype=np.intp)
        return np.asarray(self.index.get_indexer(index), dtype=np.intp)

    def unchanged(self, position: int, cell: Any) -> bool:
        """Whether ``cell`` is the cell handed out for source row ``position``, as it was."""
        if position < 0 or cell is not self.cells[position]:
            return False
        return self.snapshots is None or _snapshot(cell) == self.snapshots[position]


def _restore_info(kind: str, schema: bytes) -> _ColumnInfo:
    fields = pa.ipc.read_schema(pa.py_buffer(schema))
    field = fields.field(0)
    return _ColumnInfo(
        Kind.from_json(load_json(kind, what="the column's kind", where=None, error=ValueError)),
        fields.field(1).type if len(fields) > 1 else None,
        None if pa.types.is_null(field.type) else field,
    )


def _record(obj: pd.Series | pd.DataFrame, infos: Mapping[Hashable, _ColumnInfo]) -> None:
    obj.attrs[ATTRS_KEY] = dict(infos)


def _info_of(series: pd.Series) -> _ColumnInfo | None:
    infos = series.attrs.get(ATTRS_KEY)
    if not isinstance(infos, dict):
        return None
    info = infos.get(series.name)
    if info is None and len(infos) == 1:
        (info,) = infos.values()
    return info if isinstance(info, _ColumnInfo) else None


# --- to_pandas / from_pandas -----------------------------------------------------------


def _as_arrow(data: Any) -> pa.Table | pa.Array | pa.ChunkedArray:
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.Table | pa.Array | pa.ChunkedArray):
        return data
    try:
        if hasattr(data, "__arrow_c_array__"):
            return pa.array(data)
        if hasattr(data, "__arrow_c_stream__"):
            return pa.table(data)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise UnsupportedTypeError(
            f"cannot read a {type(data).__name__} through the Arrow PyCapsule interface "
            f"({exc}); pass pa.chunked_array(obj) for a column"
        ) from None
    raise UnsupportedTypeError(
        f"expected an onnx-arrow Arrow array, chunked array or table, got "
        f"{type(data).__name__}; convert ONNX messages with onnx_arrow.to_arrow first"
    )


def _series(
    data: pa.Array | pa.ChunkedArray, cells: Cells, name: Hashable, field: pa.Field | None
) -> tuple[pd.Series, _ColumnInfo]:
    where = f"column {name!r}" if name is not None else ""
    if cells == "arrow":
        kind = _column(data, where).kind  # checked before pandas holds it
        chunked = data if isinstance(data, pa.ChunkedArray) else pa.chunked_array([data])
        series = pd.Series(pd.arrays.ArrowExtensionArray(chunked), name=name, copy=False)
        return series, _ColumnInfo(kind, chunked.type, field)
    col = _column(data, where)
    values = _cells(col)
    series = _object_series(values, None, name)
    snapshots = None if _is_tensor_kind(col.kind) else tuple(_snapshot(c) for c in values)
    info = _ColumnInfo(col.kind, col.array.type, field, col, series.index, tuple(values), snapshots)
    return series, info


def to_pandas(data: Any, *, cells: Cells = "arrow") -> pd.Series | pd.DataFrame:
    """An onnx-arrow Arrow column as a pandas Series, a table as a DataFrame.

    Parameters
    ----------
    data
        An ``onnx.message`` array (from :func:`onnx_arrow.to_arrow`), a value column
        (a tensor array, a list of tensors ...) or a chunked array of one: a Series.
        A ``pa.Table`` or ``pa.RecordBatch`` of such columns (for example
        :meth:`onnx_arrow.corpus.Store.case_table`): a DataFrame.  Other objects are
        read through the Arrow PyCapsule interface (``__arrow_c_array__``: a column,
        ``__arrow_c_stream__``: a table).
    cells
        ``"arrow"`` (the default): a ``pd.ArrowDtype`` column over the Arrow array as it
        is (zero-copy, exact): it carries every message through ``pd.concat``, pickling,
        ``DataFrame({...})`` and renames, and the ``onnx`` accessor reads it.
        ``"numpy"``: an object column whose cells are ndarrays of the value's shape and
        ONNX numpy dtype (``bool`` for BOOL, ``bytes`` objects for STRING, invalid UTF-8
        kept, ml_dtypes for bfloat16, float8, int4 ...), lists for sequences, dicts for
        maps, ``{"dims", "values", "indices"}`` for sparse tensors and None where an
        optional is absent.  Fixed-shape tensors are views of one stacked array, itself
        a view of the Arrow buffer where the dtype allows.  Cells are read-only: put a
        new array in a cell to change it.  What only the Arrow column holds (names, doc
        strings, how each message stored its data) is kept in ``attrs``, which pandas
        drops in ``pd.concat``, pickling and ``DataFrame({...})``: going back without it
        warns (see ``.onnx.to_arrow``).

    Returns
    -------
    pandas.Series or pandas.DataFrame
        Columns named as the table's fields, a ``RangeIndex``.  ``attrs`` (under
        :data:`ATTRS_KEY`) records each column's kind and Arrow type, so that
        ``.onnx.to_arrow()`` and :func:`from_pandas` give the same Arrow type back.

    Notes
    -----
    A map is a dict ``{key: value}`` (int keys, ``bytes`` keys for STRING) when every
    map of the column has distinct keys; if any map repeats a key, every map of the
    column is a list of ``(key, value)`` pairs instead, in order, so nothing is dropped
    and a column keeps one form.  A present optional holding an absent optional is None,
    like an absent value (a warning says so; ``cells="arrow"`` keeps them apart).

    Examples
    --------
    >>> import numpy as np, ml_dtypes, onnx_arrow
    >>> from onnx import numpy_helper
    >>> t = numpy_helper.from_array(np.arange(4, dtype=ml_dtypes.bfloat16).reshape(2, 2))
    >>> cell = to_pandas(onnx_arrow.to_arrow([t]), cells="numpy")[0]
    >>> cell.shape, cell.dtype
    ((2, 2), dtype(bfloat16))
    >>> opt = [numpy_helper.from_optional(None, "o", dtype=1),
    ...        numpy_helper.from_optional(np.ones(2, np.float32), "o")]
    >>> to_pandas(onnx_arrow.to_arrow(opt), cells="numpy").tolist()
    [None, array([1., 1.], dtype=float32)]
    >>> to_pandas(onnx_arrow.to_arrow([t])).dtype.pyarrow_dtype.extension_name
    'onnx.fixed_shape_tensor'
    """
    if cells not in ("numpy", "arrow"):
        raise ValueError(f"cells must be 'numpy' or 'arrow', got {cells!r}")
    arrow = _as_arrow(data)
    if isinstance(arrow, pa.Table):
        names = arrow.column_names
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise UnsupportedTypeError(
                f"the table repeats column names {repeated}; rename them so that each "
                "column keeps its own record"
            )
        columns = [
            _series(arrow.column(i), cells, name, arrow.schema.field(i))
            for i, name in enumerate(names)
        ]
        frame = pd.concat([s for s, _ in columns], axis=1) if columns else pd.DataFrame()
        frame.columns = pd.Index(names, dtype=object)
        frame.attrs = {}
        _record(frame, {name: info for name, (_, info) in zip(names, columns, strict=True)})
        return frame
    series, info = _series(arrow, cells, None, None)
    _record(series, {None: info})
    return series


def from_pandas(data: pd.Series | pd.DataFrame) -> pa.Array | pa.Table:
    """The Arrow array of a Series, the Arrow table of a DataFrame: :func:`to_pandas` undone.

    Each column goes through ``.onnx.to_arrow()``: rows that are as :func:`to_pandas`
    gave them come back exactly (their ``onnx.message`` envelopes, names included);
    changed and new rows are rebuilt from their cells.  Field names are the column
    names; field metadata (``io`` and ``index`` of a case table) is kept.

    Examples
    --------
    >>> import numpy as np, onnx_arrow
    >>> from onnx import numpy_helper
    >>> arr = onnx_arrow.to_arrow([numpy_helper.from_array(np.eye(2, dtype=np.int64), "e")])
    >>> frame = to_pandas(pa.table({"e": arr}))
    >>> from_pandas(frame).column("e").chunk(0).equals(arr)
    True
    """
    if isinstance(data, pd.Series):
        return data.onnx.to_arrow()
    if not isinstance(data, pd.DataFrame):
        raise UnsupportedTypeError(
            f"expected a pandas Series or DataFrame, got {type(data).__name__}"
        )
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    for i, name in enumerate(data.columns):
        series = data.iloc[:, i]
        try:
            array = series.onnx.to_arrow()
        except OnnxArrowError as exc:
            raise exc.at(f"column {name!r}") from None
        info = _info_of(series)
        field = (
            info.field if info is not None and info.field is not None else pa.field("", pa.null())
        )
        arrays.append(array)
        fields.append(field.with_name(str(name)).with_type(array.type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


# --- cells to values -------------------------------------------------------------------


def _tensor(cell: Any, where: str) -> Tensor:
    if not isinstance(cell, np.ndarray | np.generic):
        raise UnsupportedTypeError(
            f"expected a numpy array, got {type(cell).__name__}; give tensors as ndarrays "
            "of their ONNX dtype (np.asarray(value, dtype=...))",
            where=where,
        )
    if isinstance(cell, np.ma.MaskedArray):
        raise UnsupportedTypeError(
            "a masked array: an ONNX tensor has no mask, so its masked elements would be "
            "stored as data; fill them first (cell.filled(value)), or make the cell None",
            where=where,
        )
    array = np.asarray(cell)
    try:
        row = dtype_of_numpy(array.dtype)
    except OnnxArrowError as exc:
        raise exc.at(where) from None
    if array.size > MAX_ELEMENTS:
        # a broadcast view holds few bytes but would be copied whole
        raise NotRepresentableError(
            f"shape {list(array.shape)} holds {array.size} elements, more than the "
            f"{MAX_ELEMENTS} a tensor may hold",
            where=where,
        )
    dims = tuple(int(d) for d in array.shape)
    if row.arrow_kind is ArrowKind.BINARY:
        codes = np.empty(array.size, dtype=object)
        codes[:] = [_as_bytes(v, where) for v in array.reshape(-1).tolist()]
        return Tensor(row, dims, codes)
    try:
        flat = np.ascontiguousarray(array).reshape(-1)
    except MemoryError:
        raise NotRepresentableError(
            f"shape {list(array.shape)} needs {array.size * array.itemsize} bytes as one "
            "tensor, more than can be allocated here",
            where=where,
        ) from None
    if flat.dtype != row.numpy:
        flat = flat.astype(row.numpy)  # byte order only: dtype_of_numpy matched the kind
    return Tensor(row, dims, flat)


def _as_bytes(value: Any, where: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise UnsupportedTypeError(
        f"a STRING element is a {type(value).__name__}; expected bytes or str", where=where
    )


def _node(cell: Any, kind: Kind, where: str) -> Node | None:
    """The value of a numpy cell of ``kind`` (the inverse of ``python_value``)."""
    if kind.name == OPTIONAL:
        if _missing(cell) or kind.elem is None:
            if not _missing(cell):
                raise UnsupportedTypeError("holds a value but the column holds none", where=where)
            return OptionalValue(None)
        return OptionalValue(_node(cell, kind.elem, where))
    if _missing(cell):
        return None
    if kind.name == TENSOR:
        return _tensor(cell, where)
    if kind.name == SEQUENCE:
        if not isinstance(cell, list | tuple):
            raise UnsupportedTypeError(
                f"expected a list for a sequence, got {type(cell).__name__}", where=where
            )
        if cell and kind.elem is None:
            raise UnsupportedTypeError("holds elements but the column holds none", where=where)
        elem = kind.elem or _TENSOR_KIND
        return SequenceValue([_element(v, elem, f"{where}[{i}]") for i, v in enumerate(cell)])
    if kind.name == MAP:
        return _map(cell, kind, where)
    if kind.name == SPARSE_TENSOR:
        if not isinstance(cell, dict) or set(cell) != {"dims", "values", "indices"}:
            raise UnsupportedTypeError(
                "expected a dict with dims, values and indices for a sparse tensor", where=where
            )
        return SparseValue(
            tuple(int(d) for d in cell["dims"]),
            _tensor(cell["values"], f"{where}.values"),
            _tensor(cell["indices"], f"{where}.indices"),
        )
    raise UnsupportedTypeError(f"unknown value kind {kind}", where=where)  # pragma: no cover


def _element(cell: Any, kind: Kind, where: str) -> Node | None:
    node = _node(cell, kind, where)
    if node is None:
        raise NotRepresentableError(
            f"an element is absent, but the elements are {kind}, not optional", where=where
        )
    return node


def _map(cell: Any, kind: Kind, where: str) -> MapValue:
    if isinstance(cell, dict):
        pairs = list(cell.items())
    elif isinstance(cell, list | tuple) and all(
        isinstance(p, tuple | list) and len(p) == 2 for p in cell
    ):
        pairs = [(k, v) for k, v in cell]
    else:
        raise UnsupportedTypeError(
            f"expected a dict or a list of (key, value) pairs for a map, got {type(cell).__name__}",
            where=where,
        )
    if kind.key is None:
        if pairs:
            raise UnsupportedTypeError("holds entries but the column holds none", where=where)
        return MapValue(dtype_of_numpy(np.int64), np.empty(0, np.int64), [])
    key = kind.key
    if key.arrow_kind is ArrowKind.BINARY:
        keys = np.empty(len(pairs), dtype=object)
        keys[:] = [_as_bytes(k, f"{where}: keys") for k, _ in pairs]
    else:
        info = np.iinfo(key.numpy)  # type: ignore[type-var]
        try:
            ints = [operator.index(k) for k, _ in pairs]  # Python ints: no int64 on the way
            if any(not info.min <= k <= info.max for k in ints):
                raise OverflowError
            keys = np.array(ints, dtype=key.numpy)
        except (OverflowError, TypeError):
            raise NotRepresentableError(
                f"map keys {[k for k, _ in pairs][:5]} are not all {key.name} values",
                where=f"{where}: keys",
            ) from None
    elem = kind.elem or _TENSOR_KIND
    values = [_element(v, elem, f"{where}[{k!r}]") for k, v in pairs]
    return MapValue(key, keys, values)


def _kind_of_cells(cells: Sequence[Any], labels: pd.Index, where: str) -> Kind:
    """A column with no record: ndarray cells make a tensor column, with None an optional one."""
    for i, cell in enumerate(cells):
        if not _missing(cell) and not isinstance(cell, np.ndarray | np.generic):
            raise UnsupportedTypeError(
                f"{_row(labels, i)} holds a {type(cell).__name__} and the Series has no onnx-arrow "
                "record (attrs); only columns of ndarrays can be read without one. Build the "
                "column with onnx_arrow.pandas.to_pandas",
                where=where or None,
            )
    return _OPTIONAL_TENSOR if any(_missing(c) for c in cells) else _TENSOR_KIND


def _rebuild(cells: list[Any], labels: pd.Index, info: _ColumnInfo | None, kind: Kind) -> pa.Array:
    """The Arrow column of a numpy-cells Series (its cells and index): unchanged rows
    exactly, others from cells."""
    source = info.source if info is not None else None
    positions = (
        info.positions(labels) if info is not None else np.full(len(cells), -1, dtype=np.intp)
    )
    unchanged = [
        info is not None and info.unchanged(int(p), c)
        for p, c in zip(positions, cells, strict=True)
    ]
    if source is not None and all(unchanged):
        if len(positions) == len(source.array) and np.array_equal(
            positions, np.arange(len(positions))
        ):
            return source.array
        return source.array.take(pa.array(positions, pa.int64()))
    kept = positions[np.array(unchanged, dtype=bool)] if unchanged else positions[:0]
    from_source = iter(
        value_rows(source.values.take(pa.array(kept, pa.int64())), kind)
        if source is not None and len(kept)
        else []
    )
    nodes = [
        next(from_source) if same else _node(cell, kind, _row(labels, i))
        for i, (same, cell) in enumerate(zip(unchanged, cells, strict=True))
    ]
    declared = info.arrow_type if info is not None else None
    message = declared is None or isinstance(declared, MessageType)
    value_type = declared.value_type if isinstance(declared, MessageType) else declared
    values = None
    if value_type is not None:
        try:
            values = build_array(nodes, kind, value_type)
        except OnnxArrowError as exc:
            # the cells no longer fit the column's layout (a new shape, another dtype)
            values = build_array(nodes, kind, infer_arrow_type(nodes, kind))
            warnings.warn(
                f"the changed cells no longer fit the column's type "
                f"{describe_type(value_type)} ({exc}); it becomes "
                f"{describe_type(values.type)}",
                OnnxArrowWarning,
                stacklevel=4,
            )
    if values is None:
        values = build_array(nodes, kind, infer_arrow_type(nodes, kind))
    if not message:
        return values
    envelopes: list[bytes] = []
    old_envelopes = _source_envelopes(source, positions)
    for i, (same, node, old) in enumerate(zip(unchanged, nodes, old_envelopes, strict=True)):
        if same and old is not None:
            envelopes.append(old)
            continue
        envelopes.append(_envelope(node, kind, old, _row(labels, i)))
    storage = pa.StructArray.from_arrays(
        [values, pa.array(envelopes, pa.binary())], names=["value", "envelope"]
    )
    return pa.ExtensionArray.from_storage(MessageType(values.type, kind.to_json()), storage)


def _source_envelopes(source: _Column | None, positions: np.ndarray[Any, Any]) -> list[Any]:
    """The envelope of each row's source row (None for a row with none), converted to
    Python in one go: only the rows asked for, however long the source."""
    if source is None or source.envelopes is None:
        return [None] * len(positions)
    rows = pa.array(positions, pa.int64(), mask=positions < 0)  # a null takes a null
    return list(source.envelopes.take(rows).to_pylist())


def _envelope(node: Node | None, kind: Kind, old: bytes | None, where: str) -> bytes:
    """The envelope of a changed row: its old one (name, doc string) if it still fits."""
    try:
        data = encode_value(node, kind, old, where=where)
    except OnnxArrowError:
        if old is None:
            raise
        data = encode_value(node, kind, None, where=where)
    return decode_value(data, kind.name, where=where)[1]


# --- statistics --------------------------------------------------------------------------


def _leaf_arrays(cell: Any, kind: Kind | None) -> list[np.ndarray[Any, Any]] | None:
    """The value tensors of a cell (not map keys, sparse dims or indices); None if absent."""
    if _missing(cell) or kind is None:
        return None
    if kind.name == OPTIONAL:
        return _leaf_arrays(cell, kind.elem)
    if kind.name == TENSOR:
        return [np.asarray(cell)]
    if kind.name == SPARSE_TENSOR:
        return [np.asarray(cell["values"])]
    if kind.name == SEQUENCE:
        items: Iterable[Any] = cell
    elif isinstance(cell, dict):
        items = cell.values()
    else:
        items = [v for _, v in cell]
    out: list[np.ndarray[Any, Any]] = []
    for item in items:
        out.extend(_leaf_arrays(item, kind.elem) or [])
    return out


_STATS_COLUMNS: Final = ("count", *STATISTICS)


def _cell_statistics(
    cells: list[list[np.ndarray[Any, Any]] | None], labels: pd.Index, where: str
) -> dict[str, list[Any]]:
    """Per cell (its value tensors, None if absent): the count and, over all its tensors
    together, the statistics the store computes per tensor, each cell by its own dtype;
    None where undefined."""
    columns: dict[str, list[Any]] = {name: [None] * len(cells) for name in _STATS_COLUMNS}
    held: list[int] = []
    dtypes: list[DType] = []
    for i, arrays in enumerate(cells):
        if arrays is None:
            continue
        columns["count"][i] = sum(int(a.size) for a in arrays)
        if arrays:
            try:
                dtypes.append(dtype_of_numpy(arrays[0].dtype))
            except OnnxArrowError as exc:
                raise exc.at(f"{where}: {_row(labels, i)}" if where else _row(labels, i)) from None
            held.append(i)
    flat = [np.concatenate([a.reshape(-1) for a in cells[i] or ()]) for i in held]
    for name, stat in statistics_by_dtype(dtypes, flat).items():
        column = columns[name]
        for i, value, defined in zip(held, stat.values.tolist(), stat.defined, strict=True):
            if defined:
                column[i] = value
    for i in held:  # every element NaN: min, max and mean are NaN, as the HTML view says
        nan = columns["nan_count"][i]
        if nan and nan == columns["count"][i]:
            for name in ("min", "max", "mean"):
                columns[name][i] = float("nan")
    return columns


def _float32(cell: Any) -> Any:
    if isinstance(cell, np.ndarray):
        if cell.dtype in _DECODED_DTYPES:
            out = cell.astype(np.float32)
            out.flags.writeable = False
            return out
        return cell
    if isinstance(cell, list):
        return [_float32(v) for v in cell]
    if isinstance(cell, tuple):
        return tuple(_float32(v) for v in cell)
    if isinstance(cell, dict):
        return {k: (_float32(v) if k != "indices" else v) for k, v in cell.items()}
    return cell


#: The dtypes ``.onnx.to_float32()`` decodes: FLOAT16 and those float32 holds exactly.
_DECODED_DTYPES: Final = frozenset(
    [np.dtype(np.float16)]
    + [row.numpy for row in DTYPES.values() if row.arrow_kind in DECODED_FLOATS]
)


# --- the accessor ------------------------------------------------------------------------


@pd.api.extensions.register_series_accessor("onnx")
class OnnxSeriesAccessor:
    """``series.onnx``: ONNX values in a pandas column, as :func:`to_pandas` makes them.

    Works on both kinds of columns: numpy cells (object dtype) and ``pd.ArrowDtype``
    columns of onnx-arrow Arrow types.  A Series of ndarrays built by hand works too
    (a tensor column; None cells make it optional).

    Examples
    --------
    >>> import numpy as np, onnx_arrow
    >>> from onnx import numpy_helper
    >>> ts = [numpy_helper.from_array(np.array([[1, np.nan, np.inf]], np.float32)),
    ...       numpy_helper.from_array(np.array([[1, 2, 3]], np.float32))]
    >>> s = to_pandas(onnx_arrow.to_arrow(ts), cells="arrow")
    >>> s.onnx.shape.tolist(), s.onnx.dtype
    ([(1, 3), (1, 3)], 'FLOAT')
    >>> s.onnx.stats()
       count  min  max  mean  nan_count  inf_count
    0      3  1.0  inf   inf          1          1
    1      3  1.0  3.0   2.0          0          0
    >>> s.onnx.to_numpy().shape
    (2, 1, 3)
    """

    def __init__(self, series: pd.Series) -> None:
        self._obj = series

    # the column, in one of its forms

    def _arrow(self) -> _Column | None:
        """The Arrow column behind a ``pd.ArrowDtype`` Series, else None.

        Built anew on each call (the Series may have changed since the last): each public
        method calls it once and hands it down.
        """
        if not isinstance(self._obj.dtype, pd.ArrowDtype):
            return None
        chunked = self._obj.array.__arrow_array__()
        return _column(chunked, self._where)

    @property
    def _where(self) -> str:
        return f"column {self._obj.name!r}" if self._obj.name is not None else ""

    def _info(self) -> _ColumnInfo | None:
        return _info_of(self._obj)

    def _kind_and_cells(self, col: _Column | None, *, warn: bool = False) -> tuple[Kind, list[Any]]:
        """The kind and cells of the column; ``col`` is :meth:`_arrow`'s column."""
        if col is not None:
            return col.kind, _cells(col, warn=warn, labels=self._obj.index)
        if self._obj.dtype != object:
            raise UnsupportedTypeError(
                f"a {self._obj.dtype} Series holds no ONNX values; build the column with "
                "onnx_arrow.pandas.to_pandas",
                where=self._where or None,
            )
        cells = list(self._obj.to_numpy(dtype=object))
        info = self._info()
        if info is not None:
            return info.kind, cells
        return _kind_of_cells(cells, self._obj.index, self._where), cells

    # public API

    def to_arrow(self, *, rebuild: bool = False) -> pa.Array:
        """The column as an Arrow array, of the type it came from.

        For a ``pd.ArrowDtype`` column, its Arrow array as it is (chunks combined).  For
        numpy cells, rows that :func:`to_pandas` gave and that are unchanged (same label,
        same cell object) come back exactly, ``onnx.message`` envelopes and all; changed
        or new rows are built from their cells, as ``onnx.numpy_helper`` stores data (a
        changed row keeps its name when its old envelope still fits).

        A numpy column with no record from :func:`to_pandas` (built by hand, or one
        whose ``attrs`` pandas dropped: ``pd.concat``, pickling, ``DataFrame({...})``)
        is built from its cells alone, without names or doc strings: that warns
        (:class:`~onnx_arrow.OnnxArrowWarning`) unless ``rebuild=True`` says it is meant.
        So does a column whose changed cells no longer fit its Arrow type, which is then
        chosen from the cells.
        """
        col = self._arrow()
        if col is not None:
            return col.array
        kind, cells = self._kind_and_cells(None)
        info = self._info()
        if info is None and not rebuild:
            warnings.warn(
                f"{self._where or 'the Series'} has no onnx-arrow record (pandas drops attrs "
                "in pd.concat, pickling and DataFrame({...})): it is built from its cells "
                "alone, without the names and doc strings of its messages; use "
                "to_pandas(cells='arrow') to keep them, or .onnx.to_arrow(rebuild=True) "
                "to build from cells on purpose",
                OnnxArrowWarning,
                stacklevel=2,
            )
        try:
            return _rebuild(cells, self._obj.index, info, kind)
        except OnnxArrowError as exc:
            raise exc.at(self._where) if self._where else exc from None

    def to_numpy(self) -> Any:
        """The values: one stacked array ``(rows, *shape)`` when they can be, else a list.

        Stacked when every row is a tensor (none absent) and all share shape and dtype:
        zero-copy for a fixed-shape column of a dtype Arrow holds natively (a view of
        the Arrow buffer), for numpy cells as well as long as their rows are the
        :func:`to_pandas` rows in order.  Otherwise a list of the cells (see
        :func:`to_pandas`).
        """
        col = self._arrow()
        if col is not None:
            stacked = _stacked(col.values, col.kind)
            if stacked is not None:
                return stacked
            cells = _cells(col, stacklevel=3, labels=self._obj.index)
        else:
            fast = self._stacked_source()
            if fast is not None:
                return fast
            _, cells = self._kind_and_cells(None)
        return _stack(cells)

    def _stacked_source(self) -> np.ndarray[Any, Any] | None:
        """Numpy cells that are a run of their source rows: the source's stacked buffer."""
        info = self._info()
        if self._obj.dtype != object or info is None or info.source is None:
            return None
        if not _is_tensor_kind(info.kind):
            return None
        positions = info.positions(self._obj.index)
        n = len(positions)
        start = int(positions[0]) if n else 0
        if start < 0 or np.any(np.diff(positions) != 1):
            return None
        cells = self._obj.to_numpy(dtype=object)
        if not all(info.unchanged(int(p), c) for p, c in zip(positions, cells, strict=True)):
            return None
        return _stacked(info.source.values.slice(start, n), info.kind)

    @property
    def shape(self) -> pd.Series:
        """The shape of each row as a tuple (None where absent), as an object Series.

        Tensor and sparse tensor columns (the dense shape), optional ones included; a
        column of sequences or maps has no shape per row and raises.
        """
        col = self._arrow()
        info = self._info()
        cells: list[Any] | None = None
        if col is not None:
            kind = col.kind
        elif info is not None:
            kind = info.kind
        else:
            kind, cells = self._kind_and_cells(None)
        base = _shape_base(kind, self._where)
        shapes: list[tuple[int, ...] | None]
        if col is not None and base == _TENSOR_KIND and tensor_layout(col.values.type):
            shapes = _arrow_shapes(col.values)
        else:
            if cells is None:
                _, cells = self._kind_and_cells(col)
            shapes = [
                None
                if _missing(c)
                else tuple(int(d) for d in (c["dims"] if isinstance(c, dict) else c.shape))
                for c in cells
            ]
        return _object_series(shapes, self._obj.index, self._obj.name)

    @property
    def dtype(self) -> str | None:
        """The ONNX data type name of the column's tensors (``"FLOAT"``, ``"BFLOAT16"``...).

        For sequences, maps and optionals, the dtype of the tensors inside (a map's
        values, not its keys); None for a column with no tensor anywhere.
        """
        col = self._arrow()
        if col is not None:
            row = _leaf_dtype(col.values.type)
            return None if row is None else row.name
        kind, cells = self._kind_and_cells(None)
        for cell in cells:
            arrays = _leaf_arrays(cell, kind)
            if arrays:
                return dtype_of_numpy(arrays[0].dtype).name
        info = self._info()
        row = _leaf_dtype(info.arrow_type) if info is not None and info.arrow_type else None
        return None if row is None else row.name

    def stats(self) -> pd.DataFrame:
        """Per-row statistics: ``count``, ``min``, ``max``, ``mean``, ``nan_count``, ``inf_count``.

        As the corpus store computes them: min, max and mean ignore NaN (and are NaN
        when every element is NaN, as the HTML view shows them); NaN and Inf counts for
        float dtypes only; STRING and complex rows have a count only.  A sequence or map
        row counts all the tensors in it (map values only).  Absent rows and empty
        tensors have no statistics (null, ``<NA>``); the columns are nullable (``Int64``,
        ``Float64``), so a NaN there is an element's, never a missing number.
        """
        kind, cells = self._kind_and_cells(self._arrow())
        columns = _cell_statistics(
            [_leaf_arrays(c, kind) for c in cells], self._obj.index, self._where
        )
        data = {
            name: (
                pd.array(values, dtype="Int64")
                if name in _INT_STATS
                else FloatingArray(
                    np.array([np.nan if v is None else v for v in values], dtype=np.float64),
                    np.array([v is None for v in values], dtype=bool),
                )
            )
            for name, values in columns.items()
        }
        return pd.DataFrame(data, index=self._obj.index)

    def to_float32(self) -> pd.Series:
        """The column with FLOAT16, BFLOAT16, float8, float6 and float4 tensors as float32.

        Exact: float32 holds every value of those dtypes.  Other dtypes are left as they
        are.  Gives a Series of numpy cells (same index and name); its ``.onnx.to_arrow()``
        is a FLOAT column.
        """
        kind, cells = self._kind_and_cells(self._arrow(), warn=True)
        out = [_float32(c) for c in cells]
        series = _object_series(out, self._obj.index, self._obj.name)
        info = self._info()
        field = info.field if info is not None else None
        _record(series, {self._obj.name: _ColumnInfo(kind, None, field)})
        return series


_INT_STATS: Final = frozenset({"count", "nan_count", "inf_count"})


def _shape_base(kind: Kind, where: str) -> Kind | None:
    """The kind whose rows have a shape (an optional's element); an error for others."""
    base = kind.elem if kind.name == OPTIONAL else kind
    if base is not None and base.name not in (TENSOR, SPARSE_TENSOR):
        raise UnsupportedTypeError(
            f"a {kind} column has no shape per row; use .onnx.to_numpy() and the shapes "
            "of its elements",
            where=where or None,
        )
    return base


def _arrow_shapes(values: pa.Array) -> list[tuple[int, ...] | None]:
    """Row shapes of a tensor array, read from its layout without touching the data."""
    valid = (
        [True] * len(values)
        if values.null_count == 0
        else np.asarray(values.is_valid(), dtype=bool).tolist()
    )
    layout = tensor_layout(values.type)
    if layout is not None and layout.layout == "fixed":
        shape = tuple(int(d) for d in values.type.shape)
        return [shape if v else None for v in valid]
    dims = values.storage.field("shape").to_pylist()
    return [
        tuple(int(d) for d in s) if v and s is not None else None
        for v, s in zip(valid, dims, strict=True)
    ]


def _stack(cells: list[Any]) -> Any:
    if cells and all(isinstance(c, np.ndarray) for c in cells):
        first = cells[0]
        if all(c.shape == first.shape and c.dtype == first.dtype for c in cells):
            return np.stack(cells)
    return cells


# --- the catalog -------------------------------------------------------------------------

#: The store columns the catalog reads: never the data columns, envelopes or contents.
_CATALOG_READ: Final = (
    "test_case", "path", "kind", "role", "data_set", "io", "index", "element", "name",
    "onnx_type", "value_kind", "dtype", "shape", "count", "nbytes", "min", "max", "mean",
    "nan_count", "inf_count",
)  # fmt: skip

#: The catalog's columns, in order.
CATALOG_COLUMNS: Final = (
    "case", "path", "kind", "data_set", "io", "index", "name", "declared_name", "onnx_type",
    "value_kind",
    "dtype", "shape", "tensors", "count", "nbytes", "min", "max", "mean", "nan_count",
    "inf_count", "op_types", "opset",
)  # fmt: skip

_PANDAS_TYPES: Final = {
    pa.string(): pd.StringDtype("pyarrow"),
    pa.int32(): pd.Int32Dtype(),
    pa.int64(): pd.Int64Dtype(),
    pa.float64(): pd.Float64Dtype(),
}


def _frame(table: pa.Table) -> pd.DataFrame:
    """Store rows as a DataFrame: nullable columns, shapes as tuples."""
    shapes = [None if s is None else tuple(s) for s in table.column("shape").to_pylist()]
    frame = table.drop_columns(["shape"]).to_pandas(types_mapper=_PANDAS_TYPES.get)
    frame["shape"] = pd.Series(shapes, index=frame.index, dtype=object)
    return frame


def _kind_names(values: pd.DataFrame, store: Store) -> pd.Series:
    """Each value row's kind by name (``tensor``, ``sequence`` ...), missing where the
    store has none.

    Each distinct ``value_kind`` is parsed once; one that is not a value kind is an
    error naming the store and the first file that has it, never a row quietly taken
    for something else.
    """
    firsts = values.dropna(subset=["value_kind"]).drop_duplicates("value_kind")
    names = {
        text: parse_kind(text, f"{store.path}: {path}").name
        for text, path in zip(firsts["value_kind"], firsts["path"], strict=True)
    }
    return values["value_kind"].map(names).astype(pd.StringDtype("pyarrow"))


def _container_totals(elements: pd.DataFrame) -> pd.DataFrame:
    """Per value path: the first tensor's dtype and shape, tensors, count, combined stats."""
    has_mean = elements["mean"].notna()
    weight = (elements["count"] - elements["nan_count"].fillna(0)).where(has_mean, 0)
    parts = pd.DataFrame(
        {
            "path": elements["path"],
            "dtype": elements["dtype"],
            "shape": elements["shape"],
            "count": elements["count"],
            "min": elements["min"],
            "max": elements["max"],
            "weight": weight,
            "weighted": (elements["mean"] * weight).where(has_mean, 0.0),
            "nan_count": elements["nan_count"],
            "inf_count": elements["inf_count"],
        }
    )
    groups = parts.groupby("path", sort=False)
    weights = groups["weight"].sum()
    return pd.DataFrame(
        {
            "dtype": groups["dtype"].first(),
            "shape": groups["shape"].first(),
            "tensors": groups.size().astype("Int64"),
            "count": groups["count"].sum(),
            "min": groups["min"].min(),
            "max": groups["max"].max(),
            "mean": (groups["weighted"].sum() / weights.astype("Float64")).where(weights > 0),
            "nan_count": groups["nan_count"].sum(min_count=1),
            "inf_count": groups["inf_count"].sum(min_count=1),
        }
    )


_ModelFacts = tuple[tuple[str, ...], int | None, dict[tuple[str, int], str]]


def _models(store: Store) -> dict[str, _ModelFacts]:
    """Per case, the sorted distinct op types of its graph, its default-domain opset and
    the graph names of the values its data sets feed and expect, by ``(io, index)``."""
    out: dict[str, _ModelFacts] = {}
    for path, rows in store.model_batches():
        cases = rows.column("test_case").to_pylist()
        paths = rows.column("path").to_pylist()
        contents = rows.column("content")
        for i, case in enumerate(cases):
            if case in out:
                continue
            try:
                model = ModelProto.FromString(contents[i].as_py() or b"")
            except Exception as exc:  # protobuf's DecodeError
                raise CorpusError(
                    f"the model does not parse ({exc})", where=f"{path}: {paths[i]}"
                ) from None
            ops = op_types(model)
            opset = next(
                (int(o.version) for o in model.opset_import if o.domain in ("", "ai.onnx")), None
            )
            names = {
                (io, k): info.name
                for io in ("input", "output")
                for k, info in enumerate(graph_values(model, io))
            }
            out[case] = (ops, opset, names)
    return out


def catalog(store: Store | str | os.PathLike[str]) -> pd.DataFrame:
    """One row per value of a corpus store: where it is, what it is, how big, what is in it.

    Reads only the store's descriptive columns (never the data columns) and each case's
    model once.

    Parameters
    ----------
    store
        A :class:`onnx_arrow.corpus.Store` or the path of one.

    Returns
    -------
    pandas.DataFrame
        Columns (see :data:`CATALOG_COLUMNS`): ``case``, ``path``, ``kind`` (the kind
        folder), ``data_set``, ``io`` (input or output), ``index``, ``name`` (the name
        in the ``.pb`` message, often missing), ``declared_name`` (the graph input's or
        output's name in the model, as :meth:`Store.case_arrays` keys values),
        ``onnx_type`` (``tensor(float)``, ``seq(tensor(int64))`` ...), ``value_kind``
        (``tensor``, ``sequence``, ``map``, ``optional``, ``sparse_tensor``), ``dtype``,
        ``shape`` (a tuple), ``tensors`` (how many tensors the value holds), ``count``
        (elements), ``nbytes`` (of the file), ``min``, ``max``, ``mean`` (NaN ignored),
        ``nan_count``, ``inf_count``, ``op_types`` (the sorted distinct ``op_type`` of the
        nodes of the model's main graph, a tuple) and ``opset`` (of the default domain).
        Text columns are ``string`` and numbers nullable (``Int32``, ``Int64``,
        ``Float64``): missing is ``<NA>``, never NaN.

    Notes
    -----
    A container value (sequence, map, optional, sparse tensor) has its tensors on the
    store's element rows.  Its ``dtype`` and ``shape`` are its first tensor's (depth
    first: a sequence's first element, an optional's value, a map's first value, a
    sparse tensor's values; map keys and sparse dims and indices are not counted);
    ``tensors``, ``count``, ``nan_count`` and ``inf_count`` add up over its tensors;
    ``min`` and ``max`` are over all of them and ``mean`` is their element-weighted mean.
    An absent optional or an empty sequence holds no tensor: ``tensors`` and ``count``
    are 0, ``dtype``, ``shape`` and the statistics missing.

    The columns ``index``, ``count``, ``shape``, ``min``, ``max`` and ``mean`` share
    names with DataFrame attributes: write ``cat["count"]``, not ``cat.count``.

    Examples
    --------
    A one-case store: a Cast from float to float8.

    >>> import tempfile, ml_dtypes, numpy as np
    >>> from pathlib import Path
    >>> from onnx import TensorProto, helper, numpy_helper
    >>> from onnx_arrow.corpus import Case, CorpusFile, write_store
    >>> F8 = TensorProto.FLOAT8E4M3FN
    >>> graph = helper.make_graph(
    ...     [helper.make_node("Cast", ["x"], ["y"], to=F8)], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
    ...     [helper.make_tensor_value_info("y", F8, [3])])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    >>> x = np.array([1.0, np.nan, 448.0], np.float32)
    >>> files = [
    ...     CorpusFile("node/test_cast/model.onnx", model.SerializeToString()),
    ...     CorpusFile("node/test_cast/test_data_set_0/input_0.pb",
    ...                numpy_helper.from_array(x, "x").SerializeToString()),
    ...     CorpusFile("node/test_cast/test_data_set_0/output_0.pb",
    ...                numpy_helper.from_array(x.astype(ml_dtypes.float8_e4m3fn), "y")
    ...                .SerializeToString())]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "store.parquet"
    >>> _ = write_store([Case("node/test_cast", "node", files, files[0].path)], path)
    >>> cat = catalog(path)
    >>> cat[["io", "name", "dtype", "shape", "count", "nan_count", "op_types", "opset"]]
           io name         dtype shape  count  nan_count op_types  opset
    0   input    x         FLOAT  (3,)      3          1  (Cast,)     21
    1  output    y  FLOAT8E4M3FN  (3,)      3          1  (Cast,)     21

    Which tests use float8, which expected outputs contain NaN, the largest tensors
    per operator:

    >>> cat[cat.dtype.str.startswith("FLOAT8")].case.unique().tolist()
    ['node/test_cast']
    >>> cat[(cat.io == "output") & (cat.nan_count > 0)].path.tolist()
    ['node/test_cast/test_data_set_0/output_0.pb']
    >>> largest = (cat.explode("op_types").sort_values("count", ascending=False)
    ...            .drop_duplicates("op_types"))
    >>> largest[["op_types", "case", "name", "count"]].to_numpy().tolist()
    [['Cast', 'node/test_cast', 'x', 3]]
    >>> tmp.cleanup()
    """
    store = store if isinstance(store, Store) else Store(store)
    rows = store.read_columns(_CATALOG_READ, roles=["value", "element"])
    role = rows.column("role")
    values = _frame(rows.filter(pc.equal(role, "value")))
    value_elements = pc.and_(
        pc.equal(role, "element"),
        pc.invert(pc.match_substring_regex(rows.column("element"), _NOT_VALUE_ELEMENT)),
    )
    totals = _container_totals(_frame(rows.filter(value_elements)))
    totals = totals.reindex(pd.Index(values["path"].to_numpy(dtype=object)))
    totals.index = values.index
    kind_names = _kind_names(values, store)
    tensor = (kind_names == "tensor").fillna(False).to_numpy(dtype=bool)
    container = ~tensor
    out = pd.DataFrame(index=values.index)
    out["case"] = values["test_case"]
    for name in ("path", "kind", "data_set", "io", "index", "name", "onnx_type"):
        out[name] = values[name]
    out["value_kind"] = kind_names
    out["dtype"] = values["dtype"].where(tensor, totals["dtype"].astype(values["dtype"].dtype))
    out["shape"] = pd.Series(
        [
            own if is_tensor else (other if isinstance(other, tuple) else None)
            for own, other, is_tensor in zip(values["shape"], totals["shape"], tensor, strict=True)
        ],
        index=values.index,
        dtype=object,
    )
    out["tensors"] = pd.array(np.where(tensor, 1, 0), dtype="Int64")
    out.loc[container, "tensors"] = totals.loc[container, "tensors"].fillna(0)
    out["count"] = values["count"]
    out.loc[container, "count"] = totals.loc[container, "count"].fillna(0)
    out["nbytes"] = values["nbytes"]
    for name in ("min", "max", "mean", "nan_count", "inf_count"):
        out[name] = values[name].where(tensor, totals[name].astype(values[name].dtype))
    models = _models(store)
    cases = values["test_case"].to_numpy(dtype=object)
    slots = zip(cases, values["io"].to_numpy(dtype=object), values["index"], strict=True)
    declared = [
        models[c][2].get((io, int(k))) if c in models and not pd.isna(k) else None
        for c, io, k in slots
    ]
    out.insert(out.columns.get_loc("name") + 1, "declared_name", pd.array(declared, dtype="string"))
    out["op_types"] = pd.Series(
        [models[c][0] if c in models else None for c in cases], index=values.index, dtype=object
    )
    out["opset"] = pd.array([models[c][1] if c in models else None for c in cases], dtype="Int64")
    return out.reset_index(drop=True)

"""The column record: what :func:`to_pandas` knew about a column, kept in ``attrs``.

For numpy cells it holds the source Arrow column, the labels and the cells handed out
and the structure of list and dict cells, so that a row whose label and cell are
unchanged goes back to Arrow as its source row, exactly.  pandas drops ``attrs`` in
``pd.concat`` of differing records and ``DataFrame({...})``; pickling keeps the kind
and Arrow type only (as an IPC schema, never a pickled Arrow object).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa

from onnx_arrow.core.model import Kind, load_json
from onnx_arrow.pandas.cells import is_missing
from onnx_arrow.pandas.columns import Column

__all__ = ["ATTRS_KEY", "ColumnInfo", "info_of", "record", "restore_info"]

#: The key of ``Series.attrs`` / ``DataFrame.attrs`` under which :func:`to_pandas`
#: records each column's ONNX kind and Arrow type (by column name).
ATTRS_KEY: Final = "onnx_arrow"


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


@dataclass(frozen=True, eq=False)
class ColumnInfo:
    """What :func:`to_pandas` knew about a column, kept in ``attrs`` under :data:`ATTRS_KEY`.

    ``source`` is the Arrow column, ``index`` its labels in pandas, ``cells`` the cells
    handed out and ``snapshots`` their structure (for cells that are lists or dicts):
    a row whose label and cell are unchanged goes back to Arrow as its source row,
    exactly.  ``unpickled`` says the record lost its source rows to pickling.  Copies
    share the record (pandas deep-copies ``attrs`` on every operation).
    """

    kind: Kind
    arrow_type: pa.DataType | None
    field: pa.Field | None = None
    source: Column | None = None
    index: pd.Index | None = None
    cells: tuple[Any, ...] = ()
    snapshots: tuple[Any, ...] | None = None
    unpickled: bool = False

    @classmethod
    def of_cells(
        cls, col: Column, field: pa.Field | None, index: pd.Index, cells: list[Any], tensors: bool
    ) -> ColumnInfo:
        """The record of numpy ``cells`` handed out for ``col`` at the labels ``index``."""
        snapshots = None if tensors else tuple(_snapshot(c) for c in cells)
        return cls(col.kind, col.array.type, field, col, index, tuple(cells), snapshots)

    def __deepcopy__(self, memo: dict[int, Any]) -> ColumnInfo:
        return self

    def __repr__(self) -> str:  # not the source column and every cell: printing attrs
        return f"ColumnInfo(kind={self.kind}, arrow_type={self.arrow_type}, rows={len(self.cells)})"

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled: the type as an IPC schema (never a pickled Arrow object); rows are
        # rebuilt from their cells after unpickling, which warns
        fields = [self.field or pa.field("", pa.null())]
        if self.arrow_type is not None:
            fields.append(pa.field("type", self.arrow_type))
        schema = pa.schema(fields).serialize().to_pybytes()
        lost = self.unpickled or self.source is not None
        return restore_info, (json.dumps(self.kind.to_json()), schema, lost)

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

    def lost(self, positions: np.ndarray[Any, Any], cells: list[Any]) -> list[int]:
        """The rows whose record is missing: cells of a source row that no label of theirs
        finds (``pd.concat`` with ``ignore_index``, a new index), every present row
        after unpickling."""
        if self.unpickled:
            return [i for i, c in enumerate(cells) if not is_missing(c)]
        handed = {id(c) for c in self.cells if not is_missing(c)}
        return [
            i
            for i, (p, c) in enumerate(zip(positions, cells, strict=True))
            if p < 0 and id(c) in handed
        ]


def restore_info(kind: str, schema: bytes, unpickled: bool = False) -> ColumnInfo:
    """A :class:`ColumnInfo` unpickled: its kind and types, without its source rows."""
    fields = pa.ipc.read_schema(pa.py_buffer(schema))
    field = fields.field(0)
    return ColumnInfo(
        Kind.from_json(load_json(kind, what="the column's kind", where=None, error=ValueError)),
        fields.field(1).type if len(fields) > 1 else None,
        None if pa.types.is_null(field.type) else field,
        unpickled=unpickled,
    )


def record(obj: pd.Series | pd.DataFrame, infos: Mapping[Hashable, ColumnInfo]) -> None:
    """Keep ``infos`` (by column name) in ``obj.attrs``."""
    obj.attrs[ATTRS_KEY] = dict(infos)


def info_of(series: pd.Series) -> ColumnInfo | None:
    """The record of ``series``, None if it has none."""
    infos = series.attrs.get(ATTRS_KEY)
    if not isinstance(infos, dict):
        return None
    info = infos.get(series.name)
    if info is None and len(infos) == 1:
        (info,) = infos.values()
    return info if isinstance(info, ColumnInfo) else None

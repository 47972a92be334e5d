"""Numpy cells out: the cells of an Arrow column as ndarrays, lists, dicts and None.

Numpy cells are lossy: what only the Arrow column holds (names, doc strings, how each
message stored its data) is not in them, and a present optional holding an absent one
is None, like an absent value (that warns).  Rows are named for people by their label.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd  # no pandas-stubs: pandas is Any

from onnx_arrow.core.model import (
    MapValue,
    Node,
    OptionalValue,
    SequenceValue,
    python_value,
    value_rows,
)
from onnx_arrow.errors import OnnxArrowError, OnnxArrowWarning
from onnx_arrow.pandas.columns import Column, stacked

__all__ = ["is_missing", "numpy_cells", "object_series", "row_label"]


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


def row_label(labels: pd.Index | None, i: int) -> str:
    """Where row ``i`` is for people: by its label in ``labels`` (``row 3``, ``row 'a'``),
    by its position when there are none."""
    label = i if labels is None else labels[i]
    if isinstance(label, np.generic):
        label = label.item()  # repr 3, not np.int64(3)
    return f"row {label!r}"


def numpy_cells(
    col: Column, *, warn: bool = True, stacklevel: int = 4, labels: pd.Index | None = None
) -> list[Any]:
    """The numpy cells of a column: ndarrays, lists, dicts (or pairs), None when absent.

    With ``warn``, a present optional holding an absent one (None, like an absent
    value) is reported, at its label in ``labels`` if given.
    """
    rows = stacked(col.values, col.kind)
    if rows is not None:
        rows.flags.writeable = False
        return [rows[i, ...] for i in range(len(rows))]
    nodes = value_rows(col.values, col.kind)
    hidden = next((i for i, n in enumerate(nodes) if _hides_absence(n)), None) if warn else None
    if hidden is not None:
        warnings.warn(
            f"{row_label(labels, hidden)}: a present optional holding an absent optional "
            "becomes None in a numpy cell, the same as an absent value; use cells='arrow' to "
            "tell them apart (.onnx.to_arrow() keeps unchanged rows exactly either way)",
            OnnxArrowWarning,
            stacklevel=stacklevel,
        )
    dicts = not any(_duplicate_keys(n) for n in nodes)
    out = []
    for i, node in enumerate(nodes):
        try:
            out.append(python_value(node, maps_as_dicts=dicts))
        except OnnxArrowError as exc:
            raise exc.at(row_label(labels, i)) from None
    for cell in out:
        _freeze(cell)
    return out


def is_missing(cell: Any) -> bool:
    """None, pd.NA, or the NaN pandas fills an object column with (reindex, shift)."""
    return cell is None or cell is pd.NA or (type(cell) is float and math.isnan(cell))


def object_series(cells: Sequence[Any], index: pd.Index | None, name: Hashable) -> pd.Series:
    """An object Series of ``cells``, each cell as it is (equal-shape arrays not broadcast)."""
    out = np.empty(len(cells), dtype=object)
    for i, cell in enumerate(cells):  # element-wise: equal-shape arrays must not broadcast
        out[i] = cell
    return pd.Series(out, index=index, name=name, dtype=object, copy=False)

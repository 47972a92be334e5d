"""Numpy cells back to Arrow: unchanged rows from their source, exactly; others from cells.

A row whose label and cell are as :func:`to_pandas` gave them comes back as its source
row, ``onnx.message`` envelope and all; a changed row is built from its cell and keeps
its old envelope (name, doc string) while that still fits; a new row is built from its
cell alone.  What is lossy is loud, once per column (:class:`~onnx_arrow.OnnxArrowWarning`):
rows whose record is missing (``pd.concat`` with ``ignore_index``, a new index,
pickling), unless ``rebuild`` says building from cells is meant, and cells that no
longer fit the column's type.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa

from onnx_arrow.core.model import (
    Kind,
    MessageType,
    Node,
    build_array,
    decode_value,
    describe_type,
    encode_value,
    infer_arrow_type,
    value_rows,
)
from onnx_arrow.errors import OnnxArrowError, OnnxArrowWarning
from onnx_arrow.pandas.cells import row_label
from onnx_arrow.pandas.columns import Column
from onnx_arrow.pandas.record import ColumnInfo
from onnx_arrow.pandas.values import cell_value

__all__ = ["rebuild_column"]


def rebuild_column(
    cells: list[Any],
    labels: pd.Index,
    info: ColumnInfo | None,
    kind: Kind,
    *,
    where: str = "",
    rebuild: bool = False,
) -> pa.Array:
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
        next(from_source) if same else cell_value(cell, kind, row_label(labels, i))
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
    if info is not None and not rebuild:  # built: an error would have said more
        _warn_lost(info.lost(positions, cells), labels, where, info.unpickled)
    envelopes: list[bytes] = []
    old_envelopes = _source_envelopes(source, positions)
    for i, (same, node, old) in enumerate(zip(unchanged, nodes, old_envelopes, strict=True)):
        if same and old is not None:
            envelopes.append(old)
            continue
        envelopes.append(_envelope(node, kind, old, row_label(labels, i)))
    storage = pa.StructArray.from_arrays(
        [values, pa.array(envelopes, pa.binary())], names=["value", "envelope"]
    )
    return pa.ExtensionArray.from_storage(MessageType(values.type, kind.to_json()), storage)


def _warn_lost(lost: list[int], labels: pd.Index, where: str, unpickled: bool) -> None:
    """One warning for the rows of a column whose record is missing, if any."""
    if not lost:
        return
    more = f" and {len(lost) - 1} more have" if len(lost) > 1 else " has"
    moved = "their labels no longer find the rows to_pandas gave them"
    why = (
        "the record lost its source rows to pickling"
        if unpickled
        else f"{moved}: pd.concat(ignore_index=True), a new index"
    )
    warnings.warn(
        f"{where or 'the Series'}: {row_label(labels, lost[0])}{more} no onnx-arrow record "
        f"({why}): numpy cells are lossy, so they are built from their cells alone, without "
        "the names and doc strings of their messages; use to_pandas(cells='arrow') to keep "
        "them, or .onnx.to_arrow(rebuild=True) to build from cells on purpose",
        OnnxArrowWarning,
        stacklevel=4,
    )


def _source_envelopes(source: Column | None, positions: np.ndarray[Any, Any]) -> list[Any]:
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

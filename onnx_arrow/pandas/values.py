"""Numpy cells to ONNX values: the inverse of the core's ``python_value``, per kind.

A cell is read as the column's kind says (a tensor an ndarray, a sequence a list, a
map a dict or ``(key, value)`` pairs, a sparse tensor ``{"dims", "values", "indices"}``,
an absent optional None); anything else is refused, located at its row.  A map's pairs,
its keys and STRING elements are read by the core's readers (``map_pairs``, ``map_keys``,
``string_bytes``), the ones ``value_message`` writes a Python value's message with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd  # no pandas-stubs: pandas is Any

from onnx_arrow.core.model import (
    MAP,
    MAX_ELEMENTS,
    OPTIONAL,
    SEQUENCE,
    SPARSE_TENSOR,
    TENSOR,
    ArrowKind,
    Kind,
    MapValue,
    Node,
    OptionalValue,
    SequenceValue,
    SparseValue,
    Tensor,
    check_sparse,
    dtype_of_numpy,
    map_keys,
    map_pairs,
    string_bytes,
)
from onnx_arrow.errors import NotRepresentableError, OnnxArrowError, UnsupportedTypeError
from onnx_arrow.pandas.cells import is_missing, row_label
from onnx_arrow.pandas.columns import OPTIONAL_TENSOR, TENSOR_KIND

__all__ = ["cell_value", "kind_of_cells"]


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
        codes[:] = [string_bytes(v, where) for v in array.reshape(-1).tolist()]
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


def cell_value(cell: Any, kind: Kind, where: str) -> Node | None:
    """The value of a numpy cell of ``kind`` (the inverse of ``python_value``)."""
    if kind.name == OPTIONAL:
        if is_missing(cell) or kind.elem is None:
            if not is_missing(cell):
                raise UnsupportedTypeError("holds a value but the column holds none", where=where)
            return OptionalValue(None)
        return OptionalValue(cell_value(cell, kind.elem, where))
    if is_missing(cell):
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
        elem = kind.elem or TENSOR_KIND
        return SequenceValue([_element(v, elem, f"{where}[{i}]") for i, v in enumerate(cell)])
    if kind.name == MAP:
        return _map(cell, kind, where)
    if kind.name == SPARSE_TENSOR:
        if not isinstance(cell, dict) or set(cell) != {"dims", "values", "indices"}:
            raise UnsupportedTypeError(
                "expected a dict with dims, values and indices for a sparse tensor", where=where
            )
        sparse = SparseValue(
            tuple(int(d) for d in cell["dims"]),
            _tensor(cell["values"], f"{where}.values"),
            _tensor(cell["indices"], f"{where}.indices"),
        )
        # the check from_arrow makes of a sparse row, here before anything is built
        check_sparse(sparse.dims, sparse.values, sparse.indices, where)
        return sparse
    raise UnsupportedTypeError(f"unknown value kind {kind}", where=where)  # pragma: no cover


def _element(cell: Any, kind: Kind, where: str) -> Node | None:
    node = cell_value(cell, kind, where)
    if node is None:
        raise NotRepresentableError(
            f"an element is absent, but the elements are {kind}, not optional", where=where
        )
    return node


def _map(cell: Any, kind: Kind, where: str) -> MapValue:
    pairs = map_pairs(cell, where)
    if kind.key is None:
        if pairs:
            raise UnsupportedTypeError("holds entries but the column holds none", where=where)
        return MapValue(dtype_of_numpy(np.int64), np.empty(0, np.int64), [])
    keys = map_keys([k for k, _ in pairs], kind.key, where)
    elem = kind.elem or TENSOR_KIND
    values = [_element(v, elem, f"{where}[{k!r}]") for k, v in pairs]
    return MapValue(kind.key, keys, values)


def kind_of_cells(cells: Sequence[Any], labels: pd.Index, where: str) -> Kind:
    """A column with no record: ndarray cells make a tensor column, with None an optional one."""
    for i, cell in enumerate(cells):
        if not is_missing(cell) and not isinstance(cell, np.ndarray | np.generic):
            raise UnsupportedTypeError(
                f"{row_label(labels, i)} holds a {type(cell).__name__} and the Series has no "
                "onnx-arrow record (attrs); only columns of ndarrays can be read without one. "
                "Build the column with onnx_arrow.pandas.to_pandas",
                where=where or None,
            )
    return OPTIONAL_TENSOR if any(is_missing(c) for c in cells) else TENSOR_KIND

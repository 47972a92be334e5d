"""Per-row statistics of numpy cells, and cells decoded to float32.

Statistics are the corpus store's (the core's ``statistics_by_dtype``), each row by its
own dtype over all its value tensors; ``float32_cell`` decodes FLOAT16 and the dtypes
float32 holds exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import numpy as np
import pandas as pd  # no pandas-stubs: pandas is Any

from onnx_arrow.core.model import (
    DECODED_FLOATS,
    DTYPES,
    OPTIONAL,
    SEQUENCE,
    SPARSE_TENSOR,
    STATISTICS,
    TENSOR,
    DType,
    Kind,
    dtype_of_numpy,
    statistics_by_dtype,
)
from onnx_arrow.errors import OnnxArrowError
from onnx_arrow.pandas.cells import is_missing, row_label

__all__ = ["INT_STATS", "cell_statistics", "float32_cell", "leaf_arrays"]

_STATS_COLUMNS: Final = ("count", *STATISTICS)

#: The statistics that are counts (``Int64`` columns); the others are ``Float64``.
INT_STATS: Final = frozenset({"count", "nan_count", "inf_count"})


def leaf_arrays(cell: Any, kind: Kind | None) -> list[np.ndarray[Any, Any]] | None:
    """The value tensors of a cell (not map keys, sparse dims or indices); None if absent."""
    if is_missing(cell) or kind is None:
        return None
    if kind.name == OPTIONAL:
        return leaf_arrays(cell, kind.elem)
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
        out.extend(leaf_arrays(item, kind.elem) or [])
    return out


def cell_statistics(
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
                row = row_label(labels, i)
                raise exc.at(f"{where}: {row}" if where else row) from None
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


def float32_cell(cell: Any) -> Any:
    """``cell`` with its FLOAT16, BFLOAT16, float8, float6 and float4 arrays as float32."""
    if isinstance(cell, np.ndarray):
        if cell.dtype in _DECODED_DTYPES:
            out = cell.astype(np.float32)
            out.flags.writeable = False
            return out
        return cell
    if isinstance(cell, list):
        return [float32_cell(v) for v in cell]
    if isinstance(cell, tuple):
        return tuple(float32_cell(v) for v in cell)
    if isinstance(cell, dict):
        return {k: (float32_cell(v) if k != "indices" else v) for k, v in cell.items()}
    return cell


#: The dtypes ``.onnx.to_float32()`` decodes: FLOAT16 and those float32 holds exactly.
_DECODED_DTYPES: Final = frozenset(
    [np.dtype(np.float16)]
    + [row.numpy for row in DTYPES.values() if row.arrow_kind in DECODED_FLOATS]
)

"""Summary statistics of tensors: one rule for the store's columns, pandas and every display.

``min``, ``max`` and ``mean`` ignore NaN and take infinities as they are; all three are
float64 (``mean`` is computed in it, and 64-bit integers beyond 2**53 round).
``nan_count`` and ``inf_count`` are defined for floating dtypes only.  A statistic is
undefined where it has no elements to go on: ``min``, ``max`` and ``mean`` of an empty or
all-NaN tensor.  Strings and complex numbers have none.

Many tensors of one dtype are summarized at once: their elements are concatenated and
each statistic is one numpy reduction over segments, so the cost is per element, not per
tensor.

>>> import numpy as np
>>> from onnx_arrow.core.dtypes import dtype_of
>>> stats = tensor_statistics(dtype_of("FLOAT"), [np.array([1, np.nan, 3], np.float32)])
>>> float(stats["mean"].values[0]), int(stats["nan_count"].values[0])
(2.0, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from onnx_arrow.core.dtypes import ArrowKind, DType

__all__ = [
    "STATISTICS",
    "Statistic",
    "has_nan_and_inf",
    "statistics_by_dtype",
    "tensor_statistics",
    "undefined_statistics",
]

#: The statistics, in the order the store's columns and pandas give them.
STATISTICS: Final = ("min", "max", "mean", "nan_count", "inf_count")


@dataclass(frozen=True)
class Statistic:
    """One statistic of each tensor: its values, and where it is defined."""

    values: np.ndarray[Any, Any]  # float64 (min, max, mean) or int64 (the counts)
    defined: np.ndarray[Any, Any]  # bool


def undefined_statistics(total: int) -> dict[str, Statistic]:
    """Every statistic of ``total`` tensors, none defined yet."""
    return {
        name: Statistic(
            np.zeros(total, np.int64 if name.endswith("_count") else np.float64),
            np.zeros(total, bool),
        )
        for name in STATISTICS
    }


def has_nan_and_inf(row: DType) -> bool:
    """Whether NaN and Inf are counted for ``row``: the floating dtypes."""
    return row.is_floating


def tensor_statistics(row: DType, tensors: Sequence[np.ndarray[Any, Any]]) -> dict[str, Statistic]:
    """The statistics of each of ``tensors``, elements of ``row``, as numbers numpy reduces.

    Any numpy representation of the elements will do: the codes (ml_dtypes included) or
    the numbers of an Arrow column (FLOAT16 widened to float32, int4 as int8); the shape
    does not matter.  Returns, per name of :data:`STATISTICS`, one entry per tensor.
    """
    total = len(tensors)
    out = undefined_statistics(total)
    if row.arrow_kind in (ArrowKind.BINARY, ArrowKind.COMPLEX) or not total:
        return out
    floating = has_nan_and_inf(row)
    if floating:  # empty float tensors too: no NaN, no Inf
        out["nan_count"].defined[:] = out["inf_count"].defined[:] = True
    sizes = np.fromiter((t.size for t in tensors), np.int64, count=total)
    nonempty = sizes > 0
    if not nonempty.any():
        return out
    values = np.concatenate([t.reshape(-1) for t in tensors])
    if values.dtype.isbuiltin != 1:  # ml_dtypes: float64 holds each of them exactly
        values = values.astype(np.float64)
    starts = (np.cumsum(sizes) - sizes)[nonempty]
    at = np.flatnonzero(nonempty)
    with np.errstate(invalid="ignore", over="ignore"):
        totals = np.add.reduceat(values, starts, dtype=np.float64)
    lowest = np.minimum.reduceat(values, starts).astype(np.float64)
    highest = np.maximum.reduceat(values, starts).astype(np.float64)
    nan_count = np.zeros(at.size, np.int64)
    if floating:
        # a NaN makes a tensor's minimum NaN, an infinity its minimum or maximum infinite:
        # only the tensors that have either are counted and summed again, without the NaNs
        counted = np.flatnonzero(~(np.isfinite(lowest) & np.isfinite(highest)))
        if counted.size:
            ends = starts + sizes[nonempty]
            segments = [values[starts[i] : ends[i]] for i in counted]
            part = np.concatenate(segments)
            part_sizes = ends[counted] - starts[counted]
            part_starts = np.cumsum(part_sizes) - part_sizes
            nan = np.isnan(part)
            nan_count[counted] = np.add.reduceat(nan, part_starts, dtype=np.int64)
            out["nan_count"].values[at[counted]] = nan_count[counted]
            out["inf_count"].values[at[counted]] = np.add.reduceat(
                np.isinf(part), part_starts, dtype=np.int64
            )
            if nan.any():  # not fmin and fmax: C's return NaN for a signalling NaN
                number = part.dtype.type
                with np.errstate(invalid="ignore", over="ignore"):
                    totals[counted] = np.add.reduceat(
                        np.where(nan, number(0), part), part_starts, dtype=np.float64
                    )
                lows = np.where(nan, number(np.inf), part)
                highs = np.where(nan, number(-np.inf), part)
                lowest[counted] = np.minimum.reduceat(lows, part_starts)
                highest[counted] = np.maximum.reduceat(highs, part_starts)
    non_nan = sizes[nonempty] - nan_count
    keep = non_nan > 0
    defined = at[keep]
    for name, result in (
        ("min", lowest),
        ("max", highest),
        ("mean", totals / np.maximum(non_nan, 1)),
    ):
        out[name].values[defined] = result[keep]
        out[name].defined[defined] = True
    return out


def statistics_by_dtype(
    dtypes: Sequence[DType], tensors: Sequence[np.ndarray[Any, Any]]
) -> dict[str, Statistic]:
    """:func:`tensor_statistics` of tensors of several dtypes (``dtypes[i]`` that of
    ``tensors[i]``), one dtype at a time."""
    out = undefined_statistics(len(tensors))
    groups: dict[int, list[int]] = {}
    for i, row in enumerate(dtypes):
        groups.setdefault(row.onnx, []).append(i)
    for members in groups.values():
        stats = tensor_statistics(dtypes[members[0]], [tensors[i] for i in members])
        ids = np.asarray(members, dtype=np.int64)
        for name, stat in stats.items():
            out[name].values[ids] = stat.values
            out[name].defined[ids] = stat.defined
    return out

"""A tensor summed up for people: its statistics and sizes, as ``info`` and Jupyter show them.

Shared by the command line and the Jupyter views, so that both say the same of a value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from onnx_arrow.core.dtypes import ArrowKind, dtype_of_numpy
from onnx_arrow.errors import OnnxArrowError

__all__ = ["number", "numeric", "size", "statistics"]


def number(x: Any) -> str:
    """An integer as itself, a float in at most 6 significant digits."""
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    value = float(x)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def numeric(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any] | None:
    """The elements as numbers numpy computes with (float32 for bfloat16 and float8 ...);
    None for strings."""
    if array.dtype.kind in "OSU":
        return None
    try:
        row = dtype_of_numpy(array.dtype)
    except OnnxArrowError:
        return array if array.dtype.kind in "biufc" else None
    if row.arrow_kind in (ArrowKind.BFLOAT16, ArrowKind.MINIFLOAT):
        return array.astype(np.float32)
    if row.arrow_kind is ArrowKind.SUBBYTE_INT:
        return array.astype(np.int16)
    return array


def statistics(array: np.ndarray[Any, Any]) -> list[tuple[str, str]]:
    """min, max and mean of the finite elements; NaN and Inf counts for floats; the count
    of true elements for bools; nothing for strings."""
    values = numeric(array)
    if values is None or values.size == 0:
        return []
    if values.dtype.kind == "b":
        return [("true", str(int(np.count_nonzero(values))))]
    out: list[tuple[str, str]] = []
    counts: list[tuple[str, str]] = []
    if values.dtype.kind in "fc":
        nan = np.isnan(values)
        inf = np.isinf(values)
        counts = [("nan", str(int(nan.sum()))), ("inf", str(int(inf.sum())))]
        if counts[0][1] != "0" or counts[1][1] != "0":
            values = values[~(nan | inf)]
    if values.size == 0:
        return [("min", "(no finite elements)"), *counts]
    if values.dtype.kind == "c":
        out.append(("mean", str(complex(values.mean(dtype=np.complex128)))))
    else:
        out += [
            ("min", number(values.min())),
            ("max", number(values.max())),
            ("mean", f"{float(values.mean(dtype=np.float64)):.6g}"),
        ]
    return out + counts


def size(nbytes: int) -> str:
    """A size in bytes, or in KiB, MiB or GiB once it is 1024 bytes or more: ``7.3 MiB``."""
    if nbytes < 1024:
        return f"{nbytes} bytes"
    scaled = nbytes / 1024
    for unit in ("KiB", "MiB"):
        if scaled < 1024:
            return f"{scaled:.1f} {unit}"
        scaled /= 1024
    return f"{scaled:.1f} GiB"

"""Numbers, sizes, dtypes and tensor statistics put in words for people.

Shared by the command line, the Jupyter views, the pandas adapter and the comparison,
so that all say the same of a value: the text is made here, each caller only lays it
out.
"""

from __future__ import annotations

import re
from typing import Any, Final

import numpy as np

from onnx_arrow.core.model import DECODED_FLOATS, ArrowKind, dtype_of_numpy, tensor_statistics
from onnx_arrow.errors import OnnxArrowError

__all__ = ["dtype_name", "number", "numeric", "printable", "size", "statistics"]

#: Characters a terminal acts on rather than shows: C0 and C1 controls, DEL, and the
#: bidirectional overrides and isolates that reorder what follows them.
_CONTROL: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SPACES: Final = re.compile("[\t\n\r]+")


def printable(text: str) -> str:
    r"""``text`` safe to print on one line of a terminal: tabs and line breaks as one
    space, other control characters (an escape sequence's ESC, a bell, a bidirectional
    override) left out.

    >>> printable("node/test\x1b[2Jx\tA\nB")
    'node/test[2Jx A B'
    """
    return _CONTROL.sub("", _SPACES.sub(" ", text))


def dtype_name(dtype: np.dtype[Any]) -> str:
    """The ONNX name of a numpy dtype (``FLOAT``, ``BFLOAT16`` ...), else numpy's own."""
    try:
        return dtype_of_numpy(dtype).name
    except OnnxArrowError:
        return str(dtype)


def number(x: Any) -> str:
    """A number in the shortest form that reads back as the same value of its own
    precision: an integer (or an integral float below 1e15) as itself, a float64 as
    ``repr`` gives it (``1e-07``, never ``0``), a float16 or float32 as numpy's shortest
    form of it (float32's 0.1 as ``0.1``, not 0.10000000149), a float of fewer bits
    (bfloat16, float8 ...) as the float32 it is exactly.

    >>> number(1e-7), number(np.float32(0.1)), number(2.0), number(1.5686274509803921)
    ('1e-07', '0.1', '2', '1.5686274509803921')
    """
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, np.generic) and not isinstance(x, np.floating):
        try:  # the floats of ml_dtypes: exact as float32, whose shortest form reads back
            row = dtype_of_numpy(x.dtype)
        except OnnxArrowError:
            row = None
        if row is not None and row.arrow_kind in DECODED_FLOATS:
            x = np.float32(x)
    value = float(x)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(x, np.floating) and x.dtype != np.float64:
        return str(x)  # numpy's shortest form of the value in its own precision
    return repr(value)


def numeric(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any] | None:
    """The elements as numbers numpy computes with (float32 for bfloat16 and float8 ...);
    None for strings."""
    if array.dtype.kind in "OSU":
        return None
    try:
        row = dtype_of_numpy(array.dtype)
    except OnnxArrowError:
        return array if array.dtype.kind in "biufc" else None
    if row.arrow_kind in DECODED_FLOATS:
        return array.astype(np.float32)
    if row.arrow_kind is ArrowKind.SUBBYTE_INT:
        return array.astype(np.int16)
    return array


def statistics(array: np.ndarray[Any, Any]) -> list[tuple[str, str]]:
    """min, max and mean, NaN and Inf counts, by the rule of the store's columns
    (:mod:`onnx_arrow.core.statistics`); the count of true elements for bools, the mean
    for complex numbers; nothing for strings and empty tensors."""
    if array.size == 0 or array.dtype.kind in "OSU":
        return []
    try:
        row = dtype_of_numpy(array.dtype)
    except OnnxArrowError:  # a numpy dtype ONNX has no name for (float128 ...)
        return []
    if row.arrow_kind is ArrowKind.BOOL8:
        return [("true", str(int(np.count_nonzero(array))))]
    if row.arrow_kind is ArrowKind.COMPLEX:
        return [("mean", str(complex(array.mean(dtype=np.complex128))))]
    stats = tensor_statistics(row, [array])
    own = numeric(array)
    exact = own.dtype if own is not None and own.dtype.kind == "f" else None

    def extreme(value: Any) -> str:  # an element: in the precision of the tensor's own
        return number(value if exact is None else np.asarray(value).astype(exact)[()])

    if stats["min"].defined[0]:
        out = [
            ("min", extreme(stats["min"].values[0])),
            ("max", extreme(stats["max"].values[0])),
            ("mean", number(float(stats["mean"].values[0]))),
        ]
    else:
        out = [("min", "nan"), ("max", "nan"), ("mean", "nan")]  # every element is NaN
    return out + [
        (name.removesuffix("_count"), str(stats[name].values[0]))
        for name in ("nan_count", "inf_count")
        if stats[name].defined[0]
    ]


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

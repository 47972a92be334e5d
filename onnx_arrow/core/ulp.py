"""ULP distances between floating-point tensors of any ONNX floating dtype.

The distance between two numbers of one dtype is how many representable values of it lie
between them: ``|rank(a) - rank(b)|``, where a number's rank is its place among the
dtype's distinct non-NaN values in increasing order.  So -0.0 and +0.0 are 0 apart,
neighbours 1 apart, and the infinities, where the dtype has them, are the ends of the
scale.  NaN is no number: two NaNs (any payload) are equal, and a NaN against a number
is a NaN mismatch, not a distance.

The ranks are computed on the codes, never on arithmetic of values, and the result is
``uint64``, which holds the largest distance of every dtype (DOUBLE's -inf to +inf is
``0xFFE0000000000000``).  The dtype table's :attr:`~onnx_arrow.core.dtypes.DType.ulp_kind`
says how, per dtype (:class:`~onnx_arrow.core.dtypes.UlpKind`):

* ``rank_table``, dtypes of at most 16 bits (FLOAT16, BFLOAT16, the float8s, FLOAT6E2M3/E3M2,
  FLOAT4E2M1): a table of every code's rank, built once from the dtype's decoded values;
* ``ieee``, FLOAT and DOUBLE (IEEE sign-magnitude): the magnitude of the code, signed, as
  ``uint64`` arithmetic that cannot overflow.

``complex_parts``: COMPLEX64 and COMPLEX128 are measured part by part (the real parts,
then the imaginary parts, as FLOAT or DOUBLE); an element's distance is the larger of its
two.

>>> import numpy as np
>>> from onnx_arrow.core.dtypes import dtype_of
>>> a = np.array([0.0, -0.0, 1.0, np.inf, np.nan], np.float32)
>>> up = np.nextafter(np.float32(1), np.float32(2))
>>> b = np.array([-0.0, 1e-45, up, np.inf, np.nan], np.float32)
>>> d = ulp_distance(a, b, dtype_of("FLOAT"))
>>> d.distance.tolist(), d.nan_mismatch.tolist()
([0, 1, 1, 0, 0], [False, False, False, False, False])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from onnx_arrow.core.dtypes import DTYPES, DType, UlpKind, dtype_of_numpy
from onnx_arrow.errors import UnsupportedTypeError

__all__ = ["FLOATING", "UlpDistance", "ulp_distance"]


#: The floating dtypes, which have ULP distances (complex included), by name, in the order
#: of the dtype table: the rows whose :attr:`DType.is_floating` (read from their
#: :attr:`DType.ulp_kind`) is true.
FLOATING: Final = tuple(row.name for row in DTYPES.values() if row.is_floating)


@dataclass(frozen=True)
class UlpDistance:
    """Per element: the distance (``uint64``; 0 where either side is NaN) and whether
    exactly one side is NaN."""

    distance: np.ndarray[Any, np.dtype[np.uint64]]
    nan_mismatch: np.ndarray[Any, np.dtype[np.bool_]]

    @property
    def max(self) -> int:
        """The largest distance, 0 for no elements."""
        return int(self.distance.max()) if self.distance.size else 0


def ulp_distance(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], row: DType) -> UlpDistance:
    """The ULP distance of each element pair of ``a`` and ``b``, arrays of ``row``'s numpy
    dtype and of one shape (see the module docs).

    Raises
    ------
    UnsupportedTypeError
        If ``row`` is not a floating dtype, or an array is not of its numpy dtype.
    """
    if not row.is_floating:
        raise UnsupportedTypeError(f"{row.name} is not a floating dtype; ULPs are for floats")
    for side, x in (("first", a), ("second", b)):
        if x.dtype != row.numpy:
            raise UnsupportedTypeError(
                f"the {side} array is {x.dtype}; {row.name} elements are {row.numpy}"
            )
    if a.shape != b.shape:
        raise UnsupportedTypeError(f"shapes differ: {a.shape} and {b.shape}")
    kind = row.ulp_kind
    if kind is UlpKind.COMPLEX_PARTS:
        part = dtype_of_numpy(row.arrow_storage)
        real = ulp_distance(np.ascontiguousarray(a.real), np.ascontiguousarray(b.real), part)
        imag = ulp_distance(np.ascontiguousarray(a.imag), np.ascontiguousarray(b.imag), part)
        return UlpDistance(
            np.maximum(real.distance, imag.distance), real.nan_mismatch | imag.nan_mismatch
        )
    if kind is UlpKind.IEEE:
        return _ieee(a, b, row)
    if kind is UlpKind.RANK_TABLE:
        ranks, nan = _rank_table(row.onnx)
        width = np.uint8 if row.numpy.itemsize == 1 else np.uint16
        code_a, code_b = a.view(width), b.view(width)
        nan_a, nan_b = nan[code_a], nan[code_b]
        rank_a, rank_b = ranks[code_a], ranks[code_b]
        distance = np.where(rank_a >= rank_b, rank_a - rank_b, rank_b - rank_a)
        distance = distance.astype(np.uint64)
        distance[nan_a | nan_b] = 0
        return UlpDistance(distance, nan_a != nan_b)
    raise UnsupportedTypeError(
        f"{row.name} has ULP kind {kind!r}, which ulp_distance does not count; it counts "
        + ", ".join(k.value for k in UlpKind if k is not UlpKind.NONE)
    )


@functools.cache
def _rank_table(onnx: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Per code of a dtype of at most 16 bits: its rank among the distinct non-NaN values
    (``int64``), and whether it is NaN."""
    row = DTYPES[onnx]
    size = 1 << (8 * row.numpy.itemsize)
    width = np.uint8 if row.numpy.itemsize == 1 else np.uint16
    codes = np.arange(size, dtype=np.int64)
    # a sub-byte float (FLOAT4E2M1, FLOAT6*) lives in the low bits of a byte: the other
    # codes are no values of it, and are given no rank (they never come from a tensor)
    valid = codes < (1 << row.bits)
    with np.errstate(invalid="ignore"):  # decoding NaN codes
        values = codes.astype(width).view(row.numpy).astype(np.float64)
    nan = np.isnan(values) | ~valid
    distinct = np.unique(values[~nan])  # -0.0 and +0.0 compare equal: one value
    ranks = np.searchsorted(distinct, np.where(nan, 0.0, values)).astype(np.int64)
    ranks.flags.writeable = False
    nan.flags.writeable = False
    return ranks, nan


def _ieee(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], row: DType) -> UlpDistance:
    """FLOAT and DOUBLE: signed magnitudes of the codes, in ``uint64`` without overflow."""
    unsigned, sign_bit = np.dtype(f"<u{row.numpy.itemsize}"), row.bits - 1
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    code_a = a.view(unsigned).astype(np.uint64)
    code_b = b.view(unsigned).astype(np.uint64)
    sign = np.uint64(1) << np.uint64(sign_bit)
    neg_a, neg_b = (code_a & sign) != 0, (code_b & sign) != 0
    mag_a, mag_b = code_a & ~sign, code_b & ~sign
    same_side = neg_a == neg_b
    # either side of zero: the magnitudes add (-0.0 and +0.0 have magnitude 0); at most
    # twice the largest magnitude, below 2**64
    across = mag_a + mag_b
    along = np.where(mag_a >= mag_b, mag_a - mag_b, mag_b - mag_a)
    distance = np.where(same_side, along, across)
    distance[nan_a | nan_b] = 0
    return UlpDistance(distance, nan_a != nan_b)

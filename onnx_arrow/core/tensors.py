"""A tensor's value split from its message: dtype, dims and elements as codes.

The record the wire codec, the direct path and the tensor arrays all pass around, and
the one check of a shape before numpy is asked for an array of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from onnx_arrow.core.codec import Strings, decode_strings
from onnx_arrow.core.dtypes import ArrowKind, DType
from onnx_arrow.errors import NotRepresentableError

__all__ = ["MAX_ELEMENTS", "NUMPY_MAX_RANK", "Tensor", "numpy_shape"]


#: The most elements one tensor may declare (2**40, a terabyte of bytes); more is refused
#: before anything is allocated.
MAX_ELEMENTS: Final = 1 << 40

#: The most dimensions a numpy array has (64 since numpy 2, 32 before).  ONNX has no
#: such limit: a tensor of higher rank is kept by Arrow and by its messages, never
#: made an ndarray.
NUMPY_MAX_RANK: Final = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32

#: The largest size of a numpy array, in bytes (its ``intp``'s largest value)
_MAX_BYTES: Final = int(np.iinfo(np.intp).max)


def numpy_shape(
    shape: tuple[int, ...],
    *,
    what: str = "the tensor",
    where: str | None = None,
    dtype: np.dtype[Any] | None = None,
) -> tuple[int, ...]:
    """``shape``, checked to be one numpy can give an array of ``dtype`` (the widest,
    16 bytes, if not given): every place that makes an ndarray of a tensor's shape asks
    here first, so that a rank past numpy's limit, or dims whose product numpy cannot
    hold, is a located error instead of numpy's ``ValueError``.  numpy multiplies the dims
    other than 0 and the item size, and refuses more than its largest size, even for an
    empty array (``[2**31-1, 2**31-1, 0]`` of float32).

    >>> numpy_shape((2, 3))
    (2, 3)
    >>> numpy_shape((1,) * 100, where="row 0")
    Traceback (most recent call last):
    ...
    onnx_arrow.errors.NotRepresentableError: row 0: the tensor has rank 100, but numpy \
arrays have at most 64 dimensions; ...
    """
    if len(shape) > NUMPY_MAX_RANK:
        raise NotRepresentableError(
            f"{what} has rank {len(shape)}, but numpy arrays have at most {NUMPY_MAX_RANK} "
            "dimensions; the Arrow column keeps it (onnx_arrow.to_arrow, from_arrow), "
            "only not as an ndarray",
            where=where,
        )
    size = 16 if dtype is None else dtype.itemsize
    for dim in shape:
        size *= dim or 1
    if size > _MAX_BYTES:
        raise NotRepresentableError(
            f"{what} has shape {list(shape)}, whose dims other than 0 and item size multiply "
            f"to {size} bytes, more than numpy's largest array ({_MAX_BYTES} bytes), so numpy "
            "has no array of that shape, empty or not; the Arrow column keeps it "
            "(onnx_arrow.to_arrow, from_arrow), only not as an ndarray",
            where=where,
        )
    return shape


@dataclass(frozen=True, slots=True)
class Tensor:
    """A tensor's value, split from its message: dtype, dims and elements (codes).

    ``codes`` is a flat numpy array of ``dtype.numpy`` (for STRING an object array
    of ``bytes``), or of ``dtype.code_bits``, the integers of the bits of an ml_dtypes
    type, as a store's files are rebuilt (:meth:`to_numpy` gives them as
    ``dtype.numpy``); ``envelope`` the rest of the message (see the module docs), or
    None for a value with no message behind it, which is then stored as
    ``onnx.numpy_helper.from_array`` would.
    """

    dtype: DType
    dims: tuple[int, ...]
    codes: np.ndarray[Any, Any]
    envelope: bytes | None = None

    def to_numpy(self, strings: Strings = "bytes") -> np.ndarray[Any, Any]:
        """The elements shaped by ``dims``; STRING elements as ``bytes`` or, with
        ``strings="str"``, decoded from UTF-8 (see :func:`decode_strings`)."""
        codes = self.codes
        if self.dtype.code_bits != self.dtype.numpy and codes.dtype == self.dtype.code_bits:
            codes = codes.view(self.dtype.numpy)  # the bits of an ml_dtypes type
        if strings == "str" and self.dtype.arrow_kind is ArrowKind.BINARY:
            codes = decode_strings(codes)
        return codes.reshape(numpy_shape(self.dims, dtype=codes.dtype))

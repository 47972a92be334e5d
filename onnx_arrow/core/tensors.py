"""A tensor's value split from its message: dtype, dims and elements as codes.

The record the wire codec, the direct path and the tensor arrays all pass around.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from onnx_arrow.core.codec import Strings, decode_strings
from onnx_arrow.core.dtypes import ArrowKind, DType

__all__ = ["MAX_ELEMENTS", "Tensor"]


#: The most elements one tensor may declare (2**40, a terabyte of bytes); more is refused
#: before anything is allocated.
MAX_ELEMENTS: Final = 1 << 40


@dataclass(frozen=True, slots=True)
class Tensor:
    """A tensor's value, split from its message: dtype, dims and elements (codes).

    ``codes`` is a flat numpy array of ``dtype.numpy`` (for STRING an object array
    of ``bytes``); ``envelope`` the rest of the message (see the module docs), or
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
        if strings == "str" and self.dtype.arrow_kind is ArrowKind.BINARY:
            codes = decode_strings(codes)
        return codes.reshape(self.dims)

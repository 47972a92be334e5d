"""DLPack: tensor columns and values handed to other array libraries (PyTorch, JAX,
CuPy, numpy) through ``from_dlpack``, in every dtype DLPack has, bfloat16 and float8s
included.

:func:`to_dlpack` gives an object with ``__dlpack__`` and ``__dlpack_device__`` (the
DLPack Python protocol, versions 0.8 and 1.x) over the ndarray :func:`onnx_arrow.to_numpy`
gives: a dtype numpy has goes as a copy unless the consumer asks for none (``copy=False``),
when it goes over the Arrow buffer itself, flagged read-only (DLPack 1.0's
``DLPACK_FLAG_BITMASK_READ_ONLY``; a consumer of DLPack 0.x, which cannot be told, is
refused).  An Arrow buffer is immutable and shared (by other columns, slices, a store
read once); a consumer that ignores the read-only flag (PyTorch makes a writable tensor
of it) would write into it, so the copy is the default.  The
dtypes numpy has not (bfloat16 and the float8s, which onnx-arrow stores widened to
float32) go as their ONNX codes, bit for bit, under DLPack's own type codes
(``kDLBfloat``, and the ``kDLFloat8_*`` codes of DLPack 1.1): numpy's own capsule of the
codes as unsigned integers (its ``__dlpack__`` refuses ``ml_dtypes``) with the type code
rewritten, so numpy's deleter frees it whether a consumer takes it or drops it.  The
dtypes DLPack has no code for (STRING, and the sub-byte types, which DLPack packs and
onnx-arrow does not) are refused, naming :func:`onnx_arrow.to_numpy` instead.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa

from onnx_arrow.core.dtypes import DType, dtype_of_numpy
from onnx_arrow.core.tensor_types import tensor_layout
from onnx_arrow.errors import UnsupportedTypeError

__all__ = ["DLPACK_CODES", "DLPackTensor", "to_dlpack"]

#: ``DLDeviceType`` of the host's memory
_CPU: Final = 1

#: The DLPack ``(type code, bits)`` of each ONNX element type that has one, by dtype name
#: (``DLDataTypeCode`` of ``dlpack.h``: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4,
#: kDLComplex 5, kDLBool 6, the float8s 10 to 14, added in DLPack 1.1).  STRING has none;
#: the sub-byte types (INT4, UINT4, INT2, UINT2, FLOAT4E2M1, FLOAT6E2M3, FLOAT6E3M2) have
#: codes for packed elements, which onnx-arrow does not hold (one element a byte).
DLPACK_CODES: Final[dict[str, tuple[int, int]]] = {
    "FLOAT": (2, 32),
    "UINT8": (1, 8),
    "INT8": (0, 8),
    "UINT16": (1, 16),
    "INT16": (0, 16),
    "INT32": (0, 32),
    "INT64": (0, 64),
    "BOOL": (6, 8),
    "FLOAT16": (2, 16),
    "DOUBLE": (2, 64),
    "UINT32": (1, 32),
    "UINT64": (1, 64),
    "COMPLEX64": (5, 64),
    "COMPLEX128": (5, 128),
    "BFLOAT16": (4, 16),
    "FLOAT8E4M3FN": (10, 8),
    "FLOAT8E4M3FNUZ": (11, 8),
    "FLOAT8E5M2": (12, 8),
    "FLOAT8E5M2FNUZ": (13, 8),
    "FLOAT8E8M0": (14, 8),
}

#: The DLPack version of the versioned capsules made here (1.1: the float8 codes)
_VERSION: Final = (1, 1)
_IS_COPIED: Final = 1 << 1


def to_dlpack(data: Any) -> DLPackTensor:
    """A tensor column, or one value (a scalar: ``column[i]``), for ``from_dlpack``.

    ``data`` is what :func:`onnx_arrow.to_numpy` takes: a column whose rows are tensors of
    one shape gives a tensor ``(rows, *shape)``, a scalar its one tensor.  A dtype numpy
    has goes zero-copy where ``to_numpy`` does (a fixed-shape column without nulls, one
    chunk) to a consumer that asks for no copy (``from_dlpack(x, copy=False)``), read-only;
    to the others as a copy, which they may write to; bfloat16 and the float8s go as their
    ONNX codes, bit for bit (a NaN's payload and sign kept), under DLPack's bfloat16 and
    float8 type codes.

    >>> import ml_dtypes, numpy as np, onnx_arrow, torch
    >>> from onnx import numpy_helper
    >>> values = np.array([1.5, -0.0, np.nan], ml_dtypes.bfloat16)
    >>> column = onnx_arrow.to_arrow([numpy_helper.from_array(values)])
    >>> tensor = torch.from_dlpack(onnx_arrow.to_dlpack(column))
    >>> tensor.dtype, tensor.view(torch.int16)
    (torch.bfloat16, tensor([[ 16320, -32768,  32704]], dtype=torch.int16))

    Raises
    ------
    NotRepresentableError
        Where ``to_numpy`` does (not one stack of tensors: another kind, a null row,
        shapes that differ).
    UnsupportedTypeError
        For a dtype DLPack has no code for (STRING and the sub-byte types): the message
        names ``onnx_arrow.to_numpy``.
    """
    from onnx_arrow.core.values import to_numpy

    row_of = _fixed_shape_row(data)
    if row_of is not None:  # one value of a fixed-shape column, over the column's buffer
        rows = to_numpy(row_of, strings="bytes")
        array = rows.reshape(rows.shape[1:])  # a view: a 0-d array for a scalar tensor
    else:
        array = np.asarray(to_numpy(data, strings="bytes"))
    row = _dtype_of(array.dtype)
    code = None if row is None else DLPACK_CODES.get(row.name)
    if row is None or code is None:
        what = (
            "STRING elements (bytes, not numbers)"
            if array.dtype == object
            else f"{row.name if row else array.dtype} elements held one a byte, as onnx-arrow "
            "holds them (DLPack's sub-byte types are packed)"
        )
        raise UnsupportedTypeError(
            f"DLPack has no type code for {what}; onnx_arrow.to_numpy gives them as an ndarray",
            where="data",
        )
    numpy_has = row.numpy.type.__module__ == "numpy"
    return DLPackTensor(array, row, code, zero_copy=numpy_has and _is_view(array))


def _fixed_shape_row(data: Any) -> pa.Array | None:
    """A present scalar of a fixed-shape tensor column as a column of its one row, over
    the same buffer (``to_numpy`` of a scalar copies it), else None."""
    if not (isinstance(data, pa.ExtensionScalar) and data.is_valid):
        return None
    storage = data.value
    if not isinstance(storage, pa.FixedSizeListScalar) or tensor_layout(data.type) is None:
        return None
    values = storage.values
    row = pa.FixedSizeListArray.from_arrays(values, type=data.type.storage_type)
    return pa.ExtensionArray.from_storage(data.type, row)


def _dtype_of(dtype: np.dtype[Any]) -> DType | None:
    """The dtype table's row of a numpy dtype (its inverse map, built once), or None."""
    try:
        return dtype_of_numpy(dtype)
    except UnsupportedTypeError:
        return None


def _is_view(array: np.ndarray[Any, Any]) -> bool:
    """Whether ``array`` is over memory it does not own (the Arrow buffer)."""
    return array.base is not None and not array.flags.writeable


@dataclass(frozen=True, eq=False)
class DLPackTensor:
    """One tensor for ``from_dlpack`` (the DLPack Python protocol), as :func:`to_dlpack`
    gives it: its ndarray, its ONNX dtype and its DLPack type code."""

    #: the elements, in the ONNX dtype's numpy dtype (``ml_dtypes`` for bfloat16 and float8)
    array: np.ndarray[Any, Any]
    #: the ONNX dtype
    dtype: DType
    #: the DLPack ``(type code, bits)``
    code: tuple[int, int]
    #: whether the elements are an Arrow buffer itself, not a copy: a dtype numpy has, a
    #: fixed-shape column without nulls (the column's own buffer where it has one chunk);
    #: handed over as they are (read-only) to a consumer that asks for no copy, as a copy
    #: to the others
    zero_copy: bool

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    def __dlpack_device__(self) -> tuple[int, int]:
        """The host's memory: ``(kDLCPU, 0)``."""
        return (_CPU, 0)

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """A DLPack capsule of the tensor: versioned (``dltensor_versioned``) where the
        consumer reads version 1, else the legacy one (``dltensor``).  Of an Arrow buffer
        (:attr:`zero_copy`), a copy unless ``copy=False``, and then the buffer itself,
        flagged read-only (a legacy capsule cannot say so: numpy refuses it).

        Raises
        ------
        BufferError
            For a stream (host memory has none), a device other than the host's, or
            ``copy=False`` for bfloat16 and the float8s, whose codes are made from the
            Arrow buffer (which holds them widened to float32); numpy's own errors for the
            dtypes it exports (a legacy consumer of a read-only buffer).
        """
        if self.dtype.numpy.type.__module__ == "numpy":
            # a dtype numpy has: numpy's own capsule, of a copy unless asked for none (its
            # capsule of a read-only view is flagged read-only, which PyTorch ignores)
            if self.zero_copy and copy is None:
                copy = True
            return self.array.__dlpack__(
                stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
            )
        if stream is not None and stream != -1:
            raise BufferError(f"stream {stream!r}: the tensor is in host memory, which has none")
        if dl_device is not None and tuple(dl_device) != (_CPU, 0):
            raise BufferError(f"dl_device {dl_device!r}: the tensor is in host memory (1, 0)")
        if copy is False:
            raise BufferError(
                f"copy=False, but {self.dtype.name} elements are made from the Arrow buffer "
                "(which holds them widened to float32), not the buffer itself"
            )
        versioned = max_version is not None and max_version[0] >= 1
        return _capsule(self.array, self.code, versioned=versioned)


# --- the capsule: numpy's own, of the codes, under DLPack's type code ----------------------


class _DataType(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16))


class _Tensor(ctypes.Structure):
    """``DLTensor``, up to the field rewritten here."""

    _fields_ = (
        ("data", ctypes.c_void_p),
        ("device", ctypes.c_int32 * 2),
        ("ndim", ctypes.c_int32),
        ("dtype", _DataType),
    )


class _VersionedHead(ctypes.Structure):
    """``DLManagedTensorVersioned`` before its ``dl_tensor``."""

    _fields_ = (
        ("version", ctypes.c_uint32 * 2),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
    )


_VERSIONED_NAME: Final = b"dltensor_versioned"
#: The unsigned integers numpy exports in place of bfloat16 and the float8s, by byte width
_UNSIGNED: Final[dict[int, np.dtype[Any]]] = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16)}

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = (ctypes.py_object,)
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = (ctypes.py_object, ctypes.c_char_p)


def _capsule(array: np.ndarray[Any, Any], code: tuple[int, int], *, versioned: bool) -> Any:
    """A DLPack capsule of a copy of ``array``'s elements under the type ``code``.

    The capsule is numpy's own, of the codes as unsigned integers of the same width, with
    its ``DLDataType`` rewritten: numpy's deleter frees it, whether a consumer takes it or
    it is dropped (a consumer that refuses the type drops it), also after the interpreter
    has ended."""
    codes = np.array(array, order="C", copy=True).view(_UNSIGNED[array.itemsize])
    try:
        capsule = codes.__dlpack__(max_version=_VERSION) if versioned else codes.__dlpack__()
    except TypeError:  # numpy before 2.1 makes the legacy capsule alone
        capsule = codes.__dlpack__()
    name = _capsule_name(capsule)
    managed = _capsule_pointer(capsule, name)
    tensor = managed
    if name == _VERSIONED_NAME:
        head = _VersionedHead.from_address(managed)
        head.version[:] = _VERSION  # the float8 codes are DLPack 1.1's
        head.flags |= _IS_COPIED
        tensor += ctypes.sizeof(_VersionedHead)
    _Tensor.from_address(tensor).dtype = _DataType(code[0], code[1], 1)
    return capsule

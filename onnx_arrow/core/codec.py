"""The element codec: ONNX element codes to the Arrow storage of their element type and
back, STRING as ``str`` or ``bytes``, and the sub-byte packing of ``raw_data``.

Codes are the elements in the ONNX dtype's numpy dtype (``ml_dtypes`` where numpy has
none).  Storage is what the Arrow element type holds (see the dtype table): the same
bits for native types, bfloat16 widened into float32, each float8 / float6 / float4
code as its exact float32, the sub-byte integers as their value in int8 / uint8.  Every
conversion is exact, and the way back refuses a storage value with no code, naming it.
This module needs the dtype table only.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType
from onnx_arrow.errors import InvalidTensorError, NotRepresentableError

__all__ = [
    "STRINGS",
    "Strings",
    "check_strings",
    "codes_to_storage",
    "decode_strings",
    "pack",
    "storage_to_codes",
    "unpack",
]


#: How STRING elements come out of onnx-arrow: ``str`` (decoded from UTF-8, as
#: ``onnx.numpy_helper.to_array`` gives them) or ``bytes`` (exactly as stored).
Strings = Literal["str", "bytes"]
STRINGS: Final = ("str", "bytes")


def check_strings(strings: object) -> Strings:
    """``strings`` if it is ``"str"`` or ``"bytes"``; else an error saying so."""
    if strings not in STRINGS:
        raise ValueError(f"strings must be 'str' or 'bytes', got {strings!r}")
    return strings


def decode_strings(
    codes: np.ndarray[Any, Any], *, where: str | None = None
) -> np.ndarray[Any, Any]:
    """An object array of ``bytes`` decoded as UTF-8 into ``str``, in one pass.

    Raises
    ------
    NotRepresentableError
        Naming the first element that is not valid UTF-8, with the way to keep bytes.
    """
    flat = codes.reshape(-1)
    try:
        decoded = pa.array(flat, pa.binary()).cast(pa.string())
    except pa.ArrowInvalid:
        # on the error path only: find the element that is not UTF-8
        bad = next(i for i, b in enumerate(flat) if not _is_utf8(b))
        raise NotRepresentableError(
            f"STRING element {bad} ({flat[bad][:40]!r}) is not valid UTF-8, so it has no "
            "str form; pass strings='bytes' to get the bytes exactly as stored",
            where=where,
        ) from None
    out: np.ndarray[Any, Any] = decoded.to_numpy(zero_copy_only=False)
    return out.reshape(codes.shape)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# --- element forms: codes <-> Arrow storage --------------------------------------------


#: How each minifloat lays out a code: exponent bits, mantissa bits, exponent bias, and
#: which codes are not finite: ``ieee`` (an all-ones exponent is infinity, or NaN with a
#: mantissa), ``fn`` (all ones is NaN, no infinity), ``fnuz`` (the negative zero's code is
#: the NaN), ``finite`` (none), ``unsigned`` (no sign, no mantissa; all ones is NaN).
_MINIFLOATS: Final = {
    "FLOAT8E4M3FN": (4, 3, 7, "fn"),
    "FLOAT8E4M3FNUZ": (4, 3, 8, "fnuz"),
    "FLOAT8E5M2": (5, 2, 15, "ieee"),
    "FLOAT8E5M2FNUZ": (5, 2, 16, "fnuz"),
    "FLOAT4E2M1": (2, 1, 1, "finite"),
    "FLOAT8E8M0": (8, 0, 127, "unsigned"),
    "FLOAT6E2M3": (2, 3, 1, "finite"),
    "FLOAT6E3M2": (3, 2, 3, "finite"),
}


@functools.cache
def _minifloat_tables(
    onnx: int,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32], npt.NDArray[np.uint8]]:
    """float32 bit patterns for every code; sorted patterns with their codes for the inverse.

    Decoded from the code's fields (:data:`_MINIFLOATS`), every value exact in float32,
    as ml_dtypes widens them (a test checks every code against it), except that a NaN
    with a mantissa keeps it as its payload (ml_dtypes quiets the signalling NaNs of
    float8e5m2), so that every code maps to its own float32 and back.  Built without
    ml_dtypes, which a store's reader and an export then need not import.
    """
    row = DTYPES[onnx]
    exp_bits, man_bits, bias, special = _MINIFLOATS[row.name]
    codes = np.arange(1 << row.bits, dtype=np.uint32)
    mantissa = codes & np.uint32((1 << man_bits) - 1)
    exponent = (codes >> np.uint32(man_bits)) & np.uint32((1 << exp_bits) - 1)
    sign = (codes >> np.uint32(exp_bits + man_bits)) & np.uint32(special != "unsigned")
    normal = exponent != 0 if special != "unsigned" else np.ones(codes.size, dtype=bool)
    significand = np.where(normal, 1.0, 0.0) + mantissa / float(1 << man_bits)
    power = np.where(normal, exponent.astype(np.int64) - bias, 1 - bias)
    values = np.where(sign == 1, -1.0, 1.0) * np.ldexp(significand, power)
    with np.errstate(over="ignore"):  # FLOAT8E8M0's all-ones code, past float32: its NaN
        bits = values.astype(np.float32).view(np.uint32).copy()
    top = np.uint32((1 << exp_bits) - 1)
    sign_bit = sign << np.uint32(31)
    payload = sign_bit | np.uint32(0x7F800000) | (mantissa << np.uint32(23 - man_bits))
    if special == "ieee":
        ones = exponent == top
        bits[ones] = payload[ones]  # infinity (no mantissa) or a NaN that keeps its payload
    elif special == "fn":
        ones = (exponent == top) & (mantissa == np.uint32((1 << man_bits) - 1))
        bits[ones] = payload[ones]
    elif special == "fnuz":
        bits[1 << (row.bits - 1)] = np.uint32(0xFFC00000)  # no negative zero: the NaN
    elif special == "unsigned":
        bits[-1] = np.uint32(0x7FC00000)
    order = np.argsort(bits, kind="stable")
    if np.unique(bits).size != bits.size:  # pragma: no cover - guarded by the tests
        raise RuntimeError(f"float32 patterns of {row.name} are not unique")
    return bits, bits[order], codes[order].astype(np.uint8)


@functools.cache
def _value_range(onnx: int) -> tuple[int, int]:
    """The smallest and largest value of a sub-byte integer type."""
    row = DTYPES[onnx]
    if row.arrow_storage == np.int8:
        return -(1 << (row.bits - 1)), (1 << (row.bits - 1)) - 1
    return 0, (1 << row.bits) - 1


def codes_to_storage(codes: np.ndarray[Any, Any], row: DType) -> np.ndarray[Any, Any]:
    """Flat codes of ``row`` to the numpy array behind its Arrow element type."""
    kind = row.arrow_kind
    if kind is ArrowKind.NATIVE or kind is ArrowKind.BINARY:
        return codes
    if kind is ArrowKind.BOOL8:
        return codes.view(np.int8)
    if kind is ArrowKind.COMPLEX:
        return codes.view(row.arrow_storage)
    if kind is ArrowKind.BFLOAT16:
        return (codes.view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
    low = codes.view(np.uint8) & np.uint8((1 << row.bits) - 1)
    if kind is ArrowKind.MINIFLOAT:
        return _minifloat_tables(row.onnx)[0][low].view(np.float32)
    # SUBBYTE_INT: sign-extend the low bits for the signed types
    if row.arrow_storage == np.int8:
        half = np.uint8(1 << (row.bits - 1))
        return ((low ^ half).astype(np.int8) - np.int8(half)).astype(np.int8)
    return low


def storage_to_codes(
    storage: np.ndarray[Any, Any], row: DType, *, where: str | None = None, bits: bool = False
) -> np.ndarray[Any, Any]:
    """The inverse of :func:`codes_to_storage`; raises where a value has no exact code.
    With ``bits``, the codes of an ml_dtypes type come as the integers of their bits
    (:attr:`DType.code_bits`), which is all a message written from them needs."""
    kind = row.arrow_kind
    code = row.code_bits if bits else row.numpy
    if kind is ArrowKind.NATIVE:
        return storage.view(row.numpy) if storage.dtype != row.numpy else storage
    if kind is ArrowKind.BINARY:
        return storage
    if kind is ArrowKind.BOOL8:
        # arrow.bool8 holds true as any non-zero byte, ONNX as 1 only (onnx.proto): a
        # byte other than 0 and 1 is read as the true it stands for, never kept as it is
        if storage.size and storage.view(np.uint8).max(initial=0) > 1:
            return storage != 0
        return storage.view(np.bool_)
    if kind is ArrowKind.COMPLEX:
        return storage.view(row.numpy)
    if kind is ArrowKind.BFLOAT16:
        pattern = storage.view(np.uint32)
        inexact = np.flatnonzero(pattern & np.uint32(0xFFFF))
        if inexact.size:
            _raise_inexact(storage, inexact[0], row, where)
        return (pattern >> np.uint32(16)).astype(np.uint16).view(code)
    if kind is ArrowKind.MINIFLOAT:
        _, sorted_bits, sorted_codes = _minifloat_tables(row.onnx)
        pattern = storage.view(np.uint32)
        index = np.searchsorted(sorted_bits, pattern)
        np.minimum(index, sorted_bits.size - 1, out=index)
        missing = np.flatnonzero(sorted_bits[index] != pattern)
        if missing.size:
            _raise_inexact(storage, missing[0], row, where)
        return sorted_codes[index].view(code)
    low, high = _value_range(row.onnx)
    bad = np.flatnonzero((storage < low) | (storage > high))
    if bad.size:
        raise NotRepresentableError(
            f"element {int(bad[0])} is {storage[bad[0]]}, outside the {row.name} range "
            f"[{low}, {high}]",
            where=where,
        )
    return (storage.view(np.uint8) & np.uint8((1 << row.bits) - 1)).view(code)


def _raise_inexact(
    storage: np.ndarray[Any, Any], index: Any, row: DType, where: str | None
) -> None:
    value = storage[index]
    bits = int(np.float32(value).view(np.uint32))
    raise NotRepresentableError(
        f"element {int(index)} is {value!r} (float32 bits 0x{bits:08x}), which is not exactly "
        f"a {row.name} value; convert it to {row.name} first",
        where=where,
    )


# --- proto storage <-> codes --------------------------------------------------------------


def unpack(
    packed: npt.NDArray[np.uint8], row: DType, count: int, where: str
) -> npt.NDArray[np.uint8]:
    """Sub-byte stream (little-endian, low bits first) to one uint8 code per element."""
    bits = row.bits
    nbytes = row.raw_nbytes(count)
    if packed.size != nbytes:
        raise InvalidTensorError(
            f"{packed.size} bytes of packed {row.name} data, but {count} elements need {nbytes}",
            where=where,
        )
    per_group, group_bytes = _groups(bits)
    groups = -(-count // per_group)
    padded = np.zeros(groups * group_bytes, dtype=np.uint8)
    padded[: packed.size] = packed
    # every group read as one little-endian integer, then split into codes
    words = np.zeros((groups, 4), dtype=np.uint8)
    words[:, :group_bytes] = padded.reshape(groups, group_bytes)
    word = words.view("<u4").reshape(groups)
    shifts = np.arange(per_group, dtype=np.uint32) * np.uint32(bits)
    codes = ((word[:, None] >> shifts) & np.uint32((1 << bits) - 1)).astype(np.uint8).reshape(-1)
    # the codes tile every bit of the whole groups, so any set bit past the last element,
    # in the last byte or in the zeros that complete its group, lands in codes[count:]
    if np.any(codes[count:]):
        raise NotRepresentableError(
            f"the padding bits after the last of {count} packed {row.name} elements are not "
            "zero; they cannot be kept",
            where=where,
        )
    return codes[:count]


def _groups(bits: int) -> tuple[int, int]:
    """Elements per whole group of bytes and that group's bytes: (4, 3) for 6 bits.

    A group holds a whole number of elements and ends on a byte boundary, so each
    reads as one little-endian integer of at most 4 bytes.
    """
    per_group = 8 // math.gcd(8, bits)
    return per_group, per_group * bits // 8


def pack(codes: npt.NDArray[np.uint8], row: DType) -> npt.NDArray[np.uint8]:
    bits = row.bits
    per_group, group_bytes = _groups(bits)
    count = codes.size
    groups = -(-count // per_group)
    padded = np.zeros(groups * per_group, dtype=np.uint32)
    padded[:count] = codes & np.uint8((1 << bits) - 1)
    shifts = np.arange(per_group, dtype=np.uint32) * np.uint32(bits)
    word = np.bitwise_or.reduce(padded.reshape(groups, per_group) << shifts, axis=1)
    out = word.astype("<u4").view(np.uint8).reshape(groups, 4)[:, :group_bytes].reshape(-1)
    return out[: row.raw_nbytes(count)]

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


@functools.cache
def _minifloat_tables(
    onnx: int,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32], npt.NDArray[np.uint8]]:
    """float32 bit patterns for every code; sorted patterns with their codes for the inverse.

    ml_dtypes widens exactly, except that it quiets the signalling NaNs of
    float8e5m2; those keep their payload here, so every code maps to its own
    float32 and back.  Built on first use, which imports ml_dtypes.
    """
    import ml_dtypes

    row = DTYPES[onnx]
    codes = np.arange(1 << row.bits, dtype=np.uint8)
    bits = codes.view(row.numpy).astype(np.float32).view(np.uint32).copy()
    nmant = int(ml_dtypes.finfo(row.numpy).nmant)  # type: ignore[no-untyped-call]
    nan = np.isnan(bits.view(np.float32))
    mantissa = (codes & ((1 << nmant) - 1)).astype(np.uint32)
    payload = nan & (mantissa != 0)
    bits[payload] = (
        (bits[payload] & np.uint32(0x80000000))
        | np.uint32(0x7F800000)
        | (mantissa[payload] << np.uint32(23 - nmant))
    )
    order = np.argsort(bits, kind="stable")
    if np.unique(bits).size != bits.size:  # pragma: no cover - guarded by the tests
        raise RuntimeError(f"float32 patterns of {row.name} are not unique")
    return bits, bits[order], codes[order]


@functools.cache
def _value_range(onnx: int) -> tuple[int, int]:
    import ml_dtypes

    info = ml_dtypes.iinfo(DTYPES[onnx].numpy)  # type: ignore[no-untyped-call]
    return int(info.min), int(info.max)


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
    storage: np.ndarray[Any, Any], row: DType, *, where: str | None = None
) -> np.ndarray[Any, Any]:
    """The inverse of :func:`codes_to_storage`; raises where a value has no exact code."""
    kind = row.arrow_kind
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
        bits = storage.view(np.uint32)
        inexact = np.flatnonzero(bits & np.uint32(0xFFFF))
        if inexact.size:
            _raise_inexact(storage, inexact[0], row, where)
        return (bits >> np.uint32(16)).astype(np.uint16).view(row.numpy)
    if kind is ArrowKind.MINIFLOAT:
        _, sorted_bits, sorted_codes = _minifloat_tables(row.onnx)
        bits = storage.view(np.uint32)
        index = np.searchsorted(sorted_bits, bits)
        np.minimum(index, sorted_bits.size - 1, out=index)
        missing = np.flatnonzero(sorted_bits[index] != bits)
        if missing.size:
            _raise_inexact(storage, missing[0], row, where)
        return sorted_codes[index].view(row.numpy)
    low, high = _value_range(row.onnx)
    bad = np.flatnonzero((storage < low) | (storage > high))
    if bad.size:
        raise NotRepresentableError(
            f"element {int(bad[0])} is {storage[bad[0]]}, outside the {row.name} range "
            f"[{low}, {high}]",
            where=where,
        )
    return (storage.view(np.uint8) & np.uint8((1 << row.bits) - 1)).view(row.numpy)


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

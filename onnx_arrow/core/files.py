"""Reading ``.pb`` files: regular files only, size-capped, data aligned, no extra copy."""

from __future__ import annotations

import contextlib
import io
import os
import stat
import warnings
from typing import Any, Final

import numpy as np
import pyarrow as pa

from onnx_arrow.core import _wire
from onnx_arrow.core._open import NO_FOLLOW, OPEN_FLAGS, as_path, file_kind
from onnx_arrow.core.declarations import Contradiction, diagnosis
from onnx_arrow.core.graph import declared_type_text
from onnx_arrow.core.kinds import TENSOR
from onnx_arrow.core.protos import TensorProto, TypeProto
from onnx_arrow.core.tensor_wire import FIXED_WIDTH_FIELDS
from onnx_arrow.core.types import kind_of_type
from onnx_arrow.core.values import to_arrow_serialized
from onnx_arrow.errors import (
    DeclarationWarning,
    ExternalDataError,
    InvalidMessageError,
    OnnxArrowError,
)

__all__ = ["MAX_FILE_BYTES", "read_pb"]

#: Largest ``.pb`` file :func:`read_pb` reads unless told otherwise (16 GiB).
MAX_FILE_BYTES: Final = 16 << 30
_ALIGNMENT: Final = 64
#: How much of the file is read first to find where the data starts: the fields before
#: ``raw_data`` (dims, data_type, name) are small.
_HEAD_BYTES: Final = 1 << 16
#: The fields whose payload is viewed in place as fixed-width elements, so worth aligning.
_ALIGNED_FIELDS: Final = frozenset(
    TensorProto.DESCRIPTOR.fields_by_name[name].number for name in ("raw_data", *FIXED_WIDTH_FIELDS)
)


def read_pb(
    path: str | os.PathLike[str],
    declared: TypeProto | None = None,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    exact: bool = False,
    follow_symlinks: bool = True,
) -> pa.Array:
    """Read one ``.pb`` file into a one-row array, as :func:`onnx_arrow.to_arrow` gives.

    The file holds a ``TensorProto``, or the message ``declared`` (an
    ``onnx.TypeProto``) declares.  It is read once, straight into a buffer placed
    so that a tensor's data is 64-byte aligned, and the Arrow array points into that
    buffer: no other copy of the data is made.  Only regular files are read (a FIFO
    or a device is an error, never a hang), at most ``max_bytes``.  External data is
    resolved against ``base_dir``.  With ``exact=True`` the array is an
    ``onnx.message`` array that gives the file's message back byte for byte.
    With ``follow_symlinks=False`` a path whose last component is a symbolic link is
    refused (as a file found inside a folder should be).

    A value that contradicts ``declared`` (another element type, rank or size: a
    ``[2, 3]`` tensor where a scalar is declared) is read exactly with its own type, with
    a :class:`~onnx_arrow.errors.DeclarationWarning` naming the file, the declaration and
    what the data holds: the verdict the corpus import gives the same file.

    Raises
    ------
    InvalidMessageError
        The path is not a readable regular file, is larger than ``max_bytes``,
        changed while being read, or does not hold a valid message; the error
        names the path, and what the file holds instead where it can tell (a message
        of another kind and its name, an ONNX model).
    """
    where = as_path(path, where="path")
    if base_dir is not None:
        base_dir = as_path(base_dir, where="base_dir")
    data = _read_aligned(where, max_bytes, follow_symlinks)
    # which message the file holds comes from the declared type, never from the bytes
    kind = None if declared is not None else TENSOR

    def contradicting(row: int, found: Contradiction) -> None:
        warnings.warn(found.message(where), DeclarationWarning, stacklevel=4)

    try:
        array = to_arrow_serialized(
            [data.data],
            kind,
            declared,
            base_dir=base_dir,
            where=f"{where}: ",
            zero_copy=True,
            contradicting=contradicting,
        )
    except ExternalDataError:
        raise
    except OnnxArrowError as exc:
        # the bytes are no message of the kind read: say what they are, if anything
        try:
            read = TENSOR if declared is None else kind_of_type(declared).name
        except OnnxArrowError:  # a declaration onnx-arrow does not take: said as it is
            raise exc from None
        said = diagnosis(data.data, read)
        if said is None:
            raise
        what = "a TensorProto" if declared is None else declared_type_text(declared)
        raise InvalidMessageError(f"does not decode as {what}: {said}", where=where) from None
    return array if exact else array.storage.field("value")


def _read_aligned(path: str, max_bytes: int, follow_symlinks: bool) -> np.ndarray[Any, Any]:
    """The bytes of the file at ``path``, placed so that its first payload is aligned."""
    try:
        fd = os.open(path, OPEN_FLAGS | (0 if follow_symlinks else NO_FOLLOW))
    except OSError as exc:
        if not follow_symlinks and os.path.islink(path):
            raise InvalidMessageError(
                "a symbolic link, not a regular file; a folder's files are read only "
                "where they are",
                where=path,
            ) from None
        raise InvalidMessageError(f"cannot open: {exc.strerror}", where=path) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidMessageError(
                f"{file_kind(info.st_mode)}, not a regular file; pass a .pb file", where=path
            )
        size = info.st_size
        if size > max_bytes:
            raise InvalidMessageError(
                f"{size} bytes exceed the limit of {max_bytes}; raise max_bytes to read it",
                where=path,
            )
        f = io.FileIO(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    with f:
        # The head is read once: parsed to find the payload, then copied into place.
        head = bytearray(min(size, _HEAD_BYTES))
        _read_fully(f, memoryview(head), 0, size, path)
        offset = _first_payload_offset(head)
        buffer = np.empty(size + _ALIGNMENT, dtype=np.uint8)
        shift = (-(buffer.ctypes.data + offset)) % _ALIGNMENT
        out = buffer[shift : shift + size]
        out[: len(head)] = np.frombuffer(head, dtype=np.uint8)
        _read_fully(f, out.data[len(head) :], len(head), size, path)
        if _read_into(f, memoryview(bytearray(1)), path):
            raise InvalidMessageError(
                f"the file holds more than the {size} bytes its size gave; it changed while "
                "being read, or is not a plain file",
                where=path,
            )
    return out


def _read_fully(f: io.FileIO, view: memoryview, done: int, size: int, path: str) -> None:
    """Fill ``view`` from the file's current position (``done`` bytes into ``size``)."""
    filled = 0
    while filled < len(view):
        n = _read_into(f, view[filled:], path)
        if n == 0:
            raise InvalidMessageError(
                f"the file shrank while being read ({done + filled} of {size} bytes)", where=path
            )
        filled += n


def _read_into(f: io.FileIO, view: memoryview, path: str) -> int:
    try:
        return f.readinto(view) or 0
    except OSError as exc:
        raise InvalidMessageError(f"cannot read: {exc.strerror}", where=path) from None


def _first_payload_offset(head: bytearray) -> int:
    """Where a ``TensorProto``'s first fixed-width payload starts; only its tag need be in ``head``.

    The fields before it are skipped whole; the payload itself may run past the end
    of ``head``.  0 when it is not found (nothing then is aligned but the start of
    the file): a malformed message is reported by the decoder, not here.
    """
    buf = memoryview(head)
    pos = 0
    # a field cut off by the end of head, or a malformed one, ends the search
    with contextlib.suppress(InvalidMessageError):
        while pos < len(buf):
            tag, after_tag = _wire.read_varint(buf, pos, len(buf), "head")
            if (tag >> 3) in _ALIGNED_FIELDS and (tag & 7) == _wire.LEN:
                return _wire.read_varint(buf, after_tag, len(buf), "head")[1]
            pos = next(_wire.iter_fields(buf, pos, what="head")).end
    return 0

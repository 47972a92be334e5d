"""Reading ``.pb`` files: regular files only, size-capped, data aligned, no extra copy."""

from __future__ import annotations

import os
import stat
from typing import Any, Final

import numpy as np
import pyarrow as pa
from onnx import TypeProto

from onnx_arrow.core import _wire
from onnx_arrow.core.tensors import RAW_DATA
from onnx_arrow.core.values import _to_arrow_serialized
from onnx_arrow.errors import InvalidMessageError

__all__ = ["MAX_FILE_BYTES", "read_pb"]

#: Largest ``.pb`` file :func:`read_pb` reads unless told otherwise (16 GiB).
MAX_FILE_BYTES: Final = 16 << 30
_ALIGNMENT: Final = 64


def read_pb(
    path: str | os.PathLike[str],
    type: TypeProto | None = None,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> pa.ExtensionArray:
    """Read one ``.pb`` file holding a ``TensorProto`` into a one-row array.

    The file is read once into a buffer placed so that the tensor data is
    64-byte aligned, and the Arrow array points into that buffer: no other copy
    of the data is made.  Only regular files are read (a FIFO or a device is an
    error, never a hang), at most ``max_bytes``.  External data is resolved
    against ``base_dir``.
    """
    where = os.fspath(path)
    data = _read_aligned(where, max_bytes)
    return _to_arrow_serialized([data.data], type, base_dir=base_dir, where=f"{where}: ")


def _read_aligned(path: str, max_bytes: int) -> np.ndarray[Any, Any]:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InvalidMessageError(f"cannot open: {exc.strerror}", where=path) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidMessageError(
                "not a regular file (a FIFO, device or directory); pass a .pb file", where=path
            )
        size = info.st_size
        if size > max_bytes:
            raise InvalidMessageError(
                f"{size} bytes exceed the limit of {max_bytes}; raise max_bytes to read it",
                where=path,
            )
        head = os.pread(fd, min(size, 1 << 16), 0)
        offset = _first_payload_offset(head)
        raw = np.empty(size + _ALIGNMENT, dtype=np.uint8)
        shift = (-(raw.ctypes.data + offset)) % _ALIGNMENT
        out = raw[shift:][:size]
        view = out.data
        done = 0
        while done < size:
            n = os.preadv(fd, [view[done:]], done)
            if n == 0:
                raise InvalidMessageError(
                    f"the file shrank while being read ({done} of {size} bytes)", where=path
                )
            done += n
        return out
    finally:
        os.close(fd)


def _first_payload_offset(head: bytes) -> int:
    """Where the first bulk payload (raw_data or a packed field) starts, if within ``head``."""
    try:
        for f in _wire.iter_fields(memoryview(head)):
            if f.wire_type == _wire.LEN and (f.number == RAW_DATA or f.number in (4, 10)):
                return f.value_start
    except InvalidMessageError:
        pass  # truncated head: the payload starts beyond it
    return 0

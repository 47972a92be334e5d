"""The PNG encoder of the pictures: ``uint8`` pixels to PNG bytes with zlib and struct,
no imaging library."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from onnx_arrow.errors import UnsupportedTypeError

__all__ = ["png"]


def png(pixels: np.ndarray[Any, Any]) -> bytes:
    """Encode ``uint8`` pixels ``[H, W]`` (grey), ``[H, W, 3]`` (RGB) or ``[H, W, 4]`` (RGBA).

    >>> data = png(np.zeros((2, 3, 3), np.uint8))
    >>> data[:8] == b"\\x89PNG\\r\\n\\x1a\\n", struct.unpack(">II", data[16:24])
    (True, (3, 2))
    """
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    channels = pixels.shape[2]
    color_type = {1: 0, 3: 2, 4: 6}.get(channels)
    if pixels.ndim != 3 or color_type is None or pixels.dtype != np.uint8:
        raise UnsupportedTypeError(
            f"pixels of shape {pixels.shape} and dtype {pixels.dtype}; expected uint8 "
            "[H, W], [H, W, 3] or [H, W, 4]"
        )
    height, width = pixels.shape[:2]
    rows = pixels.reshape(height, width * channels)
    raw = np.hstack([np.zeros((height, 1), np.uint8), rows])  # filter type 0 on each row
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(np.ascontiguousarray(raw).tobytes(), 9))
        + _chunk(b"IEND", b"")
    )


def _chunk(tag: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(tag + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", crc)

"""The PNG encoder: sizes, colour types and pixels a decoder reads back."""

from __future__ import annotations

import numpy as np
import pytest
from display_helpers import decode

import onnx_arrow
from onnx_arrow import jupyter


def test_png_encodes_sizes_and_colour_types() -> None:
    for shape, color_type in (((5, 7), 0), ((5, 7, 3), 2), ((5, 7, 4), 6)):
        pixels = np.arange(np.prod(shape), dtype=np.uint8).reshape(shape)
        width, height, ct, decoded = decode(jupyter.png(pixels))
        assert (width, height, ct) == (7, 5, color_type)
        assert np.array_equal(decoded.reshape(shape), pixels)


def test_png_refuses_other_pixels() -> None:
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match="uint8"):
        jupyter.png(np.zeros((2, 2), np.float32))

"""The PNG encoder: sizes, colour types and pixels a decoder reads back."""

from __future__ import annotations

import io
import struct
from typing import Any

import numpy as np
import pytest
from display_helpers import decode

import onnx_arrow
from onnx_arrow import jupyter
from onnx_arrow.jupyter.png_encoder import png


def test_png_encodes_sizes_and_colour_types() -> None:
    for shape, color_type in (((5, 7), 0), ((5, 7, 3), 2), ((5, 7, 4), 6)):
        pixels = np.arange(np.prod(shape), dtype=np.uint8).reshape(shape)
        width, height, ct, decoded = decode(jupyter.png(pixels))
        assert (width, height, ct) == (7, 5, color_type)
        assert np.array_equal(decoded.reshape(shape), pixels)


def test_png_refuses_other_pixels() -> None:
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match="uint8"):
        jupyter.png(np.zeros((2, 2), np.float32))


@pytest.mark.parametrize(
    ("shape", "mode"), [((9, 13), "L"), ((9, 13, 3), "RGB"), ((9, 13, 4), "RGBA")]
)
def test_a_real_decoder_reads_the_pixels_back(shape: tuple[int, ...], mode: str) -> None:
    image_module = pytest.importorskip("PIL.Image")
    pixels = np.random.default_rng(4).integers(0, 256, shape, dtype=np.uint8)
    image = image_module.open(io.BytesIO(png(pixels)))
    image.load()  # decodes every chunk and checks the CRCs
    assert (image.mode, image.size) == (mode, (13, 9))
    assert np.array_equal(np.asarray(image), pixels)


def test_a_strided_view_is_encoded_as_its_values() -> None:
    base = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)
    for view in (base[::2, ::3], base.transpose(1, 0, 2), base[:, :, ::-1]):
        width, height, _, decoded = decode(png(view))
        assert (height, width) == view.shape[:2]
        assert np.array_equal(decoded, view)


def test_the_chunks_are_header_data_end_with_their_lengths() -> None:
    data = png(np.full((3, 2), 7, np.uint8))
    pos, tags = 8, []
    while pos < len(data):
        (size,) = struct.unpack(">I", data[pos : pos + 4])
        tags.append(data[pos + 4 : pos + 8])
        pos += 12 + size
    assert pos == len(data)
    assert tags == [b"IHDR", b"IDAT", b"IEND"]
    assert struct.unpack(">IIBBBBB", data[16:29]) == (2, 3, 8, 0, 0, 0, 0)


@pytest.mark.parametrize(
    "pixels",
    [
        np.zeros((2, 2, 2), np.uint8),
        np.zeros((2, 2, 5), np.uint8),
        np.zeros((1, 2, 2, 3), np.uint8),
    ],
    ids=["two-channels", "five-channels", "four-axes"],
)
def test_shapes_other_than_grey_rgb_rgba_are_refused(pixels: np.ndarray[Any, Any]) -> None:
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match=r"\[H, W, 3\]"):
        png(pixels)

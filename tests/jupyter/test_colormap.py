"""The colormap: viridis to within a few 1/255 of matplotlib's, and off-scale colours it
never comes near."""

from __future__ import annotations

import numpy as np
import pytest

from onnx_arrow.jupyter.colormap import (
    COLORMAP,
    NAN_COLOR,
    NEGINF_COLOR,
    PAD_COLOR,
    POSINF_COLOR,
    hex_color,
)

OFF_SCALE = (NAN_COLOR, POSINF_COLOR, NEGINF_COLOR, PAD_COLOR)


def test_the_table_is_256_rgb_rows_from_dark_blue_to_yellow() -> None:
    assert COLORMAP.shape == (256, 3)
    assert COLORMAP.dtype == np.uint8
    red, green, blue = (int(c) for c in COLORMAP[0])
    assert blue > max(red, green)  # dark blue-violet
    red, green, blue = (int(c) for c in COLORMAP[255])
    assert min(red, green) > 200  # yellow
    assert blue < 60


def test_the_table_is_matplotlibs_viridis() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    reference = np.round(matplotlib.colormaps["viridis"](np.arange(256))[:, :3] * 255)
    error = np.abs(reference - COLORMAP)
    assert error.max() <= 4
    assert error.mean() < 1


def test_brightness_rises_from_low_to_high() -> None:
    luminance = COLORMAP.astype(np.float64) @ [0.2126, 0.7152, 0.0722]
    assert np.diff(luminance).min() > -1  # no step down beyond rounding
    assert luminance[-1] - luminance[0] > 150


@pytest.mark.parametrize("color", OFF_SCALE, ids=["nan", "+inf", "-inf", "pad"])
def test_off_scale_colours_are_far_from_every_colour_of_the_scale(
    color: tuple[int, int, int],
) -> None:
    distance = np.abs(COLORMAP.astype(np.int64) - color).max(axis=1)
    assert distance.min() > 100
    assert len(set(OFF_SCALE)) == len(OFF_SCALE)


def test_hex_color() -> None:
    assert hex_color(NAN_COLOR) == "#ff00ff"
    assert hex_color(PAD_COLOR) == "#cccccc"
    assert hex_color((0, 10, 255)) == "#000aff"

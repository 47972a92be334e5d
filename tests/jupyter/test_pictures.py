"""Pictures of values: heatmaps and their legends, images, folding and sampling."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from display_helpers import decode, legend_of, pngs

from onnx_arrow import jupyter
from onnx_arrow.jupyter.pictures import side_by_side


def test_heatmap_shows_nan_in_its_own_colour() -> None:
    x = np.zeros((4, 4), np.float32)
    x[1, 2] = np.nan
    x[3, 3] = 1.0
    (picture,) = pngs(jupyter.html(x))
    width, _height, _, pixels = decode(picture)
    cell = width // 4
    assert tuple(pixels[1 * cell, 2 * cell]) == jupyter.NAN_COLOR
    assert tuple(pixels[0, 0]) == tuple(jupyter.COLORMAP[0])
    assert tuple(pixels[3 * cell, 3 * cell]) == tuple(jupyter.COLORMAP[255])
    assert not (jupyter.COLORMAP == jupyter.NAN_COLOR).all(axis=1).any()


def test_heatmap_of_the_last_two_axes() -> None:
    html = jupyter.html(np.random.default_rng(0).random((2, 5, 8, 16)))
    assert "heatmap of [0, 0, :, :]" in html
    width, height, _, _ = decode(pngs(html)[0])
    assert (width, height) == (128, 64)


@pytest.mark.parametrize(
    ("shape", "dtype", "layout"),
    [
        ((16, 24, 3), np.uint8, "image, channels last (HWC)"),
        ((16, 24, 4), np.uint8, "image, channels last (HWC)"),
        ((3, 16, 24), np.float32, "image, channels first (CHW)"),
        ((1, 16, 24), np.float32, "image, channels first (CHW)"),
        ((2, 3, 16, 24), np.float32, "image of [0] (NCHW)"),
    ],
)
def test_image_like_tensors_are_pictures(shape: tuple[int, ...], dtype: Any, layout: str) -> None:
    rng = np.random.default_rng(1)
    values = rng.integers(0, 256, shape).astype(dtype)
    if dtype == np.float32:
        values /= 255
    html = jupyter.html(values)
    assert layout in html
    width, height, color_type, pixels = decode(pngs(html)[0])
    assert (width, height) == (120, 80)  # 24x16 upscaled 5 times
    last = "HWC" in layout
    channels = 1 if 1 in shape[-3:-2] else (shape[-1] if last else 3)
    assert color_type == {1: 0, 3: 2, 4: 6}[channels]
    if last:
        assert np.array_equal(pixels[::5, ::5], values)


def test_floats_outside_0_1_are_a_heatmap_not_an_image() -> None:
    html = jupyter.html(np.full((3, 8, 8), 2.0, np.float32))
    assert "image (" not in html
    assert "heatmap" in html


def test_huge_tensor_gives_bounded_html() -> None:
    big = np.random.default_rng(2).random((4096, 4096), dtype=np.float32)
    html = jupyter.html(big)
    assert len(html) < 200_000
    assert "[4096, 4096]" in html
    assert "16777216 elements" in html
    width, height, _, _ = decode(pngs(html)[0])
    assert max(width, height) <= 256


def test_infinities_are_drawn_as_themselves_and_the_legend_names_every_colour() -> None:
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    x[0, 1], x[2, 2], x[3, 0] = np.inf, -np.inf, np.nan
    html = jupyter.html(x)
    (picture,) = pngs(html)
    width, _, _, pixels = decode(picture)
    cell = width // 4
    assert tuple(pixels[0, 1 * cell]) == jupyter.POSINF_COLOR
    assert tuple(pixels[2 * cell, 2 * cell]) == jupyter.NEGINF_COLOR
    assert tuple(pixels[3 * cell, 0]) == jupyter.NAN_COLOR
    # the largest finite value, not +inf, is the top of the scale
    assert tuple(pixels[3 * cell, 3 * cell]) == tuple(jupyter.COLORMAP[255])
    legend = legend_of(html)
    assert 'aria-label="colour scale, -1 to 1"' in legend
    for label, color in (
        ("NaN", jupyter.NAN_COLOR),
        ("+inf", jupyter.POSINF_COLOR),
        ("-inf", jupyter.NEGINF_COLOR),
    ):
        assert f'background:#{"".join(f"{c:02x}" for c in color)}"></span>{label}' in legend
    for color in (jupyter.NAN_COLOR, jupyter.POSINF_COLOR, jupyter.NEGINF_COLOR):
        assert not (color == jupyter.COLORMAP).all(axis=1).any()


def test_the_legend_names_only_the_colours_the_picture_shows() -> None:
    legend = legend_of(jupyter.html(np.arange(12, dtype=np.float32).reshape(3, 4)))
    assert "colour scale, 0 to 11" in legend
    assert "NaN" not in legend
    assert "inf" not in legend


def test_a_long_row_is_folded_to_a_readable_picture() -> None:
    logits = np.linspace(-5, 5, 1000, dtype=np.float32).reshape(1, 1000)
    html = jupyter.html(logits)
    (picture,) = pngs(html)
    width, height, _, pixels = decode(picture)
    assert width <= 4 * height  # not a hairline
    assert "folded in order into 23 rows of 45" in html
    assert tuple(pixels[-1, -1]) == jupyter.PAD_COLOR  # past the 1000th element
    assert "past the last element" in legend_of(html)
    assert tuple(pixels[0, 0]) == tuple(jupyter.COLORMAP[0])  # the first element, the lowest
    tall = jupyter.html(logits.reshape(1000, 1))
    assert "folded in order" in tall


def test_sampling_keeps_a_lone_nan_in_sight() -> None:
    big = np.random.default_rng(3).random((1000, 1000), dtype=np.float32)
    big[501, 333] = np.nan
    html = jupyter.html(big)
    _, _, _, pixels = decode(pngs(html)[0])
    assert (pixels == jupyter.NAN_COLOR).all(axis=2).any()
    assert "every 8th row and 8th column" in html


@pytest.mark.parametrize(
    "values",
    [
        np.ones((8, 3, 3, 3), np.float32),  # a convolution's weights
        np.ones((64, 3, 11, 11), np.float32),  # AlexNet's first convolution
        np.full((1, 3, 32, 32), 0.5, np.float32),  # constant: nothing to see as an image
        np.zeros((3, 20, 20), np.uint8),
    ],
    ids=["conv-3x3", "conv-11x11", "constant-float", "constant-uint8"],
)
def test_no_image_guess_where_an_image_is_unlikely(values: np.ndarray[Any, Any]) -> None:
    html = jupyter.html(values)
    assert "<figcaption>image" not in html
    assert "heatmap of [0, 0, :, :]" in html or "heatmap of [0, :, :]" in html


def test_side_by_side_draws_both_tensors_and_their_ulp_distance() -> None:
    a = np.zeros((4, 4), np.float32)
    b = a.copy()
    b[1, 1] = np.nextafter(np.float32(0), np.float32(1)) * 3  # 3 ULP from 0
    b[2, 3] = np.nan  # NaN on one side only
    section = side_by_side(a, b, ("old", "new"))
    captions = [p.caption for p in section.pictures]
    assert captions[0].startswith("old: heatmap")
    assert captions[1].startswith("new: heatmap")
    assert captions[2].startswith("ULP distance: heatmap")
    assert captions[2].endswith(", at most 3 ULP")
    assert section.pictures[2].scale == ("0", "3")
    assert ("NaN", "#ff00ff") in section.pictures[2].keys
    width, _, _, pixels = decode(section.pictures[2].png)
    cell = width // 4
    assert tuple(pixels[cell, cell]) == tuple(jupyter.COLORMAP[255])
    assert tuple(pixels[2 * cell, 3 * cell]) == jupyter.NAN_COLOR
    assert tuple(pixels[0, 0]) == tuple(jupyter.COLORMAP[0])


def test_side_by_side_of_integers_counts_the_elements_that_differ() -> None:
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    section = side_by_side(a, a * (a != 4), ("expected", "actual"))
    assert section.pictures[2].caption.startswith("elements that differ: heatmap")
    assert section.pictures[2].caption.endswith(", 1 of 6")
    flat = side_by_side(a.reshape(-1), a.reshape(-1) + 1, ("old", "new"))
    assert not flat.pictures
    assert flat.note == "elements that differ: 6 of 6 (no picture for fewer than 2 dimensions)"
    other = side_by_side(a, a.astype(np.int32), ("old", "new"))
    assert other.note == "no difference picture: int64[2, 3] vs int32[2, 3]"
    assert not other.pictures


def test_side_by_side_pictures_share_one_colour_scale() -> None:
    expected = np.linspace(1.0, 16.0, 16, dtype=np.float32).reshape(4, 4)
    actual = expected.copy()
    actual[3, 3] = 14.95  # the largest element off by 1.05: its own scale would hide it
    section = side_by_side(expected, actual, ("expected", "actual"))
    first, second, difference = section.pictures
    assert first.scale == second.scale == ("1", "16")
    assert first.scale_note == second.scale_note == "one scale for expected and actual"
    assert difference.scale_note is None
    width, _, _, a = decode(first.png)
    _, _, _, b = decode(second.png)
    cell = width // 4
    assert tuple(a[0, 0]) == tuple(b[0, 0]) == tuple(jupyter.COLORMAP[0])
    assert tuple(a[3 * cell, 3 * cell]) == tuple(jupyter.COLORMAP[255])
    assert tuple(b[3 * cell, 3 * cell]) != tuple(jupyter.COLORMAP[255])
    from onnx_arrow.jupyter.render import render_html

    legend = render_html([section])
    assert legend.count("one scale for expected and actual") == 4  # two labels, two legends


def test_images_keep_their_own_colours_side_by_side() -> None:
    image = np.zeros((16, 16, 3), np.uint8)
    image[4:12, 4:12] = 200
    section = side_by_side(image, image // 2, ("expected", "actual"))
    assert [p.kind for p in section.pictures[:2]] == ["image", "image"]
    assert section.pictures[0].scale_note is None
    gray = image[None, :, :, 0] / 255.0  # an image channels first; twice it is not one
    mixed = side_by_side(gray, gray * 2, ("expected", "actual"))
    assert [p.kind for p in mixed.pictures[:2]] == ["heatmap", "heatmap"]
    assert mixed.pictures[0].scale == mixed.pictures[1].scale
    assert mixed.pictures[1].scale == ("0", repr(400 / 255))  # the scale reads back exactly

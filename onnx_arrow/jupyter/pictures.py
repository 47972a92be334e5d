"""Pictures of values: a tensor as an image or a heatmap with its legend (scale and
off-scale colours), folded when long, sampled when large; two tensors and their difference
side by side."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from onnx_arrow.core.model import dtype_of_numpy, ulp_distance
from onnx_arrow.jupyter.colormap import (
    COLORMAP,
    NAN_COLOR,
    NEGINF_COLOR,
    PAD_COLOR,
    POSINF_COLOR,
    hex_color,
)
from onnx_arrow.jupyter.png_encoder import png
from onnx_arrow.jupyter.sections import Picture, Section
from onnx_arrow.text import number, numeric

__all__ = [
    "MAX_ASPECT",
    "MAX_SAMPLES",
    "MIN_IMAGE_SIDE",
    "PICTURE_PX",
    "picture_of",
    "side_by_side",
]

#: A picture's larger side is upscaled (nearest neighbour) to about this many pixels.
PICTURE_PX: Final = 128
#: A picture samples at most this many elements along each axis.
MAX_SAMPLES: Final = 128
#: A tensor is drawn as an image only if both its sides have at least this many pixels.
MIN_IMAGE_SIDE: Final = 16
#: A plane longer than this many times its width (or the other way) is folded.
MAX_ASPECT: Final = 8


def _block_any(mask: np.ndarray[Any, Any], steps: Sequence[int]) -> np.ndarray[Any, Any]:
    """Whether any element of each ``steps`` block is set: what sampling must not hide."""
    h, w = mask.shape[:2]
    rows, cols = math.ceil(h / steps[0]), math.ceil(w / steps[1])
    padded = np.zeros((rows * steps[0], cols * steps[1]), dtype=bool)
    padded[:h, :w] = mask
    return np.asarray(padded.reshape(rows, steps[0], cols, steps[1]).any(axis=(1, 3)))


def _steps(shape: Sequence[int]) -> list[int]:
    """Every k-th row and column, so that at most :data:`MAX_SAMPLES` of each are drawn."""
    return [max(1, math.ceil(n / MAX_SAMPLES)) for n in shape[:2]]


def _upscale(pixels: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    factor = max(1, PICTURE_PX // max(pixels.shape[0], pixels.shape[1]))
    if factor > 1:
        pixels = np.repeat(np.repeat(pixels, factor, axis=0), factor, axis=1)
    return pixels


def _image_plane(values: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], str] | None:
    """The ``[H, W, C]`` picture of a tensor that is likely an image, and what it shows.

    Likely means: channels last (3 or 4) or first (1 or 3), both sides at least
    :data:`MIN_IMAGE_SIDE` (so that a convolution's 3x3 or 11x11 kernels stay heatmaps),
    uint8 or floats in [0, 1], and not one constant value.
    """
    shape = values.shape
    big = MIN_IMAGE_SIDE
    if values.ndim == 3 and shape[2] in (3, 4) and min(shape[:2]) >= big:
        plane, what = values, "image, channels last (HWC)"
    elif values.ndim == 3 and shape[0] in (1, 3) and min(shape[1:]) >= big:
        plane, what = np.moveaxis(values, 0, -1), "image, channels first (CHW)"
    elif values.ndim == 4 and shape[1] in (1, 3) and min(shape[2:]) >= big:
        plane, what = np.moveaxis(values[0], 0, -1), "image of [0] (NCHW)"
    else:
        return None
    if plane.dtype == np.uint8:
        if plane.min() == plane.max():
            return None
        pixels = plane[:: _steps(plane.shape)[0], :: _steps(plane.shape)[1]]
    elif plane.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            finite = bool(np.isfinite(plane).all())
            if not (finite and plane.min() >= 0.0 and plane.max() <= 1.0):
                return None
            if plane.min() == plane.max():
                return None
        steps = _steps(plane.shape)
        pixels = np.round(plane[:: steps[0], :: steps[1]] * 255).astype(np.uint8)
    else:
        return None
    if any(n > MAX_SAMPLES for n in plane.shape[:2]):
        what += ", sampled"
    if pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    return np.ascontiguousarray(pixels), what


def _fold(plane: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], str]:
    """A plane of a readable aspect ratio: a very long or very tall one (``[1, 1000]``
    logits) is folded, its elements in order, into rows about twice as long as the
    picture is tall; the mask marks the padding past the last element."""
    h, w = plane.shape
    if max(h, w) <= MAX_ASPECT * min(h, w):
        return plane, np.zeros(plane.shape, dtype=bool), ""
    n = plane.size
    width = math.ceil(math.sqrt(2 * n))
    rows = math.ceil(n / width)
    flat = np.zeros(rows * width, dtype=plane.dtype)
    flat[:n] = plane.reshape(-1)
    pad = np.zeros(rows * width, dtype=bool)
    pad[n:] = True
    what = f", folded in order into {rows} rows of {width}"
    return flat.reshape(rows, width), pad.reshape(rows, width), what


def _plane(values: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], str]:
    """The plane a heatmap draws: the last two axes of the first item (magnitudes of
    complex values), folded when long; the mask of its padding, and what it shows."""
    lead = (0,) * (values.ndim - 2)
    what = "heatmap" if not lead else f"heatmap of [{', '.join(['0'] * len(lead))}, :, :]"
    plane = values[lead]
    if plane.dtype.kind == "c":
        plane = np.abs(plane)
        what += " (magnitudes)"
    plane, pad, folded = _fold(plane.astype(np.float64))
    return plane, pad, what + folded


def _finite_range(values: np.ndarray[Any, Any]) -> tuple[float, float] | None:
    """The lowest and highest finite value of the plane a heatmap of ``values`` draws."""
    plane, pad, _ = _plane(values)
    finite = np.isfinite(plane) & ~pad
    if not finite.any():
        return None
    return float(plane[finite].min()), float(plane[finite].max())


def _heatmap_plane(
    values: np.ndarray[Any, Any], bounds: tuple[float, float] | None = None
) -> tuple[np.ndarray[Any, Any], str, tuple[str, str] | None, list[tuple[str, str]]]:
    """The RGB heatmap of the last two axes of the first item; what it shows, its scale
    (``bounds``, else its lowest and highest finite value) and the colours of what is not
    on the scale."""
    plane, pad, what = _plane(values)
    finite = np.isfinite(plane) & ~pad
    if bounds is not None:
        lo, hi = bounds
    elif finite.any():
        lo, hi = float(plane[finite].min()), float(plane[finite].max())
    else:
        lo = hi = 0.0
    steps = _steps(plane.shape)
    if steps != [1, 1]:
        what += f", every {_nth(steps[0])} row and {_nth(steps[1])} column"
    sampled = plane[:: steps[0], :: steps[1]]
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = (np.clip(sampled, lo, hi) - lo) / (hi - lo) if hi > lo else np.zeros_like(sampled)
    codes = np.round(np.nan_to_num(scaled, nan=0.0, posinf=1.0, neginf=0.0) * 255)
    pixels = COLORMAP[codes.astype(np.intp)]
    keys: list[tuple[str, str]] = []
    # drawn last to first priority: a block holding NaN shows NaN, whatever else it holds
    specials = (
        ("past the last element", pad, PAD_COLOR),
        ("-inf", np.isneginf(plane), NEGINF_COLOR),
        ("+inf", np.isposinf(plane), POSINF_COLOR),
        ("NaN", np.isnan(plane) & ~pad, NAN_COLOR),
    )
    for label, mask, color in specials:
        if mask.any():
            pixels[_block_any(mask, steps)] = color
            keys.append((label, hex_color(color)))
    scale = (number(lo), number(hi)) if bounds is not None or finite.any() else None
    return pixels, what, scale, keys[::-1]


def _nth(k: int) -> str:
    if k == 1:
        return ""
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def picture_of(
    array: np.ndarray[Any, Any], *, bounds: tuple[float, float] | None = None
) -> Picture | None:
    """The picture of a numeric tensor of at least two dimensions: an image if it likely
    is one, else a heatmap with its legend; None for any other value.  With ``bounds``
    (lowest, highest), always a heatmap, on that colour scale."""
    values = numeric(array)
    if values is None or values.ndim < 2 or values.size == 0:
        return None
    image = None if bounds is not None else _image_plane(values)
    scale: tuple[str, str] | None = None
    keys: list[tuple[str, str]] = []
    if image is not None:
        pixels, caption = image
        kind = "image"
    else:
        pixels, caption, scale, keys = _heatmap_plane(values, bounds)
        kind = "heatmap"
    pixels = _upscale(pixels)
    height, width = pixels.shape[:2]
    return Picture(png(pixels), caption, width, height, kind=kind, scale=scale, keys=keys)


def _shared_bounds(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> tuple[float, float] | None:
    """One colour scale for the heatmaps of two tensors of one shape, from the lowest to the
    highest finite value of either; None when both are drawn as images (whose colours mean
    the same on both sides already) or neither has a finite value to draw."""
    va, vb = numeric(a), numeric(b)
    if va is None or vb is None or va.ndim < 2 or va.size == 0:
        return None
    if _image_plane(va) is not None and _image_plane(vb) is not None:
        return None
    ranges = [r for r in (_finite_range(va), _finite_range(vb)) if r is not None]
    if not ranges:
        return None
    return min(lo for lo, _ in ranges), max(hi for _, hi in ranges)


def side_by_side(
    a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], labels: tuple[str, str]
) -> Section:
    """Pictures of two tensors and of their difference (ULP distance for floats, NaN where
    exactly one side is NaN; 1 where other values differ).  The two tensors' heatmaps share
    one colour scale, so that the same colour is the same value on both sides; their
    legends say so."""
    section = Section("side by side", level=1)
    if a.shape != b.shape or a.dtype != b.dtype:
        section.note = (
            f"no difference picture: {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
        )
        return section
    row = dtype_of_numpy(a.dtype)
    if row.is_floating:
        d = ulp_distance(a.reshape(-1), b.reshape(-1), row)
        difference = d.distance.astype(np.float64)
        difference[d.nan_mismatch] = np.nan
        what, unit = "ULP distance", f"at most {d.max} ULP"
    else:
        difference = (a.reshape(-1) != b.reshape(-1)).astype(np.float64)
        what, unit = "elements that differ", f"{int(difference.sum())} of {a.size}"
    difference = difference.reshape(a.shape)
    shared = _shared_bounds(a, b)
    sides = ((labels[0], a, shared), (labels[1], b, shared), (what, difference, None))
    for label, values, bounds in sides:
        picture = picture_of(values, bounds=bounds)
        if picture is not None:
            extra = f", {unit}" if label == what else ""
            picture.caption = f"{label}: {picture.caption}{extra}"
            if bounds is not None:
                picture.scale_note = f"one scale for {labels[0]} and {labels[1]}"
            section.pictures.append(picture)
    if not section.pictures:
        section.note = f"{what}: {unit} (no picture for fewer than 2 dimensions)"
    return section

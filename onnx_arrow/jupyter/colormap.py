"""The colours of the pictures: the heatmap colormap (viridis, 256 RGB rows) and the
colours it never reaches, which mark NaN, +inf, -inf and the padding of a folded plane."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

__all__ = ["COLORMAP", "NAN_COLOR", "NEGINF_COLOR", "PAD_COLOR", "POSINF_COLOR", "hex_color"]

#: The colours of what a heatmap's scale does not hold, none of which viridis reaches:
#: NaN magenta, +inf red, -inf cyan, and light grey past the last element of a folded
#: picture.  The legend under each picture names those it shows.
NAN_COLOR: Final = (255, 0, 255)
POSINF_COLOR: Final = (255, 0, 0)
NEGINF_COLOR: Final = (0, 255, 255)
PAD_COLOR: Final = (204, 204, 204)

# viridis as a degree-6 polynomial per channel (a fit to matplotlib's table: under 1/255
# off on average, 4/255 at most); the 256-entry table is computed from it once.
_VIRIDIS_COEFFICIENTS: Final = np.array(
    [
        [0.2777273272234177, 0.005407344544966578, 0.3340998053353061],
        [0.1050930431085774, 1.404613529898575, 1.384590162594685],
        [-0.3308618287255563, 0.214847559468213, 0.09509516302823659],
        [-4.634230498983486, -5.799100973351585, -19.33244095627987],
        [6.228269936347081, 14.17993336680509, 56.69055260068105],
        [4.776384997670288, -13.74514537774601, -65.35303263337234],
        [-5.435455855934631, 4.645852612178535, 26.3124352495832],
    ]
)


def _colormap_table() -> np.ndarray[Any, Any]:
    t = np.linspace(0.0, 1.0, 256)[:, None]
    rgb = np.zeros((256, 3))
    for coefficient in _VIRIDIS_COEFFICIENTS[::-1]:
        rgb = rgb * t + coefficient
    return np.clip(np.round(rgb * 255), 0, 255).astype(np.uint8)


#: The heatmap colormap: 256 RGB rows, dark blue (low) to yellow (high).
COLORMAP: Final = _colormap_table()


def hex_color(color: tuple[int, int, int]) -> str:
    """``"#rrggbb"`` of an RGB colour, as the legends name it."""
    return "#{:02x}{:02x}{:02x}".format(*color)

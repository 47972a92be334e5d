"""Jupyter adapter: rich HTML displays of stores, cases, tensor columns and single values.

:func:`html` and :func:`text` describe the same facts in two forms: HTML for notebooks,
aligned plain text for terminals.  They take

* a :class:`~onnx_arrow.corpus.Store`: format version, creator, cases, files by role,
  tensors by dtype, size;
* a case, through :func:`case_view`: the model's inputs and outputs with their declared
  types, then per data set each value's dtype, shape, statistics and a preview;
* an onnx-arrow Arrow column (an ``onnx.message`` array or a tensor column) or a table of
  them: Arrow type, ONNX kind, dtype, rows, the shape and statistics of the first rows;
* a row of a ``compare`` report, through :func:`report_view`: its status, tolerance and
  worst element, the expected and the actual value, and pictures of both and of their
  difference;
* a single value: a :class:`~onnx_arrow.corpus.rows.StoredValue`, a ``TensorProto``,
  ``SequenceProto``, ``MapProto``, ``OptionalProto`` or ``SparseTensorProto``, or a numpy
  array.

A 2-D numeric tensor (or the last two axes of its first item) gets a heatmap, with a
legend: the colour scale from its lowest to its highest finite value, and NaN, +inf and
-inf each in a colour of its own that the colormap never uses (magenta, red, cyan).  A
plane much longer than wide (``[1, 1000]`` logits) is folded into rows, in order; a large
one is sampled, and a NaN or inf anywhere in a sampled block still shows.  A tensor that
is likely an image (``[H, W, 3|4]``, ``[1|3, H, W]``, or the first item of
``[N, 1|3, H, W]``, both sides at least 16, uint8 or floats in [0, 1], not constant) is
drawn as one.  Each caption says what is drawn (which item, folded or sampled; a column's
picture names its row).  The pictures are small inline PNGs made here (zlib and struct,
no plotting library).  Every name and string is HTML-escaped, the styles are scoped so
that JupyterLab, VS Code and classic Notebook keep them, and the output stays small for
huge tensors: previews hold the first elements only and pictures are downsampled.

:func:`register` (run by ``%load_ext onnx_arrow.jupyter``) makes IPython display these
objects this way; :func:`show` displays one in a notebook or prints its text elsewhere.
IPython is imported only when needed.

Examples
--------
>>> import numpy as np
>>> from onnx import numpy_helper
>>> print(text(numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "x")))
TensorProto 'x'
  kind      tensor
  dtype     FLOAT
  shape     [2, 3]
  elements  6
  min       0
  max       5
  mean      2.5
  nan       0
  inf       0
  preview   [0, 1, 2, 3, 4, 5]
  picture   heatmap, 126x84 px (in HTML)
>>> "<img" in html(np.eye(4))
True
"""

from __future__ import annotations

import base64
import functools
import html as _html
import importlib
import math
import os
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pyarrow as pa
from google.protobuf.message import Message
from onnx import (
    MapProto,
    ModelProto,
    OptionalProto,
    SequenceProto,
    SparseTensorProto,
    TensorProto,
)

import onnx_arrow
from onnx_arrow._summary import (
    dtype_name,
    number,
    numeric,
    op_types,
    opsets,
    size,
    statistics,
    store_facts,
)
from onnx_arrow.core.model import (
    OPTIONAL,
    Kind,
    MessageType,
    describe_type,
    dtype_of_numpy,
    is_floating,
    kind_of_arrow,
    load_json,
    tensor_layout,
    ulp_distance,
)
from onnx_arrow.corpus.rows import StoredValue, declared_type_text
from onnx_arrow.corpus.sources import declared_type, graph_values
from onnx_arrow.corpus.store import Store
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError

__all__ = [
    "NAN_COLOR",
    "NEGINF_COLOR",
    "PAD_COLOR",
    "POSINF_COLOR",
    "CaseView",
    "DiffView",
    "ReportView",
    "case_view",
    "diff_view",
    "html",
    "is_onnx_column",
    "load_ipython_extension",
    "png",
    "register",
    "report_view",
    "show",
    "text",
]

#: Elements shown in a value's preview.
PREVIEW_ELEMENTS: Final = 16
#: Rows of a column described one by one.
PREVIEW_ROWS: Final = 5
#: Items of a sequence or map, data sets of a case, columns of a table described.
MAX_ITEMS: Final = 8
#: Characters of one string element in a preview.
MAX_STRING: Final = 40
#: A picture's larger side is upscaled (nearest neighbour) to about this many pixels.
PICTURE_PX: Final = 128
#: A picture samples at most this many elements along each axis.
MAX_SAMPLES: Final = 128
#: The colours of what a heatmap's scale does not hold, none of which viridis reaches:
#: NaN magenta, +inf red, -inf cyan, and light grey past the last element of a folded
#: picture.  The legend under each picture names those it shows.
NAN_COLOR: Final = (255, 0, 255)
POSINF_COLOR: Final = (255, 0, 0)
NEGINF_COLOR: Final = (0, 255, 255)
PAD_COLOR: Final = (204, 204, 204)
#: A tensor is drawn as an image only if both its sides have at least this many pixels.
MIN_IMAGE_SIDE: Final = 16
#: A plane longer than this many times its width (or the other way) is folded.
MAX_ASPECT: Final = 8

_VALUE_MESSAGES: Final = (TensorProto, SparseTensorProto, SequenceProto, MapProto, OptionalProto)

# --- the colormap ------------------------------------------------------------------------

# viridis as a degree-6 polynomial per channel (a fit to matplotlib's table, max error
# about 1/255); the 256-entry table is computed from it once.
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

# --- PNG -----------------------------------------------------------------------------


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


# --- what a report holds --------------------------------------------------------------


@dataclass
class _Picture:
    png: bytes
    caption: str
    width: int
    height: int
    kind: str = "heatmap"
    #: A heatmap's colour scale: its lowest and highest finite value.
    scale: tuple[str, str] | None = None
    #: The colours off the scale the picture shows: (label, "#rrggbb").
    keys: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Section:
    """One titled block of facts; :func:`html` and :func:`text` both render it."""

    title: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    table: tuple[list[str], list[list[str]]] | None = None
    picture: _Picture | None = None
    note: str | None = None
    level: int = 0
    #: Pictures shown side by side (a diff's old, new and difference), each captioned.
    pictures: list[_Picture] = field(default_factory=list)


# --- numbers -----------------------------------------------------------------------


def _element(x: Any) -> str:
    if isinstance(x, bytes):
        shown = repr(x[:MAX_STRING])
        return shown + ("..." if len(x) > MAX_STRING else "")
    if isinstance(x, str):
        return repr(x[:MAX_STRING]) + ("..." if len(x) > MAX_STRING else "")
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (complex, np.complexfloating)):
        return str(complex(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    try:
        return number(x)
    except (TypeError, ValueError, OverflowError):
        return str(x)


def _preview(array: np.ndarray[Any, Any], limit: int = PREVIEW_ELEMENTS) -> str:
    flat = array.reshape(-1)[:limit]
    values = numeric(flat)
    shown = [_element(x) for x in (flat if values is None else values).tolist()]
    if array.size > limit:
        shown.append(f"... ({array.size} elements)")
    return "[" + ", ".join(shown) + "]"


# --- pictures ----------------------------------------------------------------------


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


def _heatmap_plane(
    values: np.ndarray[Any, Any],
) -> tuple[np.ndarray[Any, Any], str, tuple[str, str] | None, list[tuple[str, str]]]:
    """The RGB heatmap of the last two axes of the first item; what it shows, its scale
    (lowest and highest finite value) and the colours of what is not on the scale."""
    lead = (0,) * (values.ndim - 2)
    what = "heatmap" if not lead else f"heatmap of [{', '.join(['0'] * len(lead))}, :, :]"
    plane = values[lead]
    if plane.dtype.kind == "c":
        plane = np.abs(plane)
        what += " (magnitudes)"
    plane = plane.astype(np.float64)
    plane, pad, folded = _fold(plane)
    what += folded
    finite = np.isfinite(plane) & ~pad
    if finite.any():
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
            keys.append((label, _hex(color)))
    scale = (number(lo), number(hi)) if finite.any() else None
    return pixels, what, scale, keys[::-1]


def _nth(k: int) -> str:
    if k == 1:
        return ""
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def _hex(color: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*color)


def _picture(array: np.ndarray[Any, Any]) -> _Picture | None:
    values = numeric(array)
    if values is None or values.ndim < 2 or values.size == 0:
        return None
    image = _image_plane(values)
    scale: tuple[str, str] | None = None
    keys: list[tuple[str, str]] = []
    if image is not None:
        pixels, caption = image
        kind = "image"
    else:
        pixels, caption, scale, keys = _heatmap_plane(values)
        kind = "heatmap"
    pixels = _upscale(pixels)
    height, width = pixels.shape[:2]
    return _Picture(png(pixels), caption, width, height, kind=kind, scale=scale, keys=keys)


# --- sections of values --------------------------------------------------------------------


def _tensor_fields(array: np.ndarray[Any, Any]) -> list[tuple[str, str]]:
    return [
        ("dtype", dtype_name(array.dtype)),
        ("shape", str(list(array.shape))),
        ("elements", str(array.size)),
        *statistics(array),
        ("preview", _preview(array)),
    ]


def _is_sparse(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"dims", "values", "indices"}


def _value_sections(value: Any, title: str, level: int = 0) -> list[_Section]:
    """Sections describing a value as :func:`onnx_arrow.to_numpy` gives it."""
    if isinstance(value, np.ndarray):
        return [_Section(title, [("kind", "tensor"), *_tensor_fields(value)],
                         picture=_picture(value), level=level)]  # fmt: skip
    if value is None:
        return [_Section(title, [("kind", "optional"), ("value", "absent (None)")], level=level)]
    if _is_sparse(value):
        values, indices = value["values"], value["indices"]
        fields = [
            ("kind", "sparse tensor"),
            ("dense shape", str(list(value["dims"]))),
            ("stored values", str(values.size)),
            ("indices shape", str(list(indices.shape))),
        ]
        fields += [(k, v) for k, v in _tensor_fields(values) if k != "shape"]
        return [_Section(title, fields, level=level)]
    if isinstance(value, dict):
        pairs = list(value.items())
        return _items_sections(title, "map", pairs, level)
    if isinstance(value, list):
        if value and all(isinstance(p, tuple) and len(p) == 2 for p in value):
            return _items_sections(title, "map", value, level)
        return _items_sections(title, "sequence", list(enumerate(value)), level)
    raise UnsupportedTypeError(
        f"cannot describe a {type(value).__name__}; expected an ndarray, a list, a dict or None"
    )


def _items_sections(
    title: str, kind: str, items: Sequence[tuple[Any, Any]], level: int
) -> list[_Section]:
    label = "entries" if kind == "map" else "items"
    head = _Section(title, [("kind", kind), (label, str(len(items)))], level=level)
    if kind == "map" and items:
        head.fields.append(("keys", "[" + ", ".join(_element(k) for k, _ in items[:16]) + "]"))
    out = [head]
    for key, item in items[:MAX_ITEMS]:
        name = f"[{_element(key)}]" if kind == "map" else f"[{key}]"
        out += _value_sections(item, f"{'value' if kind == 'map' else 'item'} {name}", level + 1)
    if len(items) > MAX_ITEMS:
        head.note = f"the first {MAX_ITEMS} of {len(items)} {label} are shown"
    return out


def _message_sections(message: Message) -> list[_Section]:
    kind = type(message).__name__
    name = getattr(message, "name", "")
    title = f"{kind} {name!r}" if name else kind
    value = onnx_arrow.to_pylist(onnx_arrow.to_arrow([message], exact=True), strings="bytes")[0]
    return _value_sections(value, title)


def _stored_value_sections(value: StoredValue) -> list[_Section]:
    where = [
        ("case", value.case),
        ("path", value.path),
        ("data set", "-" if value.data_set is None else str(value.data_set)),
        ("slot", f"{value.io} {value.index}"),
        ("onnx type", value.onnx_type),
    ]
    title = f"{value.io} {value.name!r}" if value.name else f"{value.io} {value.index}"
    sections = _value_sections(value.to_numpy(strings="bytes"), title)
    sections[0].fields[:0] = where
    return sections


def _ndarray_sections(array: np.ndarray[Any, Any]) -> list[_Section]:
    return _value_sections(array, "ndarray")


# --- columns ------------------------------------------------------------------------


def is_onnx_column(array: Any) -> bool:
    """Whether ``array`` is an Arrow array of an onnx-arrow type (``onnx.*`` or a tensor)."""
    if not isinstance(array, (pa.Array, pa.ChunkedArray)):
        return False
    name = getattr(array.type, "extension_name", None)
    return name is not None and (name.startswith("onnx.") or tensor_layout(array.type) is not None)


def _column_kind(array: pa.Array | pa.ChunkedArray) -> Kind:
    """The value kind of a column, read chunk by chunk: the data is never copied."""
    if isinstance(array.type, MessageType):
        return Kind.from_json(array.type.kind)
    chunks = array.chunks if isinstance(array, pa.ChunkedArray) else [array]
    kinds = [kind_of_arrow(chunk.type, chunk) for chunk in chunks]
    return functools.reduce(_merged_kind, kinds) if kinds else kind_of_arrow(array.type)


def _merged_kind(a: Kind, b: Kind) -> Kind:
    """The kind of two chunks of one column taken together.

    Chunks of one Arrow type differ only where one holds absent values (nulls) and the
    other none: there its kind has an optional level the other lacks, and the column,
    holding both, has it too.
    """
    if a == b:
        return a
    if a.name == OPTIONAL and b.name != OPTIONAL and a.elem is not None:
        return Kind(OPTIONAL, _merged_kind(a.elem, b))
    if b.name == OPTIONAL and a.name != OPTIONAL and b.elem is not None:
        return Kind(OPTIONAL, _merged_kind(a, b.elem))
    elem = a.elem if a.elem is None or b.elem is None else _merged_kind(a.elem, b.elem)
    return Kind(a.name, elem, a.key)


def _column_sections(array: pa.Array | pa.ChunkedArray, title: str = "column") -> list[_Section]:
    kind = str(_column_kind(array))
    # only the previewed rows are read: a chunked column is never combined whole
    head = array.slice(0, PREVIEW_ROWS)
    cells = onnx_arrow.to_pylist(head, strings="bytes")
    dtypes = sorted({dtype_name(c.dtype) for c in cells if isinstance(c, np.ndarray)})
    fields = [
        ("arrow type", describe_type(array.type)),
        ("onnx kind", kind),
        ("rows", str(len(array))),
        ("nulls", str(array.null_count)),
    ]
    if dtypes:
        fields.insert(2, ("dtype", ", ".join(dtypes)))
    if isinstance(array.type, MessageType):
        fields.insert(1, ("value type", describe_type(array.type.value_type)))
    header = ["row", "shape", "dtype", "min", "max", "mean", "nan", "preview"]
    rows = []
    for i, cell in enumerate(cells):
        if isinstance(cell, np.ndarray):
            stats = dict(statistics(cell))
            rows.append(
                [
                    str(i),
                    str(list(cell.shape)),
                    dtype_name(cell.dtype),
                    stats.get("min", stats.get("true", "")),
                    stats.get("max", ""),
                    stats.get("mean", ""),
                    stats.get("nan", ""),
                    _preview(cell, 6),
                ]
            )
        else:
            rows.append([str(i), "", "", "", "", "", "", _short(cell)])
    section = _Section(title, fields, table=(header, rows))
    if len(array) > PREVIEW_ROWS:
        section.note = f"the first {PREVIEW_ROWS} of {len(array)} rows are shown"
    first = next((i for i, c in enumerate(cells) if isinstance(c, np.ndarray)), None)
    if first is not None:
        picture = _picture(cells[first])
        if picture is not None:  # one row is drawn, and the caption says which
            picture.caption = f"row {first} of {len(array)}: {picture.caption}"
        section.picture = picture
    return [section]


def _short(value: Any) -> str:
    """One line for a container cell: its kind and size."""
    if value is None:
        return "None"
    if _is_sparse(value):
        return f"sparse {list(value['dims'])}, {value['values'].size} stored"
    if isinstance(value, dict):
        return f"map of {len(value)}"
    if isinstance(value, list):
        if value and all(isinstance(p, tuple) and len(p) == 2 for p in value):
            return f"map of {len(value)}"
        shapes = [str(list(v.shape)) if isinstance(v, np.ndarray) else _short(v) for v in value]
        more = ", ..." if len(shapes) > 4 else ""
        return f"sequence of {len(value)}: " + ", ".join(shapes[:4]) + more
    return type(value).__name__


def _table_sections(table: pa.Table) -> list[_Section]:
    head = _Section(
        "table",
        [("rows", str(table.num_rows)), ("columns", ", ".join(table.column_names))],
    )
    out = [head]
    for name in table.column_names[:MAX_ITEMS]:
        column = table.column(name)
        if is_onnx_column(column) or _bare_value_column(column):
            out += [_with_level(s, 1) for s in _column_sections(column, f"column {name!r}")]
        else:
            out.append(_Section(f"column {name!r}", [("arrow type", str(column.type))], level=1))
    if table.num_columns > MAX_ITEMS:
        head.note = f"the first {MAX_ITEMS} of {table.num_columns} columns are shown"
    return out


def _bare_value_column(column: pa.ChunkedArray) -> bool:
    try:
        kind_of_arrow(column.type)
    except OnnxArrowError:
        return False
    return True


def _with_level(section: _Section, level: int) -> _Section:
    section.level = level
    return section


def _array_sections(array: pa.Array | pa.ChunkedArray) -> list[_Section]:
    if not (is_onnx_column(array) or _bare_value_column(array)):
        raise UnsupportedTypeError(
            f"an Arrow column of type {array.type} holds no ONNX values; expected an "
            "onnx.message array (onnx_arrow.to_arrow) or a tensor column"
        )
    return _column_sections(array)


# --- stores and cases ---------------------------------------------------------------------


def _store_sections(store: Store) -> list[_Section]:
    facts = store_facts(store)
    head = _Section(
        f"onnx-arrow store {store.path.name!r}",
        [
            ("path", str(store.path)),
            ("format", facts.format),
            ("created by", facts.created_by),
            ("size", size(facts.nbytes)),
            ("row groups", str(facts.row_groups)),
            ("rows", str(facts.rows)),
            ("cases", str(facts.cases)),
            ("files", str(facts.files)),
            ("tensors", str(facts.tensors)),
        ],
    )
    cases = _Section(
        "cases by kind",
        table=(["kind", "cases"], [[kind or "(none)", str(n)] for kind, n in facts.kinds]),
        level=1,
    )
    roles = facts.roles
    file_rows = [[r, str(roles[r])] for r in ("model", "value", "file", "element") if r in roles]
    roles_section = _Section("rows by role", table=(["role", "rows"], file_rows), level=1)
    dtype_section = _Section(
        "tensors by dtype",
        table=(
            ["dtype", "tensors", "elements"],
            [[name, str(n), str(facts.elements.get(name, 0))] for name, n in facts.dtypes.items()],
        ),
        level=1,
    )
    return [head, cases, roles_section, dtype_section]


class CaseView:
    """A case of a store, displayed: :func:`html` in notebooks, :func:`text` in ``repr``.

    Made by :func:`case_view`; reads the case when displayed.
    """

    def __init__(self, store: Store, case: str) -> None:
        self.store = store
        self.case = case

    def sections(self) -> list[_Section]:
        """The facts the displays show."""
        model: ModelProto = self.store.model(self.case)
        head = _Section(
            f"case {self.case!r}",
            [("store", str(self.store.path)),
             ("operators", ", ".join(op_types(model)) or "(none)"),
             ("opsets", opsets(model))],
        )  # fmt: skip
        declared = _Section(
            "declared inputs and outputs",
            table=(
                ["io", "index", "name", "type"],
                [
                    [io, str(k), info.name, declared_type_text(info.type)]
                    for io in ("input", "output")
                    for k, info in enumerate(graph_values(model, io))
                ],
            ),
            level=1,
        )
        out = [head, declared]
        by_set: dict[int | None, list[StoredValue]] = {}
        for value in self.store.values(self.case):
            by_set.setdefault(value.data_set, []).append(value)
        order = sorted(by_set, key=lambda n: -1 if n is None else n)
        for n in order[:MAX_ITEMS]:
            values = sorted(by_set[n], key=lambda v: (v.io != "input", v.index))
            out.append(_Section("values" if n is None else f"test_data_set_{n}", level=1))
            for value in values:
                name = value.name or f"{value.io} {value.index}"
                sections = _value_sections(
                    value.to_numpy(strings="bytes"), f"{value.io} {name!r}", level=2
                )
                sections[0].fields.insert(0, ("onnx type", value.onnx_type))
                out += sections
        if len(order) > MAX_ITEMS:
            head.note = f"the first {MAX_ITEMS} of {len(order)} data sets are shown"
        return out

    def _repr_html_(self) -> str:
        return _render_html(self.sections())

    def __repr__(self) -> str:
        return _render_text(self.sections())


def case_view(store: Store | str, case: str) -> CaseView:
    """A displayable view of one case of ``store`` (a :class:`Store` or its path)."""
    store = store if isinstance(store, Store) else Store(store)
    return CaseView(store, case)


class DiffView:
    """One path of two stores side by side: each side's facts, and for a tensor of one
    shape on both sides the old, new and difference pictures (the ULP distance per element
    for floats, NaN where exactly one side is NaN; 1 where other values differ).

    Made by :func:`diff_view`; reads the path's case from both stores when displayed.
    """

    def __init__(self, old: Store, new: Store, path: str) -> None:
        self.old, self.new, self.path = old, new, path

    def _value(self, store: Store) -> StoredValue | None:
        rows = store.read_columns(["test_case", "path"], roles=["value"])
        paths = rows.column("path").to_pylist()
        if self.path not in paths:
            return None
        case = rows.column("test_case")[paths.index(self.path)].as_py()
        return next((v for v in store.values(case) if v.path == self.path), None)

    def sections(self) -> list[_Section]:
        """The facts the displays show."""
        old, new = self._value(self.old), self._value(self.new)
        head = _Section(
            f"diff of {self.path!r}",
            [("old", str(self.old.path)), ("new", str(self.new.path))],
        )
        out = [head]
        arrays = []
        for side, value in (("old", old), ("new", new)):
            if value is None:
                out.append(_Section(f"{side}: no value at this path", level=1))
                continue
            array = value.to_numpy(strings="bytes")
            sections = _value_sections(array, f"{side} ({value.onnx_type})", level=1)
            for section in sections:
                section.picture = None  # shown below, beside the other side's
            out += sections
            arrays.append(array)
        if len(arrays) == 2 and all(isinstance(a, np.ndarray) for a in arrays):
            out.append(_side_by_side(arrays[0], arrays[1], ("old", "new")))
        return out

    def _repr_html_(self) -> str:
        return _render_html(self.sections())

    def __repr__(self) -> str:
        return _render_text(self.sections())


def _side_by_side(
    a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], labels: tuple[str, str]
) -> _Section:
    """Pictures of two tensors and of their difference (ULP distance for floats, NaN where
    exactly one side is NaN; 1 where other values differ)."""
    section = _Section("side by side", level=1)
    if a.shape != b.shape or a.dtype != b.dtype:
        section.note = (
            f"no difference picture: {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
        )
        return section
    row = dtype_of_numpy(a.dtype)
    if is_floating(row):
        d = ulp_distance(a.reshape(-1), b.reshape(-1), row)
        difference = d.distance.astype(np.float64)
        difference[d.nan_mismatch] = np.nan
        what, unit = "ULP distance", f"at most {d.max} ULP"
    else:
        difference = (a.reshape(-1) != b.reshape(-1)).astype(np.float64)
        what, unit = "elements that differ", f"{int(difference.sum())} of {a.size}"
    difference = difference.reshape(a.shape)
    for label, values in ((labels[0], a), (labels[1], b), (what, difference)):
        picture = _picture(values)
        if picture is not None:
            extra = f", {unit}" if label == what else ""
            picture.caption = f"{label}: {picture.caption}{extra}"
            section.pictures.append(picture)
    if not section.pictures:
        section.note = f"{what}: {unit} (no picture for fewer than 2 dimensions)"
    return section


def diff_view(old: Store | str, new: Store | str, path: str) -> DiffView:
    """A displayable comparison of one path of two stores (see :class:`DiffView`): a
    row of :func:`onnx_arrow.diff.diff`'s report, shown."""
    return DiffView(
        old if isinstance(old, Store) else Store(old),
        new if isinstance(new, Store) else Store(new),
        path,
    )


#: The message class of each kind of declared type (``TypeProto``'s ``value`` field).
_MESSAGE_OF_TYPE: Final[dict[str, type[Message]]] = {
    "tensor_type": TensorProto,
    "sparse_tensor_type": SparseTensorProto,
    "sequence_type": SequenceProto,
    "map_type": MapProto,
    "optional_type": OptionalProto,
}
#: The report fields a :class:`ReportView` lists, with their labels.
_REPORT_FIELDS: Final = (
    ("status", "status"),
    ("onnx_type", "onnx type"),
    ("dtype_expected", "expected dtype"),
    ("dtype_actual", "actual dtype"),
    ("max_abs_error", "max abs error"),
    ("max_rel_error", "max rel error"),
    ("n_beyond_tolerance", "beyond tolerance"),
    ("worst_index", "worst element"),
    ("worst_expected", "worst expected"),
    ("worst_actual", "worst actual"),
    ("detail", "detail"),
    ("error", "error"),
)


class ReportView:
    """A row of a ``compare`` report, displayed: what the row says (status, the tolerance
    and where it came from, errors, the worst element), then the expected value from the
    store and the actual value the row keeps (its ``actual`` column), and for tensors of one
    shape pictures of both and of their difference.

    Made by :func:`report_view`; reads the store when displayed.
    """

    def __init__(self, store: Store, row: dict[str, Any]) -> None:
        self.store, self.row = store, row

    def sections(self) -> list[_Section]:
        """The facts the displays show."""
        row = self.row
        case, index = row["case"], row.get("index")
        data_set = row.get("data_set")
        where = f"output {index}" + ("" if data_set is None else f" of test_data_set_{data_set}")
        fields = [("store", str(self.store.path))]
        fields += [(label, str(row[k])) for k, label in _REPORT_FIELDS if _present(row.get(k))]
        if _present(row.get("rtol")):
            fields.append(
                ("tolerance", f"rtol {row['rtol']:g}, atol {row['atol']:g} ({row['tolerance']})")
            )
        head = _Section(f"{case}: {where} {row.get('name')!r}", fields)
        out = [head]
        if index is None:
            head.note = "a row without an output (a skipped case)"
            return out
        expected = next(
            (
                v
                for v in self.store.values(case)
                if v.io == "output" and v.index == index and v.data_set == data_set
            ),
            None,
        )
        arrays = []
        if expected is None:
            out.append(_Section("expected: not in the store", level=1))
        else:
            arrays.append(expected.to_numpy(strings="bytes"))
            out += self._value("expected", arrays[-1], expected.onnx_type)
        actual = self._actual(case, index)
        if isinstance(actual, str):
            out.append(_Section("actual", note=actual, level=1))
        else:
            arrays.append(actual)
            out += self._value("actual", actual, expected.onnx_type if expected else "")
        if len(arrays) == 2 and all(isinstance(a, np.ndarray) for a in arrays):
            out.append(_side_by_side(arrays[0], arrays[1], ("expected", "actual")))
        return out

    @staticmethod
    def _value(label: str, value: Any, onnx_type: str) -> list[_Section]:
        sections = _value_sections(value, f"{label} ({onnx_type})", level=1)
        for section in sections:
            section.picture = None  # shown below, beside the other side's
        return sections

    def _actual(self, case: str, index: int) -> Any:
        """The actual value the row keeps, or why there is none (a str)."""
        data: Any = self.row.get("actual")
        if not _present(data):
            return (
                "the report keeps no actual value for this row (compare keeps those of "
                "outputs that differ; keep_actual='all' keeps every one)"
            )
        declared = declared_type(self.store.model(case), "output", index)
        kind = "tensor_type" if declared is None else declared.WhichOneof("value")
        cls = _MESSAGE_OF_TYPE.get(kind or "")
        if cls is None:
            return f"the model declares output {index} as {kind}, which onnx-arrow does not take"
        try:
            message = cls.FromString(bytes(data))
            array = onnx_arrow.to_arrow([message], declared)
        except Exception as exc:  # protobuf's DecodeError, onnx-arrow's errors
            return f"the kept bytes do not parse as the declared type: {exc}"
        return onnx_arrow.to_pylist(array, strings="bytes")[0]

    def _repr_html_(self) -> str:
        return _render_html(self.sections())

    def __repr__(self) -> str:
        return _render_text(self.sections())


def _present(value: Any) -> bool:
    """Not None and not a missing value (pandas' NA, NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    try:
        bool(value)
    except TypeError:  # pandas' NA: its truth value is ambiguous
        return False
    return True


def report_view(report: Any, row: int, store: Store | str | None = None) -> ReportView:
    """A displayable row of a ``compare`` report (see :class:`ReportView`).

    ``report`` is the DataFrame :func:`onnx_arrow.compare.compare` gives or the path of a
    report it wrote; ``row`` the row's position.  ``store`` is the store of the expected
    outputs; without it, the one the report names in its metadata.

    Raises
    ------
    OnnxArrowError
        If the report names no store and none is given, or ``row`` is out of range.
    """
    import pyarrow.parquet as pq

    if isinstance(report, str | os.PathLike):
        table = pq.read_table(report)
        meta = (table.schema.metadata or {}).get(b"onnx_arrow.report")
        made = (
            load_json(meta, what="the report's metadata", where=str(report), error=OnnxArrowError)
            if meta
            else {}
        )
        n = table.num_rows
        record = table.slice(row, 1).to_pylist()[0] if 0 <= row < n else None
    else:
        made = report.attrs.get("onnx_arrow", {})
        n = len(report)
        record = report.iloc[row].to_dict() if 0 <= row < n else None
    if record is None:
        raise OnnxArrowError(f"row {row} is outside the report's {n} rows")
    if store is None:
        parts = made.get("store")
        if not parts:
            raise OnnxArrowError(
                "the report names no store; pass the store of the expected outputs"
            )
        store = Store(parts if len(parts) > 1 else parts[0])
    return ReportView(store if isinstance(store, Store) else Store(store), record)


# --- rendering -----------------------------------------------------------------------------

#: The display's styles, scoped to its own element.  Each selector repeats the class so
#: that it outranks the table rules of JupyterLab (``.jp-RenderedHTMLCommon td``: right
#: aligned, centred tables), classic Notebook (``.rendered_html td``) and VS Code, which
#: would otherwise set keys and values hundreds of pixels apart.
_STYLE: Final = (
    "<style>"
    ".onnx-arrow.onnx-arrow{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;"
    "font-size:12px;line-height:1.4;text-align:left}"
    ".onnx-arrow.onnx-arrow table{border-collapse:collapse;margin:2px 0;width:auto;"
    "table-layout:auto;border:none;float:none}"
    ".onnx-arrow.onnx-arrow tr,.onnx-arrow.onnx-arrow td,.onnx-arrow.onnx-arrow th{"
    "padding:1px 8px;text-align:left;vertical-align:top;border:none;background:none;"
    "line-height:inherit;max-width:none;white-space:normal}"
    ".onnx-arrow.onnx-arrow th{border-bottom:1px solid #888;font-weight:bold}"
    ".onnx-arrow.onnx-arrow .oa-sec{display:flex;gap:16px;align-items:flex-start;margin:4px 0}"
    ".onnx-arrow.onnx-arrow .oa-title{font-weight:bold}"
    ".onnx-arrow.onnx-arrow .oa-note{color:#888}"
    ".onnx-arrow.onnx-arrow figure{margin:0;text-align:left}"
    ".onnx-arrow.onnx-arrow figcaption{max-width:260px;text-align:left}"
    ".onnx-arrow.onnx-arrow img.oa-picture{image-rendering:pixelated;border:1px solid #888;"
    "max-width:none}"
    ".onnx-arrow.onnx-arrow .oa-legend{display:flex;flex-wrap:wrap;gap:4px 10px;"
    "align-items:center;margin-top:2px}"
    ".onnx-arrow.onnx-arrow .oa-bar{display:inline-block;vertical-align:middle;"
    "border:1px solid #888;margin:0 4px;width:128px;height:10px}"
    ".onnx-arrow.onnx-arrow .oa-swatch{display:inline-block;width:10px;height:10px;"
    "border:1px solid #888;margin-right:4px;vertical-align:middle}"
    "</style>"
)

#: The colour scale, low to high, as the legend's bar shows it: a CSS gradient through
#: nine of the colormap's colours (an element of the page, not another image).
_COLOR_BAR: Final = "linear-gradient(to right,{})".format(
    ",".join("#{:02x}{:02x}{:02x}".format(*COLORMAP[i]) for i in np.linspace(0, 255, 9, dtype=int))
)


def _legend(p: _Picture) -> str:
    """The key under a heatmap: its scale, and the colours off the scale it shows."""
    parts = []
    if p.scale is not None:
        lo, hi = p.scale
        parts.append(
            f'<span>{_e(lo)}<span class="oa-bar" role="img" aria-label="colour scale, '
            f'{_e(lo)} to {_e(hi)}" style="background:{_COLOR_BAR}"></span>{_e(hi)}</span>'
        )
    for label, color in p.keys:
        parts.append(
            f'<span><span class="oa-swatch" style="background:{color}"></span>{_e(label)}</span>'
        )
    return f'<div class="oa-legend">{"".join(parts)}</div>' if parts else ""


def _e(value: object) -> str:
    return _html.escape(str(value), quote=True)


def _render_html(sections: Sequence[_Section]) -> str:
    parts = [_STYLE, '<div class="onnx-arrow">']
    for s in sections:
        indent = s.level * 16
        parts.append(f'<div class="oa-sec" style="margin-left:{indent}px"><div>')
        parts.append(f'<div class="oa-title">{_e(s.title)}</div>')
        if s.fields:
            rows = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in s.fields)
            parts.append(f"<table>{rows}</table>")
        if s.table is not None:
            header, body = s.table
            head = "".join(f"<th>{_e(h)}</th>" for h in header)
            rows = "".join(
                "<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in body
            )
            parts.append(f"<table><tr>{head}</tr>{rows}</table>")
        if s.note:
            parts.append(f'<div class="oa-note">{_e(s.note)}</div>')
        parts.append("</div>")
        for p in ([s.picture] if s.picture is not None else []) + s.pictures:
            data = base64.b64encode(p.png).decode("ascii")
            parts.append(
                f'<figure><img class="oa-picture" src="data:image/png;base64,{data}" '
                f'width="{p.width}" height="{p.height}" alt="{_e(p.caption)}">'
                f"<figcaption>{_e(p.caption)}</figcaption>{_legend(p)}</figure>"
            )
        parts.append("</div>")
    parts.append("</div>")
    return "".join(parts)


def _render_text(sections: Sequence[_Section]) -> str:
    lines: list[str] = []
    for s in sections:
        pad = "  " * s.level
        lines.append(pad + s.title)
        fields = list(s.fields)
        if s.picture is not None:
            p = s.picture
            fields.append(("picture", f"{p.kind}, {p.width}x{p.height} px (in HTML)"))
        for p in s.pictures:
            fields.append(
                ("picture", f"{p.caption.split(':')[0]}, {p.width}x{p.height} px (in HTML)")
            )
        if fields:
            width = max(len(k) for k, _ in fields)
            lines += [f"{pad}  {k:<{width}}  {v}" for k, v in fields]
        if s.table is not None:
            header, body = s.table
            widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
            for row in [header, *body]:
                cells = [c.ljust(w) for c, w in zip(row, widths, strict=True)]
                lines.append((pad + "  " + "  ".join(cells)).rstrip())
        if s.note:
            lines.append(f"{pad}  ({s.note})")
    return "\n".join(lines)


# --- dispatch --------------------------------------------------------------------------------

#: What each kind of object is described by, most specific first.
_DESCRIBERS: Final[tuple[tuple[type | tuple[type, ...], Callable[[Any], list[_Section]]], ...]] = (
    (CaseView, lambda view: view.sections()),
    (DiffView, lambda view: view.sections()),
    (ReportView, lambda view: view.sections()),
    (Store, _store_sections),
    (StoredValue, _stored_value_sections),
    (_VALUE_MESSAGES, _message_sections),
    (pa.Table, _table_sections),
    ((pa.Array, pa.ChunkedArray), _array_sections),
    (np.ndarray, _ndarray_sections),
)


def _sections(obj: Any) -> list[_Section]:
    for types, describe in _DESCRIBERS:
        if isinstance(obj, types):
            return describe(obj)
    raise UnsupportedTypeError(
        f"cannot display a {type(obj).__name__}; expected a Store, a case_view(...), a "
        "StoredValue, an ONNX value message (TensorProto, SequenceProto, MapProto, "
        "OptionalProto, SparseTensorProto), an onnx-arrow Arrow column or table, or an ndarray"
    )


def html(obj: Any) -> str:
    """The HTML display of ``obj``: a store, a case view, a column, a table or a value.

    Everything taken from the data is escaped; the size is bounded whatever the data.
    """
    return _render_html(_sections(obj))


def text(obj: Any) -> str:
    """The plain-text display of ``obj``: the facts :func:`html` shows, pictures named only."""
    return _render_text(_sections(obj))


# --- IPython --------------------------------------------------------------------------------


def _html_or_none(obj: Any) -> str | None:
    """The IPython formatter: None (IPython's own display) for foreign Arrow arrays."""
    if isinstance(obj, (pa.Array, pa.ChunkedArray)) and not is_onnx_column(obj):
        return None
    return html(obj)


def register(ipython: Any = None) -> None:
    """Make IPython display stores, stored values, ONNX value messages and onnx-arrow
    Arrow columns as HTML.

    ``ipython`` is the shell (``get_ipython()`` when not given).  Other Arrow extension
    arrays keep their usual display.
    """
    if ipython is None:
        try:
            ipython_module = importlib.import_module("IPython")
        except ImportError:
            raise UnsupportedTypeError(
                "IPython is not installed; html(obj) and text(obj) work without it"
            ) from None
        ipython = ipython_module.get_ipython()
        if ipython is None:
            raise UnsupportedTypeError(
                "no IPython shell is running; pass one (register(ip)), or use html(obj), "
                "text(obj) or show(obj)"
            )
    formatter = ipython.display_formatter.formatters["text/html"]
    for cls in (pa.ExtensionArray, pa.ChunkedArray, Store, StoredValue, *_VALUE_MESSAGES):
        formatter.for_type(cls, _html_or_none)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext onnx_arrow.jupyter``: :func:`register` on the running shell."""
    register(ipython)


def show(obj: Any) -> None:
    """Display ``obj`` as HTML in a notebook, or print its text anywhere else."""
    try:
        ipython_module = importlib.import_module("IPython")
        display = importlib.import_module("IPython.display")
    except ImportError:
        print(text(obj))
        return
    shell = ipython_module.get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        print(text(obj))
        return
    display.display(display.HTML(html(obj)))

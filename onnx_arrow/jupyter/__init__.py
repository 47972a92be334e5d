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
  difference (the report checked as it is read: its columns and their types, its rows
  and its metadata);
* a trace store (``onnx-arrow trace``), through :func:`trace_view`: what was traced and
  the rule, every value's largest ULP distance in topological order as a picture, the
  values that diverge, and the first divergent node's inputs and outputs on both
  backends side by side with their ULP picture;
* a single value: a :class:`~onnx_arrow.corpus.rows.StoredValue`, a ``TensorProto``,
  ``SequenceProto``, ``MapProto``, ``OptionalProto`` or ``SparseTensorProto``, or a numpy
  array.

A 2-D numeric tensor (or the last two axes of its first item) gets a heatmap, with a
legend: the colour scale from its lowest to its highest finite value, and NaN, +inf and
-inf each in a colour of its own that the colormap never uses (magenta, red, cyan); the
two values of a report row or a diff, side by side, share one scale, and their legends
say so.  A
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

# ``X as X``: the bounds and the colormap stay importable from here, outside ``__all__``
from onnx_arrow.jupyter.colormap import COLORMAP as COLORMAP
from onnx_arrow.jupyter.colormap import NAN_COLOR, NEGINF_COLOR, PAD_COLOR, POSINF_COLOR
from onnx_arrow.jupyter.columns import PREVIEW_ROWS as PREVIEW_ROWS
from onnx_arrow.jupyter.columns import is_onnx_column
from onnx_arrow.jupyter.diffs import DiffView, diff_view
from onnx_arrow.jupyter.dispatch import html, text
from onnx_arrow.jupyter.formats import MAX_STRING as MAX_STRING
from onnx_arrow.jupyter.formats import PREVIEW_ELEMENTS as PREVIEW_ELEMENTS
from onnx_arrow.jupyter.ipython import load_ipython_extension, register, show
from onnx_arrow.jupyter.pictures import MAX_ASPECT as MAX_ASPECT
from onnx_arrow.jupyter.pictures import MAX_SAMPLES as MAX_SAMPLES
from onnx_arrow.jupyter.pictures import MIN_IMAGE_SIDE as MIN_IMAGE_SIDE
from onnx_arrow.jupyter.pictures import PICTURE_PX as PICTURE_PX
from onnx_arrow.jupyter.png_encoder import png
from onnx_arrow.jupyter.reports import ReportView, report_view
from onnx_arrow.jupyter.stores import CaseView, case_view
from onnx_arrow.jupyter.traces import TraceView, trace_view
from onnx_arrow.jupyter.values import MAX_ITEMS as MAX_ITEMS

__all__ = [
    "NAN_COLOR",
    "NEGINF_COLOR",
    "PAD_COLOR",
    "POSINF_COLOR",
    "CaseView",
    "DiffView",
    "ReportView",
    "TraceView",
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
    "trace_view",
]

"""What describes each kind of object, and :func:`html` and :func:`text` of any of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
import pyarrow as pa

from onnx_arrow.corpus.rows import StoredValue
from onnx_arrow.corpus.store import Store
from onnx_arrow.errors import UnsupportedTypeError
from onnx_arrow.jupyter.columns import array_sections, table_sections
from onnx_arrow.jupyter.diffs import DiffView
from onnx_arrow.jupyter.render import render_html, render_text
from onnx_arrow.jupyter.reports import ReportView
from onnx_arrow.jupyter.sections import Section
from onnx_arrow.jupyter.stores import CaseView, store_sections
from onnx_arrow.jupyter.traces import TraceView
from onnx_arrow.jupyter.values import (
    VALUE_MESSAGES,
    message_sections,
    ndarray_sections,
    stored_value_sections,
)

__all__ = ["html", "sections_of", "text"]

#: What each kind of object is described by, most specific first.
_DESCRIBERS: Final[tuple[tuple[type | tuple[type, ...], Callable[[Any], list[Section]]], ...]] = (
    (CaseView, lambda view: view.sections()),
    (DiffView, lambda view: view.sections()),
    (ReportView, lambda view: view.sections()),
    (TraceView, lambda view: view.sections()),
    (Store, store_sections),
    (StoredValue, stored_value_sections),
    (VALUE_MESSAGES, message_sections),
    (pa.Table, table_sections),
    ((pa.Array, pa.ChunkedArray), array_sections),
    (np.ndarray, ndarray_sections),
)


def sections_of(obj: Any) -> list[Section]:
    """The sections describing ``obj``, by the first describer of its type."""
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
    return render_html(sections_of(obj))


def text(obj: Any) -> str:
    """The plain-text display of ``obj``: the facts :func:`html` shows, pictures named only."""
    return render_text(sections_of(obj))

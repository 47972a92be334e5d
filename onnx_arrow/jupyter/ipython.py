"""IPython: :func:`register` (``%load_ext onnx_arrow.jupyter``) makes the shell display
onnx-arrow objects as HTML; :func:`show` displays one, or prints its text outside a
notebook.  IPython is imported only when needed."""

from __future__ import annotations

import importlib
from typing import Any

import pyarrow as pa

from onnx_arrow.corpus.rows import StoredValue
from onnx_arrow.corpus.store import Store
from onnx_arrow.errors import UnsupportedTypeError
from onnx_arrow.jupyter.columns import is_onnx_column
from onnx_arrow.jupyter.dispatch import html, text
from onnx_arrow.jupyter.values import VALUE_MESSAGES

__all__ = ["load_ipython_extension", "register", "show"]


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
    for cls in (pa.ExtensionArray, pa.ChunkedArray, Store, StoredValue, *VALUE_MESSAGES):
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

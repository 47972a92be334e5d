"""Elements and previews as text: numbers, strings and booleans of a tensor shown short,
and the first elements of a value in one line."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from onnx_arrow.text import number, numeric

__all__ = ["MAX_STRING", "PREVIEW_ELEMENTS", "element_text", "preview_text"]

#: Elements shown in a value's preview.
PREVIEW_ELEMENTS: Final = 16
#: Characters of one string element in a preview.
MAX_STRING: Final = 40


def element_text(x: Any) -> str:
    """One element as a preview shows it: a number short, a string or bytes cut."""
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


def preview_text(array: np.ndarray[Any, Any], limit: int = PREVIEW_ELEMENTS) -> str:
    """The first ``limit`` elements of ``array`` in one line, and its size if cut."""
    flat = array.reshape(-1)[:limit]
    values = numeric(flat)
    # numpy's scalars, not tolist()'s floats: a float32 shown in its own shortest form
    shown = [element_text(x) for x in (flat if values is None else values)]
    if array.size > limit:
        shown.append(f"... ({array.size} elements)")
    return "[" + ", ".join(shown) + "]"

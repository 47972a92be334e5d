"""What a runtime is fed: a store's values as the runtimes take them (string tensors as
``str``, where a store gives the ``bytes`` that ``numpy_helper.to_array`` gives)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["strings_as_str"]


def strings_as_str(value: Any) -> Any:
    """``value`` with its string tensors (in a sequence too) decoded from UTF-8 to ``str``,
    undecodable bytes kept by ``surrogateescape``; anything else as it is.

    >>> import numpy as np
    >>> strings_as_str(np.array([b"ab", "c"], dtype=object)).tolist()
    ['ab', 'c']
    """
    if isinstance(value, np.ndarray) and value.dtype.kind in "OS":
        out = np.empty(value.shape, dtype=object)
        out.flat[:] = [
            x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else x for x in value.flat
        ]
        return out
    if isinstance(value, list):
        return [strings_as_str(v) for v in value]
    return value

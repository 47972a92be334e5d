"""A backend run on a model with some of its values exposed as outputs: the values it
gives, or a :class:`~onnx_arrow.errors.TraceError` saying what it was asked and why it
cannot."""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import ModelProto

from onnx_arrow.compare.backends import Backend
from onnx_arrow.errors import TraceError

__all__ = ["run_model"]


def _copy(value: Any) -> Any:
    """A copy a backend may write into (store arrays are read-only views)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


def run_model(
    backend: Backend, name: str, model: ModelProto, feed: dict[str, Any], what: str
) -> list[Any]:
    """``backend`` on ``model`` (a case's model with some of its values as outputs).

    Raises
    ------
    TraceError
        If the backend raises, or gives another number of values than the model's outputs.
    """
    wanted = len(model.graph.output)
    try:
        with np.errstate(all="ignore"):
            got = list(backend(model, {k: _copy(v) for k, v in feed.items()}))
    except Exception as exc:  # the backend's own failure, said with what it was asked
        raise TraceError(
            f"backend {name} cannot run the case's model with {what} as its outputs: "
            f"{type(exc).__name__}: {exc}. A backend that runs the model's own outputs only "
            "cannot be traced; try a smaller --chunk, or the values it does expose"
        ) from exc
    if len(got) != wanted:
        raise TraceError(
            f"backend {name} gave {len(got)} values for the {wanted} outputs of the case's "
            f"model with {what} as its outputs: it does not give the outputs a model declares"
        )
    return got

"""A backend run on a model with some of its values exposed as outputs: the values it
gives, or a :class:`~onnx_arrow.errors.TraceError` saying which value it cannot give and
why.

When a chunk of values fails, the chunk is halved until one value alone fails (a run
of the model per half, on failure only): the error names that value, the node making it
and whether the model declares its type, with the cause (of a runner's error, the last
exception line of its stderr); a chunk whose halves both run is said to fail only
together, and a model that does not run even with its own outputs is said so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import ModelProto

from onnx_arrow.compare.backends import Backend
from onnx_arrow.compare.failures import cause_line
from onnx_arrow.errors import BackendTimeoutError, TraceError
from onnx_arrow.trace.plan import TracePlan

__all__ = ["run_chunk", "run_model"]


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
            f"{_error_text(exc)}"
        ) from exc
    if len(got) != wanted:
        raise TraceError(
            f"backend {name} gave {len(got)} values for the {wanted} outputs of the case's "
            f"model with {what} as its outputs: it does not give the outputs a model declares"
        )
    return got


def _error_text(exc: BaseException) -> str:
    """``TypeName: message`` of a backend's error (a runner's with its stderr's tail)."""
    return f"{type(exc).__name__}: {exc}"


def run_chunk(
    backend: Backend,
    name: str,
    plan: TracePlan,
    names: list[str],
    feed: dict[str, Any],
    what: str,
) -> list[Any]:
    """``backend`` on the case's model with the values ``names`` (a chunk of ``plan``'s)
    as its outputs; if it fails, the value it cannot give, found by halving the chunk.

    Raises
    ------
    TraceError
        Naming the value the backend cannot give and why; or saying that it cannot run
        the case's model at all, or gives the chunk's values only one half at a time.
    """
    try:
        return run_model(backend, name, plan.chunk_model(names), feed, what)
    except TraceError as exc:
        if exc.__cause__ is None or isinstance(exc.__cause__, BackendTimeoutError):
            raise  # another number of values than asked, or a time limit: no halving
        raise _located(backend, name, plan, names, feed, exc) from exc.__cause__


def _located(
    backend: Backend,
    name: str,
    plan: TracePlan,
    names: list[str],
    feed: dict[str, Any],
    failed: TraceError,
) -> TraceError:
    """The error of the smallest part of ``names`` that fails, halving it."""
    failing, error, ran = names, failed, False
    while len(failing) > 1:
        half = len(failing) // 2
        for part in (failing[:half], failing[half:]):
            try:
                run_model(backend, name, plan.chunk_model(part), feed, "")
            except TraceError as exc:
                if isinstance(exc.__cause__, BackendTimeoutError):
                    return exc  # halving further would wait out the limit again
                failing, error = part, exc
                break
            ran = True
        else:
            return TraceError(
                f"backend {name} gives each half of {len(failing)} values "
                f"({failing[0]!r} .. {failing[-1]!r}) but not all of them at once: "
                f"{_cause(error)}; try a smaller --chunk"
            )
    value = failing[0]
    own = None if ran else _own_outputs_error(backend, name, plan, feed)
    if own is not None:
        return TraceError(
            f"backend {name} cannot run the case's model, even with its own outputs: {_cause(own)}"
        )
    node = plan.nodes[plan.producer[value]]
    typed = (
        "its type as shape inference finds it"
        if plan.types.get(value) is not None
        else "no type (shape inference finds none; a runner is told so through {untyped} "
        "and writes it as the value its runtime computed)"
    )
    return TraceError(
        f"backend {name} cannot give value {value!r} (output {list(node.node.output).index(value)} "
        f"of node #{node.position} {node.name} ({node.op_type}), exposed as a graph output "
        f"with {typed}): {_cause(error)}"
    )


def _own_outputs_error(
    backend: Backend, name: str, plan: TracePlan, feed: dict[str, Any]
) -> TraceError | None:
    """The error of ``backend`` on the case's model with its own outputs (None: it runs)."""
    try:
        run_model(backend, name, plan.model, feed, "")
    except TraceError as exc:
        return exc
    return None


def _cause(error: TraceError) -> str:
    """What a backend's failure says: its cause line, then its whole text when longer
    (a runner's stderr)."""
    exc = error.__cause__
    if exc is None:  # another number of values than asked
        return error.message
    text = _error_text(exc)
    cause = cause_line(text)
    return cause if cause == text else f"{cause}\n{text}"

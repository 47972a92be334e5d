"""Backends: what runs a model on inputs, the built-in ones, and how one is found by name.

A *backend* is any callable ``(model, inputs) -> outputs`` (:class:`Backend`).
:func:`reference_backend` (``onnx.reference.ReferenceEvaluator``) and
:func:`onnxruntime_backend` are built in (:data:`BACKENDS`); :func:`backend_named`
finds one by its command-line name, and :func:`describe_backend` says what one runs,
for a report.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from typing import Any, Final, Protocol

import numpy as np
import onnx
from onnx import ModelProto

from onnx_arrow.errors import BackendUnavailableError, CompareError

__all__ = [
    "BACKENDS",
    "ORT_DEFAULT_LOG_SEVERITY",
    "ORT_LOG_SEVERITY_VARIABLE",
    "Backend",
    "backend_named",
    "describe_backend",
    "onnxruntime_backend",
    "reference_backend",
]


class Backend(Protocol):
    """Runs a model on inputs: ``(model, {input name: value}) -> [output values]``.

    Outputs are in graph order; a value is an ndarray for a tensor, a list for a
    sequence, a dict for a map and None for an absent optional.
    """

    def __call__(self, model: ModelProto, inputs: dict[str, Any], /) -> Sequence[Any]: ...


def reference_backend(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """onnx's own reference implementation: ``ReferenceEvaluator(model).run(None, inputs)``.

    String tensors are fed as ``str`` (UTF-8 decoded), as its string operators want them
    (a store gives ``bytes``, as ``numpy_helper.to_array`` does).
    """
    from onnx.reference import ReferenceEvaluator

    feed = {name: _strings_as_str(v) for name, v in inputs.items()}
    return list(ReferenceEvaluator(model).run(None, feed))


def onnxruntime_backend(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """onnxruntime on the CPU (``pip install onnxruntime``; not a dependency of onnx-arrow).

    Absent optional inputs (None) are left out of the feed, and string tensors are
    fed as ``str`` (UTF-8 decoded), as onnxruntime wants them.  Its sessions log fatal
    messages only (every failure is recorded with its message), unless the environment
    variable :data:`ORT_LOG_SEVERITY_VARIABLE` gives another severity (0 verbose to 4
    fatal; ``--backend-logs`` sets onnxruntime's default, 2).

    Raises
    ------
    BackendUnavailableError
        If onnxruntime is not installed.
    """
    onnxruntime = _import_onnxruntime()
    options = onnxruntime.SessionOptions()
    options.log_severity_level = _ort_log_severity()
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feed = {name: _strings_as_str(v) for name, v in inputs.items() if v is not None}
    return list(session.run(None, feed))


#: The environment variable that sets the log severity of onnxruntime's sessions.
ORT_LOG_SEVERITY_VARIABLE: Final = "ONNX_ARROW_ORT_LOG_SEVERITY"


#: onnxruntime's own default log severity (warnings), which ``--backend-logs`` restores.
ORT_DEFAULT_LOG_SEVERITY: Final = 2


_ORT_FATAL: Final = 4


def _ort_log_severity() -> int:
    text = os.environ.get(ORT_LOG_SEVERITY_VARIABLE, "")
    if not text:
        return _ORT_FATAL
    if text not in {"0", "1", "2", "3", "4"}:
        raise CompareError(
            f"{ORT_LOG_SEVERITY_VARIABLE} is {text!r}; give a severity from 0 (verbose) to 4 "
            "(fatal), or unset it"
        )
    return int(text)


#: The built-in backends by name (the ``--backend`` choices of the command line).
BACKENDS: Final[dict[str, Backend]] = {
    "reference": reference_backend,
    "onnxruntime": onnxruntime_backend,
}


def backend_named(name: str) -> Backend:
    """The built-in backend ``name`` (see :data:`BACKENDS`), its runtime checked now.

    Raises
    ------
    BackendUnavailableError
        If the backend's runtime is not installed (``pip install onnxruntime``).
    CompareError
        If there is no backend of that name.
    """
    if name not in BACKENDS:
        raise CompareError(f"no backend {name!r}; expected one of {', '.join(BACKENDS)}")
    if name == "onnxruntime":
        _import_onnxruntime()
    return BACKENDS[name]


def describe_backend(backend: Backend) -> dict[str, Any]:
    """The backend's name and the version of what it runs, for the report."""
    described = getattr(backend, "describe", None)
    if callable(described):  # a backend that says it itself (a CommandRunner)
        return dict(described())
    name = next((n for n, b in BACKENDS.items() if b is backend), None)
    if name == "reference":
        return {"name": name, "runs": f"onnx {onnx.__version__} ReferenceEvaluator"}
    if name == "onnxruntime":
        return {"name": name, "runs": f"onnxruntime {_import_onnxruntime().__version__}"}
    where = f"{getattr(backend, '__module__', '?')}.{getattr(backend, '__qualname__', '?')}"
    return {"name": where, "runs": "a backend of the caller's"}


def _import_onnxruntime() -> Any:
    """The onnxruntime module (not a dependency, so untyped), or an error saying how to
    install it."""
    try:
        return importlib.import_module("onnxruntime")
    except ImportError:
        raise BackendUnavailableError(
            "onnxruntime is not installed; install it with `pip install onnxruntime`"
        ) from None


def _strings_as_str(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.dtype.kind in "OS":
        out = np.empty(value.shape, dtype=object)
        out.flat[:] = [
            x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else x for x in value.flat
        ]
        return out
    if isinstance(value, list):
        return [_strings_as_str(v) for v in value]
    return value

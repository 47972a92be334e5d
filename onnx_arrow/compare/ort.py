"""onnxruntime as a backend: its execution providers and session options, checked, and
values of every element type it takes fed and handed back as OrtValues of that type.

onnxruntime's Python API converts numpy arrays by their numpy type, which bfloat16, the
float8s, float4 and the 2- and 4-bit integers do not have in numpy itself: it refuses
them as inputs (``Numpy_type N can't be converted``) and refuses them as outputs, or
hands float8e4m3fn back as raw ``uint8``.  :class:`OnnxruntimeBackend` feeds such a
tensor as an ``OrtValue`` built with its ONNX element type (sub-byte types packed as
ONNX packs them) and reads such an output from the ``OrtValue``'s own bytes, as the
``ml_dtypes`` dtype of the dtype table, so that no case errs for the conversion alone.
"""

from __future__ import annotations

import ctypes
import importlib
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np
from onnx import ModelProto

from onnx_arrow.compare.feeds import strings_as_str
from onnx_arrow.core.model import DType, dtype_of, dtype_of_numpy, pack, unpack
from onnx_arrow.errors import (
    BackendSpecError,
    BackendUnavailableError,
    CompareError,
    UnsupportedTypeError,
)

__all__ = [
    "DEFAULT_PROVIDERS",
    "ORT_DEFAULT_LOG_SEVERITY",
    "ORT_LOG_SEVERITY_VARIABLE",
    "OnnxruntimeBackend",
    "import_onnxruntime",
    "onnxruntime_backend",
    "parse_session_option",
    "run_session",
]

#: The environment variable that sets the log severity of onnxruntime's sessions.
ORT_LOG_SEVERITY_VARIABLE: Final = "ONNX_ARROW_ORT_LOG_SEVERITY"

#: onnxruntime's own default log severity (warnings), which ``--backend-logs`` restores.
ORT_DEFAULT_LOG_SEVERITY: Final = 2

#: The execution providers of a session unless others are given.
DEFAULT_PROVIDERS: Final = ("CPUExecutionProvider",)

_ORT_FATAL: Final = 4


def import_onnxruntime() -> Any:
    """The onnxruntime module (not a dependency, so untyped), or an error saying how to
    install it.

    Raises
    ------
    BackendUnavailableError
        If onnxruntime is not installed.
    """
    try:
        return importlib.import_module("onnxruntime")
    except ImportError:
        raise BackendUnavailableError(
            "onnxruntime is not installed; install it with `pip install onnxruntime`"
        ) from None


class OnnxruntimeBackend:
    """onnxruntime with the given execution providers and session options.

    A session is made once per model (a case's data sets share it) and is not pickled:
    a worker process that receives the backend makes its own.

    Parameters
    ----------
    providers
        Execution provider names, in the order onnxruntime should try them (or one
        string of them joined by commas); :data:`DEFAULT_PROVIDERS` unless given.
    session_options
        ``onnxruntime.SessionOptions`` attributes by name (``intra_op_num_threads``,
        ``graph_optimization_level`` ...), values as their type or as text
        (``"ORT_ENABLE_BASIC"``, ``"1"``, ``"true"``); a name with a dot is a session
        configuration entry (``session.intra_op.allow_spinning``).  The log severity is
        fatal only unless given here or by :data:`ORT_LOG_SEVERITY_VARIABLE`.

    Examples
    --------
    >>> backend = OnnxruntimeBackend(session_options={"intra_op_num_threads": "1"})
    >>> backend.check().describe()  # doctest: +ELLIPSIS
    'onnxruntime ... (CPUExecutionProvider; intra_op_num_threads=1)'
    """

    def __init__(
        self,
        providers: Iterable[str] | None = None,
        session_options: Mapping[str, object] | None = None,
    ) -> None:
        if isinstance(providers, str):  # "A,B", as the command line gives them
            providers = [p.strip() for p in providers.split(",") if p.strip()]
        self.providers: tuple[str, ...] = (
            DEFAULT_PROVIDERS if providers is None else tuple(providers)
        )
        if session_options is not None and not isinstance(session_options, Mapping):
            raise BackendSpecError(
                "session_options: expected a mapping of SessionOptions attribute names to "
                f"values, got {type(session_options).__name__}"
            )
        self.session_options: dict[str, object] = dict(session_options or {})
        self._last: tuple[ModelProto, Any] | None = None

    def check(self) -> OnnxruntimeBackend:
        """Check now that onnxruntime imports and takes the providers and options.

        Raises
        ------
        BackendUnavailableError
            If onnxruntime is not installed.
        BackendSpecError
            If a provider is not available (the message lists those that are), or a
            session option is not a settable attribute of ``SessionOptions`` or its value
            not one of its type.
        """
        ort = import_onnxruntime()
        _check_providers(ort, self.providers)
        _session_options(ort, self.session_options)
        return self

    def describe(self) -> str:
        """What runs: onnxruntime's version, the providers and the options given."""
        ort = import_onnxruntime()
        options = "".join(f"; {k}={v}" for k, v in self.session_options.items())
        return f"onnxruntime {ort.__version__} ({', '.join(self.providers)}{options})"

    def __call__(self, model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        """The outputs of ``model`` on ``inputs`` (absent optionals, None, are left out)."""
        if self._last is not None and self._last[0] is model:
            session = self._last[1]
        else:
            ort = import_onnxruntime()
            session = ort.InferenceSession(
                model.SerializeToString(),
                _session_options(ort, self.session_options),
                providers=list(_check_providers(ort, self.providers)),
            )
            self._last = (model, session)
        return run_session(session, inputs)

    def __getstate__(self) -> dict[str, Any]:
        return {"providers": self.providers, "session_options": self.session_options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.providers = tuple(state["providers"])
        self.session_options = dict(state["session_options"])
        self._last = None

    def __repr__(self) -> str:
        return (
            f"OnnxruntimeBackend(providers={list(self.providers)!r}, "
            f"session_options={self.session_options!r})"
        )


_DEFAULT: Final = OnnxruntimeBackend()


def onnxruntime_backend(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """onnxruntime on the CPU (``pip install onnxruntime``; not a dependency of onnx-arrow).

    Absent optional inputs (None) are left out of the feed, string tensors are fed as
    ``str`` (UTF-8 decoded), as onnxruntime wants them, and tensors of the types numpy
    does not have (bfloat16, float8, float4, int4 ...) as OrtValues of their
    ONNX type; outputs of those types come back as their ``ml_dtypes`` dtype.  Its
    sessions log fatal messages only (every failure is recorded with its message),
    unless the environment variable :data:`ORT_LOG_SEVERITY_VARIABLE` gives another
    severity (0 verbose to 4 fatal; ``--backend-logs`` sets onnxruntime's default, 2).
    :class:`OnnxruntimeBackend` takes other providers and session options.

    Raises
    ------
    BackendUnavailableError
        If onnxruntime is not installed.
    """
    return _DEFAULT(model, inputs)


def parse_session_option(text: str) -> tuple[str, str]:
    """``"KEY=VALUE"`` (the ``--session-option`` of the command line) as ``(KEY, VALUE)``.

    Raises
    ------
    BackendSpecError
        If the text has no ``=`` or no key.

    >>> parse_session_option("intra_op_num_threads=1")
    ('intra_op_num_threads', '1')
    """
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise BackendSpecError(
            f"session option {text!r}: expected KEY=VALUE, for example "
            "'intra_op_num_threads=1' or 'graph_optimization_level=ORT_ENABLE_BASIC'"
        )
    return key.strip(), value.strip()


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


def _check_providers(ort: Any, providers: Sequence[str]) -> Sequence[str]:
    available = list(ort.get_available_providers())
    if not providers:
        raise BackendSpecError(
            f"no execution provider given; onnxruntime {ort.__version__} has {', '.join(available)}"
        )
    for provider in providers:
        if provider not in available:
            raise BackendSpecError(
                f"execution provider {provider!r} is not available in onnxruntime "
                f"{ort.__version__}; available: {', '.join(available)}"
            )
    return providers


def _settable(options: Any) -> list[str]:
    kind = type(options)
    return sorted(
        name
        for name in dir(kind)
        if not name.startswith("_")
        and isinstance(getattr(kind, name), property)
        and getattr(kind, name).fset is not None
    )


def _session_options(ort: Any, given: Mapping[str, object]) -> Any:
    options = ort.SessionOptions()
    options.log_severity_level = _ort_log_severity()
    settable = _settable(options)
    for key, value in given.items():
        if "." in key:  # a session configuration entry, onnxruntime's own text
            text = ("1" if value else "0") if isinstance(value, bool) else str(value)
            options.add_session_config_entry(key, text)
            continue
        if key not in settable:
            raise BackendSpecError(
                f"session option {key!r} is not an attribute of onnxruntime.SessionOptions "
                f"that can be set; expected one of {', '.join(settable)}, or a session "
                "configuration entry, which has a dot (session.intra_op.allow_spinning=0)"
            )
        try:
            setattr(options, key, _converted(value, getattr(options, key)))
        except (TypeError, ValueError, RuntimeError) as exc:
            raise BackendSpecError(f"session option {key}={value!r}: {exc}") from None
    return options


_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


def _converted(value: object, current: object) -> object:
    """``value`` as the type of the attribute's ``current`` value (text converted)."""
    kind = type(current)
    if isinstance(value, kind) and not (isinstance(value, bool) and kind is int):
        return value
    if isinstance(current, bool):
        text = str(value).lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise ValueError("expected true or false (1 or 0)")
    if isinstance(current, int):
        if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
            return int(value)
        raise ValueError("expected a whole number")
    if isinstance(current, str):
        return str(value)
    members: dict[str, Any] = getattr(kind, "__members__", {})
    if members:
        text = str(value).upper()
        for name in (text, f"ORT_{text}"):
            if name in members:
                return members[name]
        by_value = {int(m): m for m in members.values()}
        if re.fullmatch(r"\d+", text) and int(text) in by_value:
            return by_value[int(text)]
        raise ValueError(f"expected one of {', '.join(members)}")
    raise ValueError(f"onnx-arrow cannot set a {kind.__name__} from {type(value).__name__}")


# --- values in and out --------------------------------------------------------------------


def _own_row(onnx_type: str) -> DType | None:
    """The dtype row of a tensor type onnxruntime names (``tensor(bfloat16)``) whose numpy
    dtype is an ``ml_dtypes`` one, which onnxruntime's numpy conversion does not know."""
    found = re.fullmatch(r"tensor\((\w+)\)", onnx_type)
    if found is None:
        return None
    try:
        row = dtype_of(found[1].upper())
    except UnsupportedTypeError:
        return None
    return row if row.numpy_name.startswith("ml_dtypes.") else None


def _own_numpy_row(value: Any) -> DType | None:
    if not isinstance(value, np.ndarray) or value.dtype.kind in "OSU":
        return None
    try:
        row = dtype_of_numpy(value.dtype)
    except UnsupportedTypeError:
        return None
    return row if row.numpy_name.startswith("ml_dtypes.") else None


def _ort_value(ort: Any, value: np.ndarray[Any, Any], row: DType) -> Any:
    """An ``OrtValue`` of ``row``'s ONNX type holding ``value``'s elements."""
    value = np.require(value, requirements="C")
    if row.is_packed:
        packed = pack(value.view(np.uint8).reshape(-1), row)
        # onnxruntime takes the shape from the array and reads the packed bytes from its
        # start: an array of the tensor's shape, of bytes, holding them first
        data = np.zeros(value.shape, dtype=np.uint8)
        data.reshape(-1)[: packed.size] = packed
    else:
        data = value.view(np.dtype(f"<u{row.numpy.itemsize}"))
    return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(data, row.onnx)


def _fed(ort: Any, value: Any) -> Any:
    row = _own_numpy_row(value)
    return strings_as_str(value) if row is None else _ort_value(ort, value, row)


def _from_ort_value(value: Any, name: str) -> Any:
    """An output ``OrtValue`` as numpy; one of an ``ml_dtypes`` type read from its bytes."""
    row = _own_row(value.data_type())
    if row is None:
        return value.numpy()
    if value.device_name().lower() != "cpu":
        raise CompareError(
            f"onnxruntime left output {name!r} ({row.name}) on {value.device_name()}, "
            "where onnx-arrow cannot read it; use a provider whose outputs are on the CPU"
        )
    shape = tuple(value.shape())
    size = value.tensor_size_in_bytes()
    raw = np.frombuffer(ctypes.string_at(value.data_ptr(), size), dtype=np.uint8)
    if row.is_packed:
        where = f"onnxruntime's output {name!r}"
        codes = unpack(raw, row, math.prod(shape), where)
        return codes.view(row.numpy).reshape(shape)
    return raw.view(row.numpy).reshape(shape)


def _as_declared(value: Any, row: DType | None, name: str) -> Any:
    """An output ``session.run`` gave, as ``row``'s dtype (float8e4m3fn comes back as
    its raw ``uint8`` codes)."""
    if row is None or not isinstance(value, np.ndarray) or value.dtype == row.numpy:
        return value
    if not row.is_packed and value.dtype.kind == "u" and value.dtype.itemsize == row.bits // 8:
        return value.view(row.numpy)
    raise CompareError(
        f"onnxruntime gave output {name!r}, a {row.name} tensor, as {value.dtype}, which "
        f"onnx-arrow cannot read as {row.name} exactly"
    )


def run_session(session: Any, inputs: dict[str, Any]) -> list[Any]:
    """Run an ``onnxruntime.InferenceSession`` on ``inputs`` (by graph input name; None
    left out): tensors of ``ml_dtypes`` types in and out as OrtValues of their ONNX
    type, strings as ``str``."""
    ort = import_onnxruntime()
    fed = {name: value for name, value in inputs.items() if value is not None}
    outputs = session.get_outputs()
    names = [o.name for o in outputs]
    rows = [_own_row(o.type) for o in outputs]
    plain = all(isinstance(v, np.ndarray) and v.dtype.kind not in "OSU" for v in fed.values())
    if any(rows) and plain and all(o.type.startswith("tensor(") for o in outputs):
        # an output numpy has no type for: every value an OrtValue, read back from its bytes
        feed = {
            name: ort.OrtValue.ortvalue_from_numpy(np.require(v, requirements="C"))
            if (row := _own_numpy_row(v)) is None
            else _ort_value(ort, v, row)
            for name, v in fed.items()
        }
        results = session.run_with_ort_values(None, feed)
        return [_from_ort_value(v, n) for v, n in zip(results, names, strict=True)]
    results = session.run(None, {name: _fed(ort, v) for name, v in fed.items()})
    return [_as_declared(v, r, n) for v, r, n in zip(results, rows, names, strict=True)]

"""Run a backend over a corpus store and compare what it gives with the expected outputs.

An adapter (it imports pandas; ``import onnx_arrow`` does not import this module).

* A *backend* is any callable ``(model, inputs) -> outputs``: ``model`` an
  ``onnx.ModelProto``, ``inputs`` a dict from graph input name to value (ndarray,
  list for a sequence, dict for a map, None for an absent optional), ``outputs`` the
  values of the graph outputs in graph order.  :func:`reference_backend`
  (``onnx.reference.ReferenceEvaluator``) and :func:`onnxruntime_backend` are built in.
* :func:`run_backend` runs it over every data set of every case of a store; an
  exception the backend raises is recorded, never propagated.
* :func:`compare` gives one row per expected output value: its status (see
  :data:`STATUSES`), max absolute and relative errors, elements beyond tolerance, NaN
  counts, dtypes, shapes and the backend's error.  :func:`summary` counts statuses per
  operator.
* :func:`write_actual` writes what a backend gives as a corpus store of its own (the
  same models and inputs, the actual outputs), and :func:`compare_stores` compares two
  stores, so a run on one machine can be compared on another.

Values are compared the way onnx's backend test runner does
(``onnx.backend.test.runner.Runner.assert_similar_outputs``): floats with
``numpy.isclose`` (``|actual - expected| <= atol + rtol * |expected|``, NaN equal to
NaN, bfloat16 with ``rtol`` at least ``2**-6``), other ml_dtypes floats (float8,
float4) as float32.  Where the runner differs, this module is stricter and says so:
integers and booleans are compared exactly, strings by equality (``str`` and UTF-8
``bytes`` are equal), dtypes must match.

Each case is compared with the first of: the tolerance of a pattern that names it
(``tolerance={"test_dft": (1e-2, 1e-4)}``, as onnx's backend test files override
theirs per test), the case's own as its store keeps it (onnx's ``TestCase.rtol`` /
``atol``, a case folder's ``data.json``: densenet121's rtol is 2e-3), and the ``rtol``
/ ``atol`` given (1e-3 and 1e-7, onnx's defaults).  Each row says which it used.

Examples
--------
>>> import tempfile, numpy as np
>>> from onnx import TensorProto, helper, numpy_helper
>>> from onnx_arrow.corpus import Case, CorpusFile, Store, write_store
>>> graph = helper.make_graph(
...     [helper.make_node("Abs", ["x"], ["y"])], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
>>> x = np.array([-1.0, 2.0, np.nan], np.float32)
>>> files = [
...     CorpusFile("node/test_abs/model.onnx", model.SerializeToString()),
...     CorpusFile("node/test_abs/test_data_set_0/input_0.pb",
...                numpy_helper.from_array(x, "x").SerializeToString()),
...     CorpusFile("node/test_abs/test_data_set_0/output_0.pb",
...                numpy_helper.from_array(np.abs(x), "y").SerializeToString())]
>>> tmp = tempfile.TemporaryDirectory()
>>> _ = write_store([Case("node/test_abs", "node", files, files[0].path)],
...                 f"{tmp.name}/abs.parquet")
>>> store = Store(f"{tmp.name}/abs.parquet")
>>> compare(store)[["case", "name", "status", "max_abs_error", "nan_expected"]]
            case name status  max_abs_error  nan_expected
0  node/test_abs    y  match            0.0             1
>>> def off_by_half(model, inputs):
...     return [np.abs(inputs["x"]) + np.float32(0.5)]
>>> df = compare(store, off_by_half)
>>> df[["status", "max_abs_error", "n_beyond_tolerance"]].to_numpy().tolist()
[['mismatch', 0.5, 2]]
>>> summary(df)[["op_type", "total", "match", "mismatch", "non_match"]]
  op_type  total  match  mismatch  non_match
0     Abs      1      0         1          1
>>> tmp.cleanup()
"""

from __future__ import annotations

import contextlib
import ctypes
import fnmatch
import importlib
import itertools
import json
import os
import re
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import FrameType
from typing import Any, Final, Protocol

import numpy as np
import onnx
import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from onnx import (
    ModelProto,
    OptionalProto,
    SequenceProto,
    TypeProto,
    numpy_helper,
)

import onnx_arrow
from onnx_arrow._summary import DECODED_FLOATS, dtype_name, op_types
from onnx_arrow.core.model import ArrowKind, dtype_of_numpy, load_json
from onnx_arrow.corpus.decode import case_tolerance
from onnx_arrow.corpus.rows import StoredValue
from onnx_arrow.corpus.sources import (
    Case,
    CorpusFile,
    Tolerance,
    declared_type,
    graph_values,
    read_regular_file,
    value_slot,
)
from onnx_arrow.corpus.store import Store, WriteOptions, write_store
from onnx_arrow.corpus.tree import atomic_file
from onnx_arrow.errors import (
    BackendTimeoutError,
    BackendUnavailableError,
    CaseLostError,
    CompareError,
    CorpusError,
    OnnxArrowError,
)
from onnx_arrow.parallel import Lost, heartbeat, map_cases

__all__ = [
    "BACKENDS",
    "COMPARE_COLUMNS",
    "KEEP_ACTUAL",
    "ORT_DEFAULT_LOG_SEVERITY",
    "ORT_LOG_SEVERITY_VARIABLE",
    "PASSING",
    "REPORT_METADATA_KEY",
    "STATUSES",
    "Backend",
    "BackendTimeoutError",
    "BackendUnavailableError",
    "CompareError",
    "DataSetRun",
    "Expectations",
    "backend_named",
    "compare",
    "compare_stores",
    "onnxruntime_backend",
    "parse_tolerance",
    "reference_backend",
    "run_backend",
    "select_cases",
    "status_counts",
    "summary",
    "write_actual",
    "write_report",
]

#: The statuses of a compared output, from best to worst.  A value with several
#: problems gets the worst one (a sequence with one element of the wrong shape and
#: another with a NaN is a ``shape_mismatch``).
#:
#: ``match``: within tolerance.  ``mismatch``: elements beyond tolerance (or unequal
#: strings or integers).  ``nan_mismatch``: NaN where the other has none.
#: ``dtype_mismatch``: another element type (errors are still computed when both are
#: numbers).  ``shape_mismatch``: another shape, sequence length, set of map keys, an
#: absent optional against a present one, or another kind of value.  ``error``: the
#: backend raised (or gave too few outputs, or an output missing from the actual
#: store, or an expected value kept as bytes).  ``skipped``: a case without a model or
#: without data sets, or one a skip pattern names.  ``xfail``: a failure (of any of the
#: statuses before ``skipped``, named in ``detail``) of a case an xfail pattern names;
#: ``xpass``: every output of such a case matched.
STATUSES: Final = (
    "match",
    "mismatch",
    "nan_mismatch",
    "dtype_mismatch",
    "shape_mismatch",
    "error",
    "skipped",
    "xfail",
    "xpass",
)
_RANK: Final = {status: rank for rank, status in enumerate(STATUSES)}
#: The statuses that do not fail a run: ``xpass`` does only when asked (``strict``).
PASSING: Final = frozenset({"match", "skipped", "xfail", "xpass"})

#: The columns of the DataFrame :func:`compare` returns.
COMPARE_COLUMNS: Final = (
    "case", "op_types", "data_set", "index", "name", "onnx_type", "status",
    "dtype_expected", "dtype_actual", "shape_expected", "shape_actual",
    "max_abs_error", "max_rel_error", "n_beyond_tolerance", "nan_expected", "nan_actual",
    "rtol", "atol", "tolerance", "worst_index", "worst_expected", "worst_actual",
    "error", "detail", "actual",
)  # fmt: skip
#: Which actual values a report keeps (its ``actual`` column): of the outputs that
#: differ from the expected ones (``failed``, the default), of all, or of none.
KEEP_ACTUAL: Final = ("failed", "all", "none")
#: The statuses of an output whose actual value a report keeps by default.
_DIFFERS: Final = frozenset({"mismatch", "nan_mismatch", "dtype_mismatch", "shape_mismatch"})

#: onnx's runner compares bfloat16 with at least this rtol (two bfloat16 ULPs).
_BFLOAT16_RTOL: Final = 2.0**-6
_ERROR_SUFFIX: Final = ".error.txt"
_DETAILS_KEPT: Final = 3


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


# --- running ------------------------------------------------------------------------


@dataclass
class DataSetRun:
    """What a backend gave for one data set of one case (or why the case was skipped).

    ``actual`` holds the outputs in graph order, or None when the backend raised
    (``error`` is then ``"TypeName: message"``) or the case was skipped (``skipped``
    says why: no model, no data sets).  ``inputs`` and ``expected`` are the stored
    values by index; ``model`` is the case's model (None when it has none), parsed
    once for all its data sets.
    """

    case: str
    op_types: tuple[str, ...]
    data_set: int | None
    output_names: tuple[str, ...] = ()
    inputs: dict[int, StoredValue] = field(default_factory=dict)
    expected: dict[int, StoredValue] = field(default_factory=dict)
    actual: list[Any] | None = None
    error: str | None = None
    skipped: str | None = None
    model: ModelProto | None = field(default=None, repr=False)
    #: Value files of the data set the store kept as bytes (they did not decode as the
    #: model declares), by ``(io, index)``: never fed, never compared, always an error.
    kept_as_bytes: dict[tuple[str, int], str] = field(default_factory=dict)
    #: Inputs made as onnx's runner makes them for a model test without input files
    #: (``light/``), by graph input name.
    made_inputs: dict[str, Any] = field(default_factory=dict, repr=False)
    #: The case's own tolerances as the store keeps them (None: it states none).
    tolerance: Tolerance | None = None


def select_cases(store: Store, patterns: Iterable[str] | None = None) -> list[str]:
    """The cases of ``store`` (in store order) that match any of the glob ``patterns``.

    A pattern matches the whole name (``node/test_abs``, ``node/test_add*``) or the
    name without its kind folder (``test_abs``).  None selects every case.

    Raises
    ------
    CompareError
        If a pattern matches no case.
    """
    names = store.cases()
    if patterns is None:
        return names
    patterns = list(patterns)
    chosen: set[str] = set()
    for pattern in patterns:
        hits = {
            n
            for n in names
            if fnmatch.fnmatchcase(n, pattern) or fnmatch.fnmatchcase(n.split("/", 1)[-1], pattern)
        }
        if not hits:
            raise CompareError(
                f"no case matches {pattern!r}; the store's cases are named like {names[0]!r}"
                if names
                else f"no case matches {pattern!r}: the store is empty",
                where=str(store.path),
            )
        chosen |= hits
    return [n for n in names if n in chosen]


def run_backend(
    store: Store | str | os.PathLike[str],
    backend: Backend = reference_backend,
    *,
    cases: Iterable[str] | None = None,
    timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> Iterator[DataSetRun]:
    """Run ``backend`` on every data set of every case of ``store``, one case at a time.

    Parameters
    ----------
    store
        A corpus store, or its path.
    backend
        See :class:`Backend`; :func:`reference_backend` unless given.
    cases
        Glob patterns of the cases to run (see :func:`select_cases`); all when None.
    timeout
        Seconds a backend may take on one data set; longer is recorded as a
        :class:`BackendTimeoutError`.  Uses ``SIGALRM``, so it needs the main thread
        of a POSIX process, and a backend running native code is stopped only when it
        returns to Python.
    progress
        Called with each case's name once it has run.

    Yields
    ------
    DataSetRun
        One per data set of a case, in store order; one with ``skipped`` set for a
        case without a model or without data sets (``real/`` cases).  Every exception
        the backend raises is recorded in ``error``; errors reading the store are
        raised.
    """
    store = store if isinstance(store, Store) else Store(store)
    _check_timeout(timeout)
    for case in select_cases(store, cases):
        yield from _run_case(store, case, backend, timeout)
        if progress is not None:
            progress(case)


def _check_timeout(timeout: float | None) -> None:
    if timeout is None:
        return
    if not timeout > 0:
        raise CompareError(f"timeout is {timeout}; give a number of seconds above 0")
    if not hasattr(signal, "setitimer"):
        raise CompareError("a timeout needs a POSIX system (SIGALRM); pass None")


def _data_sets(store: Store, case: str) -> Iterator[DataSetRun]:
    """The data sets of a case with their stored values, not run yet (or why it is skipped)."""
    rows = store.read_case(case, ["test_case", "path", "role", "rtol", "atol"])
    roles, paths = rows.column("role").to_pylist(), rows.column("path").to_pylist()
    own = case_tolerance(rows, where=f"{store.path}: {case}")
    if "model" not in roles:
        yield DataSetRun(case, (), None, skipped="the case has no model", tolerance=own)
        return
    model = store.model(case)
    ops = op_types(model)
    names = tuple(o.name for o in model.graph.output)
    data_sets: dict[int | None, tuple[dict[int, StoredValue], dict[int, StoredValue]]] = {}
    for value in store.values(case):
        inputs, expected = data_sets.setdefault(value.data_set, ({}, {}))
        (inputs if value.io == "input" else expected)[value.index] = value
    kept: dict[int | None, dict[tuple[str, int], str]] = {}
    files = Case(case, "", [], paths[roles.index("model")])
    for role, path in zip(roles, paths, strict=True):
        slot = value_slot(files, path) if role == "file" else None
        if slot is not None:
            data_sets.setdefault(slot[0], ({}, {}))
            kept.setdefault(slot[0], {})[slot[1], slot[2]] = path
    if not data_sets:
        yield DataSetRun(
            case, ops, None, names, skipped="the case has no data sets", model=model, tolerance=own
        )
        return
    for n in sorted(data_sets, key=lambda n: -1 if n is None else n):
        inputs, expected = data_sets[n]
        run = DataSetRun(
            case,
            ops,
            n,
            names,
            inputs,
            expected,
            model=model,
            kept_as_bytes=kept.get(n, {}),
            tolerance=own,
        )
        fed = graph_values(model, "input")
        if n is None and not inputs and expected and fed and not run.kept_as_bytes:
            # a model test with expected outputs and no input files (light/): onnx's runner
            # feeds it inputs it makes, and so does this
            try:
                run.made_inputs = _made_inputs(model, case)
            except NotImplementedError as exc:
                run.skipped = f"no input files, and onnx's runner makes none for it: {exc}"
        yield run


def _made_inputs(model: ModelProto, case: str) -> dict[str, Any]:
    """The inputs onnx's backend test runner makes for a model test without input files
    (its ``Runner.generate_dummy_data``, not random)."""
    from onnx.backend.test.runner import Runner

    return {
        x.name: Runner.generate_dummy_data(x, seed=0, name=case, random=False)
        for x in graph_values(model, "input")
    }


def _kept_message(path: str) -> str:
    return (
        f"{path} was kept as bytes at import (it does not decode as the model declares), "
        "so it cannot be fed or compared; fix the file, or the model's declared type"
    )


def _run_case(
    store: Store, case: str, backend: Backend, timeout: float | None
) -> Iterator[DataSetRun]:
    for run in _data_sets(store, case):
        if run.skipped is not None or run.model is None:
            yield run
            continue
        unfed = [p for (io, _), p in sorted(run.kept_as_bytes.items()) if io == "input"]
        if unfed:
            run.error = f"{CompareError.__name__}: {_kept_message(unfed[0])}"
            yield run
            continue
        heartbeat()  # a worker that stops answering from here on is stuck in the backend
        model = run.model
        input_names = [i.name for i in graph_values(model, "input")]
        feed = {
            input_names[k] if k < len(input_names) else f"input_{k}": _writable(v.to_numpy())
            for k, v in sorted(run.inputs.items())
        }
        feed.update((name, value.copy()) for name, value in run.made_inputs.items())
        try:
            with _deadline(timeout), np.errstate(all="ignore"):
                run.actual = list(backend(model, feed))
        except Exception as exc:  # every backend failure is a result, not a crash
            run.error = f"{type(exc).__name__}: {exc}"
        yield run


def _writable(value: Any) -> Any:
    """A copy the backend may write into: the store's arrays are read-only views."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_writable(v) for v in value]
    if isinstance(value, dict):
        return {k: _writable(v) for k, v in value.items()}
    return value


@contextlib.contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`BackendTimeoutError` in the block after ``seconds``: by ``SIGALRM`` in
    the main thread, else (a Dask worker's thread) by an exception set on the thread.
    Either lands only once the backend runs Python code again."""
    if seconds is None:
        yield
        return
    if threading.current_thread() is not threading.main_thread():
        with _thread_deadline(seconds):
            yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise BackendTimeoutError(f"the backend ran longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _ThreadTimeout(Exception):
    """Raised in a thread past its deadline: set by class, so without a message, and
    turned into a :class:`BackendTimeoutError` where the block ends."""


@contextlib.contextmanager
def _thread_deadline(seconds: float) -> Iterator[None]:
    ident = threading.get_ident()
    lock = threading.Lock()
    inside = [True]

    def expire() -> None:
        with lock:
            if inside[0]:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(ident), ctypes.py_object(_ThreadTimeout)
                )

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except _ThreadTimeout:
        raise BackendTimeoutError(f"the backend ran longer than {seconds:g} s") from None
    finally:
        with lock:
            inside[0] = False
        timer.cancel()


# --- comparing one value ---------------------------------------------------------------


@dataclass
class _Diff:
    """The comparison of one output value, accumulated over its tensors."""

    status: str = "match"
    dtype_expected: str | None = None
    dtype_actual: str | None = None
    shape_expected: tuple[int, ...] | None = None
    shape_actual: tuple[int, ...] | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    beyond: int = 0
    nan_expected: int | None = None
    nan_actual: int | None = None
    details: list[str] = field(default_factory=list)
    #: The rtol the floats were compared with (raised for bfloat16), None if none were.
    rtol: float | None = None
    #: The worst element so far: (how far beyond tolerance, where, expected, actual).
    worst: tuple[float, str, str, str] | None = None

    def note_worst(
        self, excess: np.ndarray[Any, Any], e: np.ndarray[Any, Any], a: np.ndarray[Any, Any],
        where: str,
    ) -> None:  # fmt: skip
        """Keep the element of largest ``excess`` (> 0: beyond tolerance) if it is the worst."""
        if excess.size == 0:
            return
        flat = int(np.argmax(excess))
        amount = float(excess.flat[flat])
        if not amount > 0 or (self.worst is not None and amount <= self.worst[0]):
            return
        index = np.unravel_index(flat, e.shape) if e.ndim else ()
        at = f"{where}[{', '.join(map(str, index))}]"
        self.worst = (amount, at, _element_text(e[index]), _element_text(a[index]))

    def worse(self, status: str, detail: str | None = None) -> None:
        if _RANK[status] > _RANK[self.status]:
            self.status = status
        if detail is not None:
            self.details.append(detail)

    def add_errors(self, max_abs: float, max_rel: float, beyond: int) -> None:
        self.max_abs = max_abs if self.max_abs is None else max(self.max_abs, max_abs)
        self.max_rel = max_rel if self.max_rel is None else max(self.max_rel, max_rel)
        self.beyond += beyond

    def add_nans(self, expected: int, actual: int) -> None:
        self.nan_expected = (self.nan_expected or 0) + expected
        self.nan_actual = (self.nan_actual or 0) + actual


def _element_text(x: Any) -> str:
    """One element, exactly and briefly: numpy's shortest round-trip form for its dtype."""
    if isinstance(x, bytes):
        return repr(x)
    if isinstance(x, str):
        return repr(x)
    return str(x)


def _compare_value(expected: Any, actual: Any, rtol: float, atol: float) -> _Diff:
    diff = _Diff()
    with np.errstate(all="ignore"):  # inf - inf, overflow: handled where they matter
        _walk(expected, actual, rtol, atol, diff, "", top=True)
    return diff


def _kind_name(value: Any) -> str:
    if value is None:
        return "an absent optional"
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, list | tuple):
        return "a sequence"
    return f"a {type(value).__name__}"


def _walk(expected: Any, actual: Any, rtol: float, atol: float, diff: _Diff, where: str,
          *, top: bool = False) -> None:  # fmt: skip
    at = where or "the value"
    if expected is None or actual is None:
        if (expected is None) != (actual is None):
            diff.worse(
                "shape_mismatch", f"{at}: expected {_kind_name(expected)}, got {_kind_name(actual)}"
            )
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            diff.worse("shape_mismatch", f"{at}: expected a map, got {_kind_name(actual)}")
            return
        e_keys = {_key(k): k for k in expected}
        a_keys = {_key(k): k for k in actual}
        if e_keys.keys() != a_keys.keys():
            missing = sorted(map(repr, e_keys.keys() - a_keys.keys()))[:_DETAILS_KEPT]
            extra = sorted(map(repr, a_keys.keys() - e_keys.keys()))[:_DETAILS_KEPT]
            diff.worse("shape_mismatch", f"{at}: map keys missing {missing}, extra {extra}")
        for k in sorted(e_keys.keys() & a_keys.keys(), key=repr):
            _walk(expected[e_keys[k]], actual[a_keys[k]], rtol, atol, diff, f"{where}[{k!r}]")
        return
    if isinstance(expected, list | tuple):
        if not isinstance(actual, list | tuple):
            diff.worse("shape_mismatch", f"{at}: expected a sequence, got {_kind_name(actual)}")
            return
        if len(expected) != len(actual):
            diff.worse(
                "shape_mismatch", f"{at}: expected {len(expected)} elements, got {len(actual)}"
            )
            return
        for j, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _walk(e, a, rtol, atol, diff, f"{where}[{j}]")
        return
    if isinstance(actual, dict | list | tuple):
        diff.worse("shape_mismatch", f"{at}: expected a tensor, got {_kind_name(actual)}")
        return
    _compare_tensors(np.asarray(expected), np.asarray(actual), rtol, atol, diff, at, top)


def _key(key: Any) -> Any:
    """A map key comparable across backends: numpy scalars as Python, str as UTF-8."""
    if isinstance(key, np.generic):
        key = key.item()
    return key.encode() if isinstance(key, str) else key


def _arrow_kind(dtype: np.dtype[Any]) -> ArrowKind | None:
    """How onnx-arrow holds a dtype's elements; None for a dtype ONNX does not have."""
    try:
        return dtype_of_numpy(dtype).arrow_kind
    except OnnxArrowError:
        return None


def _compare_tensors(
    e: np.ndarray[Any, Any],
    a: np.ndarray[Any, Any],
    rtol: float,
    atol: float,
    diff: _Diff,
    at: str,
    top: bool,
) -> None:
    e_name, a_name = dtype_name(e.dtype), dtype_name(a.dtype)
    if diff.dtype_expected is None:
        diff.dtype_expected, diff.dtype_actual = e_name, a_name
    if top:
        diff.shape_expected, diff.shape_actual = tuple(e.shape), tuple(a.shape)
    if e.shape != a.shape:
        diff.worse("shape_mismatch", f"{at}: expected shape {list(e.shape)}, got {list(a.shape)}")
        return
    if e_name != a_name:
        diff.worse("dtype_mismatch", f"{at}: expected {e_name}, got {a_name}")
    e_text, a_text = e.dtype.kind in "OSU", a.dtype.kind in "OSU"
    place = "" if at == "the value" else at  # where the tensor sits in a container
    if e_text or a_text:
        if e_text and a_text:
            differs = np.fromiter(
                (_utf8(x) != _utf8(y) for x, y in zip(e.flat, a.flat, strict=True)),
                dtype=bool,
                count=e.size,
            ).reshape(e.shape)
            unequal = int(np.count_nonzero(differs))
            diff.beyond += unequal
            diff.note_worst(differs.astype(np.float64), e, a, place)  # the first that differs
            if unequal:
                diff.worse("mismatch", f"{at}: {unequal} of {e.size} strings differ")
        return
    if _exact(e.dtype) and _exact(a.dtype):
        e64, a64 = _as_number(e), _as_number(a)
        unequal_mask = _as_exact(e) != _as_exact(a)
        delta = np.abs(a64 - e64)
        unequal = int(np.count_nonzero(unequal_mask))
        diff.add_errors(*_max_errors(delta, e64), unequal)
        # the largest difference (at least 1: integers 2**53 apart may round to equal)
        diff.note_worst(np.where(unequal_mask, np.maximum(delta, 1.0), 0.0), e, a, place)
        if unequal:
            diff.worse("mismatch", f"{at}: {unequal} of {e.size} elements differ")
        return
    e64, a64 = _as_number(e), _as_number(a)
    if _arrow_kind(e.dtype) is ArrowKind.BFLOAT16:
        rtol = max(rtol, _BFLOAT16_RTOL)
    diff.rtol = rtol if diff.rtol is None else max(diff.rtol, rtol)
    e_nan, a_nan = np.isnan(e64), np.isnan(a64)
    diff.add_nans(int(np.count_nonzero(e_nan)), int(np.count_nonzero(a_nan)))
    close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    counted = ~(e_nan | a_nan)
    delta = np.where(counted & (a64 != e64), np.abs(a64 - e64), 0.0)
    beyond = int(np.count_nonzero(~close))
    diff.add_errors(*_max_errors(delta, np.where(counted, e64, 0.0)), beyond)
    # worst: a NaN on one side only, else the furthest beyond atol + rtol * |e| (inf - inf
    # and inf against a finite value are infinitely far)
    excess = np.where(close, 0.0, delta - (atol + rtol * np.abs(np.where(counted, e64, 0.0))))
    excess = np.where(~close & (np.isnan(excess) | (excess <= 0)), np.inf, excess)
    moved = e_nan != a_nan
    diff.note_worst(np.where(moved, np.inf, 0.0) if moved.any() else excess, e, a, place)
    if np.any(e_nan != a_nan):
        moved = int(np.count_nonzero(e_nan != a_nan))
        diff.worse("nan_mismatch", f"{at}: NaN in {moved} places where the other has none")
    elif beyond:
        diff.worse("mismatch", f"{at}: {beyond} of {e.size} elements beyond tolerance")


def _utf8(x: Any) -> Any:
    return x.encode("utf-8", "surrogateescape") if isinstance(x, str) else x


def _exact(dtype: np.dtype[Any]) -> bool:
    """Integers and booleans (ml_dtypes int4 / int2 too) are compared exactly."""
    return dtype.kind in "biu" or _arrow_kind(dtype) is ArrowKind.SUBBYTE_INT


def _as_exact(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return x.astype(np.int8 if x.dtype.kind == "V" else x.dtype)


def _as_number(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """float64 (complex128 for complex); ml_dtypes floats through float32, which holds them."""
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if _arrow_kind(x.dtype) in DECODED_FLOATS:
        return x.astype(np.float32).astype(np.float64)
    return x.astype(np.float64)


def _max_errors(delta: np.ndarray[Any, Any], expected: np.ndarray[Any, Any]) -> tuple[float, float]:
    """Largest |a - e| and |a - e| / |e| (inf where e is 0 and a is not)."""
    if delta.size == 0:
        return 0.0, 0.0
    scale = np.abs(expected)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(delta == 0, 0.0, delta / np.where(scale == 0, 0.0, scale))
    return float(np.max(delta)), float(np.max(np.abs(rel)))


# --- the comparison table ---------------------------------------------------------------


def compare(
    store: Store | str | os.PathLike[str],
    backend: Backend = reference_backend,
    *,
    rtol: float = 1e-3,
    atol: float = 1e-7,
    cases: Iterable[str] | None = None,
    timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
    jobs: int = 1,
    engine: str | None = None,
    skip: Sequence[str] = (),
    xfail: Sequence[str] = (),
    tolerance: Mapping[str, tuple[float, float]] | None = None,
    patterns: Expectations | None = None,
    keep_actual: str = "failed",
) -> pd.DataFrame:
    """Run ``backend`` over ``store`` and compare every output with the expected one.

    Parameters
    ----------
    store
        A corpus store, or its path.
    backend
        See :class:`Backend`; :func:`reference_backend` unless given.
    rtol, atol
        The tolerances of a case that has none of its own and that no ``tolerance``
        pattern finds: an element is beyond tolerance when ``|actual - expected| >
        atol + rtol * |expected|`` (NaN equal to NaN).
    cases, timeout, progress
        As :func:`run_backend`.
    jobs, engine
        Run the cases in ``jobs`` processes of this machine, or on ``engine``
        (``"processes"``, ``"dask"``, ``"ray"``; see :mod:`onnx_arrow.parallel`).  The
        table is the same as a run in this process; a case whose worker died, or stopped
        answering past the timeout, is an ``error`` on each of its outputs.
    skip, xfail
        Cases not to run (one ``skipped`` row each, naming the pattern) and cases known
        to fail (their failures ``xfail``; ``xpass`` when they pass): see
        :class:`Expectations`.
    tolerance
        ``{pattern: (rtol, atol)}``: the tolerances of the cases a pattern finds, over
        their own (the first pattern that finds a case applies).
    patterns
        More skip, xfail and tolerance patterns (:meth:`Expectations.read` of a file),
        after those of ``skip``, ``xfail`` and ``tolerance``.
    keep_actual
        Whose actual values the ``actual`` column keeps (see :data:`KEEP_ACTUAL`): of
        the outputs that differ (``"failed"``), of all, or of none.

    Returns
    -------
    pandas.DataFrame
        One row per expected output value (one per skipped case), columns
        :data:`COMPARE_COLUMNS`: ``case``, ``op_types`` (sorted distinct op types of
        the model's main graph, a tuple), ``data_set``, ``index`` (output index),
        ``name`` (graph output name), ``onnx_type`` (declared, as stored),
        ``status`` (one of :data:`STATUSES`), ``dtype_expected`` / ``dtype_actual``
        (ONNX element type of the first tensor), ``shape_expected`` /
        ``shape_actual`` (of a tensor output, a tuple; None for a container),
        ``max_abs_error``, ``max_rel_error`` (over the elements that are not NaN in
        either), ``n_beyond_tolerance``, ``nan_expected`` / ``nan_actual`` (floats
        only), ``rtol`` / ``atol`` (the tolerances used; bfloat16's rtol at least
        2**-6) and ``tolerance`` (where they came from: ``pattern 'REGEX'``, ``case``
        for the case's own, ``default`` for ``rtol`` / ``atol``), ``worst_index`` /
        ``worst_expected`` / ``worst_actual`` (the element furthest beyond tolerance, a
        NaN on one side, the largest integer difference or the first string that
        differs: where, as ``[i, j]`` after the place in a container, and both values
        as text, exact), ``error`` (the backend's exception, ``"TypeName: message"``),
        ``detail`` (where a value differs) and ``actual`` (the actual value as a ``.pb``
        of the declared type, see ``keep_actual``).  Numbers are nullable (``Int64``,
        ``Float64``); :func:`write_report` stores it as Parquet.
    """
    _check_timeout(timeout)
    expect = _expectations(skip, xfail, tolerance, patterns)
    plan = _Plan(expect, rtol, atol, keep_actual)
    store = store if isinstance(store, Store) else Store(store)
    names = select_cases(store, cases)
    skipped = {name: pattern for name in names if (pattern := expect.skips(name)) is not None}
    per_case = _CompareCase(backend, plan, timeout)
    results = dict(
        map_cases(
            per_case,
            store,
            [n for n in names if n not in skipped],
            jobs=jobs,
            engine=engine,
            timeout=timeout,
            progress=progress,
        )
    )
    rows: list[dict[str, Any]] = []
    for name in names:
        if name in skipped:
            rows.append(_skipped_row(store, name, skipped[name]))
            continue
        result = results[name]
        case_rows = per_case.lost(store, result) if isinstance(result, Lost) else result
        rows += expect.applied(name, case_rows)
    df = _frame(rows)
    df.attrs["onnx_arrow"] = _provenance(
        store,
        backend=_backend_description(backend),
        timeout=timeout,
        **_plan_provenance(plan, cases),
    )  # not jobs or engine: the report is the same, byte for byte, wherever it ran
    return df


def _expectations(
    skip: Sequence[str],
    xfail: Sequence[str],
    tolerance: Mapping[str, tuple[float, float]] | None,
    patterns: Expectations | None,
) -> Expectations:
    given = Expectations(list(skip), list(xfail), [(k, *v) for k, v in (tolerance or {}).items()])
    return given if patterns is None else given + patterns


def _plan_provenance(plan: _Plan, cases: Iterable[str] | None) -> dict[str, Any]:
    expect = plan.expect
    return {
        "rtol": plan.rtol,
        "atol": plan.atol,
        "cases": None if cases is None else list(cases),
        "skip": list(expect.skip),
        "xfail": list(expect.xfail),
        "tolerance": [list(t) for t in expect.tolerance],
        "keep_actual": plan.keep_actual,
    }


def _backend_description(backend: Backend) -> dict[str, Any]:
    """The backend's name and the version of what it runs, for the report."""
    name = next((n for n, b in BACKENDS.items() if b is backend), None)
    if name == "reference":
        return {"name": name, "runs": f"onnx {onnx.__version__} ReferenceEvaluator"}
    if name == "onnxruntime":
        return {"name": name, "runs": f"onnxruntime {_import_onnxruntime().__version__}"}
    where = f"{getattr(backend, '__module__', '?')}.{getattr(backend, '__qualname__', '?')}"
    return {"name": where, "runs": "a backend of the caller's"}


def _provenance(store: Store, **options: Any) -> dict[str, Any]:
    """What a report was made from and with: versions, the store, the options."""
    return {
        "onnx_arrow_version": onnx_arrow.__version__,
        "onnx_version": onnx.__version__,
        "numpy_version": np.__version__,
        "store": [str(p) for p in store.parts],
        "store_created_by": store.metadata.get("created_by"),
        **options,
    }


@dataclass(frozen=True)
class Expectations:
    """Which cases not to run (``skip``), which are known to fail (``xfail``) and which
    to compare with a tolerance of their own (``tolerance``, pattern to ``(rtol, atol)``):
    regular expressions as onnx's ``BackendTest`` takes them, searched in a case's name
    (``node/test_abs``), its test name (``test_abs``) and that with ``_cpu``
    (``test_abs_cpu``).  The first pattern that finds a case applies.

    :meth:`read` takes them from a file.

    Raises
    ------
    CompareError
        If a pattern is not a regular expression, or a tolerance not a number of 0 or more.
    """

    skip: Sequence[str] = ()
    xfail: Sequence[str] = ()
    tolerance: Sequence[tuple[str, float, float]] = ()

    def __post_init__(self) -> None:
        for pattern in (*self.skip, *self.xfail, *(t[0] for t in self.tolerance)):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise CompareError(
                    f"pattern {pattern!r} is not a regular expression ({exc})"
                ) from None
        for pattern, rtol, atol in self.tolerance:
            try:
                _check_tolerance(rtol, atol)
            except CompareError as exc:
                raise CompareError(f"tolerance of pattern {pattern!r}: {exc}") from None

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Expectations:
        """Patterns from a file: JSON ``{"skip": [REGEX, ...], "xfail": [...],
        "tolerance": {REGEX: [RTOL, ATOL]}}`` (every key optional), or lines
        ``skip REGEX``, ``xfail REGEX`` and ``tolerance REGEX=RTOL,ATOL``, with ``#``
        comments.

        Raises
        ------
        CompareError
            If the file cannot be read, or a line or key is not one of those; the error
            names the file and line.
        """
        where = os.fspath(path)
        try:
            # a file the caller names may be a symlink; read_regular_file refuses one
            real = os.path.realpath(where)
            data = read_regular_file(
                real, max_bytes=_MAX_PATTERNS_FILE, where=where, fix="pass a text or JSON file"
            )
        except CorpusError as exc:
            raise CompareError(exc.message, where=where) from None
        text = data.decode("utf-8", "replace")
        if text.lstrip().startswith("{"):
            return cls._from_json(text, where)
        found: dict[str, list[Any]] = {"skip": [], "xfail": [], "tolerance": []}
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            word, _, pattern = line.partition(" ")
            pattern = pattern.strip()
            if word not in found or not pattern:
                raise CompareError(
                    f"line {number}: expected 'skip REGEX', 'xfail REGEX' or "
                    f"'tolerance REGEX=RTOL,ATOL', got {line!r}",
                    where=where,
                )
            if word == "tolerance":
                try:
                    found[word].append(parse_tolerance(pattern))
                except CompareError as exc:
                    raise CompareError(f"line {number}: {exc.message}", where=where) from None
            else:
                found[word].append(pattern)
        try:
            return cls(found["skip"], found["xfail"], found["tolerance"])
        except CompareError as exc:
            raise exc.at(where) from None

    @classmethod
    def _from_json(cls, text: str, where: str) -> Expectations:
        doc = load_json(text, what="the patterns file", where=where, error=CompareError)
        keys = ("skip", "xfail", "tolerance")
        unknown = sorted(set(doc) - set(keys)) if isinstance(doc, dict) else ["(not an object)"]
        if unknown:
            raise CompareError(f"expected the keys {', '.join(keys)}; found {unknown}", where=where)
        lists = {}
        for key in ("skip", "xfail"):
            values = doc.get(key, [])
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise CompareError(f"{key} must be a list of strings", where=where)
            lists[key] = values
        tolerances = doc.get("tolerance", {})
        if not isinstance(tolerances, dict) or not all(
            isinstance(v, list) and len(v) == 2 and all(_is_number(x) for x in v)
            for v in tolerances.values()
        ):
            raise CompareError(
                'tolerance must map patterns to [RTOL, ATOL]: {"test_dft": [1e-2, 1e-4]}',
                where=where,
            )
        try:
            return cls(
                lists["skip"],
                lists["xfail"],
                [(k, float(v[0]), float(v[1])) for k, v in tolerances.items()],
            )
        except CompareError as exc:
            raise exc.at(where) from None

    def __add__(self, other: Expectations) -> Expectations:
        """Both sets of patterns, ``self``'s first (so they win where both find a case)."""
        return Expectations(
            [*self.skip, *other.skip],
            [*self.xfail, *other.xfail],
            [*self.tolerance, *other.tolerance],
        )

    @staticmethod
    def _first(patterns: Sequence[str], case: str) -> int | None:
        test = case.rsplit("/", 1)[-1]
        names = (case, test, f"{test}_cpu")
        return next(
            (i for i, p in enumerate(patterns) if any(re.search(p, n) for n in names)), None
        )

    def skips(self, case: str) -> str | None:
        """The skip pattern ``case`` matches, if any."""
        i = self._first(self.skip, case)
        return None if i is None else self.skip[i]

    def tolerance_for(
        self, case: str, own: Tolerance | None, rtol: float, atol: float
    ) -> tuple[float, float, str]:
        """``(rtol, atol, where from)`` for ``case``: the first tolerance pattern that
        finds it, else the case's own (``own``, a part it does not state from ``rtol`` /
        ``atol``), else ``rtol`` and ``atol``."""
        i = self._first([t[0] for t in self.tolerance], case)
        if i is not None:
            pattern, p_rtol, p_atol = self.tolerance[i]
            return p_rtol, p_atol, f"pattern {pattern!r}"
        if own is not None:
            return (
                rtol if own.rtol is None else own.rtol,
                atol if own.atol is None else own.atol,
                "case",
            )
        return rtol, atol, "default"

    def applied(self, case: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A case's rows, its failures ``xfail`` if an xfail pattern matches it, or all its
        rows ``xpass`` if it matches one and nothing failed."""
        i = self._first(self.xfail, case)
        if i is None:
            return rows
        pattern = self.xfail[i]
        failed = [r for r in rows if r["status"] not in ("match", "skipped")]
        if not failed:
            note = f"passed, but xfail pattern {pattern!r} expects it to fail"
            return [{**r, "status": "xpass", "detail": note} for r in rows]
        out = []
        for r in rows:
            if r["status"] in ("match", "skipped"):
                out.append(r)
                continue
            detail = f"{r['status']} (xfail pattern {pattern!r})"
            if r.get("detail"):
                detail += f": {r['detail']}"
            out.append({**r, "status": "xfail", "detail": detail})
        return out


#: Largest patterns file read (onnxruntime's exclusion lists are a few tens of KB).
_MAX_PATTERNS_FILE: Final = 16 << 20


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def parse_tolerance(text: str) -> tuple[str, float, float]:
    """``"REGEX=RTOL,ATOL"`` (the ``--tolerance`` of the command line) as ``(REGEX, RTOL,
    ATOL)``; the last ``=`` ends the pattern.

    Raises
    ------
    CompareError
        If the text is not of that form, or a tolerance not a number of 0 or more.
    """
    pattern, equals, numbers = text.rpartition("=")
    rtol_text, comma, atol_text = numbers.partition(",")
    try:
        if not (equals and comma and pattern):
            raise ValueError
        rtol, atol = float(rtol_text), float(atol_text)
    except ValueError:
        raise CompareError(
            f"tolerance {text!r}: expected REGEX=RTOL,ATOL, for example 'test_dft=1e-2,1e-4'"
        ) from None
    try:
        _check_tolerance(rtol, atol)
    except CompareError as exc:
        raise CompareError(f"tolerance {text!r}: {exc.message}") from None
    return pattern, rtol, atol


def _skipped_row(store: Store, case: str, pattern: str) -> dict[str, Any]:
    try:
        ops = op_types(store.model(case))
    except CorpusError:  # a case without a model
        ops = ()
    return {
        "case": case,
        "op_types": ops,
        "status": "skipped",
        "detail": f"skip pattern {pattern!r}",
    }


@dataclass(frozen=True)
class _Plan:
    """How a case's outputs are compared: the patterns, the default tolerances, which
    actual values a row keeps."""

    expect: Expectations
    rtol: float
    atol: float
    keep_actual: str

    def __post_init__(self) -> None:
        _check_tolerance(self.rtol, self.atol)
        if self.keep_actual not in KEEP_ACTUAL:
            raise CompareError(
                f"keep_actual is {self.keep_actual!r}; expected one of {', '.join(KEEP_ACTUAL)}"
            )

    def rows(self, runs: Iterable[DataSetRun]) -> list[dict[str, Any]]:
        """The rows of the data sets of one case."""
        return [row for run in runs for row in self._rows(run)]

    def _rows(self, run: DataSetRun) -> Iterator[dict[str, Any]]:
        base = {"case": run.case, "op_types": run.op_types, "data_set": run.data_set}
        if run.skipped is not None:
            yield {**base, "status": "skipped", "detail": run.skipped}
            return
        rtol, atol, source = self.expect.tolerance_for(
            run.case, run.tolerance, self.rtol, self.atol
        )
        actual = run.actual or []
        kept = {k: path for (io, k), path in run.kept_as_bytes.items() if io == "output"}
        for k in sorted(run.expected.keys() | kept.keys()):
            if k in kept:  # an expected output that cannot be compared fails, never passes
                name = run.output_names[k] if k < len(run.output_names) else None
                error = f"{CompareError.__name__}: {_kept_message(kept[k])}"
                yield {**base, "index": k, "name": name, "status": "error", "error": error}
                continue
            value = run.expected[k]
            row = {**base, "index": k, "name": _name(run, k, value), "onnx_type": value.onnx_type}
            if run.actual is None or k >= len(actual):
                error = run.error or (
                    f"the backend gave {len(actual)} outputs, the case expects output {k}"
                )
                yield {**row, "status": "error", "error": error}
                continue
            diff = _compare_value(value.to_numpy(), actual[k], rtol, atol)
            worst = (None,) * 3 if diff.worst is None else diff.worst[1:]
            keep = self.keep_actual == "all" or (
                self.keep_actual == "failed" and diff.status in _DIFFERS
            )
            raised = diff.rtol is not None and diff.rtol > rtol
            kept_actual = _serialized(run, k, actual[k], _name(run, k, value)) if keep else None
            if isinstance(kept_actual, str):  # said, never dropped without a word
                diff.details.append(f"the actual value is not kept: {kept_actual}")
            yield {
                **row,
                "status": diff.status,
                "dtype_expected": diff.dtype_expected,
                "dtype_actual": diff.dtype_actual,
                "shape_expected": diff.shape_expected,
                "shape_actual": diff.shape_actual,
                "max_abs_error": diff.max_abs,
                "max_rel_error": diff.max_rel,
                "n_beyond_tolerance": diff.beyond,
                "nan_expected": diff.nan_expected,
                "nan_actual": diff.nan_actual,
                "rtol": diff.rtol if raised else rtol,
                "atol": atol,
                "tolerance": f"{source}, bfloat16 at least 2**-6" if raised else source,
                "worst_index": worst[0],
                "worst_expected": worst[1],
                "worst_actual": worst[2],
                "detail": _detail(diff.details),
                "actual": kept_actual if isinstance(kept_actual, bytes) else None,
            }


def _serialized(run: DataSetRun, k: int, value: Any, name: str | None) -> bytes | str:
    """Actual output ``k`` as a ``.pb`` of the type the model declares, serialized as onnx's
    test-data writer does, or why it cannot be (a str)."""
    type_proto = None if run.model is None else declared_type(run.model, "output", k)
    try:
        return bytes(_serialize(value, name or "", type_proto).SerializeToString())
    except Exception as exc:  # whatever numpy_helper raises on a value it cannot take
        return f"the output cannot be serialized as declared: {type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class _CompareCase:
    """The comparison rows of one case (a task of :func:`~onnx_arrow.parallel.map_cases`)."""

    backend: Backend
    plan: _Plan
    timeout: float | None

    def __call__(self, store: Store, case: str) -> list[dict[str, Any]]:
        return self.plan.rows(_run_case(store, case, self.backend, self.timeout))

    def lost(self, store: Store, lost: Lost) -> list[dict[str, Any]]:
        return self.plan.rows(_lost_runs(store, lost))


def _lost_runs(store: Store, lost: Lost) -> Iterator[DataSetRun]:
    """The data sets of a case whose worker was lost, each with that as its error."""
    for run in _data_sets(store, lost.case):
        if run.skipped is None:
            run.error = f"{CaseLostError.__name__}: {lost.message}"
        yield run


def _check_tolerance(rtol: float, atol: float) -> None:
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not (_is_number(value) and 0 <= value < np.inf):  # NaN too
            raise CompareError(f"{name} is {value!r}; give a finite number of 0 or more")


def _detail(details: list[str]) -> str | None:
    """The first few places where a value differs, and how many more there are."""
    if not details:
        return None
    more = len(details) - _DETAILS_KEPT
    return "; ".join(details[:_DETAILS_KEPT]) + (f"; ... {more} more" if more > 0 else "")


def _name(run: DataSetRun, index: int, value: StoredValue) -> str | None:
    return run.output_names[index] if index < len(run.output_names) else value.name


_INT_COLUMNS: Final = ("data_set", "index", "n_beyond_tolerance", "nan_expected", "nan_actual")
_FLOAT_COLUMNS: Final = ("max_abs_error", "max_rel_error", "rtol", "atol")
_BINARY_COLUMNS: Final = ("actual",)
_OBJECT_COLUMNS: Final = ("op_types", "shape_expected", "shape_actual")


def _frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    records = list(rows)
    data: dict[str, Any] = {}
    for name in COMPARE_COLUMNS:
        values = [r.get(name) for r in records]
        if name in _INT_COLUMNS:
            data[name] = pd.array(values, dtype="Int64")
        elif name in _FLOAT_COLUMNS:
            data[name] = pd.array(values, dtype="Float64")
        elif name in _BINARY_COLUMNS:  # Arrow-backed: binary in Parquet, even when all null
            data[name] = pd.array(values, dtype=pd.ArrowDtype(pa.binary()))
        elif name in _OBJECT_COLUMNS:
            data[name] = pd.Series(values, dtype=object)
        else:
            data[name] = pd.array(values, dtype=pd.StringDtype())
    return pd.DataFrame(data)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per operator, how many outputs have each status, most non-matches first.

    A case's outputs count for each of its op types (``op_types`` exploded); a case
    without a model counts under ``(none)``.  Columns: ``op_type``, ``total``, one
    per status of :data:`STATUSES`, and ``non_match`` (``total`` less the
    :data:`PASSING` statuses).
    """
    exploded = df[["op_types", "status"]].copy()
    exploded["op_type"] = exploded["op_types"].map(lambda t: tuple(t) if len(t) else ("(none)",))
    exploded = exploded.explode("op_type")
    counts = pd.crosstab(exploded["op_type"].astype(object), exploded["status"].astype(object))
    counts = counts.reindex(columns=list(STATUSES), fill_value=0)
    out = counts.reset_index().rename_axis(columns=None)
    out.insert(1, "total", counts.sum(axis=1).to_numpy())
    out["non_match"] = out["total"] - sum(out[status] for status in sorted(PASSING))
    out = out.sort_values(["non_match", "op_type"], ascending=[False, True], kind="stable")
    return out.reset_index(drop=True).astype({"op_type": pd.StringDtype()})


def status_counts(df: pd.DataFrame) -> dict[str, int]:
    """How many rows have each status, in the order of :data:`STATUSES`."""
    counts = df["status"].value_counts()
    return {status: int(counts.get(status, 0)) for status in STATUSES}


#: The key of a report's Parquet metadata that holds what it was made from and with.
REPORT_METADATA_KEY: Final = "onnx_arrow.report"


def write_report(df: pd.DataFrame, out: str | os.PathLike[str]) -> None:
    """Write a report (from :func:`compare`, :func:`compare_stores` or
    :func:`onnx_arrow.diff.diff`) to Parquet, atomically, with what it was made from and
    with (``df.attrs["onnx_arrow"]``: versions, store, backend, options) as JSON under the
    file's :data:`REPORT_METADATA_KEY` metadata."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    provenance = df.attrs.get("onnx_arrow")
    if provenance is not None:
        meta = dict(table.schema.metadata or {})
        meta[REPORT_METADATA_KEY.encode()] = json.dumps(provenance, default=str).encode()
        table = table.replace_schema_metadata(meta)
    with atomic_file(out, what="the report") as tmp:
        pq.write_table(table, tmp)


# --- stores of actual outputs ----------------------------------------------------------


def write_actual(
    store: Store | str | os.PathLike[str],
    backend: Backend,
    out: str | os.PathLike[str],
    *,
    cases: Iterable[str] | None = None,
    timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
    jobs: int = 1,
    engine: str | None = None,
) -> dict[str, int]:
    """Run ``backend`` over ``store`` and write a store of what it gives, atomically.

    Each case that ran keeps its model and input files (byte for byte); each expected
    output file is replaced by the backend's output at the same path, serialized as
    onnx's test-data writer does (``numpy_helper.from_array`` / ``from_list`` /
    ``from_optional`` / ``from_dict``, named like the graph output).  When the
    backend raised, or an output cannot be serialized as the model declares, the
    output's file is ``output_K.error.txt`` holding the message.  Skipped cases are
    not written.  :func:`compare_stores` compares the result with ``store``.
    ``jobs`` and ``engine`` are as for :func:`compare`: the store written is the same.

    Returns
    -------
    dict
        Counts: ``cases`` written, ``data_sets``, ``outputs`` written, ``errors``
        (data sets the backend failed on), ``skipped`` cases, ``kept_as_bytes`` (output
        files the store could not decode as the model declares, kept as their bytes), and
        ``bytes`` of the store.
    """
    _check_timeout(timeout)
    store = store if isinstance(store, Store) else Store(store)
    counts = {"cases": 0, "data_sets": 0, "outputs": 0, "errors": 0, "skipped": 0}
    per_case = _ActualCase(backend, timeout)
    results = map_cases(
        per_case,
        store,
        select_cases(store, cases),
        jobs=jobs,
        engine=engine,
        timeout=timeout,
        progress=progress,
    )
    # the worker processes of --jobs are forked by the first result, before write_store
    # starts its writer thread: a fork beside a running thread may copy a held lock
    first = next(results, None)
    ordered = itertools.chain([] if first is None else [first], results)
    summary = write_store(
        _actual_cases(store, ordered, counts), out, options=WriteOptions(keep_undecodable=True)
    )
    counts["cases"] = summary["cases"]
    counts["kept_as_bytes"] = len(summary["warnings"])
    return {**counts, "bytes": summary["bytes"]}


@dataclass(frozen=True)
class _ActualCase:
    """The files of one case with the backend's outputs, and its counts (a task)."""

    backend: Backend
    timeout: float | None

    def __call__(self, store: Store, case: str) -> tuple[Case | None, dict[str, int]]:
        return _actual_case(store, case, _run_case(store, case, self.backend, self.timeout))


def _actual_cases(
    store: Store,
    results: Iterable[tuple[str, tuple[Case | None, dict[str, int]] | Lost]],
    counts: dict[str, int],
) -> Iterator[Case]:
    for case, result in results:
        built, counted = (
            _actual_case(store, case, _lost_runs(store, result))
            if isinstance(result, Lost)
            else result
        )
        for key, n in counted.items():
            counts[key] += n
        if built is not None:
            yield built


def _actual_case(
    store: Store, case: str, runs: Iterable[DataSetRun]
) -> tuple[Case | None, dict[str, int]]:
    """A case's files with the outputs of ``runs`` (None for a skipped case), and counts."""
    counts = {"data_sets": 0, "outputs": 0, "errors": 0, "skipped": 0}
    current: Case | None = None
    kept_inputs: set[str] = set()
    for run in runs:
        if run.skipped is not None or run.model is None:
            counts["skipped"] += 1
            continue
        if current is None:
            current = _case_with_model(store, case)
        counts["data_sets"] += 1
        counts["errors"] += run.error is not None
        current.files += [CorpusFile(v.path, v.to_bytes()) for v in run.inputs.values()]
        kept_inputs.update(p for (io, _), p in run.kept_as_bytes.items() if io == "input")
        for k, value in sorted(run.expected.items()):
            data = _output_file(run, k, value)
            if isinstance(data, bytes):
                current.files.append(CorpusFile(value.path, data))
                counts["outputs"] += 1
            else:
                current.files.append(CorpusFile(_error_path(value.path), data.encode()))
    if current is not None:
        if kept_inputs:  # input files kept as bytes go with the case, as they are
            current.files += _stored_files(store, case, kept_inputs)
        current.files.sort(key=lambda f: f.path)
    return current, counts


def _stored_files(store: Store, case: str, paths: set[str]) -> list[CorpusFile]:
    """Files of a case that the store keeps as their bytes (model and file rows)."""
    table = store.read_case(case, ["path", "content"])
    table = table.filter(pc.is_in(table.column("path"), pa.array(sorted(paths))))
    return [CorpusFile(r["path"], r["content"]) for r in table.to_pylist()]


def _case_with_model(store: Store, case: str) -> Case:
    """A case holding only its model file, byte for byte as stored (the parsed model
    would not serialize back to the same bytes for certain)."""
    table = store.read_case(case, ["path", "role"])
    path = table.column("path")[table.column("role").to_pylist().index("model")].as_py()
    kind = case.split("/", 1)[0] if "/" in case else ""
    return Case(case, kind, _stored_files(store, case, {path}), path)


def _error_path(path: str) -> str:
    return path.removesuffix(".pb") + _ERROR_SUFFIX


def _output_file(run: DataSetRun, k: int, value: StoredValue) -> bytes | str:
    """The serialized actual output ``k``, or the message saying why there is none."""
    if run.actual is None:
        return run.error or "the backend gave no outputs"
    if k >= len(run.actual):
        return f"the backend gave {len(run.actual)} outputs, the case expects output {k}"
    return _serialized(run, k, run.actual[k], _name(run, k, value))


def _serialize(value: Any, name: str, type_proto: TypeProto | None) -> Any:
    which = None if type_proto is None else type_proto.WhichOneof("value")
    if which == "map_type" or (which is None and isinstance(value, dict)):
        return numpy_helper.from_dict(value, name)
    if which == "sequence_type" or (which is None and isinstance(value, list)):
        assert type_proto is None or which == "sequence_type"
        elem = None if type_proto is None else _container_dtype(type_proto.sequence_type.elem_type)
        return numpy_helper.from_list(list(value), name, elem)
    if which == "optional_type":
        assert type_proto is not None
        elem = _container_dtype(type_proto.optional_type.elem_type)
        return numpy_helper.from_optional(
            value if value is None or isinstance(value, list | dict) else np.asarray(value),
            name,
            elem,
        )
    return numpy_helper.from_array(np.asarray(value), name)


def _container_dtype(elem: TypeProto) -> int | None:
    """The ``SequenceProto`` / ``OptionalProto`` element type a declared type needs."""
    return {
        "tensor_type": SequenceProto.TENSOR,
        "sequence_type": SequenceProto.SEQUENCE,
        "map_type": SequenceProto.MAP,
        "optional_type": OptionalProto.OPTIONAL,
    }.get(elem.WhichOneof("value") or "")


def compare_stores(
    expected: Store | str | os.PathLike[str],
    actual: Store | str | os.PathLike[str],
    *,
    rtol: float = 1e-3,
    atol: float = 1e-7,
    cases: Iterable[str] | None = None,
    progress: Callable[[str], None] | None = None,
    missing: str = "leave_out",
    skip: Sequence[str] = (),
    xfail: Sequence[str] = (),
    tolerance: Mapping[str, tuple[float, float]] | None = None,
    patterns: Expectations | None = None,
    keep_actual: str = "failed",
) -> pd.DataFrame:
    """Compare the outputs of two stores (``actual`` from :func:`write_actual`).

    The same DataFrame as :func:`compare`.  A case that ``actual`` does not hold (a run
    of some cases only) is left out, and counted in ``df.attrs["left_out"]``; with
    ``missing="error"`` each of its outputs is an ``error`` instead.  An output missing
    from a data set is an ``error``; an ``output_K.error.txt`` file in ``actual`` gives
    the backend's message.  ``skip``, ``xfail``, ``tolerance``, ``patterns`` and
    ``keep_actual`` are as for :func:`compare`.
    """
    expect = _expectations(skip, xfail, tolerance, patterns)
    plan = _Plan(expect, rtol, atol, keep_actual)
    if missing not in ("leave_out", "error"):
        raise CompareError(f"missing is {missing!r}; expected 'leave_out' or 'error'")
    expected = expected if isinstance(expected, Store) else Store(expected)
    actual = actual if isinstance(actual, Store) else Store(actual)
    actual_cases = set(actual.cases())
    rows: list[dict[str, Any]] = []
    left_out = 0
    for case in select_cases(expected, cases):
        pattern = expect.skips(case)
        if pattern is not None:
            rows.append(_skipped_row(expected, case, pattern))
            continue
        if case not in actual_cases and missing == "leave_out":
            runs = list(_data_sets(expected, case))
            if all(run.skipped is not None for run in runs):  # skipped either way
                rows += plan.rows(runs)
            else:
                left_out += 1
            if progress is not None:
                progress(case)
            continue
        found: dict[str, Any] = {}
        errors: dict[str, str] = {}
        if case in actual_cases:
            found = {v.path: v.to_numpy() for v in actual.values(case) if v.io == "output"}
            table = actual.read_case(case, ["test_case", "path", "role", "content"])
            errors = {
                r["path"]: r["content"].decode("utf-8", "replace")
                for r in table.to_pylist()
                if r["role"] == "file" and r["path"].endswith(_ERROR_SUFFIX)
            }
        case_rows: list[dict[str, Any]] = []
        for run in _data_sets(expected, case):
            if run.skipped is not None:
                case_rows += plan.rows([run])
                continue
            kept = {key: p for key, p in run.kept_as_bytes.items() if key[0] == "output"}
            if kept:  # expected outputs that cannot be compared: an error row each
                case_rows += plan.rows([replace(run, expected={}, kept_as_bytes=kept)])
            for k, value in sorted(run.expected.items()):
                single = replace(run, expected={k: value}, kept_as_bytes={})
                if value.path in found:
                    single.actual = [None] * k + [found[value.path]]
                elif case not in actual_cases:
                    single.error = "the case is not in the actual store"
                else:
                    single.error = errors.get(
                        _error_path(value.path), f"{value.path} is not in the actual store"
                    )
                case_rows += plan.rows([single])
        rows += expect.applied(case, case_rows)
        if progress is not None:
            progress(case)
    df = _frame(rows)
    df.attrs["left_out"] = left_out
    df.attrs["onnx_arrow"] = _provenance(
        expected,
        actual=[str(p) for p in actual.parts],
        actual_created_by=actual.metadata.get("created_by"),
        missing=missing,
        left_out=left_out,
        **_plan_provenance(plan, cases),
    )
    return df

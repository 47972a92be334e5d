"""Running a backend over the cases of a store: each data set's stored values fed as the
model's inputs, within a deadline, every failure recorded (:class:`DataSetRun`), in this
process or on an engine of :mod:`onnx_arrow.parallel`."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from onnx import ModelProto

from onnx_arrow.compare.backends import Backend, BackendLike, reference_backend, resolve_backend
from onnx_arrow.compare.deadlines import check_timeout, deadline
from onnx_arrow.compare.isolation import escaped
from onnx_arrow.compare.plans import select_cases
from onnx_arrow.core.model import graph_values, op_types
from onnx_arrow.corpus.case import StoredCase, kept_message
from onnx_arrow.corpus.rows import StoredValue
from onnx_arrow.corpus.sources import Tolerance
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.errors import CaseLostError, CompareError, EngineError
from onnx_arrow.parallel import CaseFunction, Lost, heartbeat, map_cases
from onnx_arrow.pool import in_worker

__all__ = [
    "DataSetRun",
    "data_sets_of",
    "kept_message",
    "lost_runs",
    "map_runs",
    "output_name",
    "run_backend",
    "run_case",
]


@dataclass
class DataSetRun:
    """What a backend gave for one data set of one case (or why the case was skipped).

    ``actual`` holds the outputs in graph order, or None when the backend raised
    (``error`` is then ``"TypeName: message"``) or the case was skipped (``skipped``
    says why: no model, no data sets, a data set without expected outputs).  ``inputs``
    and ``expected`` are the stored values by index; ``model`` is the case's model (None
    when it has none), parsed once for all its data sets.
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
    #: The case as the store holds it (its model's file, the files it keeps as bytes),
    #: read once for all its data sets; None for a case without a model.
    stored: StoredCase | None = field(default=None, repr=False, compare=False)


def run_backend(
    store: Store | str | os.PathLike[str],
    backend: BackendLike = reference_backend,
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
        See :class:`Backend`, or anything :func:`resolve_backend` takes (a name, a spec
        ``MODULE[:NAME]``, an object with onnx's backend interface);
        :func:`reference_backend` unless given.
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
    store = as_store(store, where="run_backend(store)")
    check_timeout(timeout)
    backend = resolve_backend(backend)
    for case in select_cases(store, cases):
        yield from run_case(store, case, backend, timeout)
        if progress is not None:
            progress(case)


def data_sets_of(store: Store, case: str) -> Iterator[DataSetRun]:
    """The data sets of a case with their stored values, not run yet (or why it is
    skipped): :meth:`Store.case <onnx_arrow.corpus.Store.case>`, read once."""
    stored = store.case(case)
    model = stored.model
    if model is None:
        yield DataSetRun(case, (), None, skipped=stored.no_model, tolerance=stored.tolerance)
        return
    ops = op_types(model)
    names = tuple(o.name for o in model.graph.output)
    if not stored.sets:
        yield DataSetRun(
            case,
            ops,
            None,
            names,
            skipped="the case has no data sets",
            model=model,
            tolerance=stored.tolerance,
            stored=stored,
        )
        return
    for data_set in stored.sets:
        n = data_set.number
        run = DataSetRun(
            case,
            ops,
            n,
            names,
            dict(data_set.inputs),
            dict(data_set.expected),
            model=model,
            kept_as_bytes=dict(data_set.kept_as_bytes),
            made_inputs=data_set.made_inputs,
            tolerance=stored.tolerance,
            stored=stored,
        )
        if not run.expected and not any(io == "output" for io, _ in run.kept_as_bytes):
            files = "output_K.pb" if n is not None else "output files"
            run.skipped = (
                f"the data set has no expected outputs (no {files}): nothing to compare "
                "the backend's outputs with"
            )
        elif data_set.unmade is not None:
            run.skipped = data_set.unmade
        yield run


def run_case(
    store: Store, case: str, backend: Backend, timeout: float | None
) -> Iterator[DataSetRun]:
    """The data sets of ``case``, each run on ``backend`` within ``timeout`` seconds (or why
    it is not run); whatever the backend raises is recorded in ``error``."""
    for run in data_sets_of(store, case):
        if run.skipped is not None or run.model is None:
            yield run
            continue
        unfed = [p for (io, _), p in sorted(run.kept_as_bytes.items()) if io == "input"]
        if unfed:
            run.error = f"{CompareError.__name__}: {kept_message(unfed[0])}"
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
            with deadline(timeout), np.errstate(all="ignore"):
                run.actual = taken(backend(model, feed), len(run.output_names))
        except Exception as exc:  # every backend failure is a result, not a crash
            run.error = f"{type(exc).__name__}: {exc}"
        except BaseException as exc:  # sys.exit, KeyboardInterrupt: in a worker, the
            if not in_worker():  # backend's own (no Ctrl-C arrives there); here, a Ctrl-C
                raise
            run.error = escaped(exc)
        heartbeat()  # the comparison of the outputs starts
        yield run


def taken(outputs: Any, declared: int) -> list[Any]:
    """The outputs a backend gave, no more than the model's ``declared`` outputs (counted
    before any is taken), each value with ``__array__`` made an array: in the backend's
    deadline, so that an ``__array__`` that never returns is stopped by it and one that
    raises is this data set's error.

    Raises
    ------
    CompareError
        If the backend gave more outputs than the model declares, or not a sequence, or
        an output's ``__array__`` raised or gave no array (where: ``output K``).
    """
    if isinstance(outputs, str | bytes | dict) or not hasattr(outputs, "__iter__"):
        raise CompareError(
            f"the backend gave a {type(outputs).__name__}; expected a sequence of the "
            f"model's {declared} outputs"
        )
    values = list(itertools.islice(iter(outputs), declared + 1))
    if len(values) > declared:
        try:
            count = f"{len(outputs)}"
        except Exception:  # an iterator, or a len that fails: more is all that is known
            count = f"more than {declared}"
        raise CompareError(
            f"the backend gave {count} outputs; the model declares {declared} (graph outputs)"
        )
    return [_as_value(v, f"output {k}") for k, v in enumerate(values)]


def _as_value(value: Any, where: str) -> Any:
    """``value`` with every object that has ``__array__`` (in a sequence or map too) made
    an ndarray."""
    if value is None or isinstance(value, np.ndarray | np.generic | str | bytes | int | float):
        return value
    if isinstance(value, list):
        return [_as_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _as_value(v, f"{where}[{k!r}]") for k, v in value.items()}
    if not hasattr(value, "__array__"):
        return value
    try:
        return np.asarray(value)
    except Exception as exc:  # the object's own __array__
        raise CompareError(
            f"{where}: {type(value).__name__}.__array__ gave no array ({type(exc).__name__}: {exc})"
        ) from None


def _writable(value: Any) -> Any:
    """A copy the backend may write into: the store's arrays are read-only views."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_writable(v) for v in value]
    if isinstance(value, dict):
        return {k: _writable(v) for k, v in value.items()}
    return value


def lost_runs(store: Store, lost: Lost) -> Iterator[DataSetRun]:
    """The data sets of a case whose worker was lost, each with that as its error."""
    for run in data_sets_of(store, lost.case):
        if run.skipped is None:
            run.error = f"{CaseLostError.__name__}: {lost.message}"
        yield run


def output_name(run: DataSetRun, index: int, value: StoredValue) -> str | None:
    """The graph output's name of output ``index``, else the stored value's own."""
    return run.output_names[index] if index < len(run.output_names) else value.name


def map_runs(
    func: CaseFunction,
    store: Store,
    cases: Sequence[str],
    *,
    jobs: int,
    engine: str | None,
    timeout: float | None,
    progress: Callable[[str], None] | None,
    isolate: bool = False,
) -> Iterator[tuple[str, Any]]:
    """:func:`~onnx_arrow.parallel.map_cases`, an engine it does not know a
    :class:`~onnx_arrow.errors.CompareError` as the comparison's other arguments are."""
    try:
        yield from map_cases(
            func,
            store,
            cases,
            jobs=jobs,
            engine=engine,
            timeout=timeout,
            progress=progress,
            isolate=isolate,
        )
    except EngineError as exc:
        raise CompareError(exc.message, where=exc.where) from None

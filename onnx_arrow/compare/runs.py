"""Running a backend over the cases of a store: each data set's stored values fed as the
model's inputs, within a deadline, every failure recorded (:class:`DataSetRun`), in this
process or on an engine of :mod:`onnx_arrow.parallel`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from onnx import ModelProto

from onnx_arrow.compare.backends import Backend, BackendLike, reference_backend, resolve_backend
from onnx_arrow.compare.deadlines import check_timeout, deadline
from onnx_arrow.compare.plans import select_cases
from onnx_arrow.core.model import graph_values, op_types
from onnx_arrow.corpus.decode import case_tolerance
from onnx_arrow.corpus.rows import StoredValue
from onnx_arrow.corpus.sources import Case, CorpusFile, Slot, Tolerance, value_slot, value_slots
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.errors import CaseLostError, CompareError, EngineError
from onnx_arrow.parallel import CaseFunction, Lost, heartbeat, map_cases

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
    for slot, path in _kept_files(store, case, roles, paths, model):
        decoded = data_sets.setdefault(slot.data_set, ({}, {}))[slot.io != "input"]
        # a number a decoded file names was no kept file's at import either
        if slot.index is not None and slot.index not in decoded:
            kept.setdefault(slot.data_set, {})[slot.io, slot.index] = path
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
        if not expected and not any(io == "output" for io, _ in run.kept_as_bytes):
            files = "output_K.pb" if n is not None else "output files"
            run.skipped = (
                f"the data set has no expected outputs (no {files}): nothing to compare "
                "the backend's outputs with"
            )
        elif n is None and not inputs and expected and fed and not run.kept_as_bytes:
            # a model test with expected outputs and no input files (light/): onnx's runner
            # feeds it inputs it makes, and so does this
            try:
                run.made_inputs = _made_inputs(model, case)
            except NotImplementedError as exc:
                run.skipped = f"no input files, and onnx's runner makes none for it: {exc}"
        yield run


def _kept_files(
    store: Store, case: str, roles: list[str], paths: list[str], model: ModelProto
) -> Iterator[tuple[Slot, str]]:
    """The value files of a case the store kept as bytes, each with what it is for, paired
    with the model's inputs and outputs as the import paired them (by the name inside)."""
    model_path = paths[roles.index("model")]
    layout = Case(case, "", [], model_path)
    wanted = [p for r, p in zip(roles, paths, strict=True) if r == "file" and value_slot(layout, p)]
    if not wanted:
        return
    rows = store.read_case(case, ["path", "content"])
    contents = dict(
        zip(rows.column("path").to_pylist(), rows.column("content").to_pylist(), strict=True)
    )
    files = [CorpusFile(p, contents[p] or b"") for p in wanted]
    for path, slot in value_slots(Case(case, "", files, model_path), model).items():
        yield slot, path


def _made_inputs(model: ModelProto, case: str) -> dict[str, Any]:
    """The inputs onnx's backend test runner makes for a model test without input files
    (its ``Runner.generate_dummy_data``, not random)."""
    from onnx.backend.test.runner import Runner

    return {
        x.name: Runner.generate_dummy_data(x, seed=0, name=case, random=False)
        for x in graph_values(model, "input")
    }


def kept_message(path: str) -> str:
    """Why a value file the store kept as bytes is neither fed nor compared."""
    return (
        f"{path} was kept as bytes at import (it does not decode as the model declares), "
        "so it cannot be fed or compared; fix the file, or the model's declared type"
    )


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
) -> Iterator[tuple[str, Any]]:
    """:func:`~onnx_arrow.parallel.map_cases`, an engine it does not know a
    :class:`~onnx_arrow.errors.CompareError` as the comparison's other arguments are."""
    try:
        yield from map_cases(
            func, store, cases, jobs=jobs, engine=engine, timeout=timeout, progress=progress
        )
    except EngineError as exc:
        raise CompareError(exc.message, where=exc.where) from None

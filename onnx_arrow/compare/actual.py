"""Stores of actual outputs: :func:`write_actual` writes what a backend gives as a corpus
store of its own (the same models and inputs, the actual outputs; the ``run`` command),
and :func:`compare_stores` compares such a store with the expected one (``compare
--actual``), so a run on one machine can be compared on another."""

from __future__ import annotations

import datetime
import itertools
import os
import platform
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Final, Unpack

import onnx

import onnx_arrow
from onnx_arrow.compare.backends import (
    Backend,
    BackendLike,
    describe_backend,
    parse_runtime,
)
from onnx_arrow.compare.deadlines import check_timeout
from onnx_arrow.compare.isolation import backend_to_run, isolates
from onnx_arrow.compare.plans import Plan, PlanSettings, plan_of, plan_provenance, select_cases
from onnx_arrow.compare.report import (
    output_rows,
    provenance,
    report_table,
    skipped_row,
    store_digest,
)
from onnx_arrow.compare.runs import (
    DataSetRun,
    data_sets_of,
    lost_runs,
    map_runs,
    output_name,
    run_case,
)
from onnx_arrow.compare.serialize import serialized
from onnx_arrow.corpus.case import StoredCase
from onnx_arrow.corpus.format import FORMAT_VERSION
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.corpus.rows import StoredValue
from onnx_arrow.corpus.sources import Case, CorpusFile
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.corpus.write import write_store
from onnx_arrow.errors import CompareError
from onnx_arrow.parallel import Lost
from onnx_arrow.reports import Report

__all__ = ["compare_stores", "made_by", "run_provenance", "write_actual"]


_ERROR_SUFFIX: Final = ".error.txt"


def write_actual(
    store: Store | str | os.PathLike[str],
    backend: BackendLike,
    out: str | os.PathLike[str],
    *,
    cases: Iterable[str] | None = None,
    timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
    jobs: int = 1,
    engine: str | None = None,
    runtime: str | None = None,
    in_process: bool = False,
) -> dict[str, int]:
    """Run ``backend`` over ``store`` and write a store of what it gives, atomically,
    recording what made it as the store's provenance (:func:`run_provenance`).

    Each case that ran keeps its model and input files (byte for byte); each expected
    output file is replaced by the backend's output at the same path, serialized as
    onnx's test-data writer does (``numpy_helper.from_array`` / ``from_list`` /
    ``from_optional`` / ``from_dict``, named like the graph output).  When the
    backend raised, or an output cannot be serialized as the model declares, the
    output's file is ``output_K.error.txt`` holding the message.  Skipped cases are
    not written.  :func:`compare_stores` compares the result with ``store``.
    ``backend`` is what :func:`resolve_backend` takes (a name, a spec, an object);
    ``jobs``, ``engine`` and ``in_process`` are as for :func:`compare`: the store written
    is the same; ``runtime`` (``NAME==VERSION``) too, recorded in the store's provenance.

    Returns
    -------
    dict
        Counts: ``cases`` written, ``data_sets``, ``outputs`` written, ``errors``
        (data sets the backend failed on), ``skipped`` cases, ``kept_as_bytes`` (output
        files the store could not decode as the model declares, kept as their bytes), and
        ``bytes`` of the store.
    """
    check_timeout(timeout)
    backend = backend_to_run(backend, in_process=in_process, jobs=jobs, engine=engine)
    described = describe_backend(backend, runtime)  # a bad runtime: said before any work
    store = as_store(store, where="write_actual(store)")
    counts = {"cases": 0, "data_sets": 0, "outputs": 0, "errors": 0, "skipped": 0}
    per_case = _ActualCase(backend, timeout)
    results = map_runs(
        per_case,
        store,
        select_cases(store, cases),
        jobs=jobs,
        engine=engine,
        timeout=timeout,
        progress=progress,
        isolate=isolates(backend, in_process=in_process),
    )
    # the worker processes of --jobs are forked by the first result, before write_store
    # starts its writer thread: a fork beside a running thread may copy a held lock
    first = next(results, None)
    ordered = itertools.chain([] if first is None else [first], results)
    options = WriteOptions(
        keep_undecodable=True, provenance=run_provenance(store, backend, described)
    )
    summary = write_store(_actual_cases(store, ordered, counts), out, options=options)
    counts["cases"] = summary["cases"]
    counts["kept_as_bytes"] = len(summary["warnings"])
    return {**counts, "bytes": summary["bytes"]}


def run_provenance(
    store: Store, backend: Backend, described: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The provenance a store of actual outputs records (``source`` ``run``): the
    ``backend`` that made its outputs and the version of what it runs
    (:func:`~onnx_arrow.compare.backends.describe_backend`: a runner's command), the
    store its models and inputs come from (its file names, digest and onnx release, the
    store's ``onnx`` too), and the onnx-arrow, Python and time of the run."""
    return {
        "source": "run",
        "onnx": str(store.metadata.get("onnx_version") or onnx.__version__),
        "backend": describe_backend(backend) if described is None else described,
        "expected": {
            "store": [p.name for p in store.parts],
            "store_digest": store_digest(store),
            "onnx": store.metadata.get("onnx_version"),
        },
        "onnx_arrow": onnx_arrow.__version__,
        "python": platform.python_version(),
        "format_version": FORMAT_VERSION,
        "run_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def made_by(actual: Store) -> dict[str, Any] | None:
    """The backend a store of actual outputs says made it (``name``, ``runs``), None for
    a store that does not say (written before stores recorded it, or not by ``run``)."""
    made = actual.metadata.get("provenance")
    backend = (
        made.get("backend") if isinstance(made, dict) and made.get("source") == "run" else None
    )
    return dict(backend) if isinstance(backend, dict) else None


@dataclass(frozen=True)
class _ActualCase:
    """The files of one case with the backend's outputs, and its counts (a task)."""

    backend: Backend
    timeout: float | None

    def __call__(self, store: Store, case: str) -> tuple[Case | None, dict[str, int]]:
        return _actual_case(run_case(store, case, self.backend, self.timeout))


def _actual_cases(
    store: Store,
    results: Iterable[tuple[str, tuple[Case | None, dict[str, int]] | Lost]],
    counts: dict[str, int],
) -> Iterator[Case]:
    for _, result in results:
        built, counted = (
            _actual_case(lost_runs(store, result)) if isinstance(result, Lost) else result
        )
        for key, n in counted.items():
            counts[key] += n
        if built is not None:
            yield built


def _actual_case(runs: Iterable[DataSetRun]) -> tuple[Case | None, dict[str, int]]:
    """A case's files with the outputs of ``runs`` (None for a skipped case), and counts."""
    counts = {"data_sets": 0, "outputs": 0, "errors": 0, "skipped": 0}
    current: Case | None = None
    stored: StoredCase | None = None
    kept_inputs: set[str] = set()
    for run in runs:
        if run.skipped is not None or run.model is None or run.stored is None:
            counts["skipped"] += 1
            continue
        if current is None:
            stored = run.stored
            current = _case_with_model(stored)
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
    if current is not None and stored is not None:
        # input files kept as bytes go with the case, as they are
        current.files += [CorpusFile(f.path, f.data) for f in stored.kept if f.path in kept_inputs]
        current.files.sort(key=lambda f: f.path)
    return current, counts


def _case_with_model(stored: StoredCase) -> Case:
    """A case holding only its model file, byte for byte as stored (the parsed model
    would not serialize back to the same bytes for certain)."""
    model = stored.model_file
    if model is None:  # a case with data sets has a model; said for the type checker
        raise CompareError("the case has no model", where=stored.name)
    kind = stored.name.split("/", 1)[0] if "/" in stored.name else ""
    return Case(stored.name, kind, [model], model.path)


def _error_path(path: str) -> str:
    return path.removesuffix(".pb") + _ERROR_SUFFIX


def _output_file(run: DataSetRun, k: int, value: StoredValue) -> bytes | str:
    """The serialized actual output ``k``, or the message saying why there is none."""
    if run.actual is None:
        return run.error or "the backend gave no outputs"
    if k >= len(run.actual):
        return f"the backend gave {len(run.actual)} outputs, the case expects output {k}"
    return serialized(run.model, k, run.actual[k], output_name(run, k, value))


def compare_stores(
    expected: Store | str | os.PathLike[str],
    actual: Store | str | os.PathLike[str],
    *,
    plan: Plan | None = None,
    cases: Iterable[str] | None = None,
    progress: Callable[[str], None] | None = None,
    missing: str = "leave_out",
    runtime: str | None = None,
    **settings: Unpack[PlanSettings],
) -> Report:
    """Compare the outputs of two stores (``actual`` from :func:`write_actual`).

    The same report as :func:`compare`, its ``backend`` the one ``actual`` says made its
    outputs (:func:`made_by`; None if it does not say).  A case that ``actual`` does not hold (a run
    of some cases only) is left out, and counted in its provenance's ``left_out``; with
    ``missing="error"`` each of its outputs is an ``error`` instead.  An output missing
    from a data set is an ``error``; an ``output_K.error.txt`` file in ``actual`` gives
    the backend's message.  ``plan`` (or its settings as keywords) is as for
    :func:`compare`.  ``runtime`` (``NAME==VERSION``) names the runtime that made
    ``actual`` over what it says (see :func:`describe_backend`).
    """
    if missing not in ("leave_out", "error"):
        raise CompareError(f"missing is {missing!r}; expected 'leave_out' or 'error'")
    plan = plan_of(plan, settings, where="compare_stores")
    given = None if runtime is None else parse_runtime(runtime)
    expected = as_store(expected, where="compare_stores(expected)")
    rules = plan.rules(expected.metadata.get("onnx_version"))
    expect = rules.expect
    actual = as_store(actual, where="compare_stores(actual)")
    actual_cases = set(actual.cases())
    rows: list[dict[str, Any]] = []
    left_out = 0
    for case in select_cases(expected, cases):
        pattern = expect.skips(case)
        if pattern is not None:
            rows.append(skipped_row(expected, case, pattern))
            continue
        if case not in actual_cases and missing == "leave_out":
            runs = list(data_sets_of(expected, case))
            if all(run.skipped is not None for run in runs):  # skipped either way
                rows += output_rows(rules, runs)
            else:
                left_out += 1
            if progress is not None:
                progress(case)
            continue
        found: dict[str, Any] = {}
        errors: dict[str, str] = {}
        if case in actual_cases:
            got = actual.case(case)
            found = {v.path: v.to_numpy() for v in got.values if v.io == "output"}
            errors = {
                f.path: f.data.decode("utf-8", "replace")
                for f in got.kept
                if f.path.endswith(_ERROR_SUFFIX)
            }
        case_rows: list[dict[str, Any]] = []
        for run in data_sets_of(expected, case):
            if run.skipped is not None:
                case_rows += output_rows(rules, [run])
                continue
            kept = {key: p for key, p in run.kept_as_bytes.items() if key[0] == "output"}
            if kept:  # expected outputs that cannot be compared: an error row each
                case_rows += output_rows(rules, [replace(run, expected={}, kept_as_bytes=kept)])
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
                case_rows += output_rows(rules, [single])
        rows += expect.applied(case, case_rows)
        if progress is not None:
            progress(case)
    backend = made_by(actual)
    if given is not None:
        backend = {**(backend or {"name": None, "runs": None})}
        backend.update(runtime=given[0], runtime_version=given[1], runtime_given=True)
    made = provenance(
        expected,
        backend=backend,
        actual=[str(p) for p in actual.parts],
        actual_created_by=actual.metadata.get("created_by"),
        actual_provenance=actual.metadata.get("provenance"),
        missing=missing,
        left_out=left_out,
        **plan_provenance(rules, cases),
    )
    return Report.of(report_table(rows), made)

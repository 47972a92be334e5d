""":func:`compare`: run a backend over a store and compare every output with the expected
one as it comes, case by case, in a worker process (:mod:`~onnx_arrow.compare.isolation`),
in this process or on an engine, into a report."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Unpack

from onnx_arrow.compare.backends import (
    Backend,
    BackendLike,
    describe_backend,
    reference_backend,
)
from onnx_arrow.compare.deadlines import check_timeout
from onnx_arrow.compare.isolation import backend_to_run, isolates
from onnx_arrow.compare.plans import (
    Plan,
    PlanSettings,
    Rules,
    plan_of,
    plan_provenance,
    select_cases,
)
from onnx_arrow.compare.report import output_rows, provenance, report_table, skipped_row
from onnx_arrow.compare.runs import lost_runs, map_runs, run_case
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.parallel import Lost
from onnx_arrow.reports import Report

__all__ = ["compare", "planned_provenance"]


def compare(
    store: Store | str | os.PathLike[str],
    backend: BackendLike = reference_backend,
    *,
    plan: Plan | None = None,
    cases: Iterable[str] | None = None,
    timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
    jobs: int = 1,
    engine: str | None = None,
    runtime: str | None = None,
    in_process: bool = False,
    **settings: Unpack[PlanSettings],
) -> Report:
    """Run ``backend`` over ``store`` and compare every output with the expected one.

    Parameters
    ----------
    store
        A corpus store, or its path.
    backend
        A :class:`Backend`, a built-in backend's name (``"onnxruntime"``), a spec
        ``MODULE[:NAME]`` or an object with onnx's backend interface (a module such as
        ``onnxruntime.backend``, a ``Backend`` subclass): see :func:`resolve_backend`;
        :func:`reference_backend` unless given.
    plan
        How the outputs are judged (:class:`Plan`: skip, xfail and tolerance patterns,
        the default tolerances, ULP budgets, which actual values the report keeps);
        ``Plan()`` unless given.
    cases, timeout, progress
        As :func:`run_backend`.
    jobs, engine
        Run the cases in ``jobs`` processes of this machine, or on ``engine``
        (``"processes"``, ``"dask"``, ``"ray"``; see :mod:`onnx_arrow.parallel`).  The
        table is the same as a run in this process; a case whose worker died, or stopped
        answering past the timeout, is an ``error`` on each of its outputs.
    runtime
        The runtime the backend runs, ``NAME==VERSION`` (a runner's, whose command says
        no version), recorded in the provenance's ``backend`` (``runtime``,
        ``runtime_version``) over what the backend says of itself (see
        :func:`describe_backend`); checked before anything runs.
    in_process
        Run the backend in this process, not in a worker process (the default with
        ``jobs`` 1 and no ``engine``; a spec's module is then loaded in a worker process
        first, as the backend-testing page describes).  Unprotected: the backend's
        crash, ``sys.exit`` or stray thread then ends or holds this process; for a
        debugger or a profiler.  A :class:`CommandRunner` runs here either way.
    **settings
        The settings of a :class:`Plan` as keywords, instead of ``plan``
        (``compare(store, rtol=1e-4)``); not with ``plan``.

    Returns
    -------
    Report
        An Arrow table of :data:`REPORT_SCHEMA` whose metadata says what it was made from
        and with (:attr:`Report.provenance`: the store and its digest, the onnx release
        that built it, the backend and what it runs, the plan, the versions);
        :meth:`Report.to_pandas` gives its rows as a DataFrame.  One row per expected
        output value (one per skipped case), columns :data:`COMPARE_COLUMNS`:
        ``case``, ``op_types`` (sorted distinct op types of the model's main graph, a
        tuple), ``data_set``, ``index`` (output index),
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
        of the declared type, see ``keep_actual``), ``max_ulp`` / ``max_ulp_index``
        (the largest ULP distance of the floats and where it is; for floats of one
        dtype), ``rule`` (``tolerance`` or ``ulp``: what judged the row, from where the
        ``tolerance`` column says), ``ulp_budget`` / ``ulp_floor`` (under the ``ulp``
        rule).  Numbers are nullable (``Int64``, ``Float64`` in the DataFrame);
        :func:`write_report` stores it as Parquet.
    """
    check_timeout(timeout)
    plan = plan_of(plan, settings, where="compare")  # before the backend is made
    backend = backend_to_run(backend, in_process=in_process, jobs=jobs, engine=engine)
    described = describe_backend(backend, runtime)  # a bad runtime: said before any work
    store = as_store(store, where="compare(store)")
    rules = plan.rules(store.metadata.get("onnx_version"))
    expect = rules.expect
    names = select_cases(store, cases)
    skipped = {name: pattern for name in names if (pattern := expect.skips(name)) is not None}
    per_case = _CompareCase(backend, rules, timeout)
    results = dict(
        map_runs(
            per_case,
            store,
            [n for n in names if n not in skipped],
            jobs=jobs,
            engine=engine,
            timeout=timeout,
            progress=progress,
            isolate=isolates(backend, in_process=in_process),
        )
    )
    rows: list[dict[str, Any]] = []
    for name in names:
        if name in skipped:
            rows.append(skipped_row(store, name, skipped[name]))
            continue
        result = results[name]
        case_rows = per_case.lost(store, result) if isinstance(result, Lost) else result
        rows += expect.applied(name, case_rows)
    return Report.of(report_table(rows), _made(store, described, rules, cases, timeout))


def _made(
    store: Store,
    described: dict[str, Any],
    rules: Rules,
    cases: Iterable[str] | None,
    timeout: float | None,
) -> dict[str, Any]:
    # not jobs or engine: the report is the same, byte for byte, wherever it ran
    return provenance(store, backend=described, timeout=timeout, **plan_provenance(rules, cases))


def planned_provenance(
    store: Store | str | os.PathLike[str],
    backend: BackendLike = reference_backend,
    *,
    plan: Plan | None = None,
    cases: Iterable[str] | None = None,
    timeout: float | None = None,
    runtime: str | None = None,
) -> dict[str, Any]:
    """What :func:`compare` with these arguments will say its report was made from and
    with (:attr:`Report.provenance <onnx_arrow.reports.Report.provenance>`), before
    anything runs: what a results store's identity of the run is taken from
    (:func:`onnx_arrow.results.has_run`), so that a run already kept need not be made.

    Raises
    ------
    CompareError
        As :func:`compare` before it runs: a bad timeout, plan, backend or runtime.
    """
    check_timeout(timeout)
    store = as_store(store, where="planned_provenance(store)")
    rules = plan_of(plan, {}, where="planned_provenance").rules(store.metadata.get("onnx_version"))
    # a spec is loaded and described in a worker process, as compare loads it
    described = describe_backend(backend_to_run(backend), runtime)
    return _made(store, described, rules, cases, timeout)


@dataclass(frozen=True)
class _CompareCase:
    """The comparison rows of one case (a task of :func:`~onnx_arrow.parallel.map_cases`)."""

    backend: Backend
    plan: Rules
    timeout: float | None

    def __call__(self, store: Store, case: str) -> list[dict[str, Any]]:
        return output_rows(self.plan, run_case(store, case, self.backend, self.timeout))

    def lost(self, store: Store, lost: Lost) -> list[dict[str, Any]]:
        return output_rows(self.plan, lost_runs(store, lost))

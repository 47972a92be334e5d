"""A function over the cases of a store: here, in N processes of this machine, on Dask or
on Ray, with the results in the order of the cases wherever they ran.

:func:`map_cases` is what ``compare`` and ``run`` use for ``--jobs`` and
``--engine``.  Every task opens the store itself (its footers only, once per worker
process) and takes whole cases, so a task reads only the row groups that hold them.

* ``processes`` (``jobs`` local worker processes of ``onnx_arrow.pool``, forked): a
  case at a time per worker.  A worker that dies on a case (a crash in native code) is
  replaced and the case is reported lost; with a ``timeout``, so is a worker that stops
  answering for ``timeout`` + :data:`GRACE` seconds after the last data set it started
  (:func:`heartbeat`: a backend stuck in native code that a timeout inside the worker
  cannot stop).
* ``dask``: tasks of consecutive cases on the current ``distributed`` client, or a
  ``LocalCluster`` of ``jobs`` single-threaded workers started for the run.
* ``ray``: tasks of consecutive cases on the running Ray, or a local one of ``jobs``
  CPUs started for the run.

On Dask and Ray a task whose worker dies is run again case by case, and a case that
still kills its worker is reported lost; the engines' own retries are turned off.
Dask and Ray are imported only when asked for (``pip install onnx-arrow[dask]``,
``onnx-arrow[ray]``).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from onnx_arrow.errors import BackendUnavailableError, EngineError

if TYPE_CHECKING:
    from onnx_arrow.corpus import Store

__all__ = ["ENGINES", "GRACE", "Lost", "heartbeat", "map_cases"]

#: The engines :func:`map_cases` runs on.
ENGINES: Final = ("processes", "dask", "ray")
#: Seconds a worker may stay silent beyond the timeout before it is stopped.
GRACE: Final = 10.0
#: Tasks per worker on Dask and Ray: enough to even out cases of unequal cost.
_TASKS_PER_WORKER: Final = 8

#: A function of one case: ``func(store, case) -> result`` (picklable for Dask and Ray).
CaseFunction = Callable[["Store", str], Any]


@dataclass(frozen=True)
class Lost:
    """A case whose worker died or stopped answering: why, in words."""

    case: str
    message: str


def heartbeat() -> None:
    """Tell the parent the worker is alive and starts a new step (a data set): the silence
    deadline of its case starts again.  Does nothing outside a ``processes`` worker."""
    # imported here: the command line reads ENGINES for its options without the pool,
    # and multiprocessing with it
    from onnx_arrow.pool import heartbeat as beat

    beat()


def map_cases(
    func: CaseFunction,
    store: Store,
    cases: Sequence[str],
    *,
    jobs: int = 1,
    engine: str | None = None,
    timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
    isolate: bool = False,
) -> Iterator[tuple[str, Any]]:
    """``func(store, case)`` for every case, as ``(case, result)`` in the order of
    ``cases``; a case whose worker was lost gives a :class:`Lost` as its result.

    With ``jobs`` 1 and no ``engine``, in this process (a crash here ends the process),
    unless ``isolate``: then in one worker process (``processes``), forked once and reused
    for every case, replaced when a case loses it.  ``progress`` is called with each case
    as it completes, wherever it ran.

    Raises
    ------
    EngineError
        If there is no engine of that name (see :data:`ENGINES`).
    """
    if engine is None and jobs <= 1 and not isolate:
        for case in cases:
            result = func(store, case)
            if progress is not None:
                progress(case)
            yield case, result
        return
    engine = engine or "processes"
    if engine not in ENGINES:
        raise EngineError(f"no engine {engine!r}; expected one of {', '.join(ENGINES)}")
    runner = {"processes": _processes, "dask": _dask, "ray": _ray}[engine]
    done = runner(func, store, list(cases), max(jobs, 1), timeout)
    yield from _in_order(done, cases, progress)


def _in_order(
    done: Iterator[tuple[str, Any]], cases: Sequence[str], progress: Callable[[str], None] | None
) -> Iterator[tuple[str, Any]]:
    """Results as they complete, handed on in the order of ``cases``."""
    waiting: dict[str, Any] = {}
    order = iter(cases)
    following = next(order, None)
    for case, result in done:
        if progress is not None:
            progress(case)
        waiting[case] = result
        while following is not None and following in waiting:
            yield following, waiting.pop(following)
            following = next(order, None)


# --- local processes ---------------------------------------------------------------------

#: In a ``processes`` worker: the case function and the store, given once per worker.
_task: list[tuple[CaseFunction, Store]] = []


def _case_worker(func: CaseFunction, parts: tuple[str, ...]) -> None:
    _task[:] = [(func, _open_store(parts))]


def _run_case(case: str) -> tuple[str, Any]:
    func, store = _task[0]
    return case, func(store, case)


def _processes(
    func: CaseFunction, store: Store, cases: list[str], jobs: int, timeout: float | None
) -> Iterator[tuple[str, Any]]:
    from onnx_arrow.pool import Pool, TaskLost  # see heartbeat

    if not cases:
        return
    parts = tuple(map(str, store.parts))
    with Pool(
        min(jobs, len(cases)),
        initializer=_case_worker,
        initargs=(func, parts),
        respawn=True,  # a case that kills its worker is that case's error, not the run's
        timeout=None if timeout is None else timeout + GRACE,
    ) as pool:
        numbered = {pool.submit(_run_case, case): case for case in cases}
        for task, result in pool.completed():
            if not isinstance(result, TaskLost):
                yield result
                continue
            case = numbered[task]
            if result.silent is not None and timeout is not None:
                message = (
                    f"the backend did not return within {timeout:g} s + {GRACE:g} s "
                    "(stuck outside Python); its worker process was stopped"
                )
            else:
                message = result.message("case")
            yield case, Lost(case, message)


# --- Dask and Ray ------------------------------------------------------------------------


def _chunks(cases: list[str], jobs: int) -> list[list[str]]:
    size = max(1, math.ceil(len(cases) / (jobs * _TASKS_PER_WORKER)))
    return [cases[i : i + size] for i in range(0, len(cases), size)]


def _run_task(
    func: CaseFunction, parts: tuple[str, ...], cases: list[str]
) -> list[tuple[str, Any]]:
    """A task on an engine's worker: its cases, the store opened once per process."""
    store = _task_store(parts)
    return [(case, func(store, case)) for case in cases]


_stores: dict[tuple[str, ...], Store] = {}


def _open_store(parts: tuple[str, ...]) -> Store:
    # imported here: the command line reads ENGINES for its help without the store
    from onnx_arrow.corpus import Store

    return Store(list(parts))


def _task_store(parts: tuple[str, ...]) -> Store:
    if parts not in _stores:
        _stores.clear()
        _stores[parts] = _open_store(parts)
    return _stores[parts]


def _lost_worker(exc: BaseException) -> bool:
    """An engine's error that says the worker died, not that the task raised."""
    names = {t.__name__ for t in type(exc).__mro__}
    return bool(names & {"KilledWorker", "WorkerCrashedError", "CommClosedError"})


def _dask(
    func: CaseFunction, store: Store, cases: list[str], jobs: int, timeout: float | None
) -> Iterator[tuple[str, Any]]:
    try:
        distributed: Any = importlib.import_module("distributed")  # untyped
    except ImportError:
        raise BackendUnavailableError(
            "Dask's distributed scheduler is not installed; install it with "
            "`pip install onnx-arrow[dask]`"
        ) from None
    parts = tuple(map(str, store.parts))
    import dask

    try:
        client, own = distributed.get_client(), None
    except ValueError:
        # a worker that dies is not given the task again: the case that killed it is found
        # and reported here
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            own = distributed.LocalCluster(
                n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = distributed.Client(own)
    try:
        futures = {
            client.submit(_run_task, func, parts, chunk, pure=False, retries=0): chunk
            for chunk in _chunks(cases, jobs)
        }
        queue = distributed.as_completed(list(futures))
        for future in queue:
            chunk = futures[future]
            try:
                yield from future.result()
            except Exception as exc:
                if not _lost_worker(exc):
                    raise
                if len(chunk) == 1:
                    yield chunk[0], Lost(chunk[0], f"the Dask worker running the case died ({exc})")
                    continue
                for case in chunk:  # again one case a task, to find the one that kills
                    single = client.submit(_run_task, func, parts, [case], pure=False, retries=0)
                    futures[single] = [case]
                    queue.add(single)
    finally:
        if own is not None:
            client.close()
            own.close()


def _ray(
    func: CaseFunction, store: Store, cases: list[str], jobs: int, timeout: float | None
) -> Iterator[tuple[str, Any]]:
    try:
        import ray
    except ImportError:
        raise BackendUnavailableError(
            "Ray is not installed; install it with `pip install onnx-arrow[ray]`"
        ) from None
    parts = tuple(map(str, store.parts))
    own = not ray.is_initialized()
    if own:
        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
    task = ray.remote(max_retries=0)(_run_task)
    try:
        refs = {task.remote(func, parts, chunk): chunk for chunk in _chunks(cases, jobs)}
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            chunk = refs.pop(ready[0])
            try:
                yield from ray.get(ready[0])
            except Exception as exc:
                if not _lost_worker(exc):
                    raise
                if len(chunk) == 1:
                    message = f"the Ray worker running the case died ({type(exc).__name__})"
                    yield chunk[0], Lost(chunk[0], message)
                    continue
                refs.update({task.remote(func, parts, [case]): [case] for case in chunk})
    finally:
        if own:
            ray.shutdown()

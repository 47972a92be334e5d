"""The matrix: every given corpus x every given runtime (a backend or a runner), each pair
a compare run added to a results store, a pair already there skipped (resumable), a pair
that cannot run recorded as failed and the matrix gone on."""

from __future__ import annotations

import contextlib
import datetime
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from onnx_arrow.compare.backends import Backend, BackendLike, resolve_backend
from onnx_arrow.compare.direct import compare, planned_provenance
from onnx_arrow.compare.plans import Plan
from onnx_arrow.compare.runner import CommandRunner
from onnx_arrow.corpus.releases import is_release, open_release_store
from onnx_arrow.corpus.store import Store
from onnx_arrow.errors import ResultsError
from onnx_arrow.reports import Report
from onnx_arrow.results.schema import run_values
from onnx_arrow.results.store import add, check, has_run, read, runs
from onnx_arrow.results.version_changes import FAILING, PASSES

__all__ = ["PAIR_STATES", "MatrixBackend", "Pair", "matrix"]

#: What became of a pair: its run ``added`` to the store, ``present`` there already
#: (not run again), or ``failed``: it could not run (its corpus did not open, its backend
#: did not load, compare raised), nothing added and ``error`` saying why.  A backend
#: that crashes or times out on a case is no failed pair: compare records each of those
#: outputs as an ``error``, and the run is added.
PAIR_STATES: Final = ("added", "present", "failed")


@dataclass(frozen=True)
class MatrixBackend:
    """One runtime of a matrix: a ``backend`` as :func:`~onnx_arrow.compare.compare`
    takes it (a name, a spec ``MODULE[:NAME]``, an object), or a ``runner`` command
    (:class:`~onnx_arrow.compare.CommandRunner`); and the ``runtime`` it records,
    ``NAME==VERSION`` (a runner's, or over what a backend says of itself)."""

    backend: BackendLike | None = None
    runner: str | None = None
    runtime: str | None = None

    def __post_init__(self) -> None:
        if (self.backend is None) == (self.runner is None):
            raise ResultsError("give a backend or a runner, one of the two", where="MatrixBackend")
        if self.runner is not None and not isinstance(self.runner, str):
            raise ResultsError(
                f"runner is a {type(self.runner).__name__}; give the command as a str",
                where="MatrixBackend(runner)",
            )

    @property
    def label(self) -> str:
        """The backend or the runner as given (an object by its type's name)."""
        if self.runner is not None:
            return f"runner {self.runner}"
        if isinstance(self.backend, str):
            return self.backend
        kind = self.backend if isinstance(self.backend, type) else type(self.backend)
        return getattr(kind, "__qualname__", repr(self.backend))


@dataclass(frozen=True)
class Pair:
    """What the matrix did with one corpus and one runtime (see :data:`PAIR_STATES`):
    the corpus as given and the onnx release that built it, the runtime as given
    (``label``) and as recorded (``runtime``, ``runtime_version``), the run's id in the
    store, its outputs by verdict (``passed``: match, xpass; ``failed``: the mismatches
    and xfail; ``errors``; ``skipped``), the seconds it took and, for a failed pair, the
    error it raised."""

    corpus: str
    label: str
    state: str
    corpus_onnx_version: str | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    run_id: str | None = None
    outputs: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    seconds: float = 0.0
    error: str | None = None


#: Called with the corpus as given, the runtime's label and a case's name once it has run.
CaseProgress = Callable[[str, str, str], None]


def matrix(
    results: str | os.PathLike[str],
    corpora: Sequence[str | os.PathLike[str] | Store],
    backends: Sequence[MatrixBackend | BackendLike],
    *,
    plan: Plan | None = None,
    cases: Sequence[str] | None = None,
    timeout: float | None = None,
    jobs: int = 1,
    engine: str | None = None,
    again: bool = False,
    offline: bool = False,
    progress: CaseProgress | None = None,
    on_pair: Callable[[Pair], None] | None = None,
) -> list[Pair]:
    """Run every backend of ``backends`` over every corpus of ``corpora`` and add each
    pair's compare run to the results store ``results`` (a folder, made if missing).

    A pair whose run the store holds already (the same identity: corpus digest,
    runtime, version, provider or runner, options; see
    :data:`~onnx_arrow.results.IDENTITY_COLUMNS`) is not run again unless ``again`` (then
    it is added as the next attempt): a matrix stopped half-way goes on where it stopped.
    A pair that cannot run (its corpus does not open, its backend does not load, compare
    raises) is ``failed``, and the matrix goes on with the next.

    Parameters
    ----------
    results
        The results store.
    corpora
        Corpus stores, their paths, or releases (``@onnx``, ``@onnx==VERSION``: see
        :func:`~onnx_arrow.corpus.releases.open_release_store`; ``offline``: from the
        cache only).
    backends
        :class:`MatrixBackend` each, or a backend as :func:`~onnx_arrow.compare.compare`
        takes it (its spec passed on unchanged).
    plan, cases, timeout, jobs, engine
        As :func:`~onnx_arrow.compare.compare` takes them, for every pair; a runner is
        given ``timeout`` as its own too.
    progress
        Called with the corpus, the runtime's label and each case's name once it has run.
    on_pair
        Called with each pair's :class:`Pair` once it is done.

    Returns
    -------
    list of Pair
        A pair each, corpus by corpus, in the order given.

    Raises
    ------
    ResultsError
        If the results store does not read (checked before anything runs, and as the
        counts of a pair it holds are read).
    """
    check(results)  # a store that does not read: said before any work
    entries = [b if isinstance(b, MatrixBackend) else MatrixBackend(backend=b) for b in backends]
    made: dict[int, Backend | Exception] = {}  # each backend loaded once, for every corpus
    run = _Run(results, _KeptRuns(results), plan, cases, timeout, jobs, engine, again)
    pairs = []
    for corpus in corpora:
        name = str(corpus.path if isinstance(corpus, Store) else corpus)
        with _opened(corpus, offline=offline) as store:
            for k, entry in enumerate(entries):
                tick = None if progress is None else _ticker(progress, name, entry.label)
                started = time.monotonic()
                if isinstance(store, Exception):
                    pair = _failed(name, entry, store, started)
                else:
                    if k not in made:
                        made[k] = _load(entry, timeout)
                    pair = _pair(run, name, store, entry, made[k], started, tick)
                pairs.append(pair)
                if on_pair is not None:
                    on_pair(pair)
    return pairs


def _ticker(progress: CaseProgress, corpus: str, label: str) -> Callable[[str], None]:
    return lambda case: progress(corpus, label, case)


@contextlib.contextmanager
def _opened(
    corpus: str | os.PathLike[str] | Store, *, offline: bool
) -> Iterator[Store | Exception]:
    """The corpus's store, or what opening it raised (its pairs fail, the matrix goes on)."""
    if isinstance(corpus, Store):
        yield corpus
        return
    with contextlib.ExitStack() as stack:
        opened: Store | Exception
        try:
            if is_release(corpus):
                opened = Store(
                    stack.enter_context(open_release_store(str(corpus), offline=offline))
                )
            else:
                opened = Store(corpus)
        except Exception as exc:  # a corpus that does not open fails its pairs only
            opened = exc
        yield opened


def _load(entry: MatrixBackend, timeout: float | None) -> Backend | Exception:
    """The entry's backend, or what loading it raised."""
    try:
        if entry.runner is not None:
            return CommandRunner(entry.runner, timeout=timeout)
        return resolve_backend(entry.backend)
    except Exception as exc:  # a backend that does not load fails its pairs
        return exc


class _KeptRuns:
    """The verdict counts of the store's runs by id, read once when first asked for."""

    def __init__(self, results: str | os.PathLike[str]) -> None:
        self.results = results
        self.counted: dict[str, dict[str, Any]] | None = None

    def __getitem__(self, run_id: str) -> Mapping[str, Any]:
        if self.counted is None:
            table = runs(read(self.results))
            self.counted = {r["run_id"]: r for r in table.to_pylist()}
        return self.counted.get(run_id, {})


@dataclass(frozen=True)
class _Run:
    """What every pair of one matrix is run and kept with."""

    results: str | os.PathLike[str]
    kept: _KeptRuns
    plan: Plan | None
    cases: Sequence[str] | None
    timeout: float | None
    jobs: int
    engine: str | None
    again: bool


def _pair(
    run: _Run,
    corpus: str,
    store: Store,
    entry: MatrixBackend,
    backend: Backend | Exception,
    started: float,
    progress: Callable[[str], None] | None,
) -> Pair:
    """One pair: found in the store, or run and added, or failed."""
    if isinstance(backend, Exception):
        return _failed(corpus, entry, backend, started, store)
    try:
        made = planned_provenance(
            store,
            backend,
            plan=run.plan,
            cases=run.cases,
            timeout=run.timeout,
            runtime=entry.runtime,
        )
    except Exception as exc:  # a bad plan or runtime, a store that does not read: the pair's
        return _failed(corpus, entry, exc, started, store)
    said = _said(corpus, entry, made)
    present = None if run.again else has_run(run.results, made)
    if present is not None:
        return replace(said, state="present", run_id=present, **_kept_counts(run.kept[present]))
    try:
        report = compare(
            store,
            backend,
            plan=run.plan,
            cases=run.cases,
            timeout=run.timeout,
            progress=progress,
            jobs=run.jobs,
            engine=run.engine,
            runtime=entry.runtime,
        )
    except Exception as exc:  # a pair that raises is a failed pair: the matrix goes on
        return _failed(corpus, entry, exc, started, store)
    (added,) = add(run.results, report, again=run.again)
    state = "present" if added.present else "added"
    seconds = time.monotonic() - started
    return replace(said, state=state, run_id=added.run_id, seconds=seconds, **_counts(report))


def _said(corpus: str, entry: MatrixBackend, made: Mapping[str, Any]) -> Pair:
    """The pair as its run will be recorded (its state to come)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    values = run_values(made, attempt=1, run_id="", date=now)
    return Pair(
        corpus,
        entry.label,
        "",
        corpus_onnx_version=values["corpus_onnx_version"],
        runtime=values["runtime"],
        runtime_version=values["runtime_version"],
    )


def _failed(
    corpus: str,
    entry: MatrixBackend,
    exc: Exception,
    started: float,
    store: Store | None = None,
) -> Pair:
    try:
        version = None if store is None else store.metadata.get("onnx_version")
    except Exception:  # a store whose metadata does not read: its error is the pair's
        version = None
    return Pair(
        corpus,
        entry.label,
        "failed",
        corpus_onnx_version=None if version is None else str(version),
        seconds=time.monotonic() - started,
        error=f"{type(exc).__name__}: {exc}",
    )


def _counts(report: Report) -> dict[str, Any]:
    statuses = report.table.column("status").to_pylist()
    return {
        "outputs": len(statuses),
        "passed": sum(s in PASSES for s in statuses),
        "failed": sum(s in FAILING and s != "error" for s in statuses),
        "errors": statuses.count("error"),
        "skipped": statuses.count("skipped"),
    }


def _kept_counts(run: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "outputs": int(run.get("outputs") or 0),
        "passed": int(run.get("pass") or 0),
        "failed": int(run.get("fail") or 0),
        "errors": int(run.get("error") or 0),
        "skipped": int(run.get("skipped") or 0),
    }

"""The write pipeline of a store: cases built into rows (in worker processes with
``jobs``), cut into row groups of whole cases, and written in order (encoded and
compressed by the Parquet writer) on a thread of their own while the next ones are
built; :func:`write_store` runs it into one Parquet file.

Writes are atomic: the store is written to a temporary file beside the target and
renamed into place only when complete, so an error or Ctrl-C leaves no truncated
store.  Cases are streamed: a row group holds whole cases, and only the cases of
a few row groups are in memory at a time (and the first row groups of a store file,
32 MiB at most, until its float encodings are chosen: see
:class:`~onnx_arrow.corpus.parquet.StoreFile`).
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from warnings import warn

import pyarrow as pa

from onnx_arrow._interrupt import deferred_interrupt
from onnx_arrow.corpus.arguments import check_path, type_name
from onnx_arrow.corpus.format import SCHEMA
from onnx_arrow.corpus.options import (
    LARGE_CASE_SHARE,
    WriteOptions,
    check_callback,
    check_count,
)
from onnx_arrow.corpus.parquet import StoreFile
from onnx_arrow.corpus.rows import RowBuilder, contradictions
from onnx_arrow.corpus.sources import Case, CaseRef, case_refs, checked_cases
from onnx_arrow.corpus.tree import atomic_file
from onnx_arrow.errors import DeclarationWarning, UnsupportedTypeError
from onnx_arrow.pool import Pool

__all__ = [
    "TASK_CASES",
    "BackgroundWriter",
    "RowGroup",
    "check_options",
    "write_rows",
    "write_store",
]

#: Cases a worker process is handed at a time (it stops early at ``row_group_bytes``).
TASK_CASES: Final = 64


@dataclass
class _Piece:
    """The rows of consecutive cases, built together; row groups are cut from pieces."""

    refs: list[Case | CaseRef]
    batch: pa.RecordBatch
    cases: list[tuple[int, int, int, int]]  # per case: rows, source bytes, files, warnings
    warnings: list[str]


def _piece(builder: RowBuilder, refs: list[Case | CaseRef]) -> _Piece:
    return _Piece(refs, builder.to_batch(), builder.cases, builder.warnings)


def _ignore(_: object) -> None:
    pass


def _fill(
    builder: RowBuilder,
    refs: Iterator[Case | CaseRef],
    budget: int,
    progress: Callable[[Any], None],
) -> list[Case | CaseRef]:
    """Add cases to ``builder`` until they hold ``budget`` source bytes; the cases added."""
    done: list[Case | CaseRef] = []
    for ref in refs:
        builder.add_case(ref.load())
        done.append(ref)
        progress(ref)
        if builder.source_bytes >= budget:
            break
    return done


def _sequential(
    refs: Iterable[Case | CaseRef], options: WriteOptions, progress: Callable[[Any], None]
) -> Generator[_Piece, None, None]:
    """Pieces built in this process, each ending where a row group is full."""
    remaining = iter(refs)
    while True:
        builder = RowBuilder(keep_undecodable=options.keep_undecodable)
        done = _fill(builder, remaining, options.row_group_bytes, progress)
        if not done:
            return
        yield _piece(builder, done)


#: What a worker sends back: the piece's batch as Arrow IPC, its cases and warnings, and
#: how many of the cases it was handed it built.
_TaskResult = tuple[bytes, list[tuple[int, int, int, int]], list[str], int]


def _build_task(refs: list[Case | CaseRef], keep_undecodable: bool, budget: int) -> _TaskResult:
    """Build cases until they hold ``budget`` source bytes (run in a worker process)."""
    builder = RowBuilder(keep_undecodable=keep_undecodable)
    done = _fill(builder, iter(refs), budget, _ignore)
    batch = builder.to_batch()
    sink = pa.BufferOutputStream()
    # Arrow IPC keeps every type detail (pickle drops a fixed_size_list's not-null item)
    with pa.ipc.new_stream(sink, batch.schema) as stream:
        stream.write_batch(batch)
    return sink.getvalue().to_pybytes(), builder.cases, builder.warnings, len(done)


def _tasks(refs: Iterable[Case | CaseRef]) -> Iterator[list[Case | CaseRef]]:
    task: list[Case | CaseRef] = []
    for ref in refs:
        task.append(ref)
        if len(task) == TASK_CASES:
            yield task
            task = []
    if task:
        yield task


def _parallel(
    refs: Iterable[Case | CaseRef],
    options: WriteOptions,
    progress: Callable[[Any], None],
    jobs: int,
) -> Generator[_Piece, None, None]:
    """Pieces built in ``jobs`` worker processes, in order, at most 2 * ``jobs`` ahead.

    A worker stops at ``row_group_bytes`` source bytes, so memory stays bounded
    whatever the cases hold; the cases it did not reach are handed out again.
    """
    args = (options.keep_undecodable, options.row_group_bytes)
    # pyarrow imports pandas on its first conversion from Python; done here, before the
    # workers fork, it is done once rather than once per worker
    pa.array([], pa.int64())
    # leaving the block, by an error, Ctrl-C or the generator closed, stops the workers:
    # they only compute, so what they were handed is dropped, not waited for
    with Pool(jobs) as pool:
        pending: collections.deque[tuple[list[Case | CaseRef], int]] = collections.deque()
        tasks = _tasks(refs)
        while True:
            while len(pending) < 2 * jobs and (task := next(tasks, None)) is not None:
                pending.append((task, pool.submit(_build_task, task, *args)))
            if not pending:
                return
            task, number = pending.popleft()
            payload, cases, warnings, done = pool.result(number)
            if done < len(task):
                rest = task[done:]
                pending.appendleft((rest, pool.submit(_build_task, rest, *args, first=True)))
            batch = pa.ipc.open_stream(payload).read_next_batch()
            for ref in task[:done]:
                progress(ref)
            yield _Piece(task[:done], batch, cases, warnings)


@dataclass
class RowGroup:
    """The cases of one row group, their rows as one chunk, and what they count."""

    refs: list[Case | CaseRef] = field(default_factory=list)
    table: pa.Table = field(default_factory=lambda: pa.table([]))
    warnings: list[str] = field(default_factory=list)
    files: int = 0
    source_bytes: int = 0
    kind: str | None = None
    #: The last row group of a part of ``part_cases`` cases (see :func:`_row_groups`).
    ends_part: bool = False


def _row_groups(
    pieces: Iterable[_Piece],
    budget: int,
    *,
    max_cases: int | None = None,
    by_kind: bool = False,
    part_cases: int | None = None,
) -> Iterator[RowGroup]:
    """Row groups of whole cases, each closed once its cases hold ``budget`` source bytes
    or it holds ``max_cases`` cases; ``by_kind``, before a case of another kind; with
    ``part_cases``, after every ``part_cases`` cases (marked ``ends_part``).  A case of
    at least a :data:`LARGE_CASE_SHARE`-th of ``budget`` is a row group of its own, so
    that reading it reads no other case's pages.

    The cut falls at the same case however the pieces were built, so the store is
    the same whatever the number of jobs.
    """
    group = RowGroup()
    parts: list[pa.RecordBatch] = []
    in_part = 0
    for piece in pieces:
        row = start = warned = 0
        kinds = piece.batch.column("kind")
        for ref, (rows, size, files, warnings) in zip(piece.refs, piece.cases, strict=True):
            kind = kinds[row].as_py() if rows else group.kind
            new_kind = by_kind and kind != group.kind
            alone = size * LARGE_CASE_SHARE >= budget
            if group.refs and (new_kind or alone):
                if row > start:
                    parts.append(piece.batch.slice(start, row - start))
                group.table = _one_chunk(parts)
                yield group
                group, parts, start = RowGroup(), [], row
                in_part = 0 if new_kind else in_part
            group.kind = kind
            in_part += 1
            row += rows
            group.refs.append(ref)
            group.warnings += piece.warnings[warned : warned + warnings]
            warned += warnings
            group.files += files
            group.source_bytes += size
            group.ends_part = in_part == part_cases
            if (
                group.source_bytes >= budget
                or alone
                or group.ends_part
                or (max_cases is not None and len(group.refs) >= max_cases)
            ):
                in_part = 0 if group.ends_part else in_part
                parts.append(piece.batch.slice(start, row - start))
                group.table = _one_chunk(parts)
                yield group
                group, parts, start = RowGroup(), [], row
        if start < piece.batch.num_rows:
            parts.append(piece.batch.slice(start))
    if group.refs:
        group.table = _one_chunk(parts)
        yield group


def _one_chunk(parts: list[pa.RecordBatch]) -> pa.Table:
    """A row group as one chunk: where the Parquet writer gives up a column's dictionary
    depends on how its input is chunked, so the same rows must come in the same chunks."""
    table = pa.Table.from_batches(parts, schema=SCHEMA)
    return table if len(parts) == 1 else table.combine_chunks()


class BackgroundWriter:
    """Prepares row groups on ``threads`` threads of its own and writes them, in the order
    they came, while the next ones are built.

    ``prepare`` (work that releases the GIL, as encoding and compression do) runs for
    several row groups at once; ``write`` for one at a time, in order, on the thread that
    prepared the next row group to write (the others go on preparing).  At most one row
    group waits for a thread, and at most ``2 * threads`` are prepared and not written;
    the writer is used by one thread at a time.  A thread is never cut short: on an error
    or Ctrl-C the building thread abandons the writing (:meth:`abandon`), which waits
    until the row groups being prepared or written are done and writes no other, so that
    the file is never closed under a thread's feet.
    """

    def __init__(
        self,
        write: Callable[[RowGroup], None],
        *,
        prepare: Callable[[RowGroup], None] | None = None,
        threads: int = 1,
    ) -> None:
        self._write, self._prepare = write, prepare
        # one lock for the waiting row group, those prepared, the writing and the ends
        self._state = threading.Condition()
        self._waiting: collections.deque[tuple[int, RowGroup]] = collections.deque()
        self._prepared: dict[int, RowGroup] = {}
        self._queued = self._written = 0  # row groups handed in, and written (or skipped)
        self._ahead = 2 * threads  # row groups handed in and not written, at most
        self._writing = False  # a thread is writing
        self._closed = False  # no row group comes any more
        self._error: BaseException | None = None
        self._abandoned = False
        self._running = threads
        # set by the last thread as its last act: Thread.join() cannot be trusted to wait,
        # since on Python 3.11 a join interrupted by Ctrl-C marks a running thread as stopped
        self._done = threading.Event()
        with deferred_interrupt():  # a thread started is a thread recorded
            for _ in range(threads):
                threading.Thread(target=self._run, name="onnx-arrow-writer", daemon=True).start()

    def _next(self) -> tuple[int, RowGroup] | None:
        with self._state:
            while not self._waiting and not self._closed and not self._abandoned:
                self._state.wait()
            if self._abandoned or not self._waiting:
                return None
            item = self._waiting.popleft()
            self._state.notify_all()
            return item

    def _run(self) -> None:
        try:
            while (item := self._next()) is not None:
                number, group = item
                if self._error is None and self._prepare is not None:
                    self._call(self._prepare, group)
                with self._state:
                    self._prepared[number] = group
                    if self._writing:  # the thread writing takes it in its turn
                        continue
                    self._writing = True
                self._write_ready()
        finally:
            with self._state:
                self._running -= 1
                if self._running == 0:
                    self._done.set()

    def _write_ready(self) -> None:
        """Write the row groups prepared, in order, until the next one is not."""
        while True:
            with self._state:
                group = self._prepared.pop(self._written, None)
                if group is None or self._abandoned:
                    self._writing = False
                    return
            if self._error is None:  # after an error, the rest is skipped, not written
                self._call(self._write, group)
            with self._state:
                self._written += 1
                self._state.notify_all()

    def _call(self, step: Callable[[RowGroup], None], group: RowGroup) -> None:
        try:
            step(group)
        except BaseException as exc:  # handed to the building thread
            with self._state:
                self._error = self._error or exc

    def write(self, group: RowGroup) -> None:
        """Queue a row group; raises the error of an earlier one."""
        self._check()
        with self._state:
            while (
                self._waiting or self._queued - self._written >= self._ahead
            ) and not self._abandoned:
                self._state.wait()
            self._waiting.append((self._queued, group))
            self._queued += 1
            self._state.notify_all()

    def finish(self, *, check: bool = True) -> None:
        """Wait until every queued row group is written; with ``check``, raise the
        error of one that failed.  Without, an error elsewhere stops the writing
        (:meth:`abandon`).  Interrupted, it abandons the writing before it raises."""
        if not check:
            self.abandon()
            return
        try:
            with self._state:
                self._closed = True
                self._state.notify_all()
            while not self._done.wait():
                pass
        except BaseException:
            self.abandon()
            raise
        self._check()

    def abandon(self) -> None:
        """Stop writing: the row groups being prepared or written are completed (the file
        stays whole for its writer to close), those queued are dropped; returns once every
        thread has ended.  A Ctrl-C meanwhile waits for them too, and is raised after."""
        with deferred_interrupt():
            with self._state:
                self._abandoned = True
                self._error = self._error or KeyboardInterrupt()
                self._waiting.clear()
                self._prepared.clear()
                self._state.notify_all()
            self._done.wait()

    def _check(self) -> None:
        if self._error is not None:
            raise self._error


def write_store(
    cases: Iterable[Case],
    out: str | os.PathLike[str],
    *,
    options: WriteOptions | None = None,
    progress: Callable[[Any], None] | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """Write ``cases`` to the Parquet store ``out``, atomically.

    ``jobs`` processes decode cases in parallel (a folder's cases are read by the
    workers too); the store is the same whatever the number.  ``progress`` is
    called with each case (it has a ``name``) once it is decoded; its row group is
    written soon after.  Returns a summary:
    cases, files, rows, row groups, source bytes, store bytes and warnings (files kept
    as bytes because they could not be typed or were not canonical).

    An argument of the wrong kind is refused before anything is written, with an
    :class:`~onnx_arrow.errors.UnsupportedTypeError` naming it (``jobs`` under 1 with a
    :class:`~onnx_arrow.errors.CorpusError`); so is a case that is not a :class:`Case`
    or :class:`CaseRef`, when it is read (its position is named).  What the file system
    refuses (a full disk) is an error naming ``out``.
    """
    cases = checked_cases(cases, where="write_store(cases)")
    check_path(out, where="write_store(out)")
    options = check_options(options, where="write_store(options)")
    progress = check_callback(progress, where="write_store(progress)")
    jobs = check_count(jobs, where="write_store(jobs)")
    with atomic_file(out, what="the store") as tmp, StoreFile(tmp, options) as writer:

        def write(group: RowGroup) -> None:
            writer.append(group.table)

        counts = write_rows(cases, options, progress, jobs, write)
    return {**counts, "bytes": Path(out).stat().st_size}


def check_options(options: object, *, where: str) -> WriteOptions:
    """``options`` if it is a :class:`WriteOptions`, the defaults for None; else an error
    at ``where`` (the argument, as ``write_store(options)``)."""
    if options is None:
        return WriteOptions()
    if isinstance(options, WriteOptions):
        return options
    raise UnsupportedTypeError(
        f"expected onnx_arrow.corpus.WriteOptions or None, got {type_name(options)}",
        where=where,
    )


def write_rows(
    cases: Iterable[Case],
    options: WriteOptions,
    progress: Callable[[Any], None] | None,
    jobs: int,
    write: Callable[[RowGroup], None],
    *,
    check: Callable[[RowGroup], None] | None = None,
    by_kind: bool = False,
    part_cases: int | None = None,
) -> dict[str, Any]:
    """Build the row groups of ``cases`` and ``write`` them, in order, on a thread of their
    own (the Parquet writer encodes and compresses without the GIL, while this thread
    builds the next ones)."""
    warnings: list[str] = []
    counts = {"cases": 0, "files": 0, "rows": 0, "row_groups": 0, "source_bytes": 0}
    report = progress or _ignore
    pieces = (
        _parallel(case_refs(cases), options, report, jobs)
        if jobs > 1
        else _sequential(cases, options, report)
    )
    groups = _row_groups(
        pieces,
        options.row_group_bytes,
        max_cases=options.row_group_cases,
        by_kind=by_kind,
        part_cases=part_cases,
    )
    with contextlib.closing(pieces):  # on an error, the workers stop here, not when collected
        background = BackgroundWriter(write)
        try:
            for group in groups:
                if check is not None:
                    check(group)
                background.write(group)
                warnings += group.warnings
                for said in contradictions(group.table):  # stored, flagged, and said
                    warn(said, DeclarationWarning, stacklevel=3)
                counts["cases"] += len(group.refs)
                counts["files"] += group.files
                counts["rows"] += group.table.num_rows
                counts["row_groups"] += 1
                counts["source_bytes"] += group.source_bytes
            background.finish()
        except BaseException:
            # the first error is the one to report; the file is closed only once the
            # writer thread has left it (a Ctrl-C in finish() included)
            background.abandon()
            raise
    return {**counts, "warnings": warnings}

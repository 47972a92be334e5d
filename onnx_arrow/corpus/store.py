"""Writing a corpus to one Parquet store and reading it back.

Writes are atomic: the store is written to a temporary file beside the target and
renamed into place only when complete, so an error or Ctrl-C leaves no truncated
store.  Cases are streamed: a row group holds whole cases, and only the cases of
one row group are in memory at a time.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import contextlib
import functools
import multiprocessing as mp
import os
import queue
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import onnx
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from onnx import ModelProto

import onnx_arrow
from onnx_arrow.core.model import arrow_type, build_array, file_kind, kind_of_type
from onnx_arrow.corpus.decode import case_data_sets, case_tolerance
from onnx_arrow.corpus.format import (
    DATA_COLUMNS,
    SCHEMA,
    TOLERANCE_COLUMNS,
    build_metadata,
    parse_metadata,
)
from onnx_arrow.corpus.options import LARGE_CASE_SHARE, WriteOptions
from onnx_arrow.corpus.rows import (
    VALUE_COLUMNS,
    RowBuilder,
    StoredFile,
    StoredValue,
    columns_of,
    files_from_batch,
    values_from_batch,
)
from onnx_arrow.corpus.sources import (
    Case,
    CaseRef,
    CorpusError,
    Tolerance,
    case_refs,
    declared_type,
)
from onnx_arrow.corpus.tree import (
    TreeWriter,
    atomic_file,
    current_umask,
    tree_writer,
    write_tree,
)
from onnx_arrow.errors import OnnxArrowError

__all__ = ["Store", "WriteOptions", "export_store", "write_dataset", "write_store"]

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


def _no_interrupt() -> None:
    """In a worker: Ctrl-C (sent to the whole process group) is the parent's to handle;
    it stops handing out work and waits for what runs, so a worker never dies mid-task.
    A Ctrl-C held since the fork (:func:`_held_interrupt`) is dropped here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def _held_interrupt() -> Iterator[None]:
    """Hold Ctrl-C while workers are forked: a child starts with it blocked, so it cannot
    die of one before :func:`_no_interrupt` runs (its pool would then never finish
    shutting down); in this process a Ctrl-C that came meanwhile is raised on the way out."""
    holds = (
        hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    )
    if holds:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if holds:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


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
    context = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    args = (options.keep_undecodable, options.row_group_bytes)
    # pyarrow imports pandas on its first conversion from Python; done here, before the
    # workers fork, it is done once rather than once per worker
    pa.array([], pa.int64())
    with cf.ProcessPoolExecutor(jobs, mp_context=context, initializer=_no_interrupt) as pool:
        pending: collections.deque[tuple[list[Case | CaseRef], cf.Future[_TaskResult]]] = (
            collections.deque()
        )
        tasks = _tasks(refs)
        try:
            while True:
                while len(pending) < 2 * jobs and (task := next(tasks, None)) is not None:
                    with _held_interrupt():  # the first submit forks the workers
                        pending.append((task, pool.submit(_build_task, task, *args)))
                if not pending:
                    return
                task, future = pending.popleft()
                payload, cases, warnings, done = future.result()
                if done < len(task):
                    rest = task[done:]
                    pending.appendleft((rest, pool.submit(_build_task, rest, *args)))
                batch = pa.ipc.open_stream(payload).read_next_batch()
                for ref in task[:done]:
                    progress(ref)
                yield _Piece(task[:done], batch, cases, warnings)
        except BaseException:
            for _, future in pending:
                future.cancel()
            # what was handed out is dropped, not waited for: the workers only compute
            pool.shutdown(wait=False, cancel_futures=True)
            raise


@dataclass
class _RowGroup:
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
) -> Iterator[_RowGroup]:
    """Row groups of whole cases, each closed once its cases hold ``budget`` source bytes
    or it holds ``max_cases`` cases; ``by_kind``, before a case of another kind; with
    ``part_cases``, after every ``part_cases`` cases (marked ``ends_part``).  A case of
    at least a :data:`LARGE_CASE_SHARE`-th of ``budget`` is a row group of its own, so
    that reading it reads no other case's pages.

    The cut falls at the same case however the pieces were built, so the store is
    the same whatever the number of jobs.
    """
    group = _RowGroup()
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
                group, parts, start = _RowGroup(), [], row
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
                group, parts, start = _RowGroup(), [], row
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


class _BackgroundWriter:
    """Writes row groups on a thread while the next one is built.

    Parquet encoding and compression release the GIL, so writing overlaps the
    decoding of the next row group.  At most one row group waits in the queue;
    the writer is used by one thread at a time (closed only once the thread ends).
    """

    def __init__(self, write: Callable[[_RowGroup], None]) -> None:
        self._write = write
        self._queue: queue.Queue[_RowGroup | None] = queue.Queue(maxsize=1)
        self._error: BaseException | None = None
        # set by the thread as its last act: Thread.join() cannot be trusted to wait, since
        # on Python 3.11 a join interrupted by Ctrl-C marks a running thread as stopped
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="onnx-arrow-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while (group := self._queue.get()) is not None:
                if self._error is None:  # after an error, drain the queue without writing
                    try:
                        self._write(group)
                    except BaseException as exc:  # handed to the building thread
                        self._error = exc
        finally:
            self._done.set()

    def write(self, group: _RowGroup) -> None:
        """Queue a row group; raises the error of an earlier write."""
        self._check()
        self._queue.put(group)

    def finish(self, *, check: bool = True) -> None:
        """Wait until every queued row group is written; with ``check``, raise the
        error of a write that failed.  Without, an error elsewhere stops the writing:
        the row groups still queued are not written."""
        if not check:
            self._error = self._error or KeyboardInterrupt()
        self._queue.put(None)
        while not self._done.is_set():
            try:
                self._done.wait()
            except KeyboardInterrupt:  # the writer must stop before the file is closed
                self._error = self._error or KeyboardInterrupt()
        if check:
            self._check()

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
    """
    options = options or WriteOptions()
    with atomic_file(out, what="the store") as tmp, _open_writer(tmp, options) as writer:

        def write(group: _RowGroup) -> None:
            writer.write_table(group.table, row_group_size=max(group.table.num_rows, 1))

        counts = _write_rows(cases, options, progress, jobs, write)
    return {**counts, "bytes": Path(out).stat().st_size}


#: The name of a dataset store's part files: ``part-00000.parquet`` ...
_PART_NAME: Final = re.compile(r"part-(\d+)\.parquet")


def write_dataset(
    cases: Iterable[Case],
    out: str | os.PathLike[str],
    *,
    options: WriteOptions | None = None,
    part_bytes: int | None = None,
    part_cases: int | None = None,
    by_kind: bool = False,
    append: bool = False,
    replace: bool = False,
    progress: Callable[[Any], None] | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """Write ``cases`` to the folder ``out`` as a dataset store: Parquet part files of the
    one-file store's schema and format, read by :class:`Store` and by any engine as one.

    The parts are written to a hidden folder first and moved into place when all are
    complete: an error or Ctrl-C leaves ``out`` as it was.

    Parameters
    ----------
    part_bytes, part_cases
        A part is closed once its cases' files hold ``part_bytes`` bytes, or at
        ``part_cases`` cases; a part holds whole row groups (None: no limit).
    by_kind
        Parts in a folder per kind of case (``out/node/part-00000.parquet``); the
        folders are named by the kind only, as the ``kind`` column is in the files
        already.
    append
        Add the cases to the existing dataset store ``out`` as new parts, without
        rewriting the others; a case the store holds already is refused.
    replace
        Replace an existing ``out``; without ``append`` or ``replace``, ``out`` must
        be missing or an empty folder.
    options, progress, jobs
        As for :func:`write_store`.

    Returns
    -------
    dict
        The summary of :func:`write_store`, with ``parts``: the part files written,
        relative to ``out``.
    """
    options = options or WriteOptions()
    target = Path(out)
    existing = _dataset_target(target, append=append, replace=replace)
    number = 0
    held: set[str] = set()
    if existing is not None:
        number = 1 + max(
            (int(m.group(1)) for p in existing.parts if (m := _PART_NAME.fullmatch(p.name))),
            default=-1,
        )
        held = set(existing.cases())
    parent = target if append else target.parent
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=parent))
    try:
        parts = _Parts(staging, options, number, part_bytes, by_kind)

        def check(group: _RowGroup) -> None:
            for ref in group.refs:
                if ref.name in held:
                    raise CorpusError(
                        f"the store holds case {ref.name!r} already; import the cases it does "
                        "not hold, or import into a new store",
                        where=str(target),
                    )

        try:
            counts = _write_rows(
                cases, options, progress, jobs, parts.write, check=check, by_kind=by_kind,
                part_cases=part_cases,
            )  # fmt: skip
        finally:
            parts.close()
        written = _publish(staging, target, parts.written, append=append)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    size = sum((target / p).stat().st_size for p in written)
    return {**counts, "bytes": size, "parts": written}


def _dataset_target(target: Path, *, append: bool, replace: bool) -> Store | None:
    """Check where a dataset is written, before any work; the store appended to."""
    where = str(target)
    if not target.parent.is_dir():
        raise CorpusError("its folder does not exist; create it first", where=where)
    if append:
        if not target.is_dir():
            raise CorpusError(
                "is not a dataset store's folder to add parts to; import without appending "
                "to create it",
                where=where,
            )
        return Store(target)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise CorpusError(
            "exists and is not a folder; a dataset store is a folder of part files",
            where=where,
        )
    if target.is_dir() and any(target.iterdir()):
        if not replace:
            raise CorpusError(
                "is a folder that is not empty; add to a dataset store with append (import "
                "--append), or replace it (--force)",
                where=where,
            )
        # replacing deletes the folder: only a dataset store's, nothing else in it
        parts = set(Store(target).parts)
        other = next(
            (p for p in sorted(target.rglob("*")) if not p.is_dir() and p not in parts), None
        )
        if other is not None:
            raise CorpusError(
                f"holds {other.relative_to(target)}, which is not a part of a store; replacing "
                "would delete it: remove it, or write the store to another folder",
                where=where,
            )
    return None


class _Parts:
    """The part files of a dataset being written (on the writer thread): a new part once
    the current one is full, or for a case of another kind."""

    def __init__(
        self,
        folder: Path,
        options: WriteOptions,
        number: int,
        part_bytes: int | None,
        by_kind: bool,
    ) -> None:
        self._folder, self._options, self._number = folder, options, number
        self._part_bytes, self._by_kind = part_bytes, by_kind
        self._writer: pq.ParquetWriter | None = None
        self._kind: str | None = None
        self._bytes = 0
        self._ended = False
        #: The parts written, relative to the dataset's folder.
        self.written: list[str] = []

    def write(self, group: _RowGroup) -> None:
        full = self._part_bytes is not None and self._bytes >= self._part_bytes
        if (
            self._writer is None
            or self._ended
            or full
            or (self._by_kind and group.kind != self._kind)
        ):
            self._open(group.kind)
        assert self._writer is not None
        self._writer.write_table(group.table, row_group_size=max(group.table.num_rows, 1))
        self._bytes += group.source_bytes
        self._ended = group.ends_part

    def _open(self, kind: str | None) -> None:
        self.close()
        name = f"part-{self._number:05d}.parquet"
        relative = f"{_kind_folder(kind)}/{name}" if self._by_kind and kind else name
        (self._folder / relative).parent.mkdir(exist_ok=True)
        self._writer = _open_writer(str(self._folder / relative), self._options)
        self.written.append(relative)
        self._number += 1
        self._kind, self._bytes = kind, 0

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def _kind_folder(kind: str) -> str:
    """A kind as a folder name: kinds are corpus folder names, but checked again."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", kind):
        raise CorpusError(
            f"kind {kind!r} is not a plain folder name; write the dataset without by_kind",
            where=kind,
        )
    return kind


def _publish(staging: Path, target: Path, parts: list[str], *, append: bool) -> list[str]:
    """Move the parts written in ``staging`` into ``target``, all or none."""
    if not append:
        os.chmod(staging, 0o777 & ~current_umask())  # mkdtemp makes it private
        if target.is_dir():  # empty, or replaced
            old = Path(
                tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent)
            )
            os.rename(target, old / "store")
            try:
                os.rename(staging, target)
            except BaseException:
                os.rename(old / "store", target)
                raise
            finally:
                shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(staging, target)
        return parts
    moved: list[str] = []
    try:
        for part in parts:
            (target / part).parent.mkdir(exist_ok=True)
            if (target / part).exists():
                raise CorpusError("exists already; the store changed while writing", where=part)
            os.rename(staging / part, target / part)
            moved.append(part)
    except BaseException:
        for part in moved:
            os.rename(target / part, staging / part)
        raise
    return parts


def _write_rows(
    cases: Iterable[Case],
    options: WriteOptions,
    progress: Callable[[Any], None] | None,
    jobs: int,
    write: Callable[[_RowGroup], None],
    *,
    check: Callable[[_RowGroup], None] | None = None,
    by_kind: bool = False,
    part_cases: int | None = None,
) -> dict[str, Any]:
    """Build the row groups of ``cases`` and ``write`` each on a thread of its own."""
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
        background = _BackgroundWriter(write)
        try:
            for group in groups:
                if check is not None:
                    check(group)
                background.write(group)
                warnings += group.warnings
                counts["cases"] += len(group.refs)
                counts["files"] += group.files
                counts["rows"] += group.table.num_rows
                counts["row_groups"] += 1
                counts["source_bytes"] += group.source_bytes
        except BaseException:
            background.finish(check=False)  # the first error is the one to report
            raise
        background.finish()
    return {**counts, "warnings": warnings}


#: Float data columns are written byte stream split: each byte of the floats in a stream of
#: its own, which zstd compresses better, and faster, than the floats as they are.
_FLOAT_ENCODING: Final = {
    f"{name}.list.element": "BYTE_STREAM_SPLIT"
    for name in DATA_COLUMNS
    if pa.types.is_floating(SCHEMA.field(name).type.value_type)
}


def _leaf_paths(name: str, type_: pa.DataType) -> list[str]:
    """The Parquet column paths of an Arrow field: ``data_float.list.element`` ... (Parquet's
    compliant nesting, which pyarrow writes, names every list item ``element``)."""
    if pa.types.is_list(type_) or pa.types.is_fixed_size_list(type_):
        return _leaf_paths(f"{name}.list.element", type_.value_type)
    if pa.types.is_struct(type_):
        return [p for f in type_ for p in _leaf_paths(f"{name}.{f.name}", f.type)]
    return [name]


#: Every Parquet column of the store, in schema order.
_LEAVES: Final = tuple(p for f in SCHEMA for p in _leaf_paths(f.name, f.type))


def _levels(options: WriteOptions) -> int | dict[str, int]:
    """The zstd level of each Parquet column (a level for all when they are the same)."""
    floats = options.float_compression_level
    if floats is None or floats == options.compression_level:
        return options.compression_level
    return {p: floats if p in _FLOAT_ENCODING else options.compression_level for p in _LEAVES}


def _open_writer(path: str, options: WriteOptions) -> pq.ParquetWriter:
    schema = SCHEMA.with_metadata(
        {
            "onnx_arrow": build_metadata(
                created_by=f"onnx-arrow {onnx_arrow.__version__}",
                onnx_version=onnx.__version__,
            )
        }
    )
    return pq.ParquetWriter(
        path,
        schema,
        compression=options.compression,
        compression_level=_levels(options),
        # dictionaries of tensor data defeat zstd: repeated tensors compress to nothing
        # only while their bytes stay in one long page
        use_dictionary=[name for name in SCHEMA.names if name not in DATA_COLUMNS],
        column_encoding=_FLOAT_ENCODING,
        data_page_size=64 << 20,
        write_statistics=["test_case", "kind", "path", "role", "dtype", "io"],
        store_schema=True,
    )


#: The columns that rebuild files: the values' columns and the bytes of the others.
_FILE_COLUMNS: Final = (*VALUE_COLUMNS, "content", "digest")

#: A case whose rows are not all together (a store onnx-arrow did not write).
_SCATTERED: Final = (-1, -1)


def _runs(cases: list[str | None]) -> dict[str, tuple[int, int]]:
    """Where each case's rows are: ``(start, stop)``, or :data:`_SCATTERED`."""
    runs: dict[str, tuple[int, int]] = {}
    start = 0
    for i in range(1, len(cases) + 1):
        if i == len(cases) or cases[i] != cases[start]:
            name = cases[start]
            if name is not None:
                runs[name] = _SCATTERED if name in runs else (start, i)
            start = i
    return runs


@dataclass
class _ReadGroups:
    """Row groups read together: their rows, where each case's rows are, and their value
    columns converted (on first use) for all their cases."""

    groups: tuple[int, ...]
    table: pa.Table
    where: str

    @functools.cached_property
    def runs(self) -> dict[str, tuple[int, int]]:
        return _runs(self.table.column("test_case").to_pylist())

    @functools.cached_property
    def columns(self) -> Any:
        batch = self.table.select(list(VALUE_COLUMNS)).combine_chunks().to_batches()[0]
        return columns_of(batch, where=self.where)


@dataclass(frozen=True)
class _Part:
    """One Parquet file of a store, its footer read and checked."""

    path: Path
    file: pq.ParquetFile
    metadata: dict[str, Any]

    @property
    def groups(self) -> int:
        return int(self.file.num_row_groups)

    def read(
        self,
        groups: Sequence[int] | None,
        columns: Sequence[str] | None,
        roles: Sequence[str] | None = None,
    ) -> pa.Table:
        """Row groups (all when None), only ``columns`` if given, only rows of ``roles`` if
        given (all row groups); a page that does not read is a located error."""
        columns = None if columns is None else list(columns)
        try:
            if roles is not None:
                filters = [("role", "in", list(roles))]
                return pq.read_table(self.path, columns=columns, filters=filters)
            if groups is None:
                return self.file.read(columns=columns)
            return self.file.read_row_groups(list(groups), columns=columns)
        except (OSError, pa.ArrowException) as exc:
            what = "the store" if groups is None else "row group " + ", ".join(map(str, groups))
            raise CorpusError(
                f"{what} does not read ({exc}); the file is damaged: import the corpus again",
                where=str(self.path),
            ) from None


def _open_part(path: Path) -> _Part:
    where = str(path)
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise CorpusError(f"cannot open: {exc.strerror}", where=where) from None
    if not stat.S_ISREG(mode):
        # opening a FIFO or a device to read it would block or read forever
        raise CorpusError(
            f"{file_kind(mode)}, not a regular file; pass a store's .parquet file or a "
            "dataset store's folder",
            where=where,
        )
    try:
        file = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise CorpusError(f"cannot read as Parquet ({exc})", where=where) from None
    schema = file.schema_arrow
    metadata = parse_metadata(schema.metadata, where=where)
    if not schema.remove_metadata().equals(SCHEMA):
        raise CorpusError(
            "the columns differ from the store format's; it was not written by this "
            "version of onnx-arrow, or was changed since",
            where=where,
        )
    return _Part(path, file, metadata)


def _part_paths(path: Path) -> list[Path]:
    """A store's files: the file itself, or the parts under a dataset store's folder (see
    :class:`Store`); symlinks are refused, hidden and ``_`` files are not parts."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        raise CorpusError(f"cannot open: {exc.strerror}", where=str(path)) from None
    if not stat.S_ISDIR(mode):
        return [path]
    found: list[tuple[int, str, Path]] = []
    for folder, subfolders, names in os.walk(path):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith((".", "_")))
        linked = [d for d in subfolders if Path(folder, d).is_symlink()]
        if linked:
            raise CorpusError(
                "is a symlink; the parts of a dataset store are files inside its folder",
                where=str(Path(folder, linked[0])),
            )
        for name in names:
            if name.startswith((".", "_")) or not name.endswith(".parquet"):
                continue
            part = Path(folder, name)
            if part.is_symlink():
                raise CorpusError(
                    "is a symlink; the parts of a dataset store are files inside its folder",
                    where=str(part),
                )
            match = _PART_NAME.fullmatch(name)
            number = int(match.group(1)) if match else sys.maxsize
            found.append((number, part.relative_to(path).as_posix(), part))
    if not found:
        raise CorpusError(
            "holds no .parquet part; pass a store's .parquet file or a dataset store's folder",
            where=str(path),
        )
    return [part for _, _, part in sorted(found)]


class Store:
    """An onnx-arrow corpus store, validated when opened: one Parquet file, or a dataset
    of part files.

    Parameters
    ----------
    path
        The store's Parquet file; a dataset store's folder (every ``.parquet`` file
        under it, not hidden, not starting with ``_``, is a part: ``part-N.parquet``
        files in the order of N, then any others by path); or a list of Parquet files,
        read as the parts of one store in that order.

    Raises
    ------
    CorpusError
        If a part is not a store: missing or foreign metadata, an unknown format
        version, a schema that differs from the format's; if a folder holds no part,
        or a part is a symlink.  The error names the part.
    """

    def __init__(self, path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> None:
        if isinstance(path, str | os.PathLike):
            self.path = Path(path)
            paths = _part_paths(self.path)
        else:
            paths = [Path(p) for p in path]
            if not paths:
                raise CorpusError("no store files given; pass at least one .parquet file")
            self.path = paths[0] if len(paths) == 1 else Path(os.path.commonpath(paths))
        self._last_read: _ReadGroups | None = None
        self._parts = [_open_part(p) for p in paths]
        #: The store's metadata (its first part's; every part has the same format version).
        self.metadata = self._parts[0].metadata
        #: Every row group of the store: (part, row group in the part).
        self._groups = [(k, i) for k, part in enumerate(self._parts) for i in range(part.groups)]

    @property
    def parts(self) -> tuple[Path, ...]:
        """The store's Parquet files: one, or a dataset's parts in store order."""
        return tuple(part.path for part in self._parts)

    @property
    def nbytes(self) -> int:
        """The size of the store's files, in bytes."""
        return sum(part.path.stat().st_size for part in self._parts)

    @property
    def num_row_groups(self) -> int:
        """Row groups in the store, over all its parts; each holds whole cases."""
        return len(self._groups)

    def row_groups(self, columns: Sequence[str] | None = None) -> Iterator[pa.RecordBatch]:
        """The row groups (only ``columns``, if given), one at a time, fully validated."""
        for i in range(self.num_row_groups):
            yield from self._row_group(i, columns)

    def _row_group(self, i: int, columns: Sequence[str] | None) -> Iterator[pa.RecordBatch]:
        k, local = self._groups[i]
        part = self._parts[k]
        table = part.read([local], columns)
        return self._batches(table, f"row group {local}", part.path)

    def read_columns(
        self, columns: Sequence[str], *, roles: Sequence[str] | None = None
    ) -> pa.Table:
        """Some columns of every row (of these ``roles`` only, if given), validated, as one
        table: all parts, in store order.  Row groups without such a role are skipped."""
        tables = [part.read(None, columns, roles) for part in self._parts]
        for part, table in zip(self._parts, tables, strict=True):
            self._validate(table, "the columns read", part.path)
        return pa.concat_tables(tables)

    def model_batches(self) -> Iterator[tuple[Path, pa.RecordBatch]]:
        """The model rows (``test_case``, ``path``, ``role``, ``content``), a row group at
        a time, each with the part it is in."""
        columns = ["test_case", "path", "role", "content"]
        for i in range(self.num_row_groups):
            k, _ = self._groups[i]
            for batch in self._row_group(i, columns):
                yield self._parts[k].path, batch.filter(pc.equal(batch.column("role"), "model"))

    def _batches(self, table: pa.Table, what: str, path: Path) -> Iterator[pa.RecordBatch]:
        """The rows as one batch (a value never straddles two batches), fully validated: a
        store may come from anyone."""
        self._validate(table, what, path)
        yield from table.combine_chunks().to_batches()

    def _validate(self, table: pa.Table, what: str, path: Path) -> None:
        """Full Arrow validation of rows read from a part."""
        for batch in table.to_batches():
            try:
                batch.validate(full=True)
            except pa.ArrowInvalid as exc:
                raise CorpusError(
                    f"{what} is invalid Arrow data ({exc}); the store is damaged: "
                    "import the corpus again",
                    where=str(path),
                ) from None

    def cases(self) -> list[str]:
        """The names of the cases, in store order.

        Raises
        ------
        CorpusError
            If two parts hold rows of the same case.
        """
        names: list[str] = []
        seen: dict[str, Path] = {}
        for part in self._parts:
            column = part.read(None, ["test_case"]).column("test_case")
            for name in pc.unique(column).to_pylist():
                if name in seen:
                    raise CorpusError(
                        f"case {name!r} is in two parts of the store, {seen[name]} and this "
                        "one; remove the part added twice",
                        where=str(part.path),
                    )
                seen[name] = part.path
                names.append(name)
        return names

    def read_case(self, case: str, columns: Sequence[str] | None = None) -> pa.Table:
        """The rows of one case, fully validated; row groups that cannot hold it are not
        read."""
        read, span = self._locate(case)
        table = read.table
        if span is _SCATTERED:  # not written by onnx-arrow, which keeps a case's rows together
            rows = table.filter(pc.equal(table.column("test_case"), case))
        else:
            rows = table.slice(span[0], span[1] - span[0])
        return rows.select(list(columns)) if columns else rows

    def _locate(self, case: str) -> tuple[_ReadGroups, tuple[int, int]]:
        """The row groups that hold ``case`` (read), and where its rows are in them."""
        groups = tuple(i for i in range(self.num_row_groups) if self._may_hold(i, case))
        read = self._read_groups(groups) if groups else None
        span = None if read is None else read.runs.get(case)
        if read is None or span is None:
            raise CorpusError(f"no case {case!r} in the store", where=str(self.path))
        if len({self._groups[i][0] for i in groups}) > 1:
            self._check_one_part(case, groups)
        return read, span

    def _check_one_part(self, case: str, groups: tuple[int, ...]) -> None:
        """Refuse a case with rows in two parts (a part added twice): its values would be
        read twice over."""
        holding = []
        for k in sorted({self._groups[i][0] for i in groups}):
            local = [self._groups[i][1] for i in groups if self._groups[i][0] == k]
            names = self._parts[k].read(local, ["test_case"]).column("test_case")
            if pc.any(pc.equal(names, case)).as_py():
                holding.append(str(self._parts[k].path))
        if len(holding) > 1:
            raise CorpusError(
                f"case {case!r} is in two parts of the store, {holding[0]} and {holding[1]}; "
                "remove the part added twice",
                where=str(self.path),
            )

    def _read_groups(self, groups: tuple[int, ...]) -> _ReadGroups:
        """Row groups, read and validated once for consecutive calls on the cases they
        hold."""
        if self._last_read is None or self._last_read.groups != groups:
            by_part: dict[int, list[int]] = {}
            for i in groups:
                k, local = self._groups[i]
                by_part.setdefault(k, []).append(local)
            tables = []
            for k, local_groups in by_part.items():
                part = self._parts[k]
                table = part.read(local_groups, None)
                self._validate(table, "row group " + ", ".join(map(str, local_groups)), part.path)
                tables.append(table)
            where = str(self._parts[next(iter(by_part))].path)
            self._last_read = _ReadGroups(groups, pa.concat_tables(tables), where)
        return self._last_read

    def _case_columns(self, case: str) -> tuple[Any, tuple[int, int] | None]:
        """The value columns of the row groups that hold ``case``, converted once for all
        their cases, and where its rows are in them; None where they are not together."""
        read, span = self._locate(case)
        return (None, None) if span is _SCATTERED else (read.columns, span)

    def _may_hold(self, group: int, case: str) -> bool:
        span = self._case_spans[group]
        return span is None or span[0] <= case <= span[1]

    @functools.cached_property
    def _case_spans(self) -> list[tuple[str, str] | None]:
        """Per row group, the smallest and largest case in it, if its statistics say."""
        spans: list[tuple[str, str] | None] = []
        for k, local in self._groups:
            stats = self._parts[k].file.metadata.row_group(local).column(0).statistics
            has = stats is not None and stats.has_min_max
            spans.append((stats.min, stats.max) if has else None)
        return spans

    def files(self, row_group: int | None = None) -> Iterator[StoredFile]:
        """Every file of the corpus (or of one row group), rebuilt byte for byte, in store
        order."""
        groups = range(self.num_row_groups)
        if row_group is not None:
            if row_group not in groups:
                raise CorpusError(
                    f"no row group {row_group}: the store has {len(groups)}, numbered from 0",
                    where=str(self.path),
                )
            groups = range(row_group, row_group + 1)
        for i in groups:
            k, local = self._groups[i]
            for batch in self._row_group(i, _FILE_COLUMNS):
                where = f"{self._parts[k].path}: row group {local}"
                yield from files_from_batch(batch, where=where)

    def values(self, case: str | None = None) -> Iterator[StoredValue]:
        """Every value of the store (or of one case), decoded straight from its columns.

        ``StoredValue.to_numpy()`` gives what ``onnx.numpy_helper`` gives for the
        file, without rebuilding it; only the columns values need are read.
        """
        if case is not None:
            cols, span = self._case_columns(case)
            if span is not None:  # the case's rows in its row groups, converted once
                yield from values_from_batch(cols, where=str(self.path), rows=range(*span))
                return
            table = self.read_case(case, VALUE_COLUMNS).combine_chunks()
            for batch in table.to_batches():
                yield from values_from_batch(batch, where=str(self.path))
            return
        for i in range(self.num_row_groups):
            k, local = self._groups[i]
            for batch in self._row_group(i, VALUE_COLUMNS):
                where = f"{self._parts[k].path}: row group {local}"
                yield from values_from_batch(batch, where=where)

    def value(self, path: str) -> StoredValue:
        """The value of one value file, by its path (a catalog row's ``path``).

        Only the rows of the case the path belongs to are read.

        Raises
        ------
        CorpusError
            If the store has no value file at ``path`` (no such file, or a file kept as
            bytes: :meth:`case_files` gives those).
        """
        cases = [c for c in self.cases() if path.startswith(f"{c}/") or not c]
        for case in sorted(cases, key=len, reverse=True):  # the innermost case folder
            for value in self.values(case):
                if value.path == path:
                    return value
        raise CorpusError(
            "no value file of this path in the store (a path of a value the store decoded, "
            "as the catalog lists them; case_files gives the files kept as bytes)",
            where=f"{self.path}: {path}",
        )

    def case_files(self, case: str) -> list[StoredFile]:
        """The files of one case, rebuilt byte for byte."""
        table = self.read_case(case, _FILE_COLUMNS).combine_chunks()
        where = f"{self.path}: {case}"
        return [f for batch in table.to_batches() for f in files_from_batch(batch, where=where)]

    def tolerance(self, case: str) -> Tolerance | None:
        """The case's own tolerances (``rtol``, ``atol``) as its source stated them (onnx's
        ``TestCase``, the case folder's ``data.json``); None when it stated none."""
        rows = self.read_case(case, list(TOLERANCE_COLUMNS))
        return case_tolerance(rows, where=f"{self.path}: {case}")

    def model(self, case: str) -> ModelProto:
        """The model of a case."""
        table = self.read_case(case, ["path", "role", "content"])
        roles = table.column("role").to_pylist()
        if "model" not in roles:
            raise CorpusError("the case has no model", where=f"{self.path}: {case}")
        row = roles.index("model")
        try:
            return ModelProto.FromString(table.column("content")[row].as_py())
        except Exception as exc:  # protobuf's DecodeError
            where = f"{self.path}: {case}: {table.column('path')[row].as_py()}"
            raise CorpusError(f"the model does not parse ({exc})", where=where) from None

    def case_table(self, case: str) -> pa.Table:
        """A case as an Arrow table: a row per data set, a column per model input and output.

        Columns are typed by what the model declares (fixed-shape tensors, lists,
        maps, nullable columns), named as the graph names them; each field's
        metadata says ``io`` and ``index``.
        """
        model = self.model(case)
        slots: dict[tuple[str, int], dict[int, StoredValue]] = {}
        for value in self.values(case):
            if value.data_set is not None:
                slots.setdefault((value.io, value.index), {})[value.data_set] = value
        data_sets = sorted({n for values in slots.values() for n in values})
        columns, fields = [], []
        for io, index in sorted(slots, key=lambda slot: (slot[0] != "input", slot[1])):
            values = slots[(io, index)]
            type_proto = declared_type(model, io, index)
            missing = [n for n in data_sets if n not in values]
            where = f"{self.path}: {case}: {io} {index}"
            if missing or type_proto is None:
                raise CorpusError(
                    f"missing from data sets {missing}" if missing else "the model declares none",
                    where=where,
                )
            try:
                column = build_array(
                    [values[n].node for n in data_sets],
                    kind_of_type(type_proto),
                    arrow_type(type_proto),
                )
            except OnnxArrowError as exc:
                raise exc.at(where) from None
            graph_values = model.graph.input if io == "input" else model.graph.output
            columns.append(column)
            fields.append(
                pa.field(
                    graph_values[index].name, column.type, metadata={"io": io, "index": str(index)}
                )
            )
        return pa.Table.from_arrays(columns, schema=pa.schema(fields))

    def case_arrays(self, case: str) -> list[dict[str, dict[str, Any]]]:
        """Per data set, the inputs and outputs as numpy values, ready to feed a runtime.

        Each data set is ``{"inputs": {name: value}, "outputs": {name: value}}``,
        named as the model's graph names them: tensors as ndarrays, sequences as
        lists, optionals as a value or None, maps as dicts.
        """
        return case_data_sets(self.model(case), self.values(case))

    def export(self, dest: str | os.PathLike[str], *, force: bool = False) -> dict[str, int]:
        """Write the corpus back as a folder tree, byte for byte (see :func:`export_store`)."""
        return export_store(self, dest, force=force)


def export_store(
    store: Store | str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    force: bool = False,
    progress: Callable[[Any], None] | None = None,
    jobs: int = 1,
) -> dict[str, int]:
    """Write every file of a store into the folder ``dest``, byte for byte.

    ``dest`` must be missing or empty, unless ``force``: then files are written
    over those with the same path.  Without ``force`` the tree is written to a
    temporary folder beside ``dest`` and renamed into place when complete (see
    :func:`onnx_arrow.corpus.tree.tree_writer`).  ``jobs`` processes write the row
    groups in parallel.  ``progress`` is called with each file written (it has a
    ``case`` and a ``path``); returns how many files and bytes were written.
    """
    store = store if isinstance(store, Store) else Store(store)
    where = str(store.path)
    groups = store.num_row_groups
    if jobs <= 1 or groups <= 1:
        return write_tree(store.files(), dest, force=force, progress=progress, where=where)
    counts = {"files": 0, "bytes": 0}
    context = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    stop = context.Event()  # set on an error or Ctrl-C: the workers stop between two files
    with (
        tree_writer(dest, force=force, where=where) as writer,
        cf.ProcessPoolExecutor(
            min(jobs, groups), mp_context=context, initializer=_export_worker, initargs=(stop,)
        ) as pool,
    ):
        parts = tuple(map(str, store.parts))
        with _held_interrupt():  # the first submit forks the workers
            futures = [pool.submit(_export_row_group, parts, i, writer) for i in range(groups)]
        try:
            for future in futures:  # in store order
                for written in future.result():
                    counts["files"] += 1
                    counts["bytes"] += written.size
                    if progress is not None:
                        progress(written)
        except BaseException:
            stop.set()
            for future in futures:
                future.cancel()
            raise
    return counts


@dataclass(frozen=True)
class _Written:
    """A file an export worker wrote."""

    case: str
    path: str
    size: int


#: In an export worker: the event that says stop (set by the parent on an error or Ctrl-C).
_STOP: list[Any] = []


def _export_worker(stop: Any) -> None:
    _no_interrupt()
    _STOP[:] = [stop]


def _export_row_group(parts: tuple[str, ...], group: int, writer: TreeWriter) -> list[_Written]:
    """Write the files of one row group of the store of ``parts`` (in a worker process)."""
    written = []
    for f in _worker_store(parts).files(row_group=group):
        if _STOP and _STOP[0].is_set():
            raise KeyboardInterrupt  # the export stopped; the file being written is whole
        written.append(_Written(f.case, f.path, writer.write(f)))
    return written


@functools.lru_cache(maxsize=1)
def _worker_store(parts: tuple[str, ...]) -> Store:
    """The store a worker reads, opened (its footers read and checked) once."""
    return Store(list(parts))

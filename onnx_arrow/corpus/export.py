"""Exporting a store: every file written back into a folder tree, byte for byte, by this
process or by worker processes that write a row group each."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from onnx_arrow.corpus.arguments import check_path
from onnx_arrow.corpus.options import check_callback, check_count
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.corpus.tree import (
    TreeWriter,
    check_tree_paths,
    name_max,
    tree_writer,
    write_tree,
)

__all__ = ["export_store"]

#: Seconds the workers of a stopped export may take to complete the file each is writing
#: (a file is written whole or not at all) before they are killed.
_STOP_WAIT: Final = 30.0


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
    ``case`` and a ``path``); returns how many files and bytes were written.  An
    argument of the wrong kind is refused before anything is written, with an
    :class:`~onnx_arrow.errors.UnsupportedTypeError` naming it (``jobs`` under 1 with a
    :class:`~onnx_arrow.errors.CorpusError`); so are the store's
    paths if they do not form a tree of files ``dest`` can take (see
    :func:`onnx_arrow.corpus.tree.check_tree_paths`: a path twice, with ``force`` too, or
    a name too long), with a :class:`~onnx_arrow.errors.CorpusError`.  What the file
    system refuses while writing (a full disk) is an error naming the file in ``dest``.
    """
    check_path(dest, where="export_store(dest)")
    store = as_store(store, where="export_store(store)")
    progress = check_callback(progress, where="export_store(progress)")
    jobs = check_count(jobs, where="export_store(jobs)")
    where = str(store.path)
    check_tree_paths(store.file_paths(), where=where, longest=name_max(dest))
    groups = store.num_row_groups
    if jobs <= 1 or groups <= 1:
        return write_tree(store.files(), dest, force=force, progress=progress, where=where)
    # imported here: an export in this process imports no multiprocessing
    from onnx_arrow.pool import Pool, process_context

    counts = {"files": 0, "bytes": 0}
    stop = process_context().Event()  # set on an error or Ctrl-C: workers stop between files
    with (
        tree_writer(dest, force=force, where=where) as writer,
        Pool(
            min(jobs, groups), initializer=_export_worker, initargs=(stop,), grace=_STOP_WAIT
        ) as pool,
    ):
        parts = tuple(map(str, store.parts))
        try:
            tasks = [pool.submit(_export_row_group, parts, i, writer) for i in range(groups)]
            for task in tasks:  # in store order
                for written in pool.result(task):
                    counts["files"] += 1
                    counts["bytes"] += written.size
                    if progress is not None:
                        progress(written)
        except BaseException:
            stop.set()  # the pool then waits for the files being written, up to _STOP_WAIT
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
    _STOP[:] = [stop]


def _export_row_group(parts: tuple[str, ...], group: int, writer: TreeWriter) -> list[_Written]:
    """Write the files of one row group of the store of ``parts`` (in a worker process)."""
    written = []
    try:
        for f in _worker_store(parts).files(row_group=group):
            if _STOP and _STOP[0].is_set():
                raise KeyboardInterrupt  # the export stopped; the file being written is whole
            written.append(_Written(f.case, f.path, writer.write(f)))
    finally:
        writer.close()  # the folders it opened in this process
    return written


@functools.lru_cache(maxsize=1)
def _worker_store(parts: tuple[str, ...]) -> Store:
    """The store a worker reads, opened (its footers read and checked) once."""
    return Store(list(parts))

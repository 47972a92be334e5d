"""Dataset stores: a folder of Parquet part files written as one store, staged in a hidden
folder and moved into place all at once; parts cut by size, case count or kind, and
parts appended to an existing dataset store without rewriting the others.

A store's parts are laid out one of two ways: all at its root (``part-00000.parquet``),
or each in the folder of its kind (``node/part-00000.parquet``).  Parts appended follow
the layout of the store they are added to.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from onnx_arrow.corpus.arguments import check_path, type_name
from onnx_arrow.corpus.options import WriteOptions, check_callback, check_count
from onnx_arrow.corpus.parquet import StoreFile
from onnx_arrow.corpus.parts import PART_NAME
from onnx_arrow.corpus.sources import Case, CorpusError, checked_cases
from onnx_arrow.corpus.store import Store
from onnx_arrow.corpus.tree import current_umask, file_write_error
from onnx_arrow.corpus.write import RowGroup, check_options, write_rows
from onnx_arrow.errors import UnsupportedTypeError

__all__ = ["write_dataset"]


def write_dataset(
    cases: Iterable[Case],
    out: str | os.PathLike[str],
    *,
    options: WriteOptions | None = None,
    part_bytes: int | None = None,
    part_cases: int | None = None,
    by_kind: bool | None = None,
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
        already.  None (the default): as the store appended to lays out its parts, else
        not.
    append
        Add the cases to the existing dataset store ``out`` as new parts, without
        rewriting the others, laid out as its parts are (see ``by_kind``); a case the
        store holds already is refused, and so is a ``by_kind`` that is not the store's
        layout, or None for a store whose parts are laid out both ways.
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

    Raises
    ------
    UnsupportedTypeError
        If an argument is of the wrong kind, before anything is written; or a case is
        not a :class:`Case` or :class:`CaseRef`, when it is read (its position is named).
    CorpusError
        If ``jobs``, ``part_bytes`` or ``part_cases`` is under 1, before anything is
        written.  If the file system refuses a part (a full disk), an error at ``out``
        (an ``OSError`` too, of the same ``errno``), which is left as it was.
    """
    cases = checked_cases(cases, where="write_dataset(cases)")
    target = Path(check_path(out, where="write_dataset(out)"))
    options = check_options(options, where="write_dataset(options)")
    progress = check_callback(progress, where="write_dataset(progress)")
    jobs = check_count(jobs, where="write_dataset(jobs)")
    part_bytes = check_count(part_bytes, where="write_dataset(part_bytes)", optional=True)
    part_cases = check_count(part_cases, where="write_dataset(part_cases)", optional=True)
    if by_kind is not None and not isinstance(by_kind, bool):
        raise UnsupportedTypeError(
            f"expected True, False or None, got {type_name(by_kind)}",
            where="write_dataset(by_kind)",
        )
    existing = _dataset_target(target, append=append, replace=replace)
    number = 0
    held: set[str] = set()
    if existing is not None:
        by_kind = _appended_layout(existing, target, by_kind)
        number = 1 + max(
            (int(m.group(1)) for p in existing.parts if (m := PART_NAME.fullmatch(p.name))),
            default=-1,
        )
        held = set(existing.cases())
    by_kind = bool(by_kind)
    parent = target if append else target.parent
    failed = "writing the store failed: "
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=parent))
    except OSError as exc:
        raise file_write_error(exc, where=str(target), what=failed) from None
    try:
        parts = _Parts(staging, options, number, part_bytes, by_kind, where=str(target))

        def check(group: RowGroup) -> None:
            for ref in group.refs:
                if ref.name in held:
                    raise CorpusError(
                        f"the store holds case {ref.name!r} already; import the cases it does "
                        "not hold, or import into a new store",
                        where=str(target),
                    )

        try:
            counts = write_rows(
                cases, options, progress, jobs, parts.write, check=check, by_kind=by_kind,
                part_cases=part_cases,
            )  # fmt: skip
        except BaseException:
            with contextlib.suppress(Exception):  # the first error is the one to report
                parts.close()
            raise
        parts.close()
        try:
            written = _publish(staging, target, parts.written, append=append)
        except OSError as exc:
            raise file_write_error(exc, where=str(target), what=failed) from None
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


def _appended_layout(store: Store, target: Path, by_kind: bool | None) -> bool:
    """Whether parts appended to ``store`` (at ``target``) go in a folder per kind: as its
    parts are laid out; ``by_kind`` given must agree."""
    parts = [p.relative_to(target).as_posix() for p in store.parts]
    at_root = next((p for p in parts if "/" not in p), None)
    in_folder = next((p for p in parts if p.count("/") == 1), None)
    deeper = next((p for p in parts if p.count("/") > 1), None)
    where = str(target)
    if deeper is not None or (at_root is not None and in_folder is not None):
        if by_kind is not None:
            return by_kind
        shown = ", ".join(p for p in (at_root, in_folder, deeper) if p is not None)
        raise CorpusError(
            f"its parts are laid out in more than one way ({shown}), so parts added have no "
            "layout to follow: say whether they go in a folder per kind (by_kind; import "
            "--partition-by kind)",
            where=where,
        )
    follows = in_folder is not None
    if by_kind is not None and by_kind != follows:
        raise CorpusError(
            f"its parts are in a folder per kind ({in_folder}), and parts added go in one "
            "too: leave by_kind out, or make it True"
            if follows
            else f"its parts are at its root ({at_root}), not in a folder per kind; parts "
            "added go there too: append without by_kind (import --partition-by kind)",
            where=where,
        )
    return follows


class _Parts:
    """The part files of a dataset being written (on the writer thread): a new part once
    the current one is full, or for a case of another kind.  What the file system refuses
    is a :class:`FileWriteError` at ``where``, the store."""

    def __init__(
        self,
        folder: Path,
        options: WriteOptions,
        number: int,
        part_bytes: int | None,
        by_kind: bool,
        *,
        where: str,
    ) -> None:
        self._folder, self._options, self._number = folder, options, number
        self._part_bytes, self._by_kind, self._where = part_bytes, by_kind, where
        self._writer: StoreFile | None = None
        self._kind: str | None = None
        self._bytes = 0
        self._ended = False
        #: The parts written, relative to the dataset's folder.
        self.written: list[str] = []

    def write(self, group: RowGroup) -> None:
        try:
            self._write(group)
        except OSError as exc:
            raise file_write_error(
                exc, where=self._where, what="writing the store failed: "
            ) from None

    def _write(self, group: RowGroup) -> None:
        full = self._part_bytes is not None and self._bytes >= self._part_bytes
        if (
            self._writer is None
            or self._ended
            or full
            or (self._by_kind and group.kind != self._kind)
        ):
            self._open(group.kind)
        assert self._writer is not None
        self._writer.append(group.table)
        self._bytes += group.source_bytes
        self._ended = group.ends_part

    def _open(self, kind: str | None) -> None:
        self.close()
        name = f"part-{self._number:05d}.parquet"
        relative = f"{_kind_folder(kind)}/{name}" if self._by_kind and kind else name
        (self._folder / relative).parent.mkdir(exist_ok=True)
        self._writer = StoreFile(str(self._folder / relative), self._options)
        self.written.append(relative)
        self._number += 1
        self._kind, self._bytes = kind, 0

    def close(self) -> None:
        if self._writer is not None:
            writer, self._writer = self._writer, None
            try:
                writer.close()
            except OSError as exc:
                raise file_write_error(
                    exc, where=self._where, what="writing the store failed: "
                ) from None


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

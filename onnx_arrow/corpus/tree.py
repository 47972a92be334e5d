"""Writing a tree of files into a folder: atomically when the folder is new or empty.

Shared by the store export and the node-suite writer.  Paths are checked before
anything is written: relative, no ``..``, no empty or ``.`` component, no
backslash, NUL or drive letter, so a store from someone else cannot write
outside the folder.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final, Protocol, TypeVar

from onnx_arrow.corpus.sources import CorpusError

__all__ = ["TreeFile", "current_umask", "safe_relative", "write_tree"]

_SAFE_PART: Final = re.compile(r"[^/\\\x00]+")


class TreeFile(Protocol):
    """A file to write: its path relative to the folder, and its bytes."""

    @property
    def path(self) -> str: ...

    @property
    def data(self) -> bytes: ...


F = TypeVar("F", bound=TreeFile)


def safe_relative(path: str, *, where: str) -> tuple[str, ...]:
    """The components of a relative path that stays inside its folder, or a clear error."""
    parts = tuple(path.split("/"))
    if (
        not path
        or path.startswith("/")
        or re.match(r"^[A-Za-z]:", path)
        or any(p in ("", ".", "..") or not _SAFE_PART.fullmatch(p) for p in parts)
    ):
        raise CorpusError(
            f"unsafe file path {path!r}; paths must be relative, without '..' or backslashes",
            where=where,
        )
    return parts


def current_umask() -> int:
    """The process's file mode creation mask (read without changing it for long)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_new(path: str, data: bytes, *, exclusive: bool) -> None:
    with open(path, "xb" if exclusive else "wb") as fh:
        fh.write(data)


def write_tree(
    files: Iterable[F],
    dest: str | os.PathLike[str],
    *,
    force: bool = False,
    progress: Callable[[F], None] | None = None,
    where: str = "",
) -> dict[str, int]:
    """Write ``files`` under the folder ``dest``.

    ``dest`` must be missing or empty, unless ``force``: then files are written
    into it, each replaced whole or not at all.  Otherwise the tree goes to a
    temporary folder beside ``dest``, renamed into place when complete; on any
    error or Ctrl-C that folder is removed and ``dest`` is left as it was.
    """
    dest_path = Path(dest)
    if dest_path.exists() and not dest_path.is_dir():
        raise CorpusError("exists and is not a folder", where=str(dest_path))
    into_existing = dest_path.is_dir() and any(dest_path.iterdir())
    if into_existing and not force:
        raise CorpusError(
            "the folder is not empty; choose an empty folder, or pass force to write into it",
            where=str(dest_path),
        )
    target = (
        dest_path
        if into_existing
        else Path(
            tempfile.mkdtemp(prefix=f".{dest_path.name}.", suffix=".partial", dir=dest_path.parent)
        )
    )
    counts = {"files": 0, "bytes": 0}
    base = os.fspath(target)
    where = where or str(dest_path)
    folders: set[str] = set()  # created, and their paths checked
    try:
        for f in files:
            folder, _, name = f.path.rpartition("/")
            if folder not in folders:
                safe_relative(f.path, where=where)
                try:
                    os.makedirs(os.path.join(base, folder), exist_ok=True)
                except (FileExistsError, NotADirectoryError):
                    raise CorpusError(
                        f"the folder of {f.path!r} is also the path of a file; "
                        "each path names one file or one folder",
                        where=where,
                    ) from None
                folders.add(folder)
            elif name in (".", "..") or not _SAFE_PART.fullmatch(name):
                safe_relative(f.path, where=where)  # raises
            path = f"{base}/{f.path}"
            if into_existing:  # a file of the same path is replaced whole or not at all
                tmp = f"{base}/{folder}/.{name}.partial" if folder else f"{base}/.{name}.partial"
                _write_new(tmp, f.data, exclusive=False)
                os.replace(tmp, path)
            else:
                try:
                    _write_new(path, f.data, exclusive=True)
                except FileExistsError:
                    raise CorpusError(
                        f"{f.path!r} is already written (it comes twice, or is a folder too); "
                        "each path names one file or one folder",
                        where=where,
                    ) from None
            counts["files"] += 1
            counts["bytes"] += len(f.data)
            if progress is not None:
                progress(f)
        if target != dest_path:
            os.chmod(target, 0o777 & ~current_umask())  # mkdtemp makes it private
            if dest_path.is_dir():
                dest_path.rmdir()  # empty, checked above
            os.replace(target, dest_path)
    except BaseException:
        if target != dest_path:
            shutil.rmtree(target, ignore_errors=True)
        raise
    return counts

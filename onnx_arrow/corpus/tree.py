"""Writing a tree of files into a folder: atomically when the folder is new or empty.

Shared by the store export and the node-suite writer.  Paths are checked before
anything is written: relative, no ``..``, no empty or ``.`` component, no
backslash, NUL or drive letter, so a store from someone else cannot write
outside the folder; each names one file, never a file twice or a file and a folder.
What the file system refuses (a full disk, a name too long) is a
:class:`FileWriteError` naming the file as the caller named it, never a temporary one.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from onnx_arrow.core.model import NO_FOLLOW
from onnx_arrow.errors import CorpusError, FileWriteError

__all__ = [
    "TreeFile",
    "TreeWriter",
    "atomic_file",
    "check_file_target",
    "check_tree_paths",
    "current_umask",
    "file_write_error",
    "name_max",
    "safe_relative",
    "tree_writer",
    "write_tree",
]

_SAFE_PART: Final = re.compile(r"[^/\\\x00]+")
#: A relative path whose every part is a :data:`_SAFE_PART` but ``.`` and ``..``, not
#: starting with a drive letter: checked by one match.
_SAFE_PATH: Final = re.compile(
    r"(?![A-Za-z]:)(?!\.\.?(?:/|\Z))[^/\\\x00]+(?:/(?!\.\.?(?:/|\Z))[^/\\\x00]+)*"
)
#: The longest file name most file systems take, in bytes (``NAME_MAX``), where the
#: file system does not say.
_NAME_MAX: Final = 255
#: Errors of a file system that is full (no space left, or the user's quota used up).
_DISK_FULL: Final = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


def file_write_error(exc: BaseException, *, where: str, what: str = "") -> FileWriteError:
    """``exc``, an error of the file system (an ``OSError``, or one of pyarrow's that says
    only ``[errno 28]`` in its text), put in words and located at ``where``; ``what``
    (``"writing the store failed: "``) comes before the reason."""
    code = getattr(exc, "errno", None)
    if not isinstance(code, int):
        found = re.search(r"\[errno (\d+)\]", str(exc), re.IGNORECASE)
        code = int(found.group(1)) if found else None
    detail = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    if code in _DISK_FULL:
        why = f"the disk is full ({detail}); free space on it, or write to another disk"
    elif code == errno.ENAMETOOLONG:
        why = f"a name in the path is longer than the file system takes ({detail})"
    else:
        why = detail
    return FileWriteError(what + why, where=where, code=code)


def name_max(folder: str | os.PathLike[str]) -> int:
    """The longest file name, in bytes, that the file system of ``folder`` (or of the
    nearest folder above it that exists) takes."""
    place = Path(folder).absolute()
    while not place.is_dir() and place != place.parent:
        place = place.parent
    try:
        return int(os.pathconf(place, "PC_NAME_MAX"))
    except (AttributeError, OSError, ValueError):  # not a POSIX system, or no limit stated
        return _NAME_MAX


class TreeFile(Protocol):
    """A file to write: its path relative to the folder, and its bytes."""

    @property
    def path(self) -> str: ...

    @property
    def data(self) -> bytes: ...


F = TypeVar("F", bound=TreeFile)


def safe_relative(path: str, *, where: str) -> tuple[str, ...]:
    """The components of a relative path that stays inside its folder, or a clear error."""
    if not _SAFE_PATH.fullmatch(path):
        raise CorpusError(
            f"unsafe file path {path!r}; paths must be relative, without '..' or backslashes",
            where=where,
        )
    return tuple(path.split("/"))


def check_tree_paths(paths: Iterable[str | None], *, where: str, longest: int = _NAME_MAX) -> None:
    """Refuse, before anything is written, paths that do not form a tree of files: one
    that is not safe (see :func:`safe_relative`), one given twice, one that is also the
    folder of another, or with a name over ``longest`` bytes (see :func:`name_max`).
    ``None`` (a path missing) is left to whoever reads the file.  Errors are located at
    ``where`` (the store).  A folder is checked once, with the first of its files; each
    further file, by its name."""
    seen: set[str] = set()
    folders: set[str] = set()  # every folder of a file, and every folder above one
    for path in paths:
        if path is None:
            continue
        folder, _, name = path.rpartition("/")
        if folder in folders:
            if not _safe_name(name):
                safe_relative(path, where=where)  # raises
            parts: tuple[str, ...] = (name,)
        else:
            parts = safe_relative(path, where=where)
        if path in seen:
            raise CorpusError(
                f"{path!r} is there twice; each path names one file (was the store changed "
                "after it was written? import the corpus again)",
                where=where,
            )
        seen.add(path)
        for part in parts:
            if len(part) * 4 > longest and len(part.encode("utf-8")) > longest:
                raise CorpusError(
                    f"{path!r} holds a name too long for the file system written to: "
                    f"{len(part.encode('utf-8'))} bytes, where it takes up to {longest}",
                    where=where,
                )
        if folder not in folders:
            folders.update("/".join(parts[:k]) for k in range(1, len(parts)))
    both = min(seen & folders, default=None)
    if both is not None:
        raise CorpusError(
            f"{both!r} is a file and the folder of other files too; each path names one "
            "file or one folder",
            where=where,
        )


def _safe_name(name: str) -> bool:
    """Whether ``name``, the last part of a path whose folder is checked, is safe."""
    return name not in (".", "..") and _SAFE_PART.fullmatch(name) is not None


def current_umask() -> int:
    """The process's file mode creation mask (read without changing it for long)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_file_target(path: str | os.PathLike[str], *, what: str) -> Path:
    """``path`` as a place to write the file ``what`` (a store, a report) into: not a
    folder, and in a folder that exists."""
    out = Path(path)
    if out.is_dir():
        raise CorpusError(f"is a folder; {what} is one file", where=str(out))
    if not out.parent.is_dir():
        raise CorpusError(
            f"the folder to write {what} into does not exist; create it first",
            where=str(out.parent),
        )
    return out


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], *, what: str) -> Iterator[str]:
    """A temporary file beside ``path`` for the ``with`` block to write ``what`` into (a
    store, a report), renamed onto ``path`` when the block ends; on any error or Ctrl-C it
    is removed and ``path`` is left as it was.

    Refused before anything is written: ``path`` a folder, or its folder missing (else
    the error would name the temporary file).  An error of the file system that names no
    file (as Parquet's do) or the temporary one is a :class:`FileWriteError` at ``path``.
    """
    out = check_file_target(path, what=what)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    except OSError as exc:
        raise file_write_error(exc, where=str(out), what=f"writing {what} failed: ") from None
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp makes it private
        os.replace(tmp, out)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if (
            isinstance(exc, OSError)
            and not isinstance(exc, FileWriteError)
            and exc.filename in (None, tmp)
        ):
            raise file_write_error(exc, where=str(out), what=f"writing {what} failed: ") from exc
        raise


#: Folders are created and entered relative to an open folder, never following a symbolic
#: link (``openat``-style), so that a link planted inside the destination, even after the
#: checks, cannot lead a write out of it.
_DIR_FLAGS: Final = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0) | NO_FOLLOW
)
_FILE_FLAGS: Final = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
    | NO_FOLLOW
)


@dataclass
class TreeWriter:
    """Writes files under the folder ``base``: each path checked, each folder created once.

    With ``replace``, a file of the same path is replaced whole or not at all; without it,
    a path written twice is an error, never an overwrite (with it too, for the paths this
    writer wrote).  Several writers (in several processes) may write into one folder, each
    its own files.  Inside ``base`` no symbolic link is followed: a folder or file of the
    tree that is one is an error, and a replaced file is a new file (a hard link to a file
    elsewhere is not written through).  What the file system refuses is a
    :class:`FileWriteError` at the file under ``dest``, the folder as the caller named it
    (``base`` may be a temporary folder to be renamed to it).
    """

    base: str
    replace: bool
    where: str
    dest: str = ""
    _folders: set[str] = field(default_factory=set, repr=False)  # created, paths checked
    _written: set[str] = field(default_factory=set, repr=False)  # with replace
    _fds: OrderedDict[str, int] = field(default_factory=OrderedDict, repr=False, compare=False)

    def write(self, f: TreeFile) -> int:
        """Write one file; returns its size."""
        folder, _, name = f.path.rpartition("/")
        if folder not in self._folders or not _safe_name(name):
            safe_relative(f.path, where=self.where)  # once per folder; raises for a bad name
        if f.path in self._written:
            raise self._twice(f.path)
        fd = self._open_folder(folder, f.path)
        self._folders.add(folder)
        if self.replace:
            self._replace(name, fd, f)
            self._written.add(f.path)
            return len(f.data)
        try:
            _write_new(name, fd, f.data)
        except FileExistsError:
            raise self._twice(f.path) from None
        except OSError as exc:
            if _is_link(name, fd):
                raise self._link_error(f.path) from None
            raise self._os_error(exc, f.path) from None
        return len(f.data)

    def close(self) -> None:
        """Close the folders this writer keeps open; it opens them again if used after."""
        fds = self._fds
        while fds:
            os.close(fds.popitem()[1])

    def __getstate__(self) -> dict[str, Any]:
        """A writer sent to another process: without the open folders of this one."""
        state = dict(self.__dict__)
        state["_fds"] = OrderedDict()
        return state

    def _replace(self, name: str, fd: int, f: TreeFile) -> None:
        """Write ``f`` as ``name`` in the open folder ``fd``, over a file of that name."""
        tmp = f".{name}.partial"
        if len(tmp.encode("utf-8")) > _NAME_MAX:  # a long name: a short one beside it
            tmp = f".{hashlib.sha256(name.encode('utf-8')).hexdigest()[:32]}.partial"
        try:
            _write_new(tmp, fd, f.data)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException as exc:  # a full disk or Ctrl-C leaves the folder as it was
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=fd)
            if not isinstance(exc, OSError):
                raise
            if exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                raise CorpusError(
                    f"{f.path!r} is a folder in {self.dest or self.base}; a file cannot "
                    "replace it: remove it, or write into an empty folder",
                    where=self.where,
                ) from None
            raise self._os_error(exc, f.path) from None

    def _open_folder(self, folder: str, path: str) -> int:
        """The folder of ``path`` (``folder``, relative to ``base``), created as needed and
        entered component by component without following a link; an open descriptor the
        writer keeps (the most recently used :data:`_OPEN_FOLDERS` of them), so that the
        files of one folder are each one ``openat`` in it.  A folder once entered stays
        the folder written into: a link planted at its path later is never followed."""
        fds = self._fds
        fd = fds.get(folder)
        if fd is not None:
            fds.move_to_end(folder)
            return fd
        parts = folder.split("/") if folder else []
        # the deepest folder on the way that is open already, else base
        start = len(parts) - 1
        while start > 0 and "/".join(parts[:start]) not in fds:
            start -= 1
        start = max(start, 0)
        known = "/".join(parts[:start])
        fd = fds.get(known)
        if fd is not None:
            fds.move_to_end(known)
        else:  # nothing open on the way (start is 0): base itself, the caller's
            try:
                fd = os.open(self.base, _DIR_FLAGS & ~NO_FOLLOW)
            except OSError as exc:
                raise self._os_error(exc, "") from None
            fds[""] = fd
        done = parts[:start]
        for part in parts[start:]:
            done.append(part)
            try:
                os.mkdir(part, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
            except OSError as exc:
                raise self._os_error(exc, "/".join(done)) from None
            try:
                fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if _is_link(part, fd):
                    raise self._link_error("/".join(done)) from None
                if exc.errno in (errno.ENOTDIR, errno.EEXIST):
                    raise CorpusError(
                        f"the folder of {path!r} is also the path of a file; "
                        "each path names one file or one folder",
                        where=self.where,
                    ) from None
                raise self._os_error(exc, "/".join(done)) from None
            fds["/".join(done)] = fd  # every folder on the way: the next case passes by too
        fds[folder] = fd
        while len(fds) > _OPEN_FOLDERS:  # the least recently used, never the one returned
            os.close(fds.popitem(last=False)[1])
        return fd

    def _twice(self, path: str) -> CorpusError:
        return CorpusError(
            f"{path!r} is already written (it comes twice, or is a folder too); "
            "each path names one file or one folder",
            where=self.where,
        )

    def _os_error(self, exc: OSError, path: str) -> FileWriteError:
        """What the file system refused, at the file under the folder the caller named."""
        dest = self.dest or self.base
        return file_write_error(
            exc, where=f"{dest}/{path}" if path else dest, what="cannot be written: "
        )

    def _link_error(self, path: str) -> CorpusError:
        return CorpusError(
            f"{path!r} is a symbolic link in the folder written into; files are written "
            "only into folders of the destination itself: remove the link, or write into "
            "an empty folder",
            where=self.where,
        )


def _write_new(name: str, dir_fd: int, data: bytes) -> None:
    """Create the file ``name`` in the open folder ``dir_fd`` (it must not exist) and write
    ``data`` into it."""
    fd = os.open(name, _FILE_FLAGS, 0o666, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


#: The most folders a :class:`TreeWriter` keeps open: the files of a store come case by
#: case, a few folders at a time.
_OPEN_FOLDERS: Final = 32


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def tree_writer(
    dest: str | os.PathLike[str], *, force: bool = False, where: str = ""
) -> Iterator[TreeWriter]:
    """A writer of files into the folder ``dest``, for the ``with`` block.

    ``dest`` must be missing or empty, unless ``force``: then files are written
    into it, each replaced whole or not at all.  Otherwise the tree goes to a
    temporary folder beside ``dest``, renamed into place when the block ends; on any
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
    try:
        target = (
            dest_path
            if into_existing
            else Path(
                tempfile.mkdtemp(
                    prefix=f".{dest_path.name}.", suffix=".partial", dir=dest_path.parent
                )
            )
        )
    except OSError as exc:
        raise file_write_error(exc, where=str(dest_path), what="cannot be written: ") from None
    try:
        writer = TreeWriter(
            os.fspath(target), into_existing, where or str(dest_path), str(dest_path)
        )
        try:
            yield writer
        finally:
            writer.close()
        if target != dest_path:
            try:
                os.chmod(target, 0o777 & ~current_umask())  # mkdtemp makes it private
                if dest_path.is_dir():
                    dest_path.rmdir()  # empty, checked above
                os.replace(target, dest_path)
            except OSError as exc:
                raise file_write_error(
                    exc, where=str(dest_path), what="cannot be put in place: "
                ) from None
    except BaseException:
        if target != dest_path:
            shutil.rmtree(target, ignore_errors=True)
        raise


def write_tree(
    files: Iterable[F],
    dest: str | os.PathLike[str],
    *,
    force: bool = False,
    progress: Callable[[F], None] | None = None,
    where: str = "",
) -> dict[str, int]:
    """Write ``files`` under the folder ``dest`` (see :func:`tree_writer`); returns how many
    files and bytes were written."""
    counts = {"files": 0, "bytes": 0}
    with tree_writer(dest, force=force, where=where) as writer:
        for f in files:
            counts["bytes"] += writer.write(f)
            counts["files"] += 1
            if progress is not None:
                progress(f)
    return counts

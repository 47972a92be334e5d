"""Opening files that may come from anyone: the one check of a path argument, how files
are opened, and what a file is.

Shared by :func:`onnx_arrow.read_pb`, the external data reader and the corpus reader,
which each read only regular files and say what else they found.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Any, Final

from onnx_arrow.errors import CorpusError, UnsupportedTypeError

__all__ = ["NO_FOLLOW", "OPEN_FLAGS", "as_path", "file_kind", "read_regular_file"]


def as_path(value: Any, *, where: str) -> str:
    """``value`` as a path: the one check of every argument that takes a path.

    A ``str``, an ``os.PathLike`` (``pathlib.Path``) or ``bytes`` (decoded as the file
    system does) is a path; anything else is refused, naming the argument ``where``.

    >>> import pathlib
    >>> as_path(pathlib.Path("input_0.pb"), where="path")
    'input_0.pb'
    >>> as_path(1, where="path")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    onnx_arrow.errors.UnsupportedTypeError: path: expected a path (a str ...), got int
    """
    if isinstance(value, str | bytes | os.PathLike):
        path = os.fspath(value)
        return path if isinstance(path, str) else os.fsdecode(path)
    raise UnsupportedTypeError(
        "expected a path (a str or os.PathLike such as pathlib.Path), got "
        f"{type(value).__qualname__}",
        where=where,
    )


#: Never block on a FIFO (it changes nothing for a regular file), never leak into child
#: processes, bytes as they are (Windows).
OPEN_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
#: With :data:`OPEN_FLAGS`: refuse a final symbolic link, such as one swapped in after
#: the checks.
NO_FOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)

#: How a file that is not regular is described in errors.
_FILE_KINDS: Final[tuple[tuple[Callable[[int], bool], str], ...]] = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a file that is not regular is, from its ``st_mode``, for an error:
    ``"a FIFO (named pipe)"``."""
    for test, kind in _FILE_KINDS:
        if test(mode):
            return kind
    return f"of file type {stat.S_IFMT(mode):#o}"


def read_regular_file(
    path: str,
    *,
    max_bytes: int,
    where: str,
    fix: str = "a corpus holds regular files only: remove it from the corpus",
    dir_fd: int | None = None,
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; anything else (FIFO, device,
    symlink) is refused, with ``fix`` saying what to do.

    ``dir_fd``: an open folder that a relative ``path`` is taken in (as ``os.open``
    takes it), so that no link above the file is followed.

    Raises :class:`~onnx_arrow.errors.CorpusError` located at ``where``: the file cannot
    be opened, is not regular, is over the cap, does not fit in memory or shrinks while
    being read.
    """
    try:
        fd = os.open(path, OPEN_FLAGS | NO_FOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        raise CorpusError(f"cannot open ({exc.strerror}); {fix}", where=where) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CorpusError(f"{file_kind(info.st_mode)}, not a regular file; {fix}", where=where)
        if info.st_size > max_bytes:
            raise CorpusError(
                f"{info.st_size} bytes exceed the limit of {max_bytes} per file", where=where
            )
        try:
            data = os.read(fd, info.st_size)  # a regular file gives it all at once
        except MemoryError:
            raise CorpusError(
                f"{info.st_size} bytes do not fit in the memory left to read them; "
                "free memory, or leave the file out",
                where=where,
            ) from None
        if len(data) < info.st_size:
            chunks = [data]
            remaining = info.st_size - len(data)
            while remaining > 0:
                chunk = os.read(fd, min(remaining, 1 << 24))
                if not chunk:
                    raise CorpusError("the file shrank while being read", where=where)
                chunks.append(chunk)
                remaining -= len(chunk)
            data = b"".join(chunks)
        return data
    finally:
        os.close(fd)

"""Opening files that may come from anyone: how they are opened, and what a file is.

Shared by :func:`onnx_arrow.read_pb`, the external data reader and the corpus reader,
which each read only regular files and say what else they found.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Final

__all__ = ["NO_FOLLOW", "OPEN_FLAGS", "file_kind"]

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

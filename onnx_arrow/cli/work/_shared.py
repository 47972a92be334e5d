"""What the commands' work shares: the error for the user's files, the report's
``key  value`` lines and sizes, the checks of an output before any work, reading a
store, listing a folder tree and counting the cases of a corpus.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

import pyarrow as pa

from onnx_arrow.cli._shared import PROG
from onnx_arrow.corpus import Case, FolderSource
from onnx_arrow.corpus.tree import check_file_target as check_output_file
from onnx_arrow.errors import OnnxArrowError, OnnxArrowWarning
from onnx_arrow.text import size

__all__ = [
    "DataError",
    "bytes_text",
    "check_file_target",
    "check_folder_target",
    "count_cases",
    "default_total",
    "print_fields",
    "reading",
    "starting",
    "tree_files",
    "warnings_as_lines",
]


class DataError(OnnxArrowError):
    """A problem with the user's files that no other onnx-arrow error names (an output
    that exists, a model that does not parse): ``main`` prints it as one line and exits
    with status 1."""


def starting(src: str | None) -> str:
    """What the first seconds go to: the node suite is built whole before its first case."""
    return "building the node suite of the installed onnx" if src is None else f"reading {src}"


def bytes_text(nbytes: int) -> str:
    """A size in bytes, and in KiB, MiB or GiB when large: ``7271830 bytes (6.9 MiB)``."""
    return f"{nbytes} bytes" if nbytes < 1024 else f"{nbytes} bytes ({size(nbytes)})"


def print_fields(lines: Sequence[tuple[str, object]], out: TextIO) -> None:
    """``key  value`` lines, the values in one column."""
    width = max(len(key) for key, _ in lines)
    for key, value in lines:
        print(f"{key:<{width}}  {value}".rstrip(), file=out)


def count_cases(src: Path) -> int:
    """The number of cases of a corpus folder, listed before any work; a folder that
    holds no case (no ``model.onnx``, ``NAME.onnx`` or ``data.json``) is an error."""
    refs = list(FolderSource(src).refs())
    if not refs:
        raise DataError(
            f"{src}: the folder is empty; pass a corpus folder (case folders, each with "
            "a model.onnx and test_data_set_N/ folders) or a case folder"
        )
    if all(ref.model_path is None and not _has_data_json(ref.paths) for ref in refs):
        if not any(_DATA_SET.search(p) for ref in refs for p in (*ref.paths, *ref.folders)):
            raise DataError(
                f"{src}: no model.onnx (nor NAME.onnx) in the folder or below it, so no test "
                "case: pass a corpus folder (case folders, each with a model.onnx and "
                "test_data_set_N/ folders) or a case folder"
            )
        # data sets whose models are missing: stored as files, and said
        warnings.warn(
            f"{src}: no model.onnx (nor NAME.onnx) beside its test_data_set_N folders: every "
            "file is stored as it is, and compare and run report its cases skipped",
            OnnxArrowWarning,
            stacklevel=2,
        )
    return len(refs)


_DATA_SET: Final = re.compile(r"(^|/)test_data_set_\d+(/|$)")


def _has_data_json(paths: Sequence[str]) -> bool:
    """Whether a case lists a ``data.json`` (a model that onnx downloads, ``real/``)."""
    return any(p == "data.json" or p.endswith("/data.json") for p in paths)


def default_total(source: Iterable[Case]) -> Callable[[], int | None]:
    """The number of cases of the default corpus, known once the node suite is built."""
    parts = getattr(source, "sources", ())

    def total() -> int | None:
        counts = [getattr(p, "count", None) for p in parts]
        return None if not counts or None in counts else sum(c or 0 for c in counts)

    return total


def check_file_target(
    out_path: Path, *, force: bool, what: str = "the store", reading: Sequence[Path] = ()
) -> None:
    """Refuse OUT before any work: a folder, a missing folder, a file that exists (unless
    --force), or one of the files the command reads."""
    check_output_file(out_path, what=what)
    if any(out_path.resolve() == p.resolve() for p in reading):
        raise DataError(f"{out_path}: is a file this command reads; write to another file")
    if (out_path.exists() or out_path.is_symlink()) and not force:
        raise DataError(f"{out_path}: exists; pass --force to replace it")


def check_folder_target(dest: Path, *, force: bool) -> None:
    """Refuse DEST before any work: a missing parent, a file, a non-empty folder (unless
    --force)."""
    if not dest.parent.is_dir():
        raise DataError(
            f"{dest}: the folder to write it into, {dest.parent}, does not exist; create it first"
        )
    if (dest.exists() or dest.is_symlink()) and not dest.is_dir():
        raise DataError(f"{dest}: exists and is not a folder")
    if dest.is_dir() and any(dest.iterdir()) and not force:
        raise DataError(
            f"{dest}: the folder is not empty; choose an empty folder, or pass --force to "
            "write into it"
        )


@contextlib.contextmanager
def reading(store: str | os.PathLike[str]) -> Iterator[None]:
    """Name the store in errors pyarrow raises while reading it (a damaged page ...)."""
    try:
        yield
    except pa.ArrowException as exc:
        raise DataError(f"{store}: cannot read the store ({exc})") from None


def tree_files(root: Path) -> Iterator[str]:
    """The files under ``root``, sorted; a symbolic link (to a file or a folder) is an
    error, as it is in a corpus: nothing outside ``root`` is listed or read."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = Path(dirpath).relative_to(root).as_posix()
        for name in dirnames + filenames:
            if os.path.islink(os.path.join(dirpath, name)):
                raise DataError(
                    f"{os.path.join(dirpath, name)}: a symbolic link; a case folder holds "
                    "regular files and folders only (import refuses it too)"
                )
        for name in sorted(filenames):
            yield name if rel == "." else f"{rel}/{name}"


@contextlib.contextmanager
def warnings_as_lines() -> Iterator[None]:
    """Each :class:`~onnx_arrow.errors.OnnxArrowWarning` raised while a command works (a
    symbolic link skipped, a value that contradicts its declaration), printed once as
    the command's own warning line."""
    shown: set[str] = set()
    with warnings.catch_warnings():
        others = warnings.showwarning

        def show(message: Any, category: type[Warning], *where: Any, **more: Any) -> None:
            if not issubclass(category, OnnxArrowWarning):
                others(message, category, *where, **more)
            elif str(message) not in shown:
                shown.add(str(message))
                print(f"{PROG}: warning: {message}", file=sys.stderr)

        warnings.showwarning = show
        warnings.simplefilter("always", OnnxArrowWarning)
        yield

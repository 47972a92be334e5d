"""``onnx-arrow export``: a store back to the corpus folder tree, byte for byte.  Its
arguments here; its work in :mod:`onnx_arrow.cli.work.export`, imported only to run it.
"""

from __future__ import annotations

from typing import Any, Final

from onnx_arrow.cli._shared import Command, add_command, jobs_option

_EPILOG: Final = """\
examples:
  onnx-arrow export corpus.parquet corpus/
      write the corpus folder tree, byte for byte, into a new folder
  onnx-arrow export --force corpus.parquet existing/
      write into a folder that already holds files (same paths are replaced)

Without --force, DEST must not exist or be empty (else exit status 1); the tree
is written beside DEST and renamed into place when complete."""

_JOBS: Final = (
    "write the store's row groups in N processes; pays off for large tensors with a core "
    "to spare, not for many small files (the node suite: slower, each file costs more in "
    "a worker than it saves)"
)


def register(commands: Any) -> None:
    """Add ``export`` and its arguments."""
    exp = add_command(
        commands,
        "export",
        "write a store back to the corpus folder tree, byte for byte",
        "Write every file of a corpus store into the folder DEST, byte for byte as it was "
        "imported, and print how many files and bytes were written.",
        _EPILOG,
    )
    exp.add_argument("store", metavar="STORE", help="a Parquet store written by import")
    exp.add_argument("dest", metavar="DEST", help="the folder to write")
    exp.add_argument("--force", action="store_true", help="write into a non-empty DEST")
    jobs_option(exp, _JOBS)


def load() -> Command:
    """The command's work, imported now (onnx and the store with it)."""
    from onnx_arrow.cli.work.export import run

    return run

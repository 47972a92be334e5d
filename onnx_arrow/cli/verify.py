"""``onnx-arrow verify``: import, export and compare a corpus byte for byte.  Its
arguments here; its work in :mod:`onnx_arrow.cli.work.verify`, imported only to run it.
"""

from __future__ import annotations

from typing import Any, Final

from onnx_arrow.cli._shared import (
    MAX_LISTED,
    RELEASES_HELP,
    Command,
    add_command,
    jobs_option,
    offline_option,
    positive,
)

_EPILOG: Final = """\
examples:
  onnx-arrow verify
      the built-in default corpus: import, export, compare every file
  onnx-arrow verify onnx/backend/test/data
      the same for a corpus folder

Both the store and the exported tree go to temporary folders that are removed
afterwards.  Exit status 1 if any file is missing, extra or different."""


def register(commands: Any) -> None:
    """Add ``verify`` and its arguments."""
    ver = add_command(
        commands,
        "verify",
        "import, export and compare a corpus byte for byte",
        "Import a corpus (a folder, or without SRC the built-in default corpus) into a "
        "temporary store, export it into a temporary folder, and compare every file with the "
        "source, path and bytes.  Prints 'N files byte-identical', or the differences (the "
        f"first {MAX_LISTED}, then a count).",
        _EPILOG,
    )
    ver.add_argument(
        "src",
        nargs="?",
        metavar="SRC",
        help="corpus folder, or a release (default: the built-in corpus).  " + RELEASES_HELP,
    )
    offline_option(ver)
    ver.add_argument(
        "--part-cases",
        type=positive,
        metavar="N",
        help="go through a dataset store: parts of N cases, a folder per kind",
    )
    jobs_option(ver, "import and export in N processes (see import --help and export --help)")


def load() -> Command:
    """The command's work, imported now (onnx and the store with it)."""
    from onnx_arrow.cli.work.verify import run

    return run

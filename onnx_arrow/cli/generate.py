"""``onnx-arrow generate``: the node test suite the installed onnx builds, as a folder
tree.  Its arguments here; its work in :mod:`onnx_arrow.cli.work.generate`, imported
only to run it.
"""

from __future__ import annotations

from typing import Any, Final

from onnx_arrow.cli._shared import Command, add_command

_EPILOG: Final = """\
examples:
  onnx-arrow generate node-suite/
      node/<case>/model.onnx and node/<case>/test_data_set_N/input_K.pb ...
  onnx-arrow generate --force existing/
      write into a folder that already holds files (same paths are replaced)

Without --force, DEST must not exist or be empty (else exit status 1)."""


def register(commands: Any) -> None:
    """Add ``generate`` and its arguments."""
    gen = add_command(
        commands,
        "generate",
        "write the node test suite the installed onnx builds as a folder tree",
        "Build the node test suite of the installed onnx in memory and write it out in the "
        "classic layout (node/<case>/model.onnx, node/<case>/test_data_set_N/input_K.pb, "
        "output_K.pb), each file the bytes onnx's own test-data writer produces.",
        _EPILOG,
    )
    gen.add_argument("dest", metavar="DEST", help="the folder to write")
    gen.add_argument("--force", action="store_true", help="write into a non-empty DEST")


def load() -> Command:
    """The command's work, imported now (onnx and the store with it)."""
    from onnx_arrow.cli.work.generate import run

    return run

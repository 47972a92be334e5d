"""``onnx-arrow example``: a built-in set of tensors to Arrow and back, printed.  Its
arguments here; its work in :mod:`onnx_arrow.cli.work.example`, imported only to run it.
"""

from __future__ import annotations

from typing import Any

from onnx_arrow.cli._shared import Command, add_command


def register(commands: Any) -> None:
    """Add ``example``, which takes no arguments."""
    add_command(
        commands,
        "example",
        "convert a built-in example to Arrow and back, and print it",
        "Convert six built-in tensors (float32, int64, bfloat16, float8e4m3fn, bool, and "
        "strings that are not valid UTF-8) to Arrow, print each, convert them back and check "
        "that every message is byte-identical.  Exits 1 if one is not.",
        "example:\n  onnx-arrow example | head",
    )


def load() -> Command:
    """The command's work, imported now (onnx and ml_dtypes with it)."""
    from onnx_arrow.cli.work.example import run

    return run

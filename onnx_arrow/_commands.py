"""Where :mod:`onnx_arrow.cli`'s command table and default timeout were read from before
the command line became a package: kept so that those names stay importable here.
The commands live in :mod:`onnx_arrow.cli` (their arguments) and
:mod:`onnx_arrow.cli.work` (what they do).
"""

from __future__ import annotations

from onnx_arrow.cli import COMMANDS
from onnx_arrow.cli._shared import DEFAULT_TIMEOUT

__all__ = ["COMMANDS", "DEFAULT_TIMEOUT"]

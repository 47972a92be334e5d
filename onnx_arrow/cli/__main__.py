"""``python -m onnx_arrow.cli``: the ``onnx-arrow`` command line, as ``python -m onnx_arrow``."""

from __future__ import annotations

import sys

from onnx_arrow.cli import main

if __name__ == "__main__":
    sys.exit(main())

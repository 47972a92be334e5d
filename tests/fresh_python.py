"""Snippets run by a fresh interpreter: what a program that has imported nothing of this
test process (onnx_arrow, pyarrow, pandas ...) does and imports."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping


def fresh_python(
    code: str, *, timeout: float = 120, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in a new process of this interpreter, which must exit 0 (its
    stderr is the failure's message); its output captured as text."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        env=None if env is None else dict(env),
    )
    assert done.returncode == 0, done.stderr
    return done

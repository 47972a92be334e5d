"""Helpers of the command line's tests (tests/cli/): its one-line errors, its ``key  value``
reports, a tree's bytes, a terminal for the progress line, and the command run as a
process."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path


def error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("onnx-arrow: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def field_lines(out: str) -> dict[str, str]:
    """``key  value`` lines (indented ones too) as a dict."""
    pairs = (re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in out.splitlines())
    return {p[0]: p[1] if len(p) > 1 else "" for p in pairs}


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``onnx-arrow ARGS`` run as a user runs it: a process of its own (``python -m
    onnx_arrow``), its stdout and stderr not a terminal; ``env`` added to this one's."""
    return subprocess.run(
        [sys.executable, "-m", "onnx_arrow", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )

"""Lint, format and type checks, configured in pyproject.toml, run as tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is installed by the test extra")
def test_ruff_lint():
    result = _run("ruff", "check", "onnx_arrow", "tests", "benchmarks", "docs")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is installed by the test extra")
def test_ruff_format():
    result = _run("ruff", "format", "--check", "onnx_arrow", "tests", "benchmarks", "docs")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict():
    pytest.importorskip("mypy")
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr

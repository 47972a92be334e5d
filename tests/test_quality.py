"""Lint, format and type checks, configured in pyproject.toml, run as tests."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


#: ruff as the test extra installs it: on the PATH, or beside this interpreter (a venv's
#: or pyenv's scripts folder that is not on the PATH).
RUFF = shutil.which("ruff") or shutil.which("ruff", path=sysconfig.get_path("scripts"))
needs_ruff = pytest.mark.skipif(RUFF is None, reason="ruff is installed by the test extra")


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False, input=stdin)


def _markdown_python_blocks() -> list[tuple[str, str]]:
    """``(where, source)`` of each Python block of README.md and the docs pages."""
    out = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        blocks = re.findall(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
        out += [(f"{page.relative_to(ROOT)} python block {i}", b) for i, b in enumerate(blocks)]
    return out


@needs_ruff
def test_ruff_lint():
    """Everything the project ships: the package, tests, benchmarks, docs, examples and
    the notebooks (ruff reads .ipynb as it reads .py)."""
    assert RUFF is not None
    result = _run(RUFF, "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@needs_ruff
def test_ruff_format():
    """Everything the project ships, the notebooks included."""
    assert RUFF is not None
    result = _run(RUFF, "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr
    notebooks = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    result = _run(RUFF, "format", "--check", *notebooks)  # named: checked whatever the include
    assert result.returncode == 0, result.stdout + result.stderr


@needs_ruff
def test_ruff_format_of_the_markdown_python_blocks():
    """Each Python block of README.md and the docs pages is as ``ruff format`` writes it,
    with the project's settings, whichever ruff release reads Markdown itself or not."""
    assert RUFF is not None
    blocks = _markdown_python_blocks()
    assert len(blocks) > 20
    unformatted = []
    for where, source in blocks:
        result = _run(RUFF, "format", "--stdin-filename", "block.py", "-", stdin=source)
        assert result.returncode == 0, f"{where}: {result.stderr}"
        if result.stdout != source:
            unformatted.append(where)
    assert not unformatted, f"run ruff format on these blocks: {unformatted}"


def test_mypy_strict():
    pytest.importorskip("mypy")
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr

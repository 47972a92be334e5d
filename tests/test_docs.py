"""The docs cannot rot: README examples run, the type-mapping page matches the dtype table."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GENERATOR = ROOT / "docs" / "gen_type_mapping.py"

QUICK_START = (
    "python -m pip install . && onnx-arrow example\n"
    "python -m pip install '.[test]' && python -m pytest\n"
)


def _blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def test_readme_has_python_examples() -> None:
    assert _blocks("python")


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_block_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    source = _blocks("python")[index]
    exec(compile(source, f"README.md python block {index}", "exec"), {"__name__": "__readme__"})
    capsys.readouterr()


def test_readme_quick_start_is_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    first_block = re.search(r"^```\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert first_block is not None
    assert first_block.group(1) == QUICK_START


def test_ci_runs_the_readme_test_command() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = QUICK_START.splitlines()[1].replace("pip install ", "pip install --quiet ")
    assert command in script


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+)\)", text):
        assert (ROOT / target).exists(), target


def test_type_mapping_page_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_type_mapping_page_has_a_row_per_dtype() -> None:
    from onnx_arrow.core.dtypes import DTYPES

    page = (ROOT / "docs" / "type-mapping.md").read_text(encoding="utf-8")
    for row in DTYPES.values():
        assert f"| `{row.name}` | {row.onnx} |" in page

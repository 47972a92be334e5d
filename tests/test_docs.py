"""The docs cannot rot: README examples run, the generated pages match the code."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import matches, run_block, said_outputs

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GENERATORS = {
    "type-mapping.md": ROOT / "docs" / "gen_type_mapping.py",
    "store-format.md": ROOT / "docs" / "gen_store_format.py",
    "cli.md": ROOT / "docs" / "gen_cli_reference.py",
    "layout.md": ROOT / "docs" / "gen_layout.py",
}

QUICK_START = (
    "python -m pip install . && onnx-arrow import corpus.parquet\n"
    "python -m pip install '.[test]' && python -m pytest\n"
)
#: The store the README's examples read, built from the model tests in the onnx wheel.
README_STORE = "corpus.parquet"


def _blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def store_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the store the README's examples name, from the wheel's model tests."""
    from onnx_arrow.corpus import FolderSource, write_store
    from onnx_arrow.corpus.sources import wheel_data_dir

    folder = tmp_path_factory.mktemp("readme")
    write_store(FolderSource(wheel_data_dir()), folder / README_STORE)
    return folder


def test_readme_has_python_examples() -> None:
    assert _blocks("python")


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_block_runs(
    index: int,
    store_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """It runs, and each print call prints what the comment at its end says."""
    source = _blocks("python")[index]
    monkeypatch.chdir(store_folder)  # where README_STORE is
    wrong = run_block(source, f"README.md python block {index}", {"__name__": "__readme__"})
    capsys.readouterr()
    assert not wrong, "\n".join(wrong)


def test_readme_compares_printed_output() -> None:
    """At least the README's conversions say what they print, so the comparison runs."""
    said = [c for block in _blocks("python") for c in said_outputs(block).values()]
    assert len(said) >= 5, said


def test_the_printed_output_check_sees_a_wrong_comment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The check itself: a print's end-of-line comment is compared with what it printed,
    whitespace normalised and ``...`` any text, a loop on its first output; a comment on a
    line of its own, a print to a file and a block that opts out are not compared."""
    assert matches("(1, 2,\n 3)\n", "(1,  2, 3)")
    assert matches("('a/b/c.pb', 'x', [7])", "('a/...', 'x', [...])")
    assert not matches("(1, 2, 4)", "(1, 2, 3)")
    assert not matches("(1, 2, 3) and more", "(1, 2, 3)")
    source = (
        "import sys\n"
        "for i in range(2):\n"
        "    print(i)  # 0\n"
        "print(\n    'wrong'\n)  # right\n"
        "# a comment of its own\n"
        "print('x', file=sys.stderr)  # y\n"
    )
    wrong = run_block(source, "block", {})
    skipped = run_block("# output not compared: a test\n" + source, "opted out", {})
    unprinted = run_block("if False:\n    print(1)  # 1\n", "unreached", {})
    assert wrong == ["block, line 4: the comment says 'right', it printed 'wrong\\n'"]
    assert skipped == []
    assert unprinted == ["unreached, line 2: the comment says '1', it printed nothing"]
    assert capsys.readouterr() == ("0\n1\nwrong\n" * 2, "x\n" * 2)


def test_readme_store_examples_name_the_store_they_read() -> None:
    queries = [b for b in _blocks("python") if "duckdb.sql" in b or "pl.scan_parquet" in b]
    assert len(queries) == 2
    for block in queries:
        assert f'store = "{README_STORE}"' in block


def test_readme_quick_start_is_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    first_block = re.search(r"^```\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert first_block is not None
    assert first_block.group(1) == QUICK_START


def test_readme_corpus_commands_are_valid_usage() -> None:
    from onnx_arrow.cli import _parser

    lines = [line for block in _blocks("sh") for line in block.splitlines() if line]
    commands = [shlex.split(line, comments=True) for line in lines]
    assert {argv[1] for argv in commands} >= {"import", "export", "verify", "generate", "info"}
    for argv in commands:
        assert argv[0] == "onnx-arrow", argv
        _parser().parse_args(argv[1:])  # raises on bad usage


def test_ci_runs_the_readme_test_command() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = QUICK_START.splitlines()[1].replace("pip install ", "pip install --quiet ")
    assert command in script


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+)\)", text):
        assert (ROOT / target).exists(), target


@pytest.mark.parametrize("page", sorted(GENERATORS))
def test_generated_page_is_current(page: str) -> None:
    result = subprocess.run(
        [sys.executable, str(GENERATORS[page]), "--check"],
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


def test_store_format_page_has_every_column_role_and_data_column() -> None:
    from onnx_arrow.corpus.format import COLUMNS, DATA_COLUMNS, METADATA_KEY, ROLES

    page = (ROOT / "docs" / "store-format.md").read_text(encoding="utf-8")
    for name, column in COLUMNS.items():
        assert f"| `{name}` | `{column.type}` |" in page
    for role in ROLES:
        assert f"| `{role}` |" in page
    for name, row in DATA_COLUMNS.items():
        assert f"| `{row.name}` | {row.onnx} | `{name}` |" in page
    assert f"`{METADATA_KEY}`" in page

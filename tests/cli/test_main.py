"""The ``onnx-arrow`` entry point (:mod:`onnx_arrow.cli`): usage errors, --help and
--version, what starting imports, and Ctrl-C."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import onnx_arrow
import onnx_arrow.cli.work.generate
import onnx_arrow.cli.work.progress
from onnx_arrow.cli import main
from onnx_arrow.corpus import FolderSource


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["bogus"],
        ["info"],
        ["example", "extra"],
        ["info", "x.pb", "--model", "m.onnx"],
        ["info", "x.pb", "--input", "0"],
        ["info", "x.pb", "--model", "m.onnx", "--input", "0", "--output", "0"],
    ],
    ids=repr,
)
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: onnx-arrow" in err
    assert "Traceback" not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"onnx-arrow {onnx_arrow.__version__}"


def test_help_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    assert "onnx-arrow info" in out


def test_python_dash_m_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "onnx_arrow", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: onnx-arrow")


def test_interrupted_import_exits_130_and_leaves_no_store(
    corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def interrupt(self: object, name: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(onnx_arrow.cli.work.progress.Progress, "step", interrupt)
    assert main(["import", str(corpus), str(tmp_path / "corpus.parquet")]) == 130
    assert capsys.readouterr().err == "onnx-arrow: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
    monkeypatch.setattr(
        onnx_arrow.cli.work.generate, "NodeSuiteSource", lambda: FolderSource(corpus)
    )
    assert main(["generate", str(tmp_path / "suite")]) == 130
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


@pytest.mark.parametrize("command", ["import", "export", "verify", "generate", "info", "example"])
def test_every_command_has_help_with_examples(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: onnx-arrow {command}")
    assert re.search(r"^examples?:$", out, re.MULTILINE)
    assert f"onnx-arrow {command}" in out.split("example", 1)[1]


@pytest.mark.parametrize(
    "argv",
    [
        ["import"],
        ["import", "a", "b", "c"],
        ["import", "--compression-level", "x", "out.parquet"],
        ["export", "store.parquet"],
        ["verify", "a", "b"],
        ["generate"],
    ],
    ids=repr,
)
def test_bad_corpus_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: onnx-arrow" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args", [["--help"], ["import", "--help"], ["import", "--bogus"], ["export"]]
)
def test_help_and_usage_errors_import_nothing_they_do_not_need(args: list[str]) -> None:
    """Starting takes what ``import onnx_arrow`` takes: not onnx (nor ml_dtypes through it),
    the commands, an adapter, an engine or an evaluator."""
    heavy = ["onnx", "ml_dtypes", "onnx_arrow.cli.work", "pandas"]
    heavy += ["polars", "duckdb"]
    heavy += ["onnx.reference", "IPython", "dask", "ray", "pyspark"]
    code = (
        "import contextlib, io, sys\n"
        "from onnx_arrow.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):\n"
        "    try:\n"
        f"        main({args!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"

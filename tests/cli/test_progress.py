"""The progress line of the long commands (:mod:`onnx_arrow.cli.work.progress`)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest
from cli_helpers import Terminal

import onnx_arrow
import onnx_arrow.cli.work.progress
from onnx_arrow.cli import main


def test_no_progress_when_stderr_is_not_a_terminal(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import", str(corpus), str(tmp_path / "corpus.parquet")]) == 0
    assert main(["export", str(tmp_path / "corpus.parquet"), str(tmp_path / "dest")]) == 0
    assert main(["verify", str(corpus)]) == 0
    assert capsys.readouterr().err == ""


def test_progress_on_a_terminal(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("COLUMNS", "1000")  # the line is cut to the terminal's width
    assert main(["import", str(corpus), str(tmp_path / "corpus.parquet")]) == 0
    shown = terminal.getvalue()
    assert shown.startswith(f"\rimporting: reading {corpus}")
    assert "\n" not in shown
    assert shown.endswith("\r")  # the line is cleared for what follows
    assert shown.rsplit("\r", 2)[1].strip() == ""


def test_progress_counts_against_the_total_with_rate_and_time_left(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("COLUMNS", "1000")
    monkeypatch.setattr(onnx_arrow.cli.work.progress, "_PROGRESS_INTERVAL", 0.0)  # every step shown
    for n in range(2):
        shutil.copytree(corpus / "node" / "test_tiny", corpus / "node" / f"test_tiny_{n}")
    cases = 3
    assert main(["import", str(corpus), str(tmp_path / "corpus.parquet")]) == 0
    lines = [line.strip() for line in terminal.getvalue().split("\r") if line.strip()]
    assert f"importing: 1 of {cases} cases" in lines[1]
    assert re.search(rf"^importing: {cases} of {cases} cases, [\d.]+/s  ", lines[-1]), lines
    files = sum(1 for p in corpus.rglob("*") if p.is_file())
    assert main(["export", str(tmp_path / "corpus.parquet"), str(tmp_path / "dest")]) == 0
    assert f"exporting: {files} of {files} files" in terminal.getvalue()


def test_progress_line_says_how_long_is_left() -> None:
    progress = onnx_arrow.cli.work.progress.Progress("importing", "cases", total=lambda: 1000)
    progress.step("a")
    progress._first -= 10.0  # ten seconds since the first case
    for _ in range(10):
        progress.step("b")
    assert progress.line("b") == "importing: 11 of 1000 cases, 1.0/s, 16 min 29 s left  b"
    unknown = onnx_arrow.cli.work.progress.Progress("importing", "cases", total=lambda: None)
    unknown.step("a")
    assert unknown.line("a") == "importing: 1 cases  a"

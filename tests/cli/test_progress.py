"""The progress line of the long commands (:mod:`onnx_arrow.cli.work.progress`)."""

from __future__ import annotations

import io
import re
import shutil
import sys
from pathlib import Path

import pytest
from cli_helpers import Terminal, error_line, run_cli

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


def _lines(stderr: str, verb: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(f"{verb}: ")]


def test_progress_lines_in_a_log_never_the_rewritten_line(corpus: Path, tmp_path: Path) -> None:
    """Off a terminal every long command prints plain lines at the interval the variable
    sets (0: one per case or file), run as a process whose stderr is a pipe, as in CI."""
    for n in range(2):
        shutil.copytree(corpus / "node" / "test_tiny", corpus / "node" / f"test_tiny_{n}")
    every = {onnx_arrow.cli.work.progress.LOG_INTERVAL_VARIABLE: "0"}
    store, actual = tmp_path / "corpus.parquet", tmp_path / "actual.parquet"
    commands = {
        "importing": ["import", str(corpus), str(store)],
        "exporting": ["export", str(store), str(tmp_path / "dest")],
        "running": ["run", str(store), str(actual)],
        "comparing": ["compare", str(store), "--actual", str(actual)],
        "tracing": ["trace", str(store), "--case", "node/test_tiny", "--backend", "reference",
                    "--out", str(tmp_path / "tiny.trace.parquet")],
    }  # fmt: skip
    files = sum(1 for p in corpus.rglob("*") if p.is_file())
    for verb, args in commands.items():
        done = run_cli(*args, env=every)
        assert done.returncode == 0, done.stderr
        assert "\r" not in done.stderr
        lines = _lines(done.stderr, verb)
        total = {"exporting": files, "tracing": 1}.get(verb, 3)
        assert len(lines) == total, done.stderr
        unit = {"exporting": "files", "tracing": "chunks"}.get(verb, "cases")
        assert re.match(rf"^{verb}: 1 (of {total} )?{unit}  \S", lines[0]), lines
        if total > 1:
            assert re.match(rf"^{verb}: {total} of {total} {unit}, [\d.]+/s  \S", lines[-1])
    assert _lines(run_cli(*commands["comparing"]).stderr, "comparing") == []  # 30 s apart
    quiet = run_cli(*commands["comparing"], env={"ONNX_ARROW_PROGRESS_INTERVAL": "10"})
    assert (quiet.returncode, quiet.stderr) == (0, "")


def test_a_bad_progress_interval_is_a_located_error(store: Path) -> None:
    done = run_cli("compare", str(store), env={"ONNX_ARROW_PROGRESS_INTERVAL": "soon"})
    assert done.returncode == 1
    assert error_line(done.stderr) == (
        "onnx-arrow: error: ONNX_ARROW_PROGRESS_INTERVAL='soon': not a number of seconds of 0 "
        "or more; give the seconds between two progress lines in a log (default 30)"
    )


def test_progress_names_lose_their_control_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    progress = onnx_arrow.cli.work.progress.Progress("importing", "cases")
    progress.step("node/test_\x1b[2Jx")
    assert "\x1b" not in terminal.getvalue()
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.setenv("ONNX_ARROW_PROGRESS_INTERVAL", "0")
    progress = onnx_arrow.cli.work.progress.Progress("importing", "cases")
    progress.step("node/test_\x1b[2Jx")
    assert log.getvalue() == "importing: 1 cases  node/test_[2Jx\n"


def test_a_line_said_clears_the_count_first(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with onnx_arrow.cli.work.progress.Progress("matrix", "cases") as progress:
        progress.step("node/test_abs")
        progress.say("matrix: pair 1 of 2: \x1b[2Jdone")
    drawn, said = terminal.getvalue().rsplit("\r", 1)
    assert said == "matrix: pair 1 of 2: [2Jdone\n"  # at the start of a line of its own
    assert re.fullmatch(r"\rmatrix:[^\r]*\r +", drawn)  # the count drawn, then blanked
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with onnx_arrow.cli.work.progress.Progress("matrix", "cases") as progress:
        progress.say("matrix: pair 1 of 2: done")
    assert log.getvalue() == "matrix: pair 1 of 2: done\n"  # a plain line in a log

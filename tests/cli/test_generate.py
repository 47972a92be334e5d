"""``onnx-arrow generate`` (:mod:`onnx_arrow.cli.generate`), run in-process through ``main``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import error_line, tree_bytes

import onnx_arrow
import onnx_arrow.cli.work.generate
from onnx_arrow.cli import main
from onnx_arrow.corpus import Case, NodeSuiteSource


def test_generate_writes_the_node_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[Case] = []

    class Recording(NodeSuiteSource):
        def __iter__(self) -> Iterator[Case]:
            for case in super().__iter__():
                built.append(case)
                yield case

    monkeypatch.setattr(onnx_arrow.cli.work.generate, "NodeSuiteSource", Recording)
    dest = tmp_path / "suite"
    assert main(["generate", str(dest)]) == 0
    files = {f.path: f.data for case in built for f in case.files}
    assert len(built) > 1000
    out = capsys.readouterr().out
    assert out.startswith(f"wrote {len(files)} files, ")
    assert f"of {len(built)} node suite cases" in out
    assert (dest / "node" / "test_abs" / "test_data_set_0" / "input_0.pb").is_file()
    assert tree_bytes(dest) == files
    assert [p.name for p in tmp_path.iterdir()] == ["suite"]  # no temporary folder left


def test_generate_refuses_a_non_empty_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "keep.txt").write_text("x")
    assert main(["generate", str(tmp_path)]) == 1
    assert "--force" in error_line(capsys.readouterr().err)

"""``onnx-arrow verify`` (:mod:`onnx_arrow.cli.verify`), run in-process through ``main``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import error_line

import onnx_arrow
import onnx_arrow.cli.work.verify
from onnx_arrow.cli import main
from onnx_arrow.corpus.sources import wheel_data_dir


def test_verify_the_model_tests_of_the_wheel(capsys: pytest.CaptureFixture[str]) -> None:
    root = wheel_data_dir()
    count = sum(1 for p in root.rglob("*") if p.is_file())
    assert main(["verify", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{count} files byte-identical after import and export; ")


def test_verify_lists_the_differences(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_export = onnx_arrow.cli.work.verify.export_store

    def damaging_export(store: Any, dest: Any, **kwargs: Any) -> dict[str, int]:
        counts = real_export(store, dest, **kwargs)
        root = Path(dest) / "node" / "test_tiny"
        value = root / "test_data_set_0" / "input_0.pb"
        data = bytearray(value.read_bytes())
        data[-1] ^= 0xFF
        value.write_bytes(bytes(data))
        (root / "README").unlink()
        for k in range(22):
            (root / f"extra_{k:02}").write_bytes(b"")
        return counts

    monkeypatch.setattr(onnx_arrow.cli.work.verify, "export_store", damaging_export)
    assert main(["verify", str(corpus)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("missing from the export: node/test_tiny/README")
    assert lines[1].startswith("different bytes: node/test_tiny/test_data_set_0/input_0.pb: ")
    assert "first difference at byte" in lines[1]
    assert lines[2] == "not in the source: node/test_tiny/extra_00"
    assert len(lines) == 22
    assert lines[20] == "... and 4 more differences"
    assert lines[21] == "2 files byte-identical, 24 differences"
    assert "24 differences" in error_line(captured.err)


def test_verify_of_something_that_is_not_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", str(tmp_path / "missing")]) == 1
    assert "not a folder" in error_line(capsys.readouterr().err)

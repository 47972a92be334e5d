"""``onnx-arrow example`` (:mod:`onnx_arrow.cli.example`), run in-process through ``main``."""

from __future__ import annotations

import re

import pytest
from onnx import TensorProto

import onnx_arrow
from onnx_arrow.cli import main
from onnx_arrow.cli.work.example import example_tensors
from onnx_arrow.core.dtypes import DTYPES


def test_example_round_trips_every_tensor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["example"]) == 0
    out = capsys.readouterr().out
    count = len(example_tensors())
    assert f"round trip: {count}/{count} byte-identical" in out
    for name in ("FLOAT", "INT64", "BFLOAT16", "FLOAT8E4M3FN", "BOOL", "STRING"):
        assert re.search(rf"^  onnx   {name} \[", out, re.MULTILINE), name
    assert "onnx.fixed_shape_tensor[value_type=onnx.bfloat16, shape=[2,2]]" in out
    assert r"b'\xff\xfe'" in out


def test_example_covers_what_it_promises() -> None:
    tensors = example_tensors()
    kinds = {DTYPES[t.data_type].name for t in tensors}
    assert kinds == {"FLOAT", "INT64", "BFLOAT16", "FLOAT8E4M3FN", "BOOL", "STRING"}
    strings = next(t for t in tensors if t.data_type == TensorProto.STRING)
    assert not all(_is_utf8(s) for s in strings.string_data)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_example_exits_1_when_a_round_trip_differs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = onnx_arrow.from_arrow

    def renaming(array: object) -> list[TensorProto]:
        out = real(array)  # type: ignore[arg-type]
        out[0].name += "_changed"
        return out

    monkeypatch.setattr(onnx_arrow, "from_arrow", renaming)
    assert main(["example"]) == 1
    assert "round trip: 0/6 byte-identical" in capsys.readouterr().out

"""The ``onnx-arrow`` command line, run in-process through ``main``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow.cli import example_tensors, main
from onnx_arrow.core.dtypes import DTYPES


def _error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("onnx-arrow: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture
def tensor_pb(tmp_path: Path) -> Path:
    x = np.array([[1.0, np.nan, 3.0], [np.inf, 5.0, 6.0]], dtype=np.float32)
    path = tmp_path / "input_0.pb"
    onnx.save_tensor(numpy_helper.from_array(x, "x"), str(path))
    return path


@pytest.fixture
def model_onnx(tmp_path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph), str(path))
    return path


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail instead of hanging if something blocks on a FIFO."""
    if not hasattr(signal, "SIGALRM"):
        pytest.skip("needs SIGALRM")

    def _timeout(signum: int, frame: object) -> None:
        raise TimeoutError("blocked on a FIFO")

    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(10)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- example ----------------------------------------------------------------------


def test_example_round_trips_every_tensor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["example"]) == 0
    out = capsys.readouterr().out
    count = len(example_tensors())
    assert f"round trip: {count}/{count} byte-identical" in out
    for name in ("FLOAT", "INT64", "BFLOAT16", "FLOAT8E4M3FN", "BOOL", "STRING"):
        assert re.search(rf"^  onnx   {name} \[", out, re.MULTILINE), name
    assert "arrow.fixed_shape_tensor[value_type=onnx.bfloat16, shape=[2,2]]" in out
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


# --- info -------------------------------------------------------------------------


def test_info_prints_name_dtype_dims_and_statistics(
    tensor_pb: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tensor_pb)]) == 0
    out = capsys.readouterr().out
    fields = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.splitlines())
    assert fields["name"] == "x"
    assert fields["dtype"] == "FLOAT (1)"
    assert fields["dims"] == "[2, 3]"
    assert fields["arrow"] == "arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]"
    assert fields["elements"] == "6"
    assert (fields["min"], fields["max"], fields["mean"]) == ("1", "6", "3.75")
    assert (fields["nan"], fields["inf"]) == ("1", "1")


@pytest.mark.parametrize("row", list(DTYPES.values()), ids=lambda r: r.name)
def test_info_reads_every_dtype(
    row: onnx_arrow.DType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if row.name == "STRING":
        tensor = helper.make_tensor("v", TensorProto.STRING, [2], [b"a", b"\xff"])
    else:
        tensor = numpy_helper.from_array(np.ones((2, 2), dtype=row.numpy), "v")
    path = tmp_path / "v.pb"
    onnx.save_tensor(tensor, str(path))
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"dtype     {row.name} ({row.onnx})" in out
    has_min = re.search(r"^min ", out, re.MULTILINE) is not None
    assert has_min == (row.name not in ("STRING", "BOOL", "COMPLEX64", "COMPLEX128"))


def test_info_statistics_widen_minifloats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = np.array([0.5, -2.0, np.nan, np.inf], dtype=ml_dtypes.bfloat16)
    path = tmp_path / "w.pb"
    onnx.save_tensor(numpy_helper.from_array(values, "w"), str(path))
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^min\s+-2$", out, re.MULTILINE)
    assert re.search(r"^max\s+0.5$", out, re.MULTILINE)
    assert re.search(r"^nan\s+1$", out, re.MULTILINE)
    assert re.search(r"^inf\s+1$", out, re.MULTILINE)


def test_info_of_an_empty_tensor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "e.pb"
    onnx.save_tensor(numpy_helper.from_array(np.zeros((0, 3), np.float32), "e"), str(path))
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "dims      [0, 3]" in out
    assert "elements  0" in out
    assert "min" not in out


def test_info_resolves_external_data_next_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = np.arange(4, dtype=np.float32)
    (tmp_path / "x.bin").write_bytes(data.tobytes())
    tensor = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[4])
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value="x.bin")
    path = tmp_path / "x.pb"
    path.write_bytes(tensor.SerializeToString())
    monkeypatch.chdir(tmp_path.parent)  # not the file's folder
    assert main(["info", str(path)]) == 0
    assert re.search(r"^mean\s+1.5$", capsys.readouterr().out, re.MULTILINE)


def test_info_typed_by_a_model_input(
    tensor_pb: Path, model_onnx: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tensor_pb), "--model", str(model_onnx), "--input", "x"]) == 0
    out = capsys.readouterr().out
    assert "input 0 'x'" in out
    assert "arrow.variable_shape_tensor[value_type=float, ndim=2, uniform_shape=[null,3]]" in out


def test_info_typed_by_a_model_output_index(
    tensor_pb: Path, model_onnx: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tensor_pb), "--model", str(model_onnx), "--output", "0"]) == 0
    out = capsys.readouterr().out
    assert "output 0 'y'" in out
    assert "onnx.variable_rank_tensor[value_type=float]" in out


def test_info_value_that_does_not_fit_the_declared_type(
    tmp_path: Path, model_onnx: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.pb"
    onnx.save_tensor(helper.make_tensor("s", TensorProto.STRING, [1], [b"a"]), str(path))
    assert main(["info", str(path), "--model", str(model_onnx), "--input", "x"]) == 1
    line = _error_line(capsys.readouterr().err)
    assert str(path) in line
    assert "STRING" in line


def test_info_unknown_model_input(
    tensor_pb: Path, model_onnx: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tensor_pb), "--model", str(model_onnx), "--input", "z"]) == 1
    line = _error_line(capsys.readouterr().err)
    assert "'z'" in line
    assert "0: 'x'" in line


def test_info_model_that_is_not_a_model(
    tensor_pb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bogus = tmp_path / "bogus.onnx"
    bogus.write_bytes(b"\xff\xff\xff")
    assert main(["info", str(tensor_pb), "--model", str(bogus), "--input", "0"]) == 1
    assert "not an ONNX model" in _error_line(capsys.readouterr().err)


def test_info_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.pb"
    assert main(["info", str(missing)]) == 1
    line = _error_line(capsys.readouterr().err)
    assert str(missing) in line


def test_info_not_a_tensor(model_onnx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(model_onnx)]) == 1
    _error_line(capsys.readouterr().err)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.usefixtures("alarm")
def test_info_fifo_is_an_error_not_a_hang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo.pb"
    os.mkfifo(fifo)
    assert main(["info", str(fifo)]) == 1
    assert "not a regular file" in _error_line(capsys.readouterr().err)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.usefixtures("alarm")
def test_info_fifo_model_is_an_error_not_a_hang(
    tensor_pb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo.onnx"
    os.mkfifo(fifo)
    assert main(["info", str(tensor_pb), "--model", str(fifo), "--input", "0"]) == 1
    assert "not a regular file" in _error_line(capsys.readouterr().err)


# --- usage ------------------------------------------------------------------------


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

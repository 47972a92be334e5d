"""Fixtures of the command line's tests: a tensor file, a model, a small corpus and its
store, and an alarm against a hang."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx_arrow.cli import main


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


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """One case, node/test_tiny: a model, a data set of two tensors, and a README."""
    root = tmp_path / "src"
    case = root / "node" / "test_tiny"
    (case / "test_data_set_0").mkdir(parents=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], "g", [x], [y])
    onnx.save_model(helper.make_model(graph), case / "model.onnx")
    for name, values in (("input_0", [-1.0, 2.0]), ("output_0", [1.0, 2.0])):
        tensor = numpy_helper.from_array(np.array(values, np.float32), name[0])
        (case / "test_data_set_0" / f"{name}.pb").write_bytes(tensor.SerializeToString())
    (case / "README").write_text("not a value\n")
    return root


@pytest.fixture
def store(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "corpus.parquet"
    assert main(["import", str(corpus), str(out)]) == 0
    capsys.readouterr()
    return out

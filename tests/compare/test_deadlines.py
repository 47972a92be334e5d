"""The timeout of one data set: recorded as an error, and the command line's default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper
from store_helpers import one_data_set_case

from onnx_arrow import compare as cmp
from onnx_arrow.cli import main
from onnx_arrow.corpus import Store, write_store


def test_timeout_is_recorded(store: Store) -> None:
    import time

    def slow(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        time.sleep(5)
        return []

    df = cmp.compare(store, slow, cases=["test_abs"], timeout=0.1).to_pandas()
    assert df.error.tolist() == ["BackendTimeoutError: the backend ran longer than 0.1 s"]


def _endless_loop_store(path: Path) -> Path:
    """A case whose model never ends: a Loop with no trip count and a condition that
    stays true."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["v_in", "one"], ["v_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1]),
        ],
        [numpy_helper.from_array(np.ones(1, np.float32), "one")],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["", "cond", "x"], ["y"], body=body)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.array(True), "cond")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = np.zeros(1, np.float32)
    write_store([one_data_set_case("node/test_endless", model, x, x)], path)
    return path


def test_the_command_line_stops_a_model_that_never_ends_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from onnx_arrow.cli import _shared

    path = str(_endless_loop_store(tmp_path / "endless.parquet"))
    # the default, shortened for the test: compare and its --help both read it there
    monkeypatch.setattr(_shared, "DEFAULT_TIMEOUT", 0.5)
    out = tmp_path / "report.parquet"
    assert main(["compare", path, "--out", str(out)]) == 1
    report = pd.read_parquet(out)
    assert report.error.tolist() == ["BackendTimeoutError: the backend ran longer than 0.5 s"]
    capsys.readouterr()
    assert main(["compare", "--help"]) == 0
    assert "(default: 0.5; 0: no limit)" in " ".join(capsys.readouterr().out.split())


def test_timeout_0_on_the_command_line_is_no_limit(store: Store, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "report.parquet"
    assert (
        main(
            ["compare", str(store.path), "--case", "test_abs", "--timeout", "0", "--out", str(out)]
        )
        == 0
    )
    made = json.loads(pq.read_schema(out).metadata[cmp.REPORT_METADATA_KEY.encode()])
    assert made["timeout"] is None
    assert (
        main(["compare", str(store.path), "--case", "test_abs", "--out", str(out), "--force"]) == 0
    )
    made = json.loads(pq.read_schema(out).metadata[cmp.REPORT_METADATA_KEY.encode()])
    assert made["timeout"] == 600.0

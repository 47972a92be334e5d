"""The backend options of ``compare`` and ``run``: --backend names a built-in backend or
any backend with onnx's interface (MODULE[:NAME]); --providers and --session-option set
onnxruntime's; a bad one is a usage error that says why."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from compare_helpers import cli

from onnx_arrow.corpus import Store


@pytest.mark.parametrize("command", ["compare", "run"])
def test_a_backend_with_onnxs_interface_by_spec(command: str, store: Path, tmp_path: Path) -> None:
    out = [str(tmp_path / "actual.parquet")] if command == "run" else []
    spec = "backend_helpers:EvaluatorBackend"
    code, text, err = cli(command, str(store), *out, "--backend", spec)
    assert code == 0, err
    if command == "compare":
        assert "match           1" in text
    else:
        assert "backend_helpers:EvaluatorBackend" in text
        assert Store(out[0]).cases() == ["node/test_tiny"]


def test_onnxruntime_backend_module_on_the_command_line(store: Path) -> None:
    pytest.importorskip("onnxruntime")
    code, text, err = cli("compare", str(store), "--backend", "onnxruntime.backend")
    assert code == 0, err
    assert "match           1" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "no_such_module_here"], "error: no backend 'no_such_module_here'"),
        (["--backend", "backend_helpers:Missing"], "has no 'Missing'"),
        (["--backend", "backend_helpers:NOT_A_BACKEND"], "neither a backend"),
        (["--session-option", "intra_op_num_threads=1"], "apply to --backend onnxruntime"),
        (["--providers", "CPUExecutionProvider"], "apply to --backend onnxruntime"),
        (["--timeout", "1e10"], "--timeout 1e+10 is more than 604800 seconds (a week)"),
        (["--timeout", "inf"], "--timeout inf is more than 604800 seconds (a week)"),
        (["--timeout", "nan"], "--timeout nan is not a number of seconds"),
    ],
)
def test_a_bad_backend_is_a_usage_error(store: Path, args: list[str], message: str) -> None:
    code, _, err = cli("compare", str(store), *args)
    assert code == 2
    assert message in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--providers", "NopeExecutionProvider"], "available: "),
        (["--session-option", "nope=1"], "'nope' is not an attribute"),
        (["--session-option", "intra_op_num_threads"], "expected KEY=VALUE"),
        (["--session-option", "graph_optimization_level=fast"], "expected one of ORT_"),
    ],
)
def test_bad_onnxruntime_options_are_usage_errors(
    store: Path, args: list[str], message: str
) -> None:
    pytest.importorskip("onnxruntime")
    code, _, err = cli("compare", str(store), "--backend", "onnxruntime", *args)
    assert code == 2
    assert message in err


def test_onnxruntime_options_on_the_command_line(store: Path, tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    report = tmp_path / "report.parquet"
    args = ["--backend", "onnxruntime", "--providers", "CPUExecutionProvider"]
    args += ["--session-option", "intra_op_num_threads=1"]
    args += ["--session-option", "graph_optimization_level=ORT_ENABLE_BASIC"]
    code, _, err = cli("compare", str(store), *args, "--out", str(report))
    assert code == 0, err
    made = json.loads(pq.read_schema(report).metadata[b"onnx_arrow.report"])
    assert made["backend"]["name"] == "onnxruntime"
    assert "CPUExecutionProvider; intra_op_num_threads=1" in made["backend"]["runs"]

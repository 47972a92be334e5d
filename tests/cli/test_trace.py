"""``onnx-arrow trace``: the verdict printed, the exit status, the trace store, the repro
that ``import`` and ``compare`` take, and usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from compare_helpers import cli

from onnx_arrow.trace import read_trace_metadata

CASE = "node/test_layer_normalization_4d_axis1_expanded"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli_trace") / "corpus.parquet"
    code, _, err = cli("import", "--case", CASE, str(path))
    assert code == 0, err
    return path


def test_a_planted_divergence_is_printed_with_exit_status_1(store: Path, tmp_path: Path) -> None:
    out, repro = tmp_path / "t.parquet", tmp_path / "cases" / "sqrt"
    code, text, err = cli(
        "trace", str(store), "--case", CASE, "--backend", "trace_helpers:perturbed_sqrt",
        "--max-ulp", "0", "--ulp-floor", "1e-30", "--out", str(out), "--chunk", "5",
        "--repro", str(repro),
    )  # fmt: skip
    assert code == 1, err
    assert not err
    assert "rule      ulp, at most 0 (floor 1e-30 against 0)" in text
    assert "traced    30 values of 30 nodes, in 6 chunks" in text
    assert "first divergent node: #" in text
    assert "(Sqrt)" in text
    assert "max 3 ULP" in text
    assert f"repro: {repro}" in text
    meta = read_trace_metadata(out)
    assert meta["verdict"]["op_type"] == "Sqrt"
    assert meta["backend"]["name"] == "perturbed Sqrt"
    # the repro, imported, is the divergence again under compare, and none under the reference
    code, _, err = cli("import", str(tmp_path / "cases"), str(tmp_path / "r.parquet"))
    assert code == 0, err
    args = ("compare", str(tmp_path / "r.parquet"), "--max-ulp", "0")
    assert cli(*args, "--backend", "trace_helpers:perturbed_sqrt")[0] == 1
    assert cli(*args)[0] == 0


def test_no_divergence_exits_0(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, text, err = cli("trace", str(store), "--case", CASE, "--backend", "reference")
    assert code == 0, err
    assert text.rstrip().endswith("no value diverges")
    default = tmp_path / "node_test_layer_normalization_4d_axis1_expanded.trace.parquet"
    assert read_trace_metadata(default)["verdict"]["position"] is None
    # the trace is not replaced without --force
    code, _, err = cli("trace", str(store), "--case", CASE, "--backend", "reference")
    assert code == 1
    assert "exists; pass --force" in err


def test_usage_errors(store: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "t.parquet")
    code, _, err = cli(
        "trace", str(store), "--case", CASE, "--backend", "no_such_module_x", "--out", out
    )
    assert code == 2
    assert "no backend 'no_such_module_x'" in err
    code, _, err = cli("trace", str(store), "--case", CASE, "--out", out)
    assert code == 2
    assert "--backend" in err
    code, _, err = cli(
        "trace", str(store), "--backend", "reference", "--case", CASE, "--chunk", "0"
    )
    assert code == 2
    code, _, err = cli(
        "trace", str(store), "--backend", "reference", "--case", "node/none", "--out", out
    )
    assert code == 1
    assert "no case 'node/none'" in err


def test_onnxruntime_options_apply_to_the_side_that_names_it(store: Path, tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    out = str(tmp_path / "t.parquet")
    option = ("--session-option", "graph_optimization_level=ORT_DISABLE_ALL")
    code, text, err = cli(
        "trace", str(store), "--case", CASE, "--backend", "onnxruntime", *option, "--out", out
    )
    assert code == 0, err
    assert "ORT_DISABLE_ALL" in text
    code, _, err = cli(
        "trace", str(store), "--case", CASE, "--backend", "reference", *option, "--out", out
    )
    assert code == 2
    assert "name it as --backend or --against" in err

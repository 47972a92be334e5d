"""``onnx-arrow results`` and ``compare --results`` / ``--runtime``, as users run them."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from compare_helpers import cli

from onnx_arrow import results
from onnx_arrow.corpus import Store


@pytest.mark.slow  # three commands over a store each, about a second
def test_compare_adds_runs_and_results_lists_their_changes(
    node_store: Store, planted: str, tmp_path: Path
) -> None:
    store, store_dir = str(node_store.path), tmp_path / "results"
    code, out, _ = cli("compare", store, "--runtime", "mine==1.0", "--results", str(store_dir))
    assert code == 1  # the reference gets one case's shape wrong
    assert "results: mine 1.0: run " in out
    report = tmp_path / "new.parquet"
    code, out, _ = cli(
        "compare", store, "--backend", planted, "--runtime", "mine==1.1",
        "--results", str(store_dir), "--out", str(report),
    )  # fmt: skip
    assert "results: mine 1.1: run " in out
    code, out, err = cli("results", "add", str(report), str(store_dir))
    assert (code, err) == (0, "")
    assert "the run is in" in out
    assert "not added (--again adds it)" in out
    code, out, _ = cli("results", str(store_dir))
    assert code == 0
    assert "runs     2" in out
    code, out, _ = cli("results", str(store_dir), "--changes")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "changes along runtime versions: 2"
    assert "node/test_add output 0 'sum' (data set 0): pass->fail at 1.1 (1.0: match" in out
    assert "_expanded output 0" in out
    assert "fail->pass at 1.1 (1.0: shape_mismatch" in out
    assert lines[-1] == "changes along onnx releases: 0"


def test_the_runtime_is_spelled_name_version(node_store: Store, tmp_path: Path) -> None:
    code, _, err = cli(
        "compare", str(node_store.path), "--runtime", "mine 1.0", "--results", str(tmp_path / "r")
    )
    assert code == 2
    assert "argument --runtime: the runtime is 'mine 1.0'; spell it NAME==VERSION" in err
    assert not (tmp_path / "r").exists()
    code, _, err = cli("compare", str(node_store.path), "--again")
    assert code == 2
    assert "--again applies to --results" in err


@pytest.mark.slow  # three commands over a store each, about a second
def test_a_bad_report_adds_nothing(node_store: Store, tmp_path: Path) -> None:
    good = tmp_path / "good.parquet"
    assert cli("compare", str(node_store.path), "--out", str(good))[0] == 1
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not a report")
    store_dir = tmp_path / "results"
    code, _, err = cli("results", "add", str(good), str(bad), str(store_dir))
    assert code == 1
    assert str(bad) in err
    assert not store_dir.exists()
    assert cli("results", "add", str(good), str(store_dir))[0] == 0
    (store_dir / "notes.txt").write_text("x")
    code, _, err = cli("results", str(store_dir))
    assert code == 1
    assert str(store_dir / "notes.txt") in err


@pytest.mark.slow  # three commands over a store each, about a second
def test_run_records_the_runtime_that_compare_actual_keeps(
    node_store: Store, tmp_path: Path
) -> None:
    actual = tmp_path / "actual.parquet"
    code, out, _ = cli("run", str(node_store.path), str(actual), "--runtime", "mine==2.0rc1")
    assert code == 0
    assert "reference (runtime mine==2.0rc1)" in out
    store_dir = tmp_path / "results"
    cli("compare", str(node_store.path), "--actual", str(actual), "--results", str(store_dir))
    (run,) = results.runs(results.read(store_dir)).to_pylist()
    assert (run["runtime"], run["runtime_version"], run["backend"]) == (
        "mine",
        "2.0rc1",
        "reference",
    )
    parts = [p for p in os.listdir(store_dir) if p.endswith(".parquet")]
    assert pq.read_table(store_dir / parts[0]).num_rows == run["outputs"]

"""Stores of actual outputs: written by ``run``, compared with the expected store."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from compare_helpers import GOOD, WRONG_SHAPE, scaled, stated_store
from onnx import TensorProto, helper, numpy_helper

from onnx_arrow import compare as cmp
from onnx_arrow.cli import main
from onnx_arrow.corpus import Case, CorpusFile, Store, write_store
from onnx_arrow.errors import DeclarationWarning


def test_write_actual_and_compare_stores_agree(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "actual.parquet"
    # the reference evaluator gives [2, 1] where [2] is declared: stored, and said
    with pytest.warns(DeclarationWarning, match=WRONG_SHAPE):
        counts = cmp.write_actual(store, cmp.reference_backend, out)
    assert counts["cases"] == len(GOOD) + 2
    assert counts["errors"] == 1
    assert counts["kept_as_bytes"] == 0
    direct = cmp.compare(store).to_pandas()
    stored = cmp.compare_stores(store, out).to_pandas()
    pd.testing.assert_frame_equal(direct, stored)
    # the actual store is a corpus store: same models and inputs
    actual = Store(out)
    assert actual.cases() == store.cases()
    assert actual.model("node/test_abs") == store.model("node/test_abs")
    # a case missing from the actual store (a run of some cases) is left out, and counted
    only_abs = tmp_path / "abs.parquet"
    cmp.write_actual(store, cmp.reference_backend, only_abs, cases=["test_abs"])
    partial = cmp.compare_stores(store, only_abs, cases=["test_abs", "test_add"]).to_pandas()
    assert partial.status.tolist() == ["match"]
    assert partial.attrs["onnx_arrow"]["left_out"] == 1
    # or, asked for, an error
    missing = cmp.compare_stores(
        store, only_abs, cases=["test_abs", "test_add"], missing="error"
    ).to_pandas()
    assert missing.status.tolist() == ["match", "error"]
    assert missing.error.iloc[1] == "the case is not in the actual store"


def test_a_partial_run_and_nothing_compared_on_the_command_line(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    only_abs = tmp_path / "abs.parquet"
    assert main(["run", str(store.path), str(only_abs), "--case", "test_abs"]) == 0
    assert main(["compare", str(store.path), "--actual", str(only_abs)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"^left out +\d+ expected cases not in ACTUAL \(--all-cases", printed, re.M)
    assert main(["compare", str(store.path), "--actual", str(only_abs), "--all-cases"]) == 1
    capsys.readouterr()
    # a run that compares no output is no pass: a store of a case without data sets
    model = store.model("node/test_abs").SerializeToString()
    files = [CorpusFile("node/test_m/model.onnx", model)]
    empty = tmp_path / "empty.parquet"
    write_store([Case("node/test_m", "node", files, files[0].path)], empty)
    assert main(["compare", str(empty)]) == 1
    assert "no output was compared" in capsys.readouterr().err
    assert main(["compare", str(store.path), "--all-cases"]) == 2


def test_the_stated_tolerance_holds_for_stored_actual_outputs_too(tmp_path: Path) -> None:
    path = stated_store(tmp_path, '{"rtol": 0.2}')
    actual = tmp_path / "actual.parquet"
    cmp.write_actual(path, scaled(1.1), actual)
    (row,) = cmp.compare_stores(path, actual).to_pandas().itertuples()
    assert (row.status, row.rtol, row.tolerance) == ("match", 0.2, "case")
    (row,) = (
        cmp.compare_stores(path, actual, tolerance={"tiny": (0.0, 0.0)}).to_pandas().itertuples()
    )
    assert row.status == "mismatch"


def test_run_keeps_an_input_file_kept_as_bytes(tmp_path: Path) -> None:
    from onnx import save_model

    from onnx_arrow.corpus import FolderSource, WriteOptions

    case = tmp_path / "src" / "node" / "test_bad_input"
    (case / "test_data_set_0").mkdir(parents=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    save_model(
        helper.make_model(
            helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], "g", [x], [y])
        ),
        case / "model.onnx",
    )
    value = np.array([1.0, 2.0], np.float32)
    bad = numpy_helper.from_list([value], "x").SerializeToString()  # a sequence, not a tensor
    (case / "test_data_set_0" / "input_0.pb").write_bytes(bad)
    (case / "test_data_set_0" / "output_0.pb").write_bytes(
        numpy_helper.from_array(value, "y").SerializeToString()
    )
    path = tmp_path / "store.parquet"
    write_store(FolderSource(tmp_path / "src"), path, options=WriteOptions(keep_undecodable=True))
    actual = tmp_path / "actual.parquet"
    cmp.write_actual(path, cmp.reference_backend, actual)
    files = {f.path: f.data for f in Store(actual).case_files("node/test_bad_input")}
    assert files["node/test_bad_input/test_data_set_0/input_0.pb"] == bad
    assert "node/test_bad_input/test_data_set_0/output_0.error.txt" in files

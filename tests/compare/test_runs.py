"""Running a backend over a store: what each data set feeds it, and what is recorded
when it raises or a value cannot be fed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from compare_helpers import WRONG_SHAPE, cli
from onnx import ModelProto, SequenceProto, TensorProto, helper, numpy_helper

from onnx_arrow import compare as cmp
from onnx_arrow.cli import main
from onnx_arrow.corpus import Store, StoredCase, write_store
from onnx_arrow.errors import DeclarationWarning


def test_raising_backend_is_recorded_never_raised(store: Store) -> None:
    def broken(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        raise ZeroDivisionError("no luck")

    df = cmp.compare(store, broken).to_pandas()
    assert set(df.status) == {"error"}
    assert set(df.error) == {"ZeroDivisionError: no luck"}
    runs = list(cmp.run_backend(store, broken, cases=["test_add"]))
    assert [(r.case, r.data_set, r.actual, r.error) for r in runs] == [
        ("node/test_add", 0, None, "ZeroDivisionError: no luck")
    ]


def test_runs_carry_the_model_parsed_once(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case is read once (Store.case, which parses its model), never model by model."""
    parsed: list[str] = []
    real = Store.case

    def case(self: Store, name: str) -> StoredCase:
        parsed.append(name)
        return real(self, name)

    def model(self: Store, name: str) -> ModelProto:
        raise AssertionError(f"{name}: the model parsed apart from its case")

    monkeypatch.setattr(Store, "case", case)
    monkeypatch.setattr(Store, "model", model)
    runs = list(cmp.run_backend(store, lambda m, i: [], cases=["test_abs", "test_add"]))
    assert parsed == ["node/test_abs", "node/test_add"]
    assert [r.model == real(store, r.case).model for r in runs] == [True, True]
    parsed.clear()
    # the reference evaluator gives [2, 1] where [2] is declared: stored, and said
    out = store.path.parent / "once.parquet"
    with pytest.warns(DeclarationWarning, match=WRONG_SHAPE):
        cmp.write_actual(store, cmp.reference_backend, out, in_process=True)  # reads counted here
    assert sorted(parsed) == sorted(set(parsed)) == sorted(store.cases())


def test_inputs_go_to_the_graph_inputs_that_are_not_initializers(tmp_path):
    """Older models list their weights among the graph inputs (vgg19: 39 of 40); onnx's
    runner feeds input_K.pb to the K-th of the others."""
    from onnx import save_model

    from onnx_arrow.corpus import FolderSource

    case = tmp_path / "src" / "real" / "test_weights_first"
    (case / "test_data_set_0").mkdir(parents=True)
    w = numpy_helper.from_array(np.array([10.0, 20.0], np.float32), "w")
    inputs = [
        helper.make_tensor_value_info("w", TensorProto.FLOAT, [2]),
        helper.make_tensor_value_info("x", TensorProto.INT64, [2]),
    ]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [
        helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["w", "xf"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "g", inputs, [y], initializer=[w])
    save_model(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), case / "model.onnx"
    )
    x = np.array([1, 2], np.int64)
    (case / "test_data_set_0" / "input_0.pb").write_bytes(
        numpy_helper.from_array(x, "x").SerializeToString()
    )
    (case / "test_data_set_0" / "output_0.pb").write_bytes(
        numpy_helper.from_array(np.array([11.0, 22.0], np.float32), "y").SerializeToString()
    )
    path = tmp_path / "store.parquet"
    write_store(FolderSource(tmp_path / "src"), path)
    store = Store(path)
    (data_set,) = store.case_arrays("real/test_weights_first")
    assert list(data_set["inputs"]) == ["x"]
    assert data_set["inputs"]["x"].dtype == np.int64  # typed by x, not by the weight w
    df = cmp.compare(path).to_pandas()
    assert df["status"].tolist() == ["match"]


def test_an_output_kept_as_bytes_is_an_error_never_a_pass(tmp_path, capsys):
    from onnx import save_model

    from onnx_arrow.corpus import FolderSource, WriteOptions

    src = tmp_path / "src"
    for name, bad in (("test_bad_output", "output_0"), ("test_bad_input", "input_0")):
        case = src / "node" / name
        (case / "test_data_set_0").mkdir(parents=True)
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
        graph = helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], "g", [x], [y])
        save_model(helper.make_model(graph), case / "model.onnx")
        for stem in ("input_0", "output_0"):
            value = np.array([1.0, 2.0], np.float32)
            data = numpy_helper.from_array(value, stem[0]).SerializeToString()
            if stem == bad:  # a sequence where the model declares a tensor: does not decode
                data = numpy_helper.from_list([value], stem[0]).SerializeToString()
            (case / "test_data_set_0" / f"{stem}.pb").write_bytes(data)
    path = tmp_path / "store.parquet"
    write_store(FolderSource(src), path, options=WriteOptions(keep_undecodable=True))
    df = cmp.compare(path).to_pandas()
    rows = {r.case: r for r in df.itertuples()}
    assert set(rows) == {"node/test_bad_output", "node/test_bad_input"}
    for case, bad in (("node/test_bad_output", "output_0"), ("node/test_bad_input", "input_0")):
        assert rows[case].status == "error"
        assert f"{case}/test_data_set_0/{bad}.pb was kept as bytes at import" in rows[case].error
    assert main(["compare", str(path)]) == 1
    capsys.readouterr()
    out = tmp_path / "actual.parquet"
    cmp.write_actual(path, cmp.reference_backend, out)
    stored = cmp.compare_stores(path, out).to_pandas()
    assert stored.status.tolist() == ["error", "error"]


def test_a_model_test_without_input_files_is_fed_as_onnxs_runner_feeds_it(tmp_path):
    """light/NAME.onnx with NAME_output_0.pb only: the inputs are onnx's dummy data."""
    from onnx import save_model

    from onnx_arrow.corpus import FolderSource

    light = tmp_path / "src" / "light"
    light.mkdir(parents=True)
    for name, elem in (("light_neg", TensorProto.FLOAT), ("light_ints", TensorProto.INT64)):
        x = helper.make_tensor_value_info("x", elem, [2, 3])
        y = helper.make_tensor_value_info("y", elem, [2, 3])
        graph = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "g", [x], [y])
        save_model(helper.make_model(graph), light / f"{name}.onnx")
        made = (np.arange(6).reshape(2, 3) / 6).astype(np.float32)  # onnx's dummy input
        out = -made if elem == TensorProto.FLOAT else -np.arange(6, dtype=np.int64).reshape(2, 3)
        data = numpy_helper.from_array(out, "y").SerializeToString()
        (light / f"{name}_output_0.pb").write_bytes(data)
    path = tmp_path / "store.parquet"
    write_store(FolderSource(tmp_path / "src"), path)
    rows = {r.case: r for r in cmp.compare(path).to_pandas().itertuples()}
    assert rows["light/light_neg"].status == "match"
    assert rows["light/light_ints"].status == "skipped"
    assert "onnx's runner makes none for it" in rows["light/light_ints"].detail


def test_an_unknown_engine_is_a_compare_error_as_before(store: Store, tmp_path: Path) -> None:
    message = r"^no engine 'spark'; expected one of processes, dask, ray$"
    with pytest.raises(cmp.CompareError, match=message):
        cmp.compare(store, engine="spark")
    out = tmp_path / "actual.parquet"
    with pytest.raises(cmp.CompareError, match=message):
        cmp.write_actual(store, cmp.reference_backend, out, engine="spark")
    assert not out.exists()


def _runtime_backend(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """What the models of layout_corpora compute: rf_iris's, and Identity."""
    from layout_corpora import iris_backend

    if model.graph.name == "rf_iris":
        return iris_backend(model, inputs)
    return [inputs["X"]]


def test_a_runtimes_corpus_is_compared_by_name_and_every_case_has_a_row(tmp_path):
    """Files numbered against their names are compared with the outputs they name; a case
    without a model and a data set without expected outputs are reported skipped, with
    the reason, and counted."""
    from layout_corpora import runtime_corpus

    from onnx_arrow.corpus import FolderSource

    write_store(FolderSource(runtime_corpus(tmp_path / "src")), tmp_path / "s.parquet")
    df = cmp.compare(tmp_path / "s.parquet", _runtime_backend).to_pandas()
    rows = {
        (r.case.split("/")[1], None if pd.isna(r.index) else int(r.index)): (
            r.status,
            None if pd.isna(r.detail) else r.detail,
        )
        for r in df.itertuples()
    }
    assert rows == {
        ("fastgelu", 0): ("match", None),
        ("named", 0): ("match", None),
        ("named", 1): ("match", None),
        ("rf_iris", 0): ("match", None),
        ("rf_iris", 1): ("match", None),
        ("no_model", None): ("skipped", "the case has no model"),
        ("no_outputs", None): (
            "skipped",
            "the data set has no expected outputs (no output_K.pb): nothing to compare the "
            "backend's outputs with",
        ),
    }
    names = dict(zip(df.case + ":" + df["index"].astype(str), df.name, strict=True))
    assert names["kinference/rf_iris:1"] == "output_probability"
    assert names["kinference/fastgelu:0"] == "Y"
    code, out, err = cli("compare", str(tmp_path / "s.parquet"), "--case", "no_*")
    assert re.search(r"^  skipped +2$", out, re.M)  # counted in the summary
    assert code == 1  # though nothing compared is no pass
    assert "no output was compared" in err
    code, out, _ = cli("run", str(tmp_path / "s.parquet"), str(tmp_path / "a.parquet"))
    assert code == 0
    assert re.search(r"^skipped +2 \(cases without a model or data sets", out, re.M)


def test_a_file_kept_as_bytes_fails_the_output_it_names(tmp_path):
    """rf_iris's output_0.pb, named output_probability but not decodable: kept as bytes at
    import, and the output it names (1) is that file's error, not output 0's."""
    from layout_corpora import rf_iris

    from onnx_arrow.corpus import FolderSource, WriteOptions

    case = rf_iris(tmp_path / "src" / "rf_iris")
    named = helper.make_sequence("output_probability", SequenceProto.MAP, [])
    broken = named.SerializeToString() + bytes([0x1A, 0x02, 0xFF, 0xFF])  # junk map_values
    (case / "test_data_set_0" / "output_0.pb").write_bytes(broken)
    options = WriteOptions(keep_undecodable=True)
    write_store(FolderSource(tmp_path / "src"), tmp_path / "s.parquet", options=options)
    df = cmp.compare(tmp_path / "s.parquet", _runtime_backend).to_pandas()
    rows = dict(zip(df["index"].tolist(), zip(df.status, df.error, strict=True), strict=True))
    assert rows[0][0] == "match"
    assert rows[1][0] == "error"
    assert "rf_iris/test_data_set_0/output_0.pb was kept as bytes at import" in rows[1][1]

"""The compare adapter: running a backend over a store, the comparison table, the CLI."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper
from store_helpers import one_data_set_case

from onnx_arrow import compare as cmp
from onnx_arrow.cli import main
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType
from onnx_arrow.corpus import Case, CorpusFile, NodeSuiteSource, Store, write_store

#: Node-suite cases the reference evaluator gets right, and one it gets wrong.
GOOD = (
    "test_abs",
    "test_add",
    "test_cast_FLOAT_to_BFLOAT16",
    "test_sequence_insert_at_back",
    "test_optional_get_element_sequence",
    "test_identity_opt",
    "test_string_concat",
)
#: The reference evaluator has no Scatter (deprecated): it raises.
RAISES = "test_scatter_without_axis"
#: The reference evaluator gives shape [2, 1] where [2] is expected (onnx 1.23).
WRONG_SHAPE = "test_range_float_type_positive_delta_expanded"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    wanted = {f"node/{n}" for n in (*GOOD, RAISES, WRONG_SHAPE)}
    cases = [c for c in NodeSuiteSource() if c.name in wanted]
    assert len(cases) == len(wanted)
    path = tmp_path_factory.mktemp("compare") / "node.parquet"
    write_store(cases, path)
    return Store(path)


def _tiny_store(path: Path, expected: np.ndarray[Any, Any], name: str = "node/test_tiny") -> Store:
    """A one-case store: Identity of a float tensor, with the given expected output."""
    x = np.asarray(expected)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    files = [
        *one_data_set_case(name, model, x, x).files,
        CorpusFile("real/thing/data.json", b"{}"),
    ]
    real = Case("real/thing", "real", [files.pop()], None)
    write_store([Case(name, "node", files, files[0].path), real], path)
    return Store(path)


def _by_case(df: pd.DataFrame) -> dict[str, list[str]]:
    return df.groupby("case")["status"].agg(list).to_dict()


def test_reference_backend_statuses(store: Store) -> None:
    df = cmp.compare(store)
    assert list(df.columns) == list(cmp.COMPARE_COLUMNS)
    statuses = _by_case(df)
    for name in GOOD:
        assert set(statuses[f"node/{name}"]) == {"match"}, name
    assert statuses[f"node/{RAISES}"] == ["error"]
    assert statuses[f"node/{WRONG_SHAPE}"] == ["shape_mismatch"]
    error = df.loc[df.case == f"node/{RAISES}", "error"].iloc[0]
    assert error.startswith("RuntimeImplementationError: ")
    wrong = df[df.case == f"node/{WRONG_SHAPE}"].iloc[0]
    assert wrong.shape_expected == (2,)
    assert wrong.shape_actual == (2, 1)
    # a row per expected output, with the op types of the model
    add = df[df.case == "node/test_add"].iloc[0]
    assert add.op_types == ("Add",)
    assert (add["name"], add.dtype_expected, add.dtype_actual) == ("sum", "FLOAT", "FLOAT")
    assert add.max_abs_error == 0.0
    assert add.n_beyond_tolerance == 0


def test_zeros_backend_gives_the_known_difference(store: Store) -> None:
    def zeros(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        return [np.zeros_like(v) for v in inputs.values()][:1]

    df = cmp.compare(store, zeros, cases=["test_abs"])
    (row,) = df.itertuples()
    expected = next(v.to_numpy() for v in store.values("node/test_abs") if v.io == "output")
    assert row.status == "mismatch"
    assert row.max_abs_error == pytest.approx(float(np.abs(expected).max()))
    assert row.max_rel_error == pytest.approx(1.0)
    assert row.n_beyond_tolerance == int(np.count_nonzero(expected))


def test_raising_backend_is_recorded_never_raised(store: Store) -> None:
    def broken(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        raise ZeroDivisionError("no luck")

    df = cmp.compare(store, broken)
    assert set(df.status) == {"error"}
    assert set(df.error) == {"ZeroDivisionError: no luck"}
    runs = list(cmp.run_backend(store, broken, cases=["test_add"]))
    assert [(r.case, r.data_set, r.actual, r.error) for r in runs] == [
        ("node/test_add", 0, None, "ZeroDivisionError: no luck")
    ]


def test_too_few_outputs_is_an_error(store: Store) -> None:
    df = cmp.compare(store, lambda m, i: [], cases=["test_abs"])
    assert df.status.tolist() == ["error"]
    assert "gave 0 outputs" in df.error.iloc[0]


def test_tolerance_nan_shape_dtype(tmp_path: Path) -> None:
    x = np.array([1.0, 2.0, np.nan, 100.0], np.float32)
    tiny = _tiny_store(tmp_path / "t.parquet", x)

    def giving(value: Any) -> cmp.Backend:
        return lambda model, inputs: [value]

    def row(value: Any, **kw: Any) -> Any:
        df = cmp.compare(tiny, giving(value), cases=["node/*"], **kw)
        return df.iloc[0]

    assert row(x).status == "match"
    # within rtol (1e-3 * 100 = 0.1), beyond it
    near = row(x + np.float32(0.05))
    assert near.status == "mismatch"  # 1 and 2 are moved beyond 1e-3 * |e|
    assert near.n_beyond_tolerance == 2
    assert row(x + np.float32(0.05), rtol=0.1).status == "match"
    off = row(np.array([1.0, 2.5, np.nan, 100.0], np.float32))
    assert (off.status, off.max_abs_error, off.n_beyond_tolerance) == ("mismatch", 0.5, 1)
    assert off.max_rel_error == pytest.approx(0.25)
    nan = row(np.array([np.nan, 2.0, np.nan, 100.0], np.float32))
    assert (nan.status, nan.nan_expected, nan.nan_actual) == ("nan_mismatch", 1, 2)
    assert nan.max_abs_error == 0.0
    shape = row(x.reshape(2, 2))
    assert (shape.status, shape.shape_expected, shape.shape_actual) == (
        "shape_mismatch",
        (4,),
        (2, 2),
    )
    dtype = row(x.astype(np.float64))
    assert (dtype.status, dtype.dtype_expected, dtype.dtype_actual) == (
        "dtype_mismatch",
        "FLOAT",
        "DOUBLE",
    )
    assert row([x]).status == "shape_mismatch"
    assert row(None).status == "shape_mismatch"
    # the case without a model is skipped, once
    df = cmp.compare(tiny, giving(x))
    assert df.status.tolist() == ["match", "skipped"]
    assert df.case.tolist() == ["node/test_tiny", "real/thing"]


def test_containers_strings_ints_compared() -> None:
    def diff(e: Any, a: Any) -> tuple[str, int]:
        d = cmp._compare_value(e, a, 1e-3, 1e-7)
        return d.status, d.beyond

    f = np.array([1.0, 2.0], np.float32)
    assert diff([f, f], [f, f]) == ("match", 0)
    assert diff([f, f], [f]) == ("shape_mismatch", 0)
    assert diff([f, f], [f, f + 1]) == ("mismatch", 2)
    assert diff(None, None) == ("match", 0)
    assert diff({1: f}, {np.int64(1): f}) == ("match", 0)
    assert diff({1: f}, {2: f})[0] == "shape_mismatch"
    strings = np.array([b"a", b"b"], dtype=object)
    assert diff(strings, np.array(["a", "b"], dtype=object)) == ("match", 0)
    assert diff(strings, np.array(["a", "c"], dtype=object)) == ("mismatch", 1)
    ints = np.array([1, 2], np.int64)
    assert diff(ints, ints) == ("match", 0)
    assert diff(np.array([1000000, 2], np.int64), np.array([1000001, 2], np.int64)) == (
        "mismatch",
        1,
    )  # exact, though within rtol
    import ml_dtypes

    b = np.array([1.0, 3.0], ml_dtypes.bfloat16)
    assert diff(b, b) == ("match", 0)
    assert diff(b, np.array([1.0, 3.03125], ml_dtypes.bfloat16)) == ("match", 0)  # 2 ULPs
    e4 = np.array([1.0, 2.0], ml_dtypes.float8_e4m3fn)
    assert diff(e4, np.array([1.0, 2.5], ml_dtypes.float8_e4m3fn)) == ("mismatch", 1)


@pytest.mark.parametrize("row", list(DTYPES.values()), ids=lambda r: r.name)
def test_dtypes_are_compared_by_their_onnx_row(row: DType) -> None:
    dtype = row.numpy
    # what the ml_dtypes names say: int4 / int2 exact, bfloat16 / float8 / 6 / 4 as float32
    exact = dtype.kind in "biu" or (dtype.kind == "V" and dtype.name.startswith(("int", "uint")))
    decoded = dtype.kind == "V" and dtype.name.startswith(
        ("bfloat16", "float8", "float4", "float6")
    )
    assert cmp._exact(dtype) == exact
    if row.arrow_kind in (ArrowKind.BINARY, ArrowKind.COMPLEX):
        return
    codes = np.arange(1 << min(row.bits, 8), dtype=np.uint8)
    values = codes.view(dtype) if dtype.itemsize == 1 else codes.astype(dtype)
    via = values.astype(np.float32) if decoded else values
    assert _same_bits(cmp._as_number(values), via.astype(np.float64))
    if dtype.kind in "fV" and not exact:
        # 2**-7 apart: within the rtol onnx's runner gives bfloat16 (2**-6), and only it
        e = np.ones(1, np.float32).astype(dtype)
        a = np.full(1, 1 + 2**-7, np.float32).astype(dtype)
        if a[0] != e[0]:
            status = cmp._compare_value(e, a, 0.0, 0.0).status
            assert status == ("match" if dtype.name == "bfloat16" else "mismatch")


def _same_bits(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_runs_carry_the_model_parsed_once(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = Store.model

    def model(self: Store, case: str) -> ModelProto:
        parsed.append(case)
        return real(self, case)

    monkeypatch.setattr(Store, "model", model)
    runs = list(cmp.run_backend(store, lambda m, i: [], cases=["test_abs", "test_add"]))
    assert parsed == ["node/test_abs", "node/test_add"]
    assert [r.model == real(store, r.case) for r in runs] == [True, True]
    parsed.clear()
    cmp.write_actual(store, cmp.reference_backend, store.path.parent / "once.parquet")
    assert sorted(parsed) == sorted(set(parsed)) == sorted(store.cases())


def test_onnxruntime_missing_is_said_once_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import raises ImportError
    for call in (
        lambda: cmp.backend_named("onnxruntime"),
        lambda: cmp.onnxruntime_backend(ModelProto(), {}),
    ):
        with pytest.raises(cmp.BackendUnavailableError, match="pip install onnxruntime"):
            call()


def test_summary_counts_per_op_type(store: Store) -> None:
    table = cmp.summary(cmp.compare(store))
    assert list(table.columns) == ["op_type", "total", *cmp.STATUSES, "non_match"]
    scatter = table[table.op_type == "Scatter"].iloc[0]
    assert (scatter.total, scatter.error, scatter.non_match) == (1, 1, 1)
    assert table.non_match.is_monotonic_decreasing
    assert table[table.op_type == "Abs"].iloc[0].match == 1


def test_write_actual_and_compare_stores_agree(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "actual.parquet"
    counts = cmp.write_actual(store, cmp.reference_backend, out)
    assert counts["cases"] == len(GOOD) + 2
    assert counts["errors"] == 1
    assert counts["kept_as_bytes"] == 0
    direct = cmp.compare(store)
    stored = cmp.compare_stores(store, out)
    pd.testing.assert_frame_equal(direct, stored)
    # the actual store is a corpus store: same models and inputs
    actual = Store(out)
    assert actual.cases() == store.cases()
    assert actual.model("node/test_abs") == store.model("node/test_abs")
    # a case missing from the actual store (a run of some cases) is left out, and counted
    only_abs = tmp_path / "abs.parquet"
    cmp.write_actual(store, cmp.reference_backend, only_abs, cases=["test_abs"])
    partial = cmp.compare_stores(store, only_abs, cases=["test_abs", "test_add"])
    assert partial.status.tolist() == ["match"]
    assert partial.attrs["left_out"] == 1
    # or, asked for, an error
    missing = cmp.compare_stores(store, only_abs, cases=["test_abs", "test_add"], missing="error")
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


def test_report_round_trips_through_parquet(store: Store, tmp_path: Path) -> None:
    df = cmp.compare(store)
    cmp.write_report(df, tmp_path / "report.parquet")
    back = pd.read_parquet(tmp_path / "report.parquet")
    assert back.status.tolist() == df.status.tolist()
    assert back.max_abs_error.isna().tolist() == df.max_abs_error.isna().tolist()


def test_no_case_matches(store: Store) -> None:
    with pytest.raises(cmp.CompareError, match="no case matches 'nope'"):
        cmp.compare(store, cases=["nope"])
    with pytest.raises(cmp.CompareError, match="rtol"):
        cmp.compare(store, rtol=-1)


def test_timeout_is_recorded(store: Store) -> None:
    import time

    def slow(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        time.sleep(5)
        return []

    df = cmp.compare(store, slow, cases=["test_abs"], timeout=0.1)
    assert df.error.tolist() == ["BackendTimeoutError: the backend ran longer than 0.1 s"]


def test_onnxruntime_backend(store: Store) -> None:
    pytest.importorskip("onnxruntime")
    df = cmp.compare(store, cmp.backend_named("onnxruntime"), cases=["test_abs", "test_add"])
    assert set(df.status) == {"match"}


def test_unknown_backend() -> None:
    with pytest.raises(cmp.CompareError, match="no backend 'tvm'"):
        cmp.backend_named("tvm")


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_cli_compare_and_run(store: Store, tmp_path: Path) -> None:
    code, out, _ = _cli("compare", str(store.path), "--case", "test_abs", "--case", "test_add")
    assert code == 0
    assert re.search(r"^outputs +2$", out, re.M)
    assert re.search(r"^  match +2$", out, re.M)
    report = tmp_path / "report.parquet"
    code, out, _ = _cli("compare", str(store.path), "--out", str(report))
    assert code == 1
    assert "Scatter" in out
    assert "Range" in out or "Sub" in out
    assert pd.read_parquet(report).shape[0] == len(GOOD) + 2
    actual = tmp_path / "actual.parquet"
    code, out, _ = _cli("run", str(store.path), str(actual))
    assert code == 0
    assert re.search(r"^backend errors +1 data sets$", out, re.M)
    code, _, err = _cli("run", str(store.path), str(actual))
    assert code == 1
    assert "exists; pass --force" in err
    code, out2, _ = _cli("compare", str(store.path), "--actual", str(actual))
    assert code == 1
    assert out2.splitlines()[:9] == _cli("compare", str(store.path))[1].splitlines()[:9]
    code, _, err = _cli("compare", str(store.path), "--case", "nope")
    assert code == 1
    assert "no case matches" in err
    code, _, _ = _cli("compare", str(store.path), "--actual", "x", "--backend", "reference")
    assert code == 2
    code, _, _ = _cli("compare", str(store.path), "--rtol", "-1")
    assert code == 2


def test_cli_compare_refuses_a_report_path_before_any_work(store: Store, tmp_path: Path) -> None:
    before = store.path.read_bytes()
    code, _, err = _cli("compare", str(store.path), "--out", str(store.path))
    assert code == 1
    assert "is a file this command reads" in err
    assert store.path.read_bytes() == before
    report = tmp_path / "report.parquet"
    report.write_bytes(b"mine")
    code, _, err = _cli("compare", str(store.path), "--case", "test_abs", "--out", str(report))
    assert (code, report.read_bytes()) == (1, b"mine")
    assert "exists; pass --force" in err
    code, _, _ = _cli(
        "compare", str(store.path), "--case", "test_abs", "--out", str(report), "--force"
    )
    assert code == 0
    assert pd.read_parquet(report).shape[0] == 1
    missing = tmp_path / "no" / "report.parquet"
    code, _, err = _cli("compare", str(store.path), "--out", str(missing))
    assert code == 1
    assert f"{missing.parent}: the folder to write the report into does not exist" in err


def test_a_report_is_written_with_the_umask_not_private(tmp_path: Path) -> None:
    report = tmp_path / "report.parquet"
    mask = os.umask(0o022)
    try:
        cmp.write_report(pd.DataFrame({"x": [1]}), report)
    finally:
        os.umask(mask)
    assert report.stat().st_mode & 0o777 == 0o644


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
    df = cmp.compare(path)
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
    df = cmp.compare(path)
    rows = {r.case: r for r in df.itertuples()}
    assert set(rows) == {"node/test_bad_output", "node/test_bad_input"}
    for case, bad in (("node/test_bad_output", "output_0"), ("node/test_bad_input", "input_0")):
        assert rows[case].status == "error"
        assert f"{case}/test_data_set_0/{bad}.pb was kept as bytes at import" in rows[case].error
    assert main(["compare", str(path)]) == 1
    capsys.readouterr()
    out = tmp_path / "actual.parquet"
    cmp.write_actual(path, cmp.reference_backend, out)
    stored = cmp.compare_stores(path, out)
    assert stored.status.tolist() == ["error", "error"]


# --- skip and xfail ---------------------------------------------------------------------

PATTERNS = Path(__file__).parent / "data" / "reference_backend_patterns.txt"


@pytest.fixture(scope="module")
def node_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("node") / "node.parquet"
    write_store(list(NodeSuiteSource()), path)
    return path


def test_the_node_suite_passes_with_onnxs_own_exclusions(
    node_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.parquet"
    args = ["compare", str(node_store), "--patterns", str(PATTERNS), "--jobs", "2"]
    assert main([*args, "--out", str(report)]) == 0
    df = pd.read_parquet(report)
    counts = df["status"].value_counts().to_dict()
    assert counts["match"] > 2200
    assert counts["xfail"] == 2
    assert set(counts) == {"match", "skipped", "xfail"}
    skipped = df[df["status"] == "skipped"]
    assert skipped["detail"].str.startswith("skip pattern '").all()
    assert "node/test_bernoulli" in set(skipped["case"])
    # without the patterns the same store fails
    capsys.readouterr()
    assert main(["compare", str(node_store), "--jobs", "2"]) == 1
    capsys.readouterr()


def test_xfail_and_xpass(store: Store) -> None:
    df = cmp.compare(store, xfail=["test_abs", "test_div"], skip=[r"^node/test_add$"])
    rows = {r.case: r for r in df.itertuples()}
    assert rows["node/test_abs"].status == "xpass"
    assert "xfail pattern 'test_abs' expects it to fail" in rows["node/test_abs"].detail
    assert rows["node/test_add"].status == "skipped"
    assert rows["node/test_add"].detail == "skip pattern '^node/test_add$'"
    with pytest.raises(cmp.CompareError, match=r"pattern '\(' is not a regular expression"):
        cmp.compare(store, skip=["("])


def test_a_failing_xfail_case_and_strict_xpass_on_the_command_line(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(store.path)
    df = cmp.compare(store)
    failing = sorted({r.case for r in df.itertuples() if r.status not in cmp.PASSING})
    assert failing, "the store holds cases that fail"
    bad = "^(" + "|".join(re.escape(c) for c in failing) + ")$"
    assert main(["compare", path]) == 1
    assert main(["compare", path, "--xfail", bad]) == 0
    assert main(["compare", path, "--xfail", bad, "--xfail", "test_abs"]) == 0
    assert main(["compare", path, "--xfail", bad, "--xfail", "test_abs", "--strict"]) == 1
    listed = tmp_path / "patterns.json"
    listed.write_text(json.dumps({"xfail": [bad], "skip": []}))
    assert main(["compare", path, "--patterns", str(listed)]) == 0
    broken = tmp_path / "broken.txt"
    broken.write_text("skip\nexclude test_abs\n")
    assert main(["compare", path, "--patterns", str(broken)]) == 1
    assert "broken.txt: line 1: expected 'skip REGEX', 'xfail REGEX' or" in capsys.readouterr().err


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
    rows = {r.case: r for r in cmp.compare(path).itertuples()}
    assert rows["light/light_neg"].status == "match"
    assert rows["light/light_ints"].status == "skipped"
    assert "onnx's runner makes none for it" in rows["light/light_ints"].detail


def test_the_report_says_what_it_was_made_from_and_with(store: Store, tmp_path: Path) -> None:
    import onnx
    import pyarrow.parquet as pq

    df = cmp.compare(store, rtol=1e-4, skip=["test_add"])
    out = tmp_path / "report.parquet"
    cmp.write_report(df, out)
    meta = pq.read_schema(out).metadata[cmp.REPORT_METADATA_KEY.encode()]
    made = json.loads(meta)
    assert made["backend"] == {
        "name": "reference",
        "runs": f"onnx {onnx.__version__} ReferenceEvaluator",
    }
    assert made["rtol"] == 1e-4
    assert made["skip"] == ["test_add"]
    assert made["store"] == [str(store.path)]
    assert made["onnx_arrow_version"]
    assert len(pd.read_parquet(out)) == len(df)


# --- tolerances, the worst element, the actual values ----------------------------------


def _scaled(factor: float) -> cmp.Backend:
    def backend(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        return [np.asarray(inputs["x"]) * np.float32(factor)]

    return backend


def _stated_store(tmp_path: Path, data_json: str | None) -> Path:
    from onnx_arrow.corpus import FolderSource

    src = tmp_path / "src"
    case = src / "node" / "test_tiny"
    (case / "test_data_set_0").mkdir(parents=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
    (case / "model.onnx").write_bytes(helper.make_model(graph).SerializeToString())
    value = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    for stem, name in (("input_0", "x"), ("output_0", "y")):
        data = numpy_helper.from_array(value, name).SerializeToString()
        (case / "test_data_set_0" / f"{stem}.pb").write_bytes(data)
    if data_json is not None:
        (case / "data.json").write_text(data_json)
    path = tmp_path / "store.parquet"
    write_store(FolderSource(src), path)
    return path


def test_a_case_is_compared_with_its_own_tolerance_unless_a_pattern_names_it(
    tmp_path: Path,
) -> None:
    path = _stated_store(tmp_path, '{"rtol": 0.2}')
    backend = _scaled(1.1)  # 10% off: beyond 1e-3, within the case's own 0.2
    (row,) = cmp.compare(path, backend).itertuples()
    assert (row.status, row.rtol, row.atol, row.tolerance) == ("match", 0.2, 1e-7, "case")
    (row,) = cmp.compare(path, backend, tolerance={"tiny$": (1e-3, 0.0)}).itertuples()
    assert (row.status, row.rtol, row.atol) == ("mismatch", 1e-3, 0.0)
    assert row.tolerance == "pattern 'tiny$'"
    # the first pattern that finds the case wins; one that finds nothing changes nothing
    both = {"other": (0.0, 0.0), "test_tiny": (0.5, 0.0), "tiny": (0.0, 0.0)}
    (row,) = cmp.compare(path, backend, tolerance=both).itertuples()
    assert (row.status, row.tolerance) == ("match", "pattern 'test_tiny'")
    plain = _stated_store(tmp_path / "plain", None)
    (row,) = cmp.compare(plain, backend, rtol=0.15).itertuples()
    assert (row.status, row.rtol, row.tolerance) == ("match", 0.15, "default")


def test_the_stated_tolerance_holds_for_stored_actual_outputs_too(tmp_path: Path) -> None:
    path = _stated_store(tmp_path, '{"rtol": 0.2}')
    actual = tmp_path / "actual.parquet"
    cmp.write_actual(path, _scaled(1.1), actual)
    (row,) = cmp.compare_stores(path, actual).itertuples()
    assert (row.status, row.rtol, row.tolerance) == ("match", 0.2, "case")
    (row,) = cmp.compare_stores(path, actual, tolerance={"tiny": (0.0, 0.0)}).itertuples()
    assert row.status == "mismatch"


def test_a_mismatch_names_its_worst_element_and_keeps_the_actual_value(tmp_path: Path) -> None:
    path = _stated_store(tmp_path, None)

    def one_off(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        out = np.array(inputs["x"], copy=True)
        out[0, 1] += np.float32(0.5)  # 2.0 -> 2.5
        out[1, 2] += np.float32(0.25)  # 6.0 -> 6.25: further in absolute, less beyond rtol
        return [out]

    (row,) = cmp.compare(path, one_off).itertuples()
    assert row.status == "mismatch"
    assert (row.worst_index, row.worst_expected, row.worst_actual) == ("[0, 1]", "2.0", "2.5")
    kept = numpy_helper.to_array(TensorProto.FromString(row.actual))
    assert np.array_equal(
        kept, one_off(ModelProto(), {"x": np.arange(1, 7, dtype=np.float32).reshape(2, 3)})[0]
    )
    (row,) = cmp.compare(path, one_off, keep_actual="none").itertuples()
    assert pd.isna(row.actual)
    (row,) = cmp.compare(path).itertuples()  # a match: nothing worst, nothing kept
    assert row.status == "match"
    assert pd.isna(row.worst_index)
    assert pd.isna(row.actual)
    (row,) = cmp.compare(path, keep_actual="all").itertuples()
    assert numpy_helper.to_array(TensorProto.FromString(row.actual)).shape == (2, 3)
    with pytest.raises(cmp.CompareError, match="keep_actual is 'some'"):
        cmp.compare(path, keep_actual="some")


def test_worst_elements_in_containers_nans_integers_strings_and_bfloat16() -> None:
    seq = cmp._compare_value(
        [np.zeros(2, np.float32), np.array([1.0, 2.0], np.float32)],
        [np.zeros(2, np.float32), np.array([1.0, 3.0], np.float32)],
        1e-3,
        1e-7,
    )
    assert seq.worst is not None
    assert seq.worst[1:] == ("[1][1]", "2.0", "3.0")
    nan = cmp._compare_value(np.array([1.0, 5.0, 1.0]), np.array([1.0, 9.0, np.nan]), 1e-3, 1e-7)
    assert nan.status == "nan_mismatch"
    assert nan.worst is not None
    assert nan.worst[1:] == ("[2]", "1.0", "nan")
    ints = cmp._compare_value(
        np.array([2**62, 7], np.int64), np.array([2**62 + 1, 9], np.int64), 1e-3, 1e-7
    )
    assert ints.worst is not None
    assert ints.worst[1:] == ("[1]", "7", "9")
    text = cmp._compare_value(np.array([b"a", b"b"], object), np.array(["a", "c"], object), 0, 0)
    assert text.worst is not None
    assert text.worst[1:] == ("[1]", "b'b'", "'c'")
    import ml_dtypes

    bf16 = np.array([1.0, 2.0], ml_dtypes.bfloat16)
    diff = cmp._compare_value(bf16, bf16, 1e-3, 1e-7)
    assert diff.rtol == 2.0**-6


def test_tolerances_on_the_command_line_and_in_a_patterns_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(_stated_store(tmp_path, None))
    off = ["--backend", "reference"]
    assert main(["compare", path, *off]) == 0
    out = tmp_path / "r.parquet"
    assert main(["compare", path, "--tolerance", "tiny=0.5,0", "--out", str(out)]) == 0
    report = pd.read_parquet(out)
    assert report.loc[0, "tolerance"] == "pattern 'tiny'"
    assert report.loc[0, "rtol"] == 0.5
    lines = tmp_path / "p.txt"
    lines.write_text("# ours\ntolerance tiny=0.5,1e-6\nskip nothing_like_it\n")
    plan = cmp.Expectations.read(lines)
    assert plan.tolerance == [("tiny", 0.5, 1e-6)]
    assert plan.skip == ["nothing_like_it"]
    as_json = tmp_path / "p.json"
    as_json.write_text(json.dumps({"tolerance": {"a=b": [0.1, 0.0]}}))
    assert cmp.Expectations.read(as_json).tolerance == [("a=b", 0.1, 0.0)]
    assert cmp.parse_tolerance("a=b=0.1,0") == ("a=b", 0.1, 0.0)
    for bad, message in (
        ("tolerance tiny=0.5\n", "line 1: tolerance 'tiny=0.5': expected REGEX=RTOL,ATOL"),
        ("tolerance tiny=-1,0\n", "line 1: tolerance 'tiny=-1,0': rtol is -1.0"),
        ("tolerance (=1,0\n", "pattern '(' is not a regular expression"),
    ):
        lines.write_text(bad)
        with pytest.raises(cmp.CompareError, match=re.escape(message)) as err:
            cmp.Expectations.read(lines)
        assert str(lines) in str(err.value)
    as_json.write_text(json.dumps({"tolerance": {"x": [0.1]}}))
    with pytest.raises(cmp.CompareError, match=r"tolerance must map patterns to \[RTOL, ATOL\]"):
        cmp.Expectations.read(as_json)
    capsys.readouterr()
    assert main(["compare", path, "--tolerance", "tiny=nan,0"]) == 2
    assert "rtol is nan" in capsys.readouterr().err
    with pytest.raises(cmp.CompareError, match="rtol is inf"):
        cmp.compare(path, rtol=float("inf"))


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


def test_a_report_row_is_shown_with_expected_actual_and_their_difference(tmp_path: Path) -> None:
    from onnx_arrow import jupyter

    path = _stated_store(tmp_path, None)

    def one_off(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        out = np.array(inputs["x"], copy=True)
        out[0, 1] = np.nan
        return [out]

    df = cmp.compare(path, one_off)
    text = jupyter.text(jupyter.report_view(df, 0))
    assert "status            nan_mismatch" in text
    assert "worst element     [0, 1]" in text
    assert "rtol 0.001, atol 1e-07 (default)" in text
    assert "picture  ULP distance" in text
    html = jupyter.html(jupyter.report_view(df, 0))
    assert html.count("<img") == 3  # expected, actual, difference
    report = tmp_path / "report.parquet"
    cmp.write_report(df, report)
    assert jupyter.text(jupyter.report_view(str(report), 0)) == text  # the store from metadata
    matched = cmp.compare(path)
    assert "keeps no actual value" in jupyter.text(jupyter.report_view(matched, 0, path))
    with pytest.raises(cmp.OnnxArrowError, match="row 5 is outside the report's 1 rows"):
        jupyter.report_view(df, 5)
    df.attrs.clear()
    with pytest.raises(cmp.OnnxArrowError, match="names no store"):
        jupyter.report_view(df, 0)


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
    from onnx_arrow import _commands, cli

    path = str(_endless_loop_store(tmp_path / "endless.parquet"))
    for module in (cli, _commands):  # the default, shortened for the test: run and --help
        monkeypatch.setattr(module, "DEFAULT_TIMEOUT", 0.5)
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


@pytest.mark.parametrize(
    "text",
    [
        '{"skip": [' + "[" * 5000 + "]" * 5000 + "]}",
        '{"tolerance": {"x": [1' + "0" * 5000 + ", 0]}}",
    ],
)
def test_a_hostile_patterns_file_is_a_located_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "patterns.json"
    path.write_text(text)
    with pytest.raises(cmp.CompareError) as err:
        cmp.Expectations.read(path)
    assert str(path) in str(err.value)


def test_an_actual_value_that_cannot_be_kept_says_so(tmp_path: Path) -> None:
    path = _stated_store(tmp_path, None)

    def a_sequence(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        return [[object()]]  # where the model declares a tensor: nothing numpy_helper takes

    (row,) = cmp.compare(path, a_sequence).itertuples()
    assert row.status == "shape_mismatch"
    assert pd.isna(row.actual)
    assert "the actual value is not kept: the output cannot be serialized as declared" in (
        row.detail
    )

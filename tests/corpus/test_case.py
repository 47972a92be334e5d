"""A case read once (Store.case): the same data sets, made inputs, kept files and
tolerance through Store.case, Store.case_arrays, cases_from_rows and compare."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from onnx import ModelProto, helper, numpy_helper
from onnx.backend.test.runner import Runner
from store_helpers import same

from onnx_arrow import compare
from onnx_arrow.compare.runs import data_sets_of
from onnx_arrow.core.model import graph_values
from onnx_arrow.corpus import (
    REQUIRED_COLUMNS,
    Case,
    CorpusError,
    CorpusFile,
    Store,
    WriteOptions,
    cases_from_rows,
    default_source,
    write_store,
)
from onnx_arrow.corpus.case import StoredCase
from onnx_arrow.errors import DeclarationWarning

LIGHT = "light/light_bvlc_alexnet"


@pytest.fixture(scope="module")
def light_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("light") / "corpus.parquet"
    write_store(default_source(cases=[LIGHT, "node/test_abs"]), path)
    return path


def _from_rows(path: Path, case: str) -> StoredCase:
    table = pq.read_table(path, columns=[*REQUIRED_COLUMNS, "declared"])
    rows = table.filter(pc.equal(table["test_case"], case))
    (decoded,) = cases_from_rows(rows, where="rows", sources=path)  # what its copies name
    return decoded


def _shape(case: StoredCase) -> list[tuple[Any, ...]]:
    """What a case's data sets are made of, by name and path."""
    return [
        (
            d.number,
            {k: v.path for k, v in d.inputs.items()},
            {k: v.path for k, v in d.expected.items()},
            d.kept_as_bytes,
            sorted(d.made_inputs),
            d.unmade,
        )
        for d in case.sets
    ]


def test_a_light_case_reads_the_same_through_every_reader(light_store: Path) -> None:
    """The light/ model test without input files: one data set outside any folder, fed
    the inputs onnx's runner makes, through Store.case, case_arrays, cases_from_rows and
    compare alike (case_arrays gave [] for it while compare ran it)."""
    store = Store(light_store)
    stored = store.case(LIGHT)
    assert stored.model is not None
    graph_inputs = [i.name for i in graph_values(stored.model, "input")]  # not initializers
    (data_set,) = stored.sets
    assert data_set.number is None
    assert not data_set.inputs
    assert list(data_set.expected) == [0]
    assert sorted(data_set.made_inputs) == sorted(graph_inputs)
    assert data_set.unmade is None
    runner = {
        x.name: Runner.generate_dummy_data(x, seed=0, name=LIGHT, random=False)
        for x in graph_values(stored.model, "input")
    }
    assert same(data_set.made_inputs, runner)
    arrays = store.case_arrays(LIGHT)
    assert len(arrays) == 1
    assert sorted(arrays[0]["inputs"]) == sorted(graph_inputs)
    assert same(arrays, stored.data_sets())
    stored_output = data_set.expected[0].to_numpy()
    assert same(arrays[0]["outputs"], {stored.model.graph.output[0].name: stored_output})
    # the case's table holds its stored values: the output (the made inputs are not stored)
    assert store.case_table(LIGHT).column_names == list(arrays[0]["outputs"])
    assert store.case_table(LIGHT).num_rows == 1

    decoded = _from_rows(light_store, LIGHT)
    assert _shape(decoded) == _shape(stored)
    assert same(decoded.data_sets(), arrays)
    assert (decoded.tolerance, decoded.kind, decoded.model) == (
        stored.tolerance,
        stored.kind,
        stored.model,
    )

    runs = list(data_sets_of(store, LIGHT))
    assert [r.data_set for r in runs] == [d.number for d in stored.sets]
    fed: list[dict[str, Any]] = []

    def recording(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        fed.append(inputs)
        return [stored_output]

    df = compare.compare(store, recording, cases=[LIGHT], in_process=True).to_pandas()  # fed here
    assert df["status"].tolist() == ["match"]
    assert len(fed) == len(arrays)
    assert same(fed[0], arrays[0]["inputs"])


def _model() -> ModelProto:
    x = helper.make_tensor_value_info("x", 1, [2])
    y = helper.make_tensor_value_info("y", 1, [2])
    return helper.make_model(
        helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], "g", [x], [y])
    )


def _tensor(name: str, value: list[float]) -> bytes:
    return numpy_helper.from_array(np.array(value, np.float32), name).SerializeToString()


@pytest.fixture(scope="module")
def kept_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = _model().SerializeToString()
    # a sequence where the model declares a tensor: kept as bytes, never decoded
    bad = numpy_helper.from_list([np.array([1.0, 2.0], np.float32)], "x").SerializeToString()
    light = [
        CorpusFile("light/light_tiny.onnx", model),
        CorpusFile("light/light_tiny_input_0.pb", _tensor("x", [-1.0, 2.0])),
        CorpusFile("light/light_tiny_output_0.pb", _tensor("y", [1.0, 2.0])),
    ]
    kept = [
        CorpusFile("node/test_kept/model.onnx", model),
        CorpusFile("node/test_kept/README", b"not a value\n"),
        CorpusFile("node/test_kept/test_data_set_0/input_0.pb", bad),
        CorpusFile("node/test_kept/test_data_set_0/output_0.pb", _tensor("y", [1.0, 2.0])),
        CorpusFile("node/test_kept/test_data_set_1/input_0.pb", _tensor("x", [-3.0, 4.0])),
        CorpusFile("node/test_kept/test_data_set_1/output_0.pb", _tensor("y", [3.0, 4.0])),
    ]
    cases = [
        Case("light/light_tiny", "light", light, light[0].path),
        Case("node/test_kept", "node", kept, kept[0].path),
        Case("node/test_no_model", "node", [CorpusFile("node/test_no_model/data.json", b"{}")]),
    ]
    path = tmp_path_factory.mktemp("kept") / "store.parquet"
    write_store(cases, path, options=WriteOptions(keep_undecodable=True))
    return path


def test_values_outside_a_data_set_folder_are_a_data_set_of_their_own(kept_store: Path) -> None:
    store = Store(kept_store)
    stored = store.case("light/light_tiny")
    assert _shape(stored) == [
        (
            None,
            {0: "light/light_tiny_input_0.pb"},
            {0: "light/light_tiny_output_0.pb"},
            {},
            [],  # it has its input file: nothing is made
            None,
        )
    ]
    (arrays,) = store.case_arrays("light/light_tiny")
    assert arrays["inputs"]["x"].tolist() == [-1.0, 2.0]
    assert arrays["outputs"]["y"].tolist() == [1.0, 2.0]
    assert _shape(_from_rows(kept_store, "light/light_tiny")) == _shape(stored)
    table = store.case_table("light/light_tiny")  # the data sets of the case, one rule
    assert table.to_pydict() == {"x": [[-1.0, 2.0]], "y": [[1.0, 2.0]]}
    assert compare.compare(store, cases=["light/*"]).to_pandas()["status"].tolist() == ["match"]


def test_files_kept_as_bytes_surface_with_their_reason(kept_store: Path) -> None:
    store = Store(kept_store)
    stored = store.case("node/test_kept")
    assert [d.number for d in stored.sets] == [0, 1]
    bad = "node/test_kept/test_data_set_0/input_0.pb"
    assert stored.sets[0].kept_as_bytes == {("input", 0): bad}
    assert not stored.sets[0].inputs
    assert list(stored.sets[0].expected) == [0]
    assert stored.sets[1].kept_as_bytes == {}
    reasons = {f.path: f.reason for f in stored.kept}
    assert set(reasons) == {bad, "node/test_kept/README"}
    assert (
        "was kept as bytes at import (it does not decode as the model declares)" in (reasons[bad])
    )
    assert "not a value file of a data set" in reasons["node/test_kept/README"]
    by_path = {f.path: f for f in stored.kept}
    assert (by_path[bad].data_set, by_path[bad].io, by_path[bad].index) == (0, "input", 0)
    assert by_path["node/test_kept/README"].data == b"not a value\n"
    assert by_path[bad].data == {f.path: f.data for f in store.case_files("node/test_kept")}[bad]
    decoded = _from_rows(kept_store, "node/test_kept")
    assert _shape(decoded) == _shape(stored)
    assert [(f.path, f.reason, f.data) for f in decoded.kept] == [
        (f.path, f.reason, f.data) for f in stored.kept
    ]
    # what compare reports from the same case
    df = compare.compare(store, cases=["node/test_kept"]).to_pandas()
    assert df["status"].tolist() == ["error", "match"]
    assert reasons[bad] in df["error"][0]
    # the case's model file as stored, byte for byte
    assert stored.model_file == CorpusFile(
        "node/test_kept/model.onnx", _model().SerializeToString()
    )


def test_a_case_without_a_model_keeps_its_files_with_why(kept_store: Path) -> None:
    store = Store(kept_store)
    stored = store.case("node/test_no_model")
    assert stored.model is None
    assert stored.sets == []
    assert stored.model_file is None
    (kept,) = stored.kept
    assert kept.path == "node/test_no_model/data.json"
    assert kept.data == b"{}"
    assert "the case has no model to type its values" in kept.reason
    with pytest.raises(CorpusError, match=r"store\.parquet: node/test_no_model\]?.*no model"):
        store.case_arrays("node/test_no_model")
    assert _from_rows(kept_store, "node/test_no_model").kept == stored.kept


def test_a_case_is_read_in_one_pass(light_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Store.case locates and reads the case's row groups once; case_arrays and compare's
    data sets read it through Store.case only."""
    store = Store(light_store)
    located: list[str] = []
    real = Store._locate

    def locate(self: Store, case: str) -> Any:
        located.append(case)
        return real(self, case)

    monkeypatch.setattr(Store, "_locate", locate)
    store.case(LIGHT)
    assert located == [LIGHT]
    located.clear()
    store.case_arrays(LIGHT)
    list(data_sets_of(store, LIGHT))
    assert located == [LIGHT, LIGHT]


def _wide_store(tmp_path: Path) -> Path:
    """A store of one case whose input (2 floats) contradicts its declared shape [3]."""
    model = _model()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 3
    files = [
        CorpusFile("node/test_wide/model.onnx", model.SerializeToString()),
        CorpusFile("node/test_wide/test_data_set_0/input_0.pb", _tensor("x", [-1.0, 2.0])),
        CorpusFile("node/test_wide/test_data_set_0/output_0.pb", _tensor("y", [1.0, 2.0])),
    ]
    path = tmp_path / "store.parquet"
    with pytest.warns(DeclarationWarning, match="input_0.pb"):
        write_store([Case("node/test_wide", "node", files, files[0].path)], path)
    return path


def test_declarations_are_read_with_the_case(tmp_path: Path) -> None:
    """A value that contradicts its declared type is said by the case as the store's
    DeclarationWarning says it, through Store.case and cases_from_rows alike."""
    path = _wide_store(tmp_path)
    stored = Store(path).case("node/test_wide")
    (said,) = stored.contradictions
    assert "node/test_wide/test_data_set_0/input_0.pb" in said
    assert _from_rows(path, "node/test_wide").contradictions == stored.contradictions
    # rows of the required columns only: the case, without what it contradicts
    table = pq.read_table(path, columns=list(REQUIRED_COLUMNS))
    (plain,) = cases_from_rows(table)
    assert plain.contradictions == []
    assert _shape(plain) == _shape(stored)


def test_every_case_reads_the_same_from_the_store_and_from_rows(
    node_store: Any, light_store: Path, kept_store: Path
) -> None:
    """Store.case and cases_from_rows (the rows in another order) give the same case, for
    every case of the node suite, the light/ test and the stores of kept files."""
    _, node_path, _ = node_store
    for path in (node_path, light_store, kept_store):
        store = Store(path)
        table = pq.read_table(path, columns=[*REQUIRED_COLUMNS, "declared"])
        shuffled = table.take(np.random.default_rng(0).permutation(table.num_rows))
        decoded = {c.name: c for c in cases_from_rows(shuffled, where="shuffled")}
        assert sorted(decoded) == sorted(store.cases())
        for name in store.cases():
            got, want = decoded[name], store.case(name)
            assert _shape(got) == _shape(want), name
            assert (got.kind, got.tolerance, got.model, got.contradictions) == (
                want.kind,
                want.tolerance,
                want.model,
                want.contradictions,
            ), name
            assert [(f.path, f.reason, f.data) for f in got.kept] == [
                (f.path, f.reason, f.data) for f in want.kept
            ], name
            assert got.model_file == want.model_file, name
            if want.model is not None:
                assert same(got.data_sets(), store.case_arrays(name)), name


def test_a_case_whose_rows_are_not_together_reads_the_same(tmp_path: Path) -> None:
    """A store onnx-arrow did not write, a case's rows apart: the same case."""
    from store_helpers import scattered_store

    path, scattered, _ = scattered_store(tmp_path)
    for case in ("node", "node/test_tiny"):
        got, want = Store(scattered).case(case), Store(path).case(case)
        assert _shape(got) == _shape(want)
        assert [(f.path, f.reason, f.data) for f in got.kept] == [
            (f.path, f.reason, f.data) for f in want.kept
        ]
    assert [d.number for d in Store(scattered).case("node/test_tiny").sets] == [0]
    assert same(
        Store(scattered).case_arrays("node/test_tiny"), Store(path).case_arrays("node/test_tiny")
    )


@pytest.mark.parametrize(
    ("path", "claim", "says"),
    [
        ("output_0.pb", "tensor(float) [2]", "but the value is what the model declares"),
        ("input_0.pb", "tensor(int64) [3]", "but the model declares tensor(float) [3]"),
        ("model.onnx", "tensor(float) []", "holds a declaration on a row that holds no value"),
    ],
    ids=["a value that agrees", "another declaration", "the model row"],
)
def test_a_forged_declared_column_is_refused_at_its_row(
    tmp_path: Path, path: str, claim: str, says: str
) -> None:
    """The ``declared`` column says which values contradict their model: a claim that the
    model or the value belies is a located error, never a contradiction reported."""
    store = _wide_store(tmp_path)
    table = pq.read_table(store)
    forged_path = f"node/test_wide/test_data_set_0/{path}".replace("test_data_set_0/model", "model")
    declared = [
        claim if p == forged_path else d
        for p, d in zip(table["path"].to_pylist(), table["declared"].to_pylist(), strict=True)
    ]
    i = table.schema.get_field_index("declared")
    forged = tmp_path / "forged.parquet"
    pq.write_table(
        table.set_column(i, table.schema.field(i), pa.array(declared, pa.string())), forged
    )
    with pytest.raises(CorpusError, match=re.escape(says)) as err:
        Store(forged).case("node/test_wide")
    assert f"node/test_wide: {forged_path}: column 'declared'" in str(err.value)
    with pytest.raises(CorpusError, match=re.escape(says)):
        _from_rows(forged, "node/test_wide")

"""A case's own tolerances: read from its source, kept in the store, given back."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from onnx.backend.test.loader import load_node_model_tests
from store_helpers import small_corpus, tree_bytes

from onnx_arrow.corpus import (
    CorpusError,
    FolderSource,
    NodeSuiteSource,
    Store,
    Tolerance,
    cases_from_rows,
    write_store,
)
from onnx_arrow.corpus.sources import tolerance_of, wheel_data_dir


def _stated(path: Path) -> dict[str, tuple[float | None, float | None]]:
    table = pq.read_table(path, columns=["test_case", "rtol", "atol"]).to_pylist()
    out: dict[str, set[tuple[float | None, float | None]]] = {}
    for row in table:
        out.setdefault(row["test_case"], set()).add((row["rtol"], row["atol"]))
    assert all(len(v) == 1 for v in out.values()), "the same on every row of a case"
    return {case: next(iter(v)) for case, v in out.items()}


def test_node_suite_cases_keep_the_tolerances_of_onnxs_test_cases(tmp_path: Path) -> None:
    wanted = {"test_abs", "test_dft", "test_celu", "test_sequence_insert_at_back"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # onnx's generators warn about overflows they mean
        testcases = {t.name: t for t in load_node_model_tests() if t.name in wanted}
    cases = [c for c in NodeSuiteSource() if c.name.removeprefix("node/") in wanted]
    path = tmp_path / "node.parquet"
    write_store(cases, path)
    stated = _stated(path)
    assert stated == {f"node/{n}": (t.rtol, t.atol) for n, t in testcases.items()}
    store = Store(path)
    for name, t in testcases.items():
        assert store.tolerance(f"node/{name}") == Tolerance(t.rtol, t.atol)


def test_a_case_folders_data_json_states_its_tolerance(tmp_path: Path) -> None:
    src = small_corpus(tmp_path / "src")
    (src / "node" / "test_tiny" / "data.json").write_text('{"rtol": 0.01, "note": "x"}')
    path = tmp_path / "s.parquet"
    write_store(FolderSource(src), path)
    assert _stated(path) == {"node/test_tiny": (0.01, None)}
    store = Store(path)
    assert store.tolerance("node/test_tiny") == Tolerance(0.01, None)
    (case,) = cases_from_rows(pq.read_table(path))
    assert case.tolerance == Tolerance(0.01, None)
    store.export(tmp_path / "out")
    assert tree_bytes(tmp_path / "out") == tree_bytes(src)  # data.json is a file as any


def test_a_case_without_a_stated_tolerance_has_none(tmp_path: Path) -> None:
    path = tmp_path / "s.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)
    assert _stated(path) == {"node/test_tiny": (None, None)}
    assert Store(path).tolerance("node/test_tiny") is None


def test_light_models_take_the_tolerance_of_the_real_test_that_names_them(
    tmp_path: Path,
) -> None:
    data = wheel_data_dir()
    src = tmp_path / "src"
    shutil.copytree(data / "light", src / "light")
    shutil.copytree(data / "real", src / "real")
    path = tmp_path / "s.parquet"
    write_store(FolderSource(src), path)
    stated = _stated(path)
    named = 0
    for doc_path in sorted((src / "real").glob("*/data.json")):
        doc = json.loads(doc_path.read_text())
        own = (doc.get("rtol"), doc.get("atol"))
        assert stated[f"real/{doc_path.parent.name}"] == own
        light = doc["url"].removeprefix("onnx/backend/test/data/").removesuffix(".onnx")
        if f"{light}.onnx" in {p.relative_to(src).as_posix() for p in src.rglob("*.onnx")}:
            assert stated[light] == own
            named += 1
    assert named >= 9
    assert stated["light/light_densenet121"][0] == 0.002  # the one that is not onnx's default


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"{not json", "not JSON"),
        (b'{"rtol": "0.1"}', "rtol is '0.1'"),
        (b'{"rtol": -1}', "rtol is -1"),
        (b'{"atol": true}', "atol is True"),
        (b'{"rtol": 1e999}', "rtol is inf"),
        (b"[1, 2]", "holds a JSON list"),
        (b"\xff\xfe", "not JSON"),
    ],
)
def test_a_data_json_that_states_no_tolerance_well_is_refused_naming_it(
    tmp_path: Path, text: bytes, message: str
) -> None:
    src = small_corpus(tmp_path / "src")
    (src / "node" / "test_tiny" / "data.json").write_bytes(text)
    with pytest.raises(CorpusError, match=message) as err:
        write_store(FolderSource(src), tmp_path / "s.parquet")
    assert "node/test_tiny/data.json" in str(err.value)
    assert not (tmp_path / "s.parquet").exists()


def test_rows_that_disagree_on_a_tolerance_are_refused(tmp_path: Path) -> None:
    src = small_corpus(tmp_path / "src")
    (src / "node" / "test_tiny" / "data.json").write_text('{"rtol": 0.01}')
    path = tmp_path / "s.parquet"
    write_store(FolderSource(src), path)
    table = pq.read_table(path)
    rtol = table.column("rtol").to_pylist()
    rtol[0] = 0.5
    forged = table.set_column(table.schema.get_field_index("rtol"), "rtol", pa.array(rtol))
    with pytest.raises(CorpusError, match="disagree on rtol"):
        cases_from_rows(forged)
    negative = table.set_column(
        table.schema.get_field_index("atol"),
        "atol",
        pc.fill_null(table.column("atol"), -1.0),
    )
    with pytest.raises(CorpusError, match=r"atol is -1\.0"):
        cases_from_rows(negative)


def test_tolerance_of_prefers_what_the_source_states_apart_from_the_files() -> None:
    (case,) = [c for c in NodeSuiteSource() if c.name == "node/test_abs"]
    assert tolerance_of(case) == case.tolerance
    with pytest.raises(CorpusError, match="finite number"):
        Tolerance(float("nan"), None)

"""The repro of a divergence: the first divergent node as a case folder of its own, which
``compare`` with the backend traced reproduces and the reference matches."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from trace_helpers import Perturbed

from onnx_arrow import compare
from onnx_arrow.corpus import FolderSource, Store, write_store
from onnx_arrow.errors import CompareError
from onnx_arrow.trace import trace

LAYER_NORM = "node/test_layer_normalization_4d_axis1_expanded"


def imported(folder: Path, tmp_path: Path) -> Store:
    """The repro folder as a case of a corpus (node/NAME), imported to a store."""
    write_store(FolderSource(folder.parent), tmp_path / "repro.parquet")
    return Store(tmp_path / "repro.parquet")


@pytest.mark.parametrize(("case", "op_type"), [(LAYER_NORM, "Sqrt"), (LAYER_NORM, "Mul")])
def test_the_repro_reproduces_under_compare(
    store: Store, tmp_path: Path, case: str, op_type: str
) -> None:
    backend = Perturbed(op_type)
    folder = tmp_path / "cases" / "repro"
    found = trace(store, case, backend, tmp_path / "t.parquet", max_ulp=0, repro=folder)
    assert found.repro == folder
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.pb")) == [
        f"test_data_set_0/input_{k}.pb" for k in range(len(found.verdict.inputs))
    ] + [f"test_data_set_0/output_{k}.pb" for k in range(len(found.verdict.outputs))]
    model = onnx.load(folder / "model.onnx")
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node] == [op_type]
    assert model.opset_import == store.model(case).opset_import
    repro = imported(folder, tmp_path)
    perturbed = compare.compare(repro, backend, max_ulp=0).to_pandas()
    assert set(perturbed["status"]) == {"mismatch"}
    assert perturbed["max_ulp"].max() == 3
    reference = compare.compare(repro, "reference", max_ulp=0).to_pandas()
    assert set(reference["status"]) == {"match"}


def test_a_node_reading_initializers_keeps_them(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "cases" / "gemm"
    case = "node/test_gemm_default_scalar_bias"
    found = trace(store, case, Perturbed("Gemm"), tmp_path / "t.parquet", max_ulp=0, repro=folder)
    model = onnx.load(folder / "model.onnx")
    source = store.model(case)
    assert list(model.graph.initializer) == [
        t for t in source.graph.initializer if t.name in model.graph.node[0].input
    ]
    assert [i.name for i in model.graph.input] == [
        n for n in source.graph.node[0].input if n not in {t.name for t in model.graph.initializer}
    ]
    assert found.verdict.op_type == "Gemm"
    reference = compare.compare(imported(folder, tmp_path), "reference", max_ulp=0).to_pandas()
    assert set(reference["status"]) == {"match"}


def test_no_divergence_writes_no_repro(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "none"
    found = trace(store, LAYER_NORM, "reference", tmp_path / "t.parquet", repro=folder)
    assert found.repro is None
    assert not folder.exists()


def test_a_folder_in_use_is_refused(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "used"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    out = tmp_path / "t.parquet"
    with pytest.raises(CompareError, match="not an empty folder"):
        trace(store, LAYER_NORM, Perturbed("Sqrt"), out, max_ulp=0, repro=folder)
    assert (folder / "keep.txt").read_text() == "mine"
    assert not out.exists()  # refused before any work


def test_a_node_holding_graphs_keeps_its_bodies(store: Store, tmp_path: Path) -> None:
    # the Constant inside both branches perturbed: the If's output diverges, its bodies do
    # not show in the trace, and its repro is the If with both bodies
    folder = tmp_path / "cases" / "if"
    backend = Perturbed("Constant")
    found = trace(store, "node/test_if", backend, tmp_path / "t.parquet", max_ulp=0, repro=folder)
    assert (found.verdict.op_type, found.verdict.position) == ("If", 0)
    model = onnx.load(folder / "model.onnx")
    assert model.graph.node[0] == store.model("node/test_if").graph.node[0]
    repro = imported(folder, tmp_path)
    assert set(compare.compare(repro, backend, max_ulp=0).to_pandas()["status"]) == {"mismatch"}
    assert set(compare.compare(repro, "reference", max_ulp=0).to_pandas()["status"]) == {"match"}

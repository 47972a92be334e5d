"""Layouts met in the corpora runtimes keep: outputs whose model declares no type (per-layer
cut-outs), a checkout without Git LFS, another program's protobuf named ``.pb``, and
files beside the cases."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_helpers import field_lines
from numpy.lib import format as npy_format
from onnx import TensorProto, helper, numpy_helper

from onnx_arrow.cli import main
from onnx_arrow.core.model import diagnosis, lfs_pointer
from onnx_arrow.corpus import FolderSource, Store, write_store
from onnx_arrow.errors import CorpusError, OnnxArrowError, OnnxArrowWarning

LFS = (
    b"version https://git-lfs.github.com/spec/v1\n"
    b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    b"size 12345\n"
)
X = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)


def _layer(folder: Path, *, relu_out: np.ndarray | None = None) -> Path:
    """A Relu cut-out whose model declares its output without a type (as cONNXr's
    per-layer cases), with one data set."""
    (folder / "test_data_set_0").mkdir(parents=True)
    y = onnx.ValueInfoProto(name="y")  # no type
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    out = np.maximum(X, 0) if relu_out is None else relu_out
    for name, value, role in (("x", X, "input"), ("y", out, "output")):
        data = numpy_helper.from_array(value, name).SerializeToString()
        (folder / "test_data_set_0" / f"{role}_0.pb").write_bytes(data)
    return folder


def _graph_def() -> bytes:
    """A TensorFlow ``GraphDef`` (a node and the versions), written field by field."""

    def field(number: int, payload: bytes) -> bytes:
        return bytes([number << 3 | 2, len(payload)]) + payload

    return field(1, field(1, b"x") + field(2, b"Placeholder")) + field(4, bytes([0x08, 27]))


def test_outputs_the_model_does_not_type_are_stored_and_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _layer(tmp_path / "corpus" / "layer_good")
    _layer(tmp_path / "corpus" / "layer_bad", relu_out=np.abs(X))  # a planted difference
    store = tmp_path / "c.parquet"
    assert main(["import", str(tmp_path / "corpus"), str(store)]) == 0
    assert "warning" not in capsys.readouterr().err
    (value,) = [v for v in Store(store).case("layer_good").values if v.io == "output"]
    np.testing.assert_array_equal(value.to_numpy(), np.maximum(X, 0))
    assert main(["compare", str(store), "--backend", "reference"]) == 1
    fields = field_lines(capsys.readouterr().out)
    assert (fields["match"], fields["mismatch"], fields["error"]) == ("1", "1", "0")
    # info says what the model declares and what it does not
    case = tmp_path / "corpus" / "layer_good"
    assert main(["info", str(case)]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["0 y"] == "no type declared"
    assert fields["output_0.pb"] == "y  FLOAT [2, 3]"
    assert main(["info", str(case / "test_data_set_0" / "output_0.pb")]) == 0
    typed_by = field_lines(capsys.readouterr().out)["typed by"]
    assert typed_by.endswith("declares no type for output 0: read as the TensorProto it holds)")
    # run keeps such an output as the TensorProto it is, and compare reads it back
    actual = tmp_path / "actual.parquet"
    assert main(["run", str(store), "--backend", "reference", str(actual)]) == 0
    assert field_lines(capsys.readouterr().out)["kept as bytes"].startswith("0 files")
    assert main(["compare", str(store), "--actual", str(actual)]) == 1
    assert field_lines(capsys.readouterr().out)["match"] == "1"


def test_a_checkout_without_git_lfs_is_stored_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "corpus"
    case = root / "model_in_lfs"
    (case / "test_data_set_0").mkdir(parents=True)
    for path in ("model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"):
        (case / path).write_bytes(LFS)
    typed = _layer(root / "output_in_lfs")
    (typed / "test_data_set_0" / "output_0.pb").write_bytes(LFS)
    store = tmp_path / "c.parquet"
    # stored without --keep-undecodable: a pointer is no broken file, and it says so
    assert main(["import", str(root), str(store)]) == 0
    err = capsys.readouterr().err
    assert "model_in_lfs/model.onnx: it is a Git LFS pointer to a file of 12345 bytes" in err
    assert "the case is stored without a model" in err
    assert "output_in_lfs/test_data_set_0/output_0.pb: the model declares no type" in err
    assert err.count("run git lfs pull") == 2
    stored = Store(store).case("model_in_lfs")
    assert stored.model is None
    assert stored.no_model.startswith("its model model_in_lfs/model.onnx: it is a Git LFS")
    out = tmp_path / "report.parquet"
    assert main(["compare", str(store), "--backend", "reference", "--out", str(out)]) == 1
    capsys.readouterr()
    import pyarrow.parquet as pq

    rows = pq.read_table(out).to_pylist()
    skipped = next(r for r in rows if r["case"] == "model_in_lfs")
    assert skipped["status"] == "skipped"
    assert "Git LFS pointer" in skipped["detail"]
    assert main(["verify", str(root)]) == 0  # every file back, byte for byte


def test_another_programs_protobuf_is_said_to_be_one(tmp_path: Path) -> None:
    said = diagnosis(_graph_def(), "tensor") or ""
    assert said.startswith("field 4 (float_data) holds 2 bytes, not numbers of 4 bytes each")
    assert said.endswith("such as a TensorFlow GraphDef?)")
    with_type = diagnosis(_graph_def()[:-4] + bytes([0x22, 4, 0x08, 27, 0x10, 1]), "tensor")
    assert (with_type or "").startswith("it has no data_type (field 2)")
    case = _layer(tmp_path / "corpus" / "layer")
    (case / "test_data_set_0" / "input_0.pb").write_bytes(_graph_def())
    with pytest.raises(OnnxArrowError, match=r"it is no ONNX value \(another program's protobuf"):
        write_store(FolderSource(tmp_path / "corpus"), tmp_path / "c.parquet")
    assert lfs_pointer(_graph_def()) is None
    assert lfs_pointer(LFS + b"x" * 1024) is None  # pointers are under 1024 bytes


def test_files_beside_the_cases_are_left_out_with_one_warning(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    _layer(root / "cases" / "layer")
    (root / "README.md").write_text("about\n")
    (root / "run_all.sh").write_text("#!/bin/sh\n")
    (root / "cases" / "notes.txt").write_text("notes\n")
    (root / "loose").mkdir()
    (root / "loose" / "output_0.pb").write_bytes(b"\x08\x01")  # a value without a model
    source = FolderSource(root)
    with pytest.warns(OnnxArrowWarning, match=r"3 file\(s\) beside the cases left out") as said:
        names = [ref.name for ref in source.refs()]
    assert len(said) == 1
    assert "(README.md, cases/notes.txt, run_all.sh)" in str(said[0].message)
    assert names == ["cases/layer", "loose"]
    assert source.left_out == ["README.md", "cases/notes.txt", "run_all.sh"]
    only_notes = tmp_path / "notes"
    only_notes.mkdir()
    (only_notes / "readme.txt").write_text("not a corpus\n")
    with pytest.raises(CorpusError, match=r"no case \(no model.onnx, NAME.onnx, data.json"):
        list(FolderSource(only_notes).refs())


def _tract_case(folder: Path, **arrays: np.ndarray) -> Path:
    """A case as tract keeps them: the Relu model beside ``io.npz`` (no ``.pb`` at all)."""
    _layer(folder)
    for child in (folder / "test_data_set_0").iterdir():
        child.unlink()
    (folder / "test_data_set_0").rmdir()
    np.savez(folder / "io.npz", **arrays)
    return folder


def test_a_bundle_beside_the_model_is_a_data_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "corpus"
    _tract_case(root / "relu_ok", x=X, y=np.maximum(X, 0), scratch=np.zeros(2))
    _tract_case(root / "relu_bad", x=X, y=np.abs(X))
    store = tmp_path / "c.parquet"
    assert main(["import", str(root), str(store)]) == 0
    assert main(["verify", str(root)]) == 0  # the bundle back byte for byte
    capsys.readouterr()
    case = Store(store).case("relu_ok")
    (data_set,) = case.data_sets()
    np.testing.assert_array_equal(data_set["inputs"]["x"], X)
    np.testing.assert_array_equal(data_set["outputs"]["y"], np.maximum(X, 0))
    (kept,) = case.kept
    assert kept.reason.endswith("its arrays of no input or output: scratch")
    assert main(["compare", str(store), "--backend", "reference"]) == 1
    fields = field_lines(capsys.readouterr().out)
    assert (fields["match"], fields["mismatch"]) == ("1", "1")


@pytest.mark.parametrize(
    ("bundle", "said"),
    [
        (b"PK\x03\x04 not a zip", "not a numpy bundle"),
        ("pickle", "holds Python objects"),
        ("lies", "its header declares 8000000000000 bytes"),
    ],
)
def test_a_hostile_bundle_is_a_located_error(tmp_path: Path, bundle: object, said: str) -> None:
    folder = _tract_case(tmp_path / "corpus" / "relu", x=X, y=X)
    if bundle == "pickle":
        np.savez(folder / "io.npz", x=np.array([{"a": 1}], dtype=object))
    elif bundle == "lies":  # a header of 10**12 float64 over a member of a few bytes
        header = io.BytesIO()
        npy_format.write_array_header_1_0(
            header, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)}
        )
        with zipfile.ZipFile(folder / "io.npz", "w") as archive:
            archive.writestr("x.npy", header.getvalue() + b"\0" * 8)
    else:
        assert isinstance(bundle, bytes)
        (folder / "io.npz").write_bytes(bundle)
    store = tmp_path / "c.parquet"
    write_store(FolderSource(tmp_path / "corpus"), store)  # stored as the file it is
    with pytest.raises(CorpusError, match=f"^relu/io.npz.*{said}"):
        Store(store).case("relu")


def test_npy_files_named_by_graph_name_or_number_are_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "corpus"
    by_name = _tract_case(root / "by_name", x=X, y=X)
    (by_name / "io.npz").unlink()
    (by_name / "inputs").mkdir()
    (by_name / "outputs").mkdir()
    np.save(by_name / "inputs" / "x.npy", X)
    np.save(by_name / "outputs" / "y.npy", np.maximum(X, 0))
    np.save(by_name / "outputs" / "other.npy", X)  # names nothing: kept, said why
    by_number = _tract_case(root / "by_number", x=X, y=X)
    (by_number / "io.npz").unlink()
    (by_number / "test_data_set_3").mkdir()
    np.save(by_number / "test_data_set_3" / "input_0.npy", X)
    np.save(by_number / "test_data_set_3" / "output_0.npy", np.abs(X))  # a planted mismatch
    store = tmp_path / "c.parquet"
    assert main(["import", str(root), str(store)]) == 0
    case = Store(store).case("by_name")
    np.testing.assert_array_equal(case.data_sets()[0]["outputs"]["y"], np.maximum(X, 0))
    assert [k.reason.split(" ", 1)[1] for k in case.kept] == [
        "is read as the model's input 0 ('x')",
        "names none of the model's inputs or outputs",
        "is read as the model's output 0 ('y')",
    ]
    assert [s.number for s in Store(store).case("by_number").sets] == [3]
    assert main(["compare", str(store), "--backend", "reference"]) == 1
    fields = field_lines(capsys.readouterr().out)
    assert (fields["match"], fields["mismatch"]) == ("1", "1")

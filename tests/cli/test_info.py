"""``onnx-arrow info`` (:mod:`onnx_arrow.cli.info`) on a .pb file, a model, a store and a
case folder, run in-process through ``main``."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from cli_helpers import error_line, field_lines
from onnx import TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow import jupyter
from onnx_arrow.cli import main
from onnx_arrow.core.dtypes import DTYPES
from onnx_arrow.corpus import FolderSource, Store, write_store
from onnx_arrow.corpus.facts import store_facts
from onnx_arrow.corpus.format import FORMAT_VERSION
from onnx_arrow.errors import DeclarationWarning


def test_info_prints_name_dtype_dims_and_statistics(
    tensor_pb: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tensor_pb)]) == 0
    out = capsys.readouterr().out
    fields = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.splitlines())
    assert fields["name"] == "x"
    assert fields["dtype"] == "FLOAT (1)"
    assert fields["dims"] == "[2, 3]"
    assert fields["arrow"] == "arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]"
    assert fields["elements"] == "6"
    # the store's rule: NaN ignored, infinities taken as they are
    assert (fields["min"], fields["max"], fields["mean"]) == ("1", "inf", "inf")
    assert (fields["nan"], fields["inf"]) == ("1", "1")


@pytest.mark.parametrize("row", list(DTYPES.values()), ids=lambda r: r.name)
def test_info_reads_every_dtype(
    row: onnx_arrow.DType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if row.name == "STRING":
        tensor = helper.make_tensor("v", TensorProto.STRING, [2], [b"a", b"\xff"])
    else:
        tensor = numpy_helper.from_array(np.ones((2, 2), dtype=row.numpy), "v")
    path = tmp_path / "v.pb"
    onnx.save_tensor(tensor, str(path))
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"dtype     {row.name} ({row.onnx})" in out
    has_min = re.search(r"^min ", out, re.MULTILINE) is not None
    assert has_min == (row.name not in ("STRING", "BOOL", "COMPLEX64", "COMPLEX128"))


def test_info_statistics_widen_minifloats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = np.array([0.5, -2.0, np.nan, -np.inf, 3.0], dtype=ml_dtypes.bfloat16)
    path = tmp_path / "w.pb"
    onnx.save_tensor(numpy_helper.from_array(values, "w"), str(path))
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^min\s+-inf$", out, re.MULTILINE)
    assert re.search(r"^max\s+3$", out, re.MULTILINE)
    assert re.search(r"^nan\s+1$", out, re.MULTILINE)
    assert re.search(r"^inf\s+1$", out, re.MULTILINE)


def test_info_of_an_empty_tensor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "e.pb"
    onnx.save_tensor(numpy_helper.from_array(np.zeros((0, 3), np.float32), "e"), str(path))
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "dims      [0, 3]" in out
    assert "elements  0" in out
    assert "min" not in out


def test_info_resolves_external_data_next_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = np.arange(4, dtype=np.float32)
    (tmp_path / "x.bin").write_bytes(data.tobytes())
    tensor = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[4])
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value="x.bin")
    path = tmp_path / "x.pb"
    path.write_bytes(tensor.SerializeToString())
    monkeypatch.chdir(tmp_path.parent)  # not the file's folder
    assert main(["info", str(path)]) == 0
    assert re.search(r"^mean\s+1.5$", capsys.readouterr().out, re.MULTILINE)


def test_info_typed_by_a_model_input(
    tensor_pb: Path, model_onnx: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tensor_pb), "--model", str(model_onnx), "--input", "x"]) == 0
    out = capsys.readouterr().out
    assert "input 0 'x'" in out
    assert "onnx.variable_shape_tensor[value_type=float, ndim=2, uniform_shape=[null,3]]" in out


def test_info_typed_by_a_model_output_index(
    tensor_pb: Path, model_onnx: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tensor_pb), "--model", str(model_onnx), "--output", "0"]) == 0
    out = capsys.readouterr().out
    assert "output 0 'y'" in out
    assert "onnx.variable_rank_tensor[value_type=float]" in out


def test_info_value_that_does_not_fit_the_declared_type(
    tmp_path: Path, model_onnx: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value that contradicts its declaration is read with its own type, and said (as
    import stores and flags it)."""
    path = tmp_path / "s.pb"
    onnx.save_tensor(helper.make_tensor("s", TensorProto.STRING, [1], [b"a"]), str(path))
    assert main(["info", str(path), "--model", str(model_onnx), "--input", "x"]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["contradicts"].startswith("the declared tensor(float)")
    assert fields["dtype"] == "STRING (8)"


def test_info_unknown_model_input(
    tensor_pb: Path, model_onnx: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tensor_pb), "--model", str(model_onnx), "--input", "z"]) == 1
    line = error_line(capsys.readouterr().err)
    assert "'z'" in line
    assert "0: 'x'" in line


def test_info_model_that_is_not_a_model(
    tensor_pb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bogus = tmp_path / "bogus.onnx"
    bogus.write_bytes(b"\xff\xff\xff")
    assert main(["info", str(tensor_pb), "--model", str(bogus), "--input", "0"]) == 1
    assert "not an ONNX model" in error_line(capsys.readouterr().err)


def test_info_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.pb"
    assert main(["info", str(missing)]) == 1
    line = error_line(capsys.readouterr().err)
    assert str(missing) in line


def test_info_on_a_model(model_onnx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(model_onnx)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^opsets +ai\.onnx \d+$", out, re.MULTILINE)
    assert re.search(r"^  0 x +tensor\(float\) \[N, 3\]$", out, re.MULTILINE)
    assert re.search(r"^  0 y +tensor\(float\)", out, re.MULTILINE)
    assert re.search(r"^operators +Identity 1$", out, re.MULTILINE)


def test_info_on_a_model_that_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bogus = tmp_path / "model.onnx"
    bogus.write_bytes(b"\xff\xff\xff")
    assert main(["info", str(bogus)]) == 1
    assert "not an ONNX model" in error_line(capsys.readouterr().err)


def test_info_on_a_model_file_named_pb_says_what_it_is_not(
    model_onnx: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "weights.pb"
    path.write_bytes(model_onnx.read_bytes())
    assert main(["info", str(path)]) == 1
    line = error_line(capsys.readouterr().err)
    assert "it holds an ONNX model (a ModelProto), not a value: rename it model.onnx" in line
    assert "--model MODEL.onnx --input K" not in line  # advice that does not apply


def test_info_on_a_text_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "readme.txt"
    path.write_text("This folder holds the test data.\nSee the README.\n")
    assert main(["info", str(path)]) == 1
    line = error_line(capsys.readouterr().err)
    assert "a text file, not a protobuf message" in line
    assert "wire type" not in line


def _container_case(tmp_path: Path) -> Path:
    """A case folder whose input is a sequence and whose output an optional."""
    seq_type = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.INT64, None)
    )
    opt_type = helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    )
    graph = helper.make_graph(
        [],
        "g",
        [helper.make_value_info("seq", seq_type)],
        [helper.make_value_info("opt", opt_type)],
    )
    case = tmp_path / "test_containers"
    data = case / "test_data_set_0"
    data.mkdir(parents=True)
    onnx.save(helper.make_model(graph), str(case / "model.onnx"))
    seq = helper.make_sequence(
        "seq",
        onnx.SequenceProto.TENSOR,
        [numpy_helper.from_array(np.arange(n, dtype=np.int64)) for n in (4, 3, 2)],
    )
    (data / "input_0.pb").write_bytes(seq.SerializeToString())
    opt = helper.make_optional(
        "optional_output",
        onnx.OptionalProto.TENSOR,
        numpy_helper.from_array(np.ones(2, dtype=np.float32)),
    )
    (data / "output_0.pb").write_bytes(opt.SerializeToString())
    return case


def test_info_types_a_pb_by_its_case_folders_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _container_case(tmp_path)
    assert main(["info", str(case / "test_data_set_0" / "input_0.pb")]) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"^typed by .*model\.onnx: input 0 'seq' \(its case folder's model\)$", out, re.M
    )
    assert re.search(r"^value +sequence of 3: INT64 \[4\], INT64 \[3\], INT64 \[2\]$", out, re.M)
    assert main(["info", str(case / "test_data_set_0" / "output_0.pb")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^declared +optional\(tensor\(float\)\)$", out, re.M), out
    assert re.search(r"^value +optional, FLOAT \[2\]$", out, re.M)


def test_info_types_a_sequence_by_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _container_case(tmp_path)
    alone = tmp_path / "seq.pb"
    alone.write_bytes((case / "test_data_set_0" / "input_0.pb").read_bytes())
    assert main(["info", str(alone), "--model", str(case / "model.onnx"), "--input", "seq"]) == 0
    out = capsys.readouterr().out
    assert "sequence of 3" in out
    assert "Traceback" not in out


@pytest.mark.parametrize("name", ["input_0.pb", "output_0.pb"])
def test_info_on_a_container_outside_its_case_says_how_to_type_it(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _container_case(tmp_path)
    alone = tmp_path / name
    alone.write_bytes((case / "test_data_set_0" / name).read_bytes())
    assert main(["info", str(alone)]) == 1
    line = error_line(capsys.readouterr().err)
    assert "not a TensorProto" in line
    assert "--model MODEL.onnx --input K" in line


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.usefixtures("alarm")
def test_info_fifo_is_an_error_not_a_hang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo.pb"
    os.mkfifo(fifo)
    assert main(["info", str(fifo)]) == 1
    assert "not a regular file" in error_line(capsys.readouterr().err)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.usefixtures("alarm")
def test_info_fifo_model_is_an_error_not_a_hang(
    tensor_pb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo.onnx"
    os.mkfifo(fifo)
    assert main(["info", str(tensor_pb), "--model", str(fifo), "--input", "0"]) == 1
    assert "not a regular file" in error_line(capsys.readouterr().err)


def test_info_model_symlink_is_followed(
    tensor_pb: Path, model_onnx: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "link.onnx"
    link.symlink_to(model_onnx)
    assert main(["info", str(tensor_pb), "--model", str(link), "--input", "x"]) == 0
    assert f"{link}: input 0 'x'" in capsys.readouterr().out


def test_info_model_that_cannot_be_read(
    tensor_pb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.onnx"
    assert main(["info", str(tensor_pb), "--model", str(missing), "--input", "0"]) == 1
    line = error_line(capsys.readouterr().err)
    assert f"{missing}: cannot open (No such file or directory)" in line
    assert "corpus" not in line  # the reader's advice on corpora does not apply here
    assert main(["info", str(tensor_pb), "--model", str(tmp_path), "--input", "0"]) == 1
    line = error_line(capsys.readouterr().err)
    assert f"{tmp_path}: a directory, not a regular file" in line
    assert "corpus" not in line


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.usefixtures("alarm")
def test_info_model_symlink_to_a_fifo_is_an_error_not_a_hang(
    tensor_pb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link.onnx"
    link.symlink_to(fifo)
    assert main(["info", str(tensor_pb), "--model", str(link), "--input", "0"]) == 1
    assert f"{link}: a FIFO (named pipe), not a regular file" in error_line(capsys.readouterr().err)


def test_info_on_a_store(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(store)]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["format"] == f"onnx-arrow corpus store, version {FORMAT_VERSION}"
    assert fields["created by"] == f"onnx-arrow {onnx_arrow.__version__} (onnx {onnx.__version__})"
    assert (fields["cases"], fields["node"]) == ("1", "1")
    assert (fields["files"], fields["model"], fields["value"], fields["file"]) == (
        "4",
        "1",
        "2",
        "1",
    )
    assert fields["FLOAT"] == "2"
    assert fields["size"].startswith(f"{store.stat().st_size} bytes")


def test_info_and_the_jupyter_view_show_the_same_store_facts(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    facts = store_facts(Store(store))
    assert main(["info", str(store)]) == 0
    fields = field_lines(capsys.readouterr().out)
    view = jupyter.text(Store(store))
    shown = {
        "format": facts.format,
        "created by": facts.created_by,
        "row groups": str(facts.row_groups),
        "rows": str(facts.rows),
        "cases": str(facts.cases),
        "files": str(facts.files),
    }
    for key, value in shown.items():
        assert fields[key] == value, key
        assert re.search(rf"^  {key} +{re.escape(value)}$", view, re.MULTILINE), key
    assert fields["tensors"] == f"{facts.tensors} (value and element rows, by dtype)"
    assert re.search(rf"^  tensors +{facts.tensors}$", view, re.MULTILINE)
    for name, n in facts.dtypes.items():
        assert fields[name] == str(n)
        assert re.search(rf"^    {name} +{n} +{facts.elements[name]}$", view, re.MULTILINE)


def test_info_on_a_case_folder(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(corpus / "node" / "test_tiny")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  0 x\s+tensor\(float\) \[2\]$", out, re.MULTILINE)
    assert re.search(r"^  0 y\s+tensor\(float\) \[2\]$", out, re.MULTILINE)
    assert re.search(r"^test_data_set_0$", out, re.MULTILINE)
    assert re.search(r"^  input_0\.pb\s+x  FLOAT \[2\]$", out, re.MULTILINE)
    assert re.search(r"^  output_0\.pb\s+y  FLOAT \[2\]$", out, re.MULTILINE)
    assert re.search(r"^  README\s+12 bytes$", out, re.MULTILINE)


def test_info_on_a_case_folder_of_containers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seq_type = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.INT64, None)
    )
    opt_type = helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [1])
    )
    graph = helper.make_graph(
        [helper.make_node("Identity", ["s"], ["t"])],
        "g",
        [helper.make_value_info("s", seq_type), helper.make_value_info("o", opt_type)],
        [helper.make_value_info("t", seq_type)],
    )
    case = tmp_path / "test_seq"
    (case / "test_data_set_0").mkdir(parents=True)
    onnx.save_model(helper.make_model(graph), case / "model.onnx")
    seq = numpy_helper.from_list([np.arange(3), np.arange(2), np.arange(1), np.arange(0)], "s")
    absent = numpy_helper.from_optional(None, "o", dtype=onnx.OptionalProto.TENSOR)
    (case / "test_data_set_0" / "input_0.pb").write_bytes(seq.SerializeToString())
    (case / "test_data_set_0" / "input_1.pb").write_bytes(absent.SerializeToString())
    assert main(["info", str(case)]) == 0
    out = capsys.readouterr().out
    assert "seq(tensor(int64))" in out
    assert "s  sequence of 4: INT64 [3], INT64 [2], INT64 [1], ..." in out
    assert "o  optional, absent" in out


def test_info_on_a_folder_that_is_not_a_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tmp_path)]) == 1
    assert "a folder without a model (model.onnx, or one NAME.onnx beside" in error_line(
        capsys.readouterr().err
    )


def test_info_on_a_store_takes_no_model(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(store), "--model", "m.onnx", "--input", "0"]) == 2
    assert ".pb file only" in capsys.readouterr().err


@pytest.mark.parametrize("link", ["value", "data set"])
def test_info_on_a_case_folder_reads_nothing_through_a_symlink(
    tmp_path: Path,
    tensor_pb: Path,
    model_onnx: Path,
    capsys: pytest.CaptureFixture[str],
    link: str,
) -> None:
    case = tmp_path / "case"
    (case / "test_data_set_0").mkdir(parents=True)
    shutil.copy(model_onnx, case / "model.onnx")
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(tensor_pb, outside / "input_0.pb")
    if link == "value":
        (case / "test_data_set_0" / "input_0.pb").symlink_to(outside / "input_0.pb")
        named = case / "test_data_set_0" / "input_0.pb"
    else:
        (case / "test_data_set_0").rmdir()
        (case / "test_data_set_0").symlink_to(outside, target_is_directory=True)
        named = case / "test_data_set_0"
    assert main(["info", str(case)]) == 1
    err = error_line(capsys.readouterr().err)
    assert f"{named}: a symbolic link" in err


def test_info_on_runtime_layouts_reads_them_as_import_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Files paired by the name inside, a NAME.onnx case, a case without expected outputs
    or without a model: info says of each folder what import stores of it."""
    from layout_corpora import runtime_corpus

    root = runtime_corpus(tmp_path / "src") / "kinference"
    assert main(["info", str(root / "named")]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["model"].startswith("named.onnx, ")
    assert re.fullmatch(r"output_probability +sequence of 2: map of 3 .*", fields["output_0.pb"])
    assert re.fullmatch(r"output_label +INT64 \[2\]", fields["output_1.pb"])
    assert main(["info", str(root / "rf_iris" / "test_data_set_0" / "output_0.pb")]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["typed by"].endswith(
        "output 1 'output_probability' (its case folder's model, named by the file)"
    )
    assert main(["info", str(root / "fastgelu")]) == 0
    assert re.fullmatch(r"Y +FLOAT \[2\]", field_lines(capsys.readouterr().out)["output_1.pb"])
    assert main(["info", str(root / "no_outputs")]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["test_data_set_0"] == "no expected outputs: compare and run skip it"
    assert main(["info", str(root / "no_model")]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["model"].startswith("none: import stores its files as they are")
    assert fields["files"] == "2"


def test_info_on_values_that_contradict_their_declaration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from layout_corpora import contradicting

    case = contradicting(tmp_path / "contra")
    assert main(["info", str(case)]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["input_0.pb"] == "x  FLOAT [2, 3] (contradicts the declared tensor(float) [])"
    assert fields["output_0.pb"] == (
        "s  sequence of 1: INT64 [3] (contradicts the declared seq(tensor(float)))"
    )
    assert main(["info", str(case / "test_data_set_0" / "input_0.pb")]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["contradicts"] == "the declared tensor(float) []: read with its own type"
    assert fields["dims"] == "[2, 3]"
    with pytest.warns(DeclarationWarning):
        write_store(FolderSource(case), tmp_path / "s.parquet")
    assert main(["info", str(tmp_path / "s.parquet")]) == 0
    assert field_lines(capsys.readouterr().out)["contradicting"].startswith(
        "2 values hold another type than their model declares"
    )

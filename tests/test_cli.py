"""The ``onnx-arrow`` command line, run in-process through ``main``."""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_arrow
import onnx_arrow._commands
from onnx_arrow import jupyter
from onnx_arrow._summary import store_facts
from onnx_arrow.cli import example_tensors, main
from onnx_arrow.core.dtypes import DTYPES
from onnx_arrow.corpus import Case, FolderSource, NodeSuiteSource, Store, WriteOptions, write_store
from onnx_arrow.corpus.format import FORMAT_VERSION
from onnx_arrow.corpus.sources import wheel_data_dir


def _error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("onnx-arrow: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture
def tensor_pb(tmp_path: Path) -> Path:
    x = np.array([[1.0, np.nan, 3.0], [np.inf, 5.0, 6.0]], dtype=np.float32)
    path = tmp_path / "input_0.pb"
    onnx.save_tensor(numpy_helper.from_array(x, "x"), str(path))
    return path


@pytest.fixture
def model_onnx(tmp_path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph), str(path))
    return path


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail instead of hanging if something blocks on a FIFO."""
    if not hasattr(signal, "SIGALRM"):
        pytest.skip("needs SIGALRM")

    def _timeout(signum: int, frame: object) -> None:
        raise TimeoutError("blocked on a FIFO")

    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(10)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- example ----------------------------------------------------------------------


def test_example_round_trips_every_tensor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["example"]) == 0
    out = capsys.readouterr().out
    count = len(example_tensors())
    assert f"round trip: {count}/{count} byte-identical" in out
    for name in ("FLOAT", "INT64", "BFLOAT16", "FLOAT8E4M3FN", "BOOL", "STRING"):
        assert re.search(rf"^  onnx   {name} \[", out, re.MULTILINE), name
    assert "onnx.fixed_shape_tensor[value_type=onnx.bfloat16, shape=[2,2]]" in out
    assert r"b'\xff\xfe'" in out


def test_example_covers_what_it_promises() -> None:
    tensors = example_tensors()
    kinds = {DTYPES[t.data_type].name for t in tensors}
    assert kinds == {"FLOAT", "INT64", "BFLOAT16", "FLOAT8E4M3FN", "BOOL", "STRING"}
    strings = next(t for t in tensors if t.data_type == TensorProto.STRING)
    assert not all(_is_utf8(s) for s in strings.string_data)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_example_exits_1_when_a_round_trip_differs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = onnx_arrow.from_arrow

    def renaming(array: object) -> list[TensorProto]:
        out = real(array)  # type: ignore[arg-type]
        out[0].name += "_changed"
        return out

    monkeypatch.setattr(onnx_arrow, "from_arrow", renaming)
    assert main(["example"]) == 1
    assert "round trip: 0/6 byte-identical" in capsys.readouterr().out


# --- info -------------------------------------------------------------------------


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
    path = tmp_path / "s.pb"
    onnx.save_tensor(helper.make_tensor("s", TensorProto.STRING, [1], [b"a"]), str(path))
    assert main(["info", str(path), "--model", str(model_onnx), "--input", "x"]) == 1
    line = _error_line(capsys.readouterr().err)
    assert str(path) in line
    assert "STRING" in line


def test_info_unknown_model_input(
    tensor_pb: Path, model_onnx: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tensor_pb), "--model", str(model_onnx), "--input", "z"]) == 1
    line = _error_line(capsys.readouterr().err)
    assert "'z'" in line
    assert "0: 'x'" in line


def test_info_model_that_is_not_a_model(
    tensor_pb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bogus = tmp_path / "bogus.onnx"
    bogus.write_bytes(b"\xff\xff\xff")
    assert main(["info", str(tensor_pb), "--model", str(bogus), "--input", "0"]) == 1
    assert "not an ONNX model" in _error_line(capsys.readouterr().err)


def test_info_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.pb"
    assert main(["info", str(missing)]) == 1
    line = _error_line(capsys.readouterr().err)
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
    assert "not an ONNX model" in _error_line(capsys.readouterr().err)


def test_info_on_a_model_file_named_pb_says_what_it_is_not(
    model_onnx: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "weights.pb"
    path.write_bytes(model_onnx.read_bytes())
    assert main(["info", str(path)]) == 1
    line = _error_line(capsys.readouterr().err)
    assert "not a TensorProto" in line
    assert "--model MODEL.onnx --input K" in line


def test_info_on_a_text_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "readme.txt"
    path.write_text("This folder holds the test data.\nSee the README.\n")
    assert main(["info", str(path)]) == 1
    line = _error_line(capsys.readouterr().err)
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
    line = _error_line(capsys.readouterr().err)
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
    assert "not a regular file" in _error_line(capsys.readouterr().err)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.usefixtures("alarm")
def test_info_fifo_model_is_an_error_not_a_hang(
    tensor_pb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo.onnx"
    os.mkfifo(fifo)
    assert main(["info", str(tensor_pb), "--model", str(fifo), "--input", "0"]) == 1
    assert "not a regular file" in _error_line(capsys.readouterr().err)


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
    line = _error_line(capsys.readouterr().err)
    assert f"{missing}: cannot open (No such file or directory)" in line
    assert "corpus" not in line  # the reader's advice on corpora does not apply here
    assert main(["info", str(tensor_pb), "--model", str(tmp_path), "--input", "0"]) == 1
    line = _error_line(capsys.readouterr().err)
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
    assert f"{link}: a FIFO (named pipe), not a regular file" in _error_line(
        capsys.readouterr().err
    )


# --- usage ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["bogus"],
        ["info"],
        ["example", "extra"],
        ["info", "x.pb", "--model", "m.onnx"],
        ["info", "x.pb", "--input", "0"],
        ["info", "x.pb", "--model", "m.onnx", "--input", "0", "--output", "0"],
    ],
    ids=repr,
)
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: onnx-arrow" in err
    assert "Traceback" not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"onnx-arrow {onnx_arrow.__version__}"


def test_help_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    assert "onnx-arrow info" in out


def test_python_dash_m_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "onnx_arrow", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: onnx-arrow")


# --- the corpus store: import, export, verify, generate, info ------------------------


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _fields(out: str) -> dict[str, str]:
    """``key  value`` lines (indented ones too) as a dict."""
    pairs = (re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in out.splitlines())
    return {p[0]: p[1] if len(p) > 1 else "" for p in pairs}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """One case, node/test_tiny: a model, a data set of two tensors, and a README."""
    root = tmp_path / "src"
    case = root / "node" / "test_tiny"
    (case / "test_data_set_0").mkdir(parents=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], "g", [x], [y])
    onnx.save_model(helper.make_model(graph), case / "model.onnx")
    for name, values in (("input_0", [-1.0, 2.0]), ("output_0", [1.0, 2.0])):
        tensor = numpy_helper.from_array(np.array(values, np.float32), name[0])
        (case / "test_data_set_0" / f"{name}.pb").write_bytes(tensor.SerializeToString())
    (case / "README").write_text("not a value\n")
    return root


@pytest.fixture
def store(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "corpus.parquet"
    assert main(["import", str(corpus), str(out)]) == 0
    capsys.readouterr()
    return out


def test_import_then_export_gives_the_same_bytes(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "corpus.parquet"
    assert main(["import", str(corpus), str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    fields = _fields(captured.out)
    assert (fields["cases"], fields["files"], fields["rows"], fields["row groups"]) == (
        "1",
        "4",
        "4",
        "1",
    )
    size = out.stat().st_size
    assert fields["store size"].startswith(f"{size} bytes")
    source = sum(len(data) for data in _tree_bytes(corpus).values())
    assert fields["source"] == f"{source} bytes"
    assert fields["ratio"].startswith(f"{size / source:.3f} ")
    assert main(["export", str(out), str(tmp_path / "dest")]) == 0
    assert f"exported 4 files, {source} bytes, to " in capsys.readouterr().out
    assert _tree_bytes(tmp_path / "dest") == _tree_bytes(corpus)


def test_export_in_several_processes(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for k in range(3):
        shutil.copytree(corpus / "node" / "test_tiny", corpus / "node" / f"test_tiny{k}")
    store = tmp_path / "corpus.parquet"
    write_store(FolderSource(corpus), store, options=WriteOptions(row_group_bytes=1))
    assert Store(store).num_row_groups == 4
    assert main(["export", "--jobs", "2", str(store), str(tmp_path / "dest")]) == 0
    assert "exported 16 files" in capsys.readouterr().out
    assert _tree_bytes(tmp_path / "dest") == _tree_bytes(corpus)


def test_import_with_one_argument_imports_the_default_corpus(
    corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("onnx_arrow._commands.default_source", lambda: FolderSource(corpus))
    out = tmp_path / "default.parquet"
    assert main(["import", str(out)]) == 0
    assert "the built-in default corpus" in capsys.readouterr().out
    assert Store(out).cases() == ["node/test_tiny"]


def test_import_refuses_an_existing_store_without_force(
    corpus: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = store.read_bytes()
    assert main(["import", str(corpus), str(store)]) == 1
    line = _error_line(capsys.readouterr().err)
    assert str(store) in line
    assert "--force" in line
    assert store.read_bytes() == before
    assert main(["import", "--force", str(corpus), str(store)]) == 0


@pytest.mark.parametrize("command", ["export", "generate"])
def test_export_into_a_missing_folder_says_so(
    command: str, store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "deep" / "a" / "b"
    argv = [command, str(store), str(dest)] if command == "export" else [command, str(dest)]
    assert main(argv) == 1
    line = _error_line(capsys.readouterr().err)
    assert f"the folder to write it into, {dest.parent}, does not exist; create it first" in line
    assert ".partial" not in line
    assert not (tmp_path / "deep").exists()


def test_import_refuses_a_store_inside_the_corpus(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import", str(corpus), str(corpus / "store.parquet")]) == 2
    assert "inside SRC" in capsys.readouterr().err
    assert not (corpus / "store.parquet").exists()


def test_import_names_the_file_that_does_not_decode(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = corpus / "node" / "test_tiny" / "test_data_set_0" / "input_0.pb"
    bad.write_bytes(b"\x08\x02\x10\x01\x4a\x03abc")  # dims [2], FLOAT, 3 bytes of raw_data
    out = tmp_path / "corpus.parquet"
    assert main(["import", str(corpus), str(out)]) == 1
    line = _error_line(capsys.readouterr().err)
    assert "node/test_tiny/test_data_set_0/input_0.pb: does not decode as tensor(float)" in line
    assert "the type the model declares for input 0" in line
    assert "--keep-undecodable" in line
    assert not out.exists()
    assert main(["import", "--keep-undecodable", str(corpus), str(out)]) == 0
    captured = capsys.readouterr()
    warning = captured.err.strip()
    assert warning.startswith("onnx-arrow: warning: node/test_tiny/test_data_set_0/input_0.pb")
    assert _fields(captured.out)["warnings"].startswith("1 files kept as bytes")
    assert main(["export", str(out), str(tmp_path / "dest")]) == 0
    assert _tree_bytes(tmp_path / "dest") == _tree_bytes(corpus)


def test_import_compression_level(
    corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "corpus.parquet"
    assert main(["import", "--compression-level", "1", str(corpus), str(out)]) == 0
    seen = []
    real = onnx_arrow._commands.write_store

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["options"])
        return real(*args, **kwargs)

    monkeypatch.setattr(onnx_arrow._commands, "write_store", recording)
    assert main(["import", "--force", "--compression-level", "9", str(corpus), str(out)]) == 0
    assert (seen[0].compression_level, seen[0].float_compression_level) == (9, 9)
    assert main(["import", "--compression-level", "23", str(corpus), str(out)]) == 2
    assert "1 to 22" in capsys.readouterr().err


def test_import_in_several_processes_writes_the_same_store(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = tmp_path / "one.parquet", tmp_path / "two.parquet"
    assert main(["import", str(corpus), str(one)]) == 0
    assert main(["import", "--jobs", "2", str(corpus), str(two)]) == 0
    assert one.read_bytes() == two.read_bytes()
    assert main(["import", "--jobs", "0", str(corpus), str(two)]) == 2
    assert "not 1 or more" in capsys.readouterr().err


def test_export_refuses_a_non_empty_folder(
    corpus: Path, store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("x")
    assert main(["export", str(store), str(dest)]) == 1
    line = _error_line(capsys.readouterr().err)
    assert str(dest) in line
    assert "not empty" in line
    assert "--force" in line
    assert sorted(p.name for p in dest.iterdir()) == ["keep.txt"]
    assert main(["export", "--force", str(store), str(dest)]) == 0
    assert _tree_bytes(dest) == {**_tree_bytes(corpus), "keep.txt": b"x"}


def test_export_of_a_file_that_is_not_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet")
    assert main(["export", str(junk), str(tmp_path / "dest")]) == 1
    assert str(junk) in _error_line(capsys.readouterr().err)
    assert not (tmp_path / "dest").exists()


def test_verify_the_model_tests_of_the_wheel(capsys: pytest.CaptureFixture[str]) -> None:
    root = wheel_data_dir()
    count = sum(1 for p in root.rglob("*") if p.is_file())
    assert main(["verify", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{count} files byte-identical after import and export; ")


def test_verify_lists_the_differences(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_export = onnx_arrow._commands.export_store

    def damaging_export(store: Any, dest: Any, **kwargs: Any) -> dict[str, int]:
        counts = real_export(store, dest, **kwargs)
        root = Path(dest) / "node" / "test_tiny"
        value = root / "test_data_set_0" / "input_0.pb"
        data = bytearray(value.read_bytes())
        data[-1] ^= 0xFF
        value.write_bytes(bytes(data))
        (root / "README").unlink()
        for k in range(22):
            (root / f"extra_{k:02}").write_bytes(b"")
        return counts

    monkeypatch.setattr(onnx_arrow._commands, "export_store", damaging_export)
    assert main(["verify", str(corpus)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("missing from the export: node/test_tiny/README")
    assert lines[1].startswith("different bytes: node/test_tiny/test_data_set_0/input_0.pb: ")
    assert "first difference at byte" in lines[1]
    assert lines[2] == "not in the source: node/test_tiny/extra_00"
    assert len(lines) == 22
    assert lines[20] == "... and 4 more differences"
    assert lines[21] == "2 files byte-identical, 24 differences"
    assert "24 differences" in _error_line(captured.err)


def test_verify_of_something_that_is_not_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", str(tmp_path / "missing")]) == 1
    assert "not a folder" in _error_line(capsys.readouterr().err)


def test_generate_writes_the_node_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[Case] = []

    class Recording(NodeSuiteSource):
        def __iter__(self) -> Iterator[Case]:
            for case in super().__iter__():
                built.append(case)
                yield case

    monkeypatch.setattr(onnx_arrow._commands, "NodeSuiteSource", Recording)
    dest = tmp_path / "suite"
    assert main(["generate", str(dest)]) == 0
    files = {f.path: f.data for case in built for f in case.files}
    assert len(built) > 1000
    out = capsys.readouterr().out
    assert out.startswith(f"wrote {len(files)} files, ")
    assert f"of {len(built)} node suite cases" in out
    assert (dest / "node" / "test_abs" / "test_data_set_0" / "input_0.pb").is_file()
    assert _tree_bytes(dest) == files
    assert [p.name for p in tmp_path.iterdir()] == ["suite"]  # no temporary folder left


def test_generate_refuses_a_non_empty_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "keep.txt").write_text("x")
    assert main(["generate", str(tmp_path)]) == 1
    assert "--force" in _error_line(capsys.readouterr().err)


def test_info_on_a_store(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(store)]) == 0
    fields = _fields(capsys.readouterr().out)
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
    fields = _fields(capsys.readouterr().out)
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
    assert "without model.onnx" in _error_line(capsys.readouterr().err)


def test_info_on_a_store_takes_no_model(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(store), "--model", "m.onnx", "--input", "0"]) == 2
    assert ".pb file only" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.usefixtures("alarm")
def test_import_fifo_is_an_error_not_a_hang(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(corpus / "node" / "test_tiny" / "test_data_set_0" / "input_1.pb")
    out = tmp_path / "corpus.parquet"
    assert main(["import", str(corpus), str(out)]) == 1
    line = _error_line(capsys.readouterr().err)
    assert "node/test_tiny/test_data_set_0/input_1.pb" in line
    assert "not a regular file" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["import", str(fifo), str(out)]) == 1
    assert str(fifo) in _error_line(capsys.readouterr().err)


def test_import_of_an_empty_folder_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    for argv in (
        ["import", str(tmp_path / "empty"), str(tmp_path / "e.parquet")],
        ["verify", str(tmp_path / "empty")],
    ):
        assert main(argv) == 1
        assert "the folder is empty" in _error_line(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


def test_import_of_a_folder_without_a_model_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not a corpus\n")
    assert main(["import", str(tmp_path / "notes"), str(tmp_path / "n.parquet")]) == 1
    line = _error_line(capsys.readouterr().err)
    assert "no model.onnx" in line
    assert "ratio" not in line
    assert not (tmp_path / "n.parquet").exists()


def test_a_case_folder_imports_as_a_case_named_after_it(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = corpus / "node" / "test_tiny"
    store = tmp_path / "tiny.parquet"
    assert main(["import", str(case), str(store)]) == 0
    assert Store(store).cases() == ["test_tiny"]
    assert main(["export", str(store), str(tmp_path / "out")]) == 0
    exported = sorted(
        p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.pb")
    )
    source = sorted("test_tiny/" + p.relative_to(case).as_posix() for p in case.rglob("*.pb"))
    assert exported == source
    assert main(["verify", str(case)]) == 0
    assert "byte-identical" in capsys.readouterr().out


def test_no_progress_when_stderr_is_not_a_terminal(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import", str(corpus), str(tmp_path / "corpus.parquet")]) == 0
    assert main(["export", str(tmp_path / "corpus.parquet"), str(tmp_path / "dest")]) == 0
    assert main(["verify", str(corpus)]) == 0
    assert capsys.readouterr().err == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("COLUMNS", "1000")  # the line is cut to the terminal's width
    assert main(["import", str(corpus), str(tmp_path / "corpus.parquet")]) == 0
    shown = terminal.getvalue()
    assert shown.startswith(f"\rimporting: reading {corpus}")
    assert "\n" not in shown
    assert shown.endswith("\r")  # the line is cleared for what follows
    assert shown.rsplit("\r", 2)[1].strip() == ""


def test_progress_counts_against_the_total_with_rate_and_time_left(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("COLUMNS", "1000")
    monkeypatch.setattr(onnx_arrow._commands, "_PROGRESS_INTERVAL", 0.0)  # every step shown
    for n in range(2):
        shutil.copytree(corpus / "node" / "test_tiny", corpus / "node" / f"test_tiny_{n}")
    cases = 3
    assert main(["import", str(corpus), str(tmp_path / "corpus.parquet")]) == 0
    lines = [line.strip() for line in terminal.getvalue().split("\r") if line.strip()]
    assert f"importing: 1 of {cases} cases" in lines[1]
    assert re.search(rf"^importing: {cases} of {cases} cases, [\d.]+/s  ", lines[-1]), lines
    files = sum(1 for p in corpus.rglob("*") if p.is_file())
    assert main(["export", str(tmp_path / "corpus.parquet"), str(tmp_path / "dest")]) == 0
    assert f"exporting: {files} of {files} files" in terminal.getvalue()


def test_progress_line_says_how_long_is_left() -> None:
    progress = onnx_arrow._commands._Progress("importing", "cases", total=lambda: 1000)
    progress.step("a")
    progress._first -= 10.0  # ten seconds since the first case
    for _ in range(10):
        progress.step("b")
    assert progress.line("b") == "importing: 11 of 1000 cases, 1.0/s, 16 min 29 s left  b"
    unknown = onnx_arrow._commands._Progress("importing", "cases", total=lambda: None)
    unknown.step("a")
    assert unknown.line("a") == "importing: 1 cases  a"


def test_default_corpus_total_is_known_once_its_sources_are_listed(corpus: Path) -> None:
    from onnx_arrow.corpus.sources import MergedSource

    case = corpus / "node" / "test_tiny"
    source = MergedSource(FolderSource(corpus), FolderSource(case))
    total = onnx_arrow._commands._default_total(source)
    assert total() is None
    assert [c.name for c in source] == ["node/test_tiny", "test_tiny"]
    assert total() == 2


def test_interrupted_import_exits_130_and_leaves_no_store(
    corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def interrupt(self: object, name: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(onnx_arrow._commands._Progress, "step", interrupt)
    assert main(["import", str(corpus), str(tmp_path / "corpus.parquet")]) == 130
    assert capsys.readouterr().err == "onnx-arrow: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
    monkeypatch.setattr(onnx_arrow._commands, "NodeSuiteSource", lambda: FolderSource(corpus))
    assert main(["generate", str(tmp_path / "suite")]) == 130
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


@pytest.mark.parametrize("command", ["import", "export", "verify", "generate", "info", "example"])
def test_every_command_has_help_with_examples(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: onnx-arrow {command}")
    assert re.search(r"^examples?:$", out, re.MULTILINE)
    assert f"onnx-arrow {command}" in out.split("example", 1)[1]


@pytest.mark.parametrize(
    "argv",
    [
        ["import"],
        ["import", "a", "b", "c"],
        ["import", "--compression-level", "x", "out.parquet"],
        ["export", "store.parquet"],
        ["verify", "a", "b"],
        ["generate"],
    ],
    ids=repr,
)
def test_bad_corpus_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: onnx-arrow" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args", [["--help"], ["import", "--help"], ["import", "--bogus"], ["export"]]
)
def test_help_and_usage_errors_import_nothing_they_do_not_need(args: list[str]) -> None:
    """Starting takes what ``import onnx_arrow`` takes: not onnx (nor ml_dtypes through it),
    the commands, an adapter, an engine or an evaluator."""
    heavy = ["onnx", "ml_dtypes", "onnx_arrow._commands", "pandas", "polars", "duckdb"]
    heavy += ["onnx.reference", "IPython", "dask", "ray", "pyspark"]
    code = (
        "import contextlib, io, sys\n"
        "from onnx_arrow.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):\n"
        "    try:\n"
        f"        main({args!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


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
    err = _error_line(capsys.readouterr().err)
    assert f"{named}: a symbolic link" in err

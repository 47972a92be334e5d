"""``onnx-arrow import`` (:mod:`onnx_arrow.cli.import_`), run in-process through ``main``."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from cli_helpers import error_line, field_lines, tree_bytes
from fresh_python import fresh_python

import onnx_arrow
import onnx_arrow.cli.work.import_
from onnx_arrow.cli import main
from onnx_arrow.corpus import FolderSource, Store


def test_import_then_export_gives_the_same_bytes(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "corpus.parquet"
    assert main(["import", str(corpus), str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    fields = field_lines(captured.out)
    assert (fields["cases"], fields["files"], fields["rows"], fields["row groups"]) == (
        "1",
        "4",
        "4",
        "1",
    )
    size = out.stat().st_size
    assert fields["store size"].startswith(f"{size} bytes")
    source = sum(len(data) for data in tree_bytes(corpus).values())
    assert fields["source"] == f"{source} bytes"
    assert fields["ratio"].startswith(f"{size / source:.3f} ")
    assert main(["export", str(out), str(tmp_path / "dest")]) == 0
    assert f"exported 4 files, {source} bytes, to " in capsys.readouterr().out
    assert tree_bytes(tmp_path / "dest") == tree_bytes(corpus)


def test_import_with_one_argument_imports_the_default_corpus(
    corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(
        "onnx_arrow.cli.work.import_.default_source", lambda **kw: FolderSource(corpus, **kw)
    )
    out = tmp_path / "default.parquet"
    assert main(["import", str(out)]) == 0
    assert "the built-in default corpus" in capsys.readouterr().out
    assert Store(out).cases() == ["node/test_tiny"]


def test_import_refuses_an_existing_store_without_force(
    corpus: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = store.read_bytes()
    assert main(["import", str(corpus), str(store)]) == 1
    line = error_line(capsys.readouterr().err)
    assert str(store) in line
    assert "--force" in line
    assert store.read_bytes() == before
    assert main(["import", "--force", str(corpus), str(store)]) == 0


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
    line = error_line(capsys.readouterr().err)
    assert "node/test_tiny/test_data_set_0/input_0.pb: does not decode as tensor(float)" in line
    assert "the type the model declares for input 0" in line
    assert "--keep-undecodable" in line
    assert not out.exists()
    assert main(["import", "--keep-undecodable", str(corpus), str(out)]) == 0
    captured = capsys.readouterr()
    warning = captured.err.strip()
    assert warning.startswith("onnx-arrow: warning: node/test_tiny/test_data_set_0/input_0.pb")
    assert field_lines(captured.out)["warnings"] == "1 file, said on stderr"
    assert main(["export", str(out), str(tmp_path / "dest")]) == 0
    assert tree_bytes(tmp_path / "dest") == tree_bytes(corpus)


def test_import_compression_level(
    corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "corpus.parquet"
    assert main(["import", "--compression-level", "1", str(corpus), str(out)]) == 0
    seen = []
    real = onnx_arrow.cli.work.import_.write_store

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["options"])
        return real(*args, **kwargs)

    monkeypatch.setattr(onnx_arrow.cli.work.import_, "write_store", recording)
    assert main(["import", "--force", "--compression-level", "9", str(corpus), str(out)]) == 0
    assert (seen[0].compression_level, seen[0].float_compression_level) == (9, 9)
    assert seen[0].float_encoding == "auto"
    assert main(["import", "--compression-level", "23", str(corpus), str(out)]) == 2
    assert "1 to 22" in capsys.readouterr().err
    argv = ["import", "--force", "--float-encoding", "PLAIN", str(corpus), str(out)]
    assert main(argv) == 0
    assert seen[-1].float_encoding == "PLAIN"
    assert main(["import", "--float-encoding", "DELTA", str(corpus), str(out)]) == 2
    assert "invalid choice: 'DELTA'" in capsys.readouterr().err


def test_import_in_several_processes_writes_the_same_store(
    corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With ``SOURCE_DATE_EPOCH`` set, the time the store records is that one, and two
    imports write the same bytes whenever they run."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    one, two = tmp_path / "one.parquet", tmp_path / "two.parquet"
    assert main(["import", str(corpus), str(one)]) == 0
    assert main(["import", "--jobs", "2", str(corpus), str(two)]) == 0
    assert one.read_bytes() == two.read_bytes()
    assert Store(one).metadata["provenance"]["imported_at"] == "2023-11-14T22:13:20+00:00"
    assert main(["import", "--jobs", "0", str(corpus), str(two)]) == 2
    assert "not 1 or more" in capsys.readouterr().err


@pytest.mark.parametrize("given", ["soon", "-1", "1.5", "1e9", "9" * 30, "\u0661\u0662"])
def test_import_refuses_a_source_date_epoch_that_is_no_time(
    given: str,
    corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", given)
    out = tmp_path / "corpus.parquet"
    assert main(["import", str(corpus), str(out)]) == 1
    line = error_line(capsys.readouterr().err)
    assert "SOURCE_DATE_EPOCH" in line
    assert "not a whole number of seconds" in line
    assert not out.exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.usefixtures("alarm")
def test_import_fifo_is_an_error_not_a_hang(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(corpus / "node" / "test_tiny" / "test_data_set_0" / "input_1.pb")
    out = tmp_path / "corpus.parquet"
    assert main(["import", str(corpus), str(out)]) == 1
    line = error_line(capsys.readouterr().err)
    assert "node/test_tiny/test_data_set_0/input_1.pb" in line
    assert "not a regular file" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["import", str(fifo), str(out)]) == 1
    assert str(fifo) in error_line(capsys.readouterr().err)


def test_import_of_an_empty_folder_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    for argv in (
        ["import", str(tmp_path / "empty"), str(tmp_path / "e.parquet")],
        ["verify", str(tmp_path / "empty")],
    ):
        assert main(argv) == 1
        assert "the folder is empty" in error_line(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


def test_import_of_a_folder_without_a_model_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not a corpus\n")
    assert main(["import", str(tmp_path / "notes"), str(tmp_path / "n.parquet")]) == 1
    line = error_line(capsys.readouterr().err)
    assert "no model.onnx" in line
    assert "ratio" not in line
    assert not (tmp_path / "n.parquet").exists()


def test_data_sets_whose_model_is_missing_are_stored_as_files_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from layout_corpora import without_model

    src = without_model(tmp_path / "src" / "no_model")
    assert main(["import", str(tmp_path / "src"), str(tmp_path / "s.parquet")]) == 0
    captured = capsys.readouterr()
    assert f"warning: {tmp_path / 'src'}: no model.onnx (nor NAME.onnx) beside" in captured.err
    assert field_lines(captured.out)["cases"] == "1"
    store = Store(tmp_path / "s.parquet")
    assert store.cases() == ["no_model"]
    assert {f.path: f.data for f in store.files()} == {
        f"no_model/{p.relative_to(src)}": p.read_bytes() for p in sorted(src.rglob("*.pb"))
    }


def test_import_says_which_values_contradict_their_declaration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from layout_corpora import contradicting

    contradicting(tmp_path / "src" / "contra")
    assert main(["import", str(tmp_path / "src"), str(tmp_path / "s.parquet")]) == 0
    err = capsys.readouterr().err
    assert (
        "onnx-arrow: warning: contra/test_data_set_0/input_0.pb: holds tensor(float) [2, 3], "
        "which contradicts the declared tensor(float) []; kept exactly with its own type"
    ) in err.splitlines()
    assert err.count("contradicts the declared") == 2


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


def test_import_of_a_folder_of_links_to_cases_says_they_were_skipped(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    links = tmp_path / "links"
    links.mkdir()
    (links / "test_a").symlink_to(corpus / "node" / "test_tiny")
    (links / "test_b").symlink_to(corpus / "node" / "test_tiny")
    assert main(["import", str(links), str(tmp_path / "s.parquet")]) == 1
    assert error_line(capsys.readouterr().err) == (
        f"onnx-arrow: error: {links}: no case in the folder or below it; 2 symbolic links "
        "skipped (test_a, test_b): a corpus is read without following links, so that nothing "
        "outside it is read; import the folder a link points to, or copy it in"
    )
    assert not (tmp_path / "s.parquet").exists()


def test_import_skips_links_beside_cases_with_one_warning(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (corpus / "node" / "test_linked").symlink_to(corpus / "node" / "test_tiny")
    out = tmp_path / "s.parquet"
    assert main(["import", "--jobs", "2", str(corpus), str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"onnx-arrow: warning: {corpus}: 1 symbolic link skipped (node/test_linked): a corpus "
        "is read without following links, so that nothing outside it is read; import the "
        "folder a link points to, or copy it in"
    ]
    assert field_lines(captured.out)["cases"] == "1"
    assert Store(out).cases() == ["node/test_tiny"]


def _three_cases(corpus: Path) -> Path:
    for name in ("test_abs", "test_add"):
        shutil.copytree(corpus / "node" / "test_tiny", corpus / "node" / name)
    return corpus


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_import_takes_the_cases_patterns_find(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    src = _three_cases(corpus)
    out = tmp_path / "s.parquet"
    argv = ["import", "--jobs", jobs, "--case", "test_a*", "--case", "node/test_tiny"]
    assert main([*argv, str(src), str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == (
        f"imported {src}, the cases matching 'test_a*', 'node/test_tiny', into {out}"
    )
    assert field_lines(captured.out)["cases"] == "3"
    assert Store(out).cases() == ["node/test_abs", "node/test_add", "node/test_tiny"]
    assert main(["import", "--force", "--case", "*_add", str(src), str(out)]) == 0
    assert Store(out).cases() == ["node/test_add"]


def test_import_refuses_a_pattern_that_finds_no_case_before_any_work(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.parquet"
    assert main(["import", "--case", "test_tiny", "--case", "test_x", str(corpus), str(out)]) == 1
    assert error_line(capsys.readouterr().err) == (
        f"onnx-arrow: error: {corpus}: no case matches 'test_x'; the corpus's cases are "
        "named like 'node/test_tiny'"
    )
    assert not out.exists()


def test_import_passes_the_patterns_to_the_default_corpus(
    corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from onnx_arrow.corpus import MergedSource

    src = _three_cases(corpus)
    monkeypatch.setattr(
        "onnx_arrow.cli.work.import_.default_source",
        lambda **kw: MergedSource(FolderSource(src), **kw),
    )
    out = tmp_path / "default.parquet"
    assert main(["import", "--case", "test_abs", str(out)]) == 0
    assert Store(out).cases() == ["node/test_abs"]
    assert main(["import", "--force", "--case", "test_x", str(out)]) == 1
    assert error_line(capsys.readouterr().err).endswith(
        "no case matches 'test_x'; the corpus's cases are named like 'node/test_abs'"
    )
    assert Store(out).cases() == ["node/test_abs"]  # kept as it was


@pytest.mark.parametrize("dataset", [False, True])
def test_import_onto_a_full_disk_names_the_store_and_says_the_disk_is_full(
    corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    dataset: bool,
) -> None:
    from onnx_arrow.corpus.parquet import StoreFile

    # the full disk at the one call that writes a row group's bytes to the store
    def full(self: object, part: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(StoreFile, "append", full)
    out = tmp_path / ("store" if dataset else "s.parquet")
    argv = ["import", *(["--dataset"] if dataset else []), str(corpus), str(out)]
    assert main(argv) == 1
    assert error_line(capsys.readouterr().err) == (
        f"onnx-arrow: error: {out}: writing the store failed: the disk is full (No space left "
        "on device); free space on it, or write to another disk"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


def test_import_no_dedup_stores_a_repeated_file_whole(corpus: Path, tmp_path: Path) -> None:
    """A file repeated in a second case is a copy of the first (``copy_of``), unless
    ``--no-dedup``; either store exports the same tree."""
    (corpus / "node" / "test_tiny" / "NOTES").write_bytes(bytes(range(256)) * 8)
    shutil.copytree(corpus / "node" / "test_tiny", corpus / "node" / "test_tiny_again")
    copies, whole = tmp_path / "copies.parquet", tmp_path / "whole.parquet"
    assert main(["import", str(corpus), str(copies)]) == 0
    assert main(["import", "--no-dedup", str(corpus), str(whole)]) == 0
    named = pq.read_table(copies, columns=["copy_of"]).column("copy_of")
    assert "node/test_tiny/NOTES" in named.to_pylist()
    assert pq.read_table(whole, columns=["copy_of"]).column("copy_of").null_count == len(named)
    for store in (copies, whole):
        out = tmp_path / f"{store.stem}-tree"
        assert main(["export", str(store), str(out)]) == 0
        assert (out / "node" / "test_tiny_again" / "NOTES").read_bytes() == bytes(range(256)) * 8


def test_the_import_of_a_folder_imports_neither_onnx_ml_dtypes_nor_pandas(
    corpus: Path, tmp_path: Path
) -> None:
    """Their imports cost more CPU than an import of 72 MB of activations does with its
    data: a folder of tensors needs none of them (issue: import speed).  onnx imported
    after it has the very message classes the import used (core/protos.py).  A file
    repeated in a second case is stored as a copy, a path of the import of its own."""
    (corpus / "node" / "test_tiny" / "NOTES").write_bytes(bytes(range(256)) * 8)
    shutil.copytree(corpus / "node" / "test_tiny", corpus / "node" / "test_tiny_again")
    out = tmp_path / "corpus.parquet"
    code = (
        "import sys, contextlib, io\n"
        "from onnx_arrow.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = main(['import', {str(corpus)!r}, {str(out)!r}])\n"
        "print(status, sorted(m for m in ('onnx', 'ml_dtypes', 'pandas') if m in sys.modules))\n"
        "from onnx_arrow.core import protos\n"
        "import numpy as np, onnx\n"
        "from onnx import numpy_helper\n"
        "made = numpy_helper.from_array(np.ones(2, np.float32))\n"
        "print(all(getattr(protos, n) is getattr(onnx, n) for n in protos.__all__[:-1]),\n"
        "      isinstance(made, protos.TensorProto), protos.onnx_version() == onnx.__version__,\n"
        "      onnx.onnx_ml_pb2.TensorProto is protos.TensorProto,\n"
        "      isinstance(protos.SequenceProto(), onnx.SequenceProto))\n"
    )
    result = fresh_python(code)
    assert result.stdout.strip().splitlines() == ["0 []", "True True True True True"]
    assert Store(out).cases() == ["node/test_tiny", "node/test_tiny_again"]
    copies = pq.read_table(out, columns=["path", "copy_of"]).to_pylist()
    assert {"path": "node/test_tiny_again/NOTES", "copy_of": "node/test_tiny/NOTES"} in copies

"""``onnx-arrow export`` (:mod:`onnx_arrow.cli.export`), run in-process through ``main``."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import error_line, tree_bytes

from onnx_arrow.cli import main
from onnx_arrow.corpus import FolderSource, Store, WriteOptions, write_store


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
    assert tree_bytes(tmp_path / "dest") == tree_bytes(corpus)


@pytest.mark.parametrize("command", ["export", "generate"])
def test_export_into_a_missing_folder_says_so(
    command: str, store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "deep" / "a" / "b"
    argv = [command, str(store), str(dest)] if command == "export" else [command, str(dest)]
    assert main(argv) == 1
    line = error_line(capsys.readouterr().err)
    assert f"the folder to write it into, {dest.parent}, does not exist; create it first" in line
    assert ".partial" not in line
    assert not (tmp_path / "deep").exists()


def test_export_refuses_a_non_empty_folder(
    corpus: Path, store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("x")
    assert main(["export", str(store), str(dest)]) == 1
    line = error_line(capsys.readouterr().err)
    assert str(dest) in line
    assert "not empty" in line
    assert "--force" in line
    assert sorted(p.name for p in dest.iterdir()) == ["keep.txt"]
    assert main(["export", "--force", str(store), str(dest)]) == 0
    assert tree_bytes(dest) == {**tree_bytes(corpus), "keep.txt": b"x"}


def test_export_of_a_file_that_is_not_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet")
    assert main(["export", str(junk), str(tmp_path / "dest")]) == 1
    assert str(junk) in error_line(capsys.readouterr().err)
    assert not (tmp_path / "dest").exists()


@pytest.mark.parametrize("force", [False, True])
def test_export_of_a_store_with_a_path_twice_is_refused_with_force_too(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], force: bool
) -> None:
    shutil.copytree(corpus / "node" / "test_tiny", corpus / "node" / "test_tiny2")
    (corpus / "node" / "test_tiny2" / "README").write_text("the later file\n")
    store = tmp_path / "corpus.parquet"
    write_store(FolderSource(corpus), store)
    table = pq.read_table(store)
    paths = table["path"].to_pylist()
    paths[paths.index("node/test_tiny2/README")] = "node/test_tiny/README"
    table = table.set_column(table.schema.get_field_index("path"), "path", pa.array(paths))
    pq.write_table(table, store)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("x")
    argv = ["export", "--force", str(store), str(dest)]
    if not force:
        argv = ["export", str(store), str(tmp_path / "new")]
    assert main(argv) == 1
    assert error_line(capsys.readouterr().err) == (
        f"onnx-arrow: error: {store}: 'node/test_tiny/README' is there twice; each path names "
        "one file (was the store changed after it was written? import the corpus again)"
    )
    assert sorted(p.name for p in dest.iterdir()) == ["keep.txt"]
    assert not (tmp_path / "new").exists()


def test_export_onto_a_full_disk_names_the_file_not_a_temporary_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the full disk is simulated at the one call that writes a file's bytes (a real one
    # is tested in tests/corpus/test_export.py where a small file system can be mounted)
    from onnx_arrow.corpus import Case, CorpusFile, tree

    store = tmp_path / "large.parquet"
    files = [CorpusFile("k/c/data.json", b"{}"), CorpusFile("k/c/large.bin", bytes(5000))]
    write_store([Case("k/c", "k", files)], store)

    def full(name: str, dir_fd: int, data: bytes) -> None:
        if len(data) > 1000:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(name, dir_fd, data)

    real = tree._write_new
    monkeypatch.setattr(tree, "_write_new", full)
    assert main(["export", str(store), str(tmp_path / "dest")]) == 1
    assert error_line(capsys.readouterr().err) == (
        f"onnx-arrow: error: {tmp_path}/dest/k/c/large.bin: cannot be written: the disk is "
        "full (No space left on device); free space on it, or write to another disk"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["large.parquet"]

"""Writing a tree of files: every path once, nothing left behind on an error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import pytest

from onnx_arrow.corpus import CorpusError
from onnx_arrow.corpus.tree import write_tree


class File(NamedTuple):
    path: str
    data: bytes


def test_a_tree_is_written_with_its_folders(tmp_path: Path) -> None:
    files = [File("top.txt", b"1"), File("a/b/c.pb", b"22"), File("a/d.pb", b"")]
    assert write_tree(files, tmp_path / "out") == {"files": 3, "bytes": 3}
    assert {
        p.relative_to(tmp_path / "out").as_posix(): p.read_bytes()
        for p in (tmp_path / "out").rglob("*")
        if p.is_file()
    } == {f.path: f.data for f in files}


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ([File("a/x.pb", b"1"), File("a/x.pb", b"2")], "'a/x.pb' is already written"),
        ([File("a/b/x.pb", b"1"), File("a/b", b"2")], "'a/b' is already written"),
        ([File("a", b"1"), File("a/x.pb", b"2")], "the folder of 'a/x.pb' is also the path"),
    ],
    ids=["twice", "file after folder", "folder after file"],
)
def test_a_path_given_twice_is_an_error_and_nothing_is_left(
    tmp_path: Path, files: list[File], message: str
) -> None:
    with pytest.raises(CorpusError, match=message):
        write_tree(files, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_force_replaces_files_of_the_same_path(tmp_path: Path) -> None:
    write_tree([File("a/x.pb", b"old"), File("a/y.pb", b"kept")], tmp_path)
    write_tree([File("a/x.pb", b"new")], tmp_path, force=True)
    assert (tmp_path / "a/x.pb").read_bytes() == b"new"
    assert (tmp_path / "a/y.pb").read_bytes() == b"kept"
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["x.pb", "y.pb"]


def test_a_failed_replace_leaves_no_partial_file(tmp_path: Path, monkeypatch) -> None:
    write_tree([File("a/x.pb", b"old")], tmp_path)

    def full_disk(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_tree([File("a/x.pb", b"new")], tmp_path, force=True)
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["x.pb"]
    assert (tmp_path / "a/x.pb").read_bytes() == b"old"


@pytest.mark.parametrize("link", ["a", "a/b"])
def test_a_symlinked_folder_inside_the_destination_is_not_written_through(
    tmp_path: Path, link: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    (dest / link).parent.mkdir(parents=True)
    (dest / link).symlink_to(outside, target_is_directory=True)
    with pytest.raises(CorpusError, match=f"'{link}' is a symbolic link in the folder written"):
        write_tree([File("a/b/x.pb", b"data")], dest, force=True)
    assert list(outside.iterdir()) == []


def test_a_replaced_file_is_a_new_file_never_written_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside.pb"
    outside.write_bytes(b"keep")
    dest = tmp_path / "dest"
    (dest / "a").mkdir(parents=True)
    (dest / "a/x.pb").symlink_to(outside)
    os.link(outside, dest / "a/y.pb")
    write_tree([File("a/x.pb", b"new"), File("a/y.pb", b"new")], dest, force=True)
    assert outside.read_bytes() == b"keep"
    assert not (dest / "a/x.pb").is_symlink()
    assert (dest / "a/x.pb").read_bytes() == (dest / "a/y.pb").read_bytes() == b"new"

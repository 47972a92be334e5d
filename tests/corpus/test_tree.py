"""Writing a tree of files: every path once, nothing left behind on an error."""

from __future__ import annotations

import errno
import os
import pickle
from pathlib import Path
from typing import NamedTuple

import pytest

from onnx_arrow.corpus import CorpusError
from onnx_arrow.corpus.tree import check_tree_paths, name_max, safe_relative, write_tree
from onnx_arrow.errors import FileWriteError


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
    with pytest.raises(OSError, match="No space left") as info:
        write_tree([File("a/x.pb", b"new")], tmp_path, force=True)
    assert isinstance(info.value, CorpusError)
    assert str(info.value).startswith(f"{tmp_path}/a/x.pb: cannot be written: the disk is full")
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


def test_force_refuses_a_path_given_twice_instead_of_keeping_the_later_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "keep.txt").write_text("x")
    files = [File("a/x.pb", b"first"), File("a/x.pb", b"second")]
    with pytest.raises(CorpusError, match=r"'a/x\.pb' is already written"):
        write_tree(files, tmp_path, force=True)
    assert (tmp_path / "a/x.pb").read_bytes() == b"first"


def test_force_refuses_a_file_over_a_folder_of_the_destination(tmp_path: Path) -> None:
    (tmp_path / "a/b").mkdir(parents=True)
    (tmp_path / "a/b/kept.pb").write_bytes(b"kept")
    with pytest.raises(CorpusError, match=r"'a/b' is a folder in .*; a file cannot replace it"):
        write_tree([File("a/b", b"x")], tmp_path, force=True)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["b"]


@pytest.mark.parametrize("force", [False, True])
def test_a_name_too_long_for_the_file_system_is_a_located_error(
    tmp_path: Path, force: bool
) -> None:
    dest = tmp_path / "out"
    if force:
        dest.mkdir()
        (dest / "keep.txt").write_text("x")
    path = "a/" + "n" * 300
    with pytest.raises(FileWriteError, match="a name in the path is longer than") as info:
        write_tree([File(path, b"1")], dest, force=force)
    assert str(info.value).startswith(f"{dest}/{path}: cannot be written: ")
    assert ".partial" not in str(info.value)
    assert info.value.errno == errno.ENAMETOOLONG
    assert info.value.filename == f"{dest}/{path}"
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out"] if force else [])


@pytest.mark.parametrize("path", ["a", ".a/..b/...", "a/..\n", "a b/c:d", "\u00e9/x\ty"])
def test_a_path_whose_parts_are_names_in_their_folder_is_safe(path: str) -> None:
    assert safe_relative(path, where="store") == tuple(path.split("/"))


@pytest.mark.parametrize(
    "path",
    ["", "/a", "a/", "a//b", ".", "..", "./a", "a/./b", "a/../b", "a/..", "../a", "C:a", "c:/a",
     "a\\b", "a/\x00"],
)  # fmt: skip
def test_a_path_that_could_lead_out_of_its_folder_is_refused(path: str) -> None:
    with pytest.raises(CorpusError, match=r"^store: unsafe file path"):
        safe_relative(path, where="store")


@pytest.mark.parametrize(
    ("paths", "message"),
    [
        (["a/x", "../x"], r"^store: unsafe file path '\.\./x'"),
        (["a/b/x", "a/b/.."], r"^store: unsafe file path 'a/b/\.\.'"),
        (["a/b/x", "a/b/c\\d"], r"^store: unsafe file path 'a/b/c\\\\d'"),
        (["a/x", "b", "a/x"], r"^store: 'a/x' is there twice; each path names one file"),
        (["a/b/x", "a/b"], r"^store: 'a/b' is a file and the folder of other files too"),
        (["a/b", "a/b/x"], r"^store: 'a/b' is a file and the folder of other files too"),
        (["a/" + "n" * 21], r"^store: 'a/n+' holds a name too long for the file system written "
         "to: 21 bytes, where it takes up to 20$"),
        (["a/x", "a/" + "\u00e9" * 11], r"^store: 'a/\u00e9+' holds a name too long for the file "
         "system written to: 22 bytes, where it takes up to 20$"),
    ],
    ids=[
        "unsafe", "unsafe name in a known folder", "backslash in a known folder", "twice",
        "file after folder", "folder after file", "long name", "long name in a known folder",
    ],
)  # fmt: skip
def test_paths_are_checked_as_a_tree_before_anything_is_written(
    paths: list[str], message: str
) -> None:
    with pytest.raises(CorpusError, match=message):
        check_tree_paths(paths, where="store", longest=20)
    check_tree_paths(["a/x", "a/y", None, "b/x"], where="store", longest=20)


def test_the_longest_name_is_the_file_system_s_even_for_a_folder_not_made_yet(
    tmp_path: Path,
) -> None:
    assert name_max(tmp_path / "not" / "yet") == os.pathconf(tmp_path, "PC_NAME_MAX")


def test_a_write_error_is_an_onnx_arrow_error_and_an_os_error_that_pickles() -> None:
    from onnx_arrow.corpus.tree import file_write_error

    pyarrows = OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")
    error = file_write_error(pyarrows, where="out/s.parquet", what="writing the store failed: ")
    assert str(error) == (
        "out/s.parquet: writing the store failed: the disk is full (Error writing bytes to "
        "file. Detail: [errno 28] No space left on device); free space on it, or write to "
        "another disk"
    )
    assert (error.errno, error.filename) == (errno.ENOSPC, "out/s.parquet")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is FileWriteError
    assert (str(again), again.errno, again.filename) == (str(error), error.errno, "out/s.parquet")


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_the_folders_kept_open_are_closed_when_the_tree_is_written(tmp_path: Path) -> None:
    """More folders than the writer keeps open, revisited out of order: every file lands,
    and no descriptor outlives the writer."""
    before = _open_fds()
    files = [File(f"c{i % 50}/d{i % 7}/f{i}.pb", bytes([i % 256])) for i in range(400)]
    assert write_tree(files, tmp_path / "out") == {"files": 400, "bytes": 400}
    assert _open_fds() == before
    for f in files:
        assert (tmp_path / "out" / f.path).read_bytes() == f.data


def test_a_link_planted_where_an_entered_folder_was_is_not_followed(tmp_path: Path) -> None:
    """The writer keeps a folder it entered: a link put at its path afterwards (the folder
    moved away) leads no later file out of the tree."""
    from onnx_arrow.corpus.tree import tree_writer

    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "out"
    with tree_writer(dest, where="test") as writer:
        writer.write(File("a/x.pb", b"1"))
        base = Path(writer.base)
        (base / "a").rename(base / "moved")
        (base / "a").symlink_to(outside, target_is_directory=True)
        writer.write(File("a/y.pb", b"2"))
        writer.write(File("b/z.pb", b"3"))
    assert list(outside.iterdir()) == []
    assert (dest / "moved" / "y.pb").read_bytes() == b"2"  # into the folder entered first
    assert (dest / "b" / "z.pb").read_bytes() == b"3"


def test_a_writer_sent_to_another_process_leaves_its_open_folders_behind(tmp_path: Path) -> None:
    from onnx_arrow.corpus.tree import tree_writer

    with tree_writer(tmp_path / "out", where="test") as writer:
        writer.write(File("a/x.pb", b"1"))
        copy = pickle.loads(pickle.dumps(writer))
        assert copy.base == writer.base
        assert not copy._fds  # descriptors are this process's: the copy opens its own
        copy.write(File("a/y.pb", b"2"))
        copy.close()
    assert (tmp_path / "out" / "a" / "y.pb").read_bytes() == b"2"

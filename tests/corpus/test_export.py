"""Export (corpus/export.py): stores written back byte for byte, in one process or several,
and a damaged or hostile store refused with nothing left behind."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from store_helpers import rewrite, small_corpus, tree_bytes

from onnx_arrow.corpus import (
    Case,
    CorpusError,
    CorpusFile,
    FolderSource,
    NodeSuiteSource,
    Store,
    export_store,
    tree,
    write_store,
)
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.corpus.sources import wheel_data_dir
from onnx_arrow.errors import UnsupportedTypeError


def test_node_suite_exports_byte_identical(node_store, tmp_path):
    cases, path, summary = node_store
    source = {f.path: f.data for case in cases for f in case.files}
    assert summary["cases"] == len(cases) > 1800
    assert summary["warnings"] == []
    export_store(path, tmp_path / "out")
    assert tree_bytes(tmp_path / "out") == source


def test_node_suite_exports_byte_identical_in_several_processes(node_store, tmp_path):
    cases, path, _ = node_store
    assert Store(path).num_row_groups > 1
    seen = []
    counts = export_store(path, tmp_path / "out", jobs=2, progress=lambda f: seen.append(f.path))
    source = {f.path: f.data for case in cases for f in case.files}
    assert tree_bytes(tmp_path / "out") == source
    assert seen == [f.path for f in Store(path).files()]  # in store order
    assert counts == {"files": len(source), "bytes": sum(map(len, source.values()))}
    with pytest.raises(CorpusError, match="no row group 99: the store has"):
        next(Store(path).files(row_group=99))


def test_wheel_model_kinds_export_byte_identical(tmp_path):
    root = wheel_data_dir()
    write_store(FolderSource(root), tmp_path / "wheel.parquet")
    export_store(tmp_path / "wheel.parquet", tmp_path / "out")
    assert tree_bytes(tmp_path / "out") == tree_bytes(root)


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_interrupted_export_leaves_nothing(tmp_path, jobs):
    store = tmp_path / "store.parquet"
    write_store(FolderSource(wheel_data_dir()), store, options=WriteOptions(row_group_bytes=1))
    assert Store(store).num_row_groups > 2
    written = []

    def interrupted(f):
        written.append(f.path)
        if len(written) == 20:  # Ctrl-C once some files are written
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        export_store(store, tmp_path / "out", progress=interrupted, jobs=jobs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.parquet"]


def test_export_refuses_a_non_empty_folder(tmp_path):
    out = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), out)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("x")
    with pytest.raises(CorpusError, match="not empty"):
        export_store(out, dest)
    export_store(out, dest, force=True)
    assert (dest / "keep.txt").read_text() == "x"
    assert tree_bytes(dest / "node") == {
        k[len("node/") :]: v for k, v in tree_bytes(tmp_path / "src").items()
    }


def test_unsafe_paths_in_a_store_are_refused(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)

    def escape(table):
        paths = ["../../escaped" if p.endswith("README") else p for p in table["path"].to_pylist()]
        return table.set_column(table.schema.get_field_index("path"), "path", pa.array(paths))

    rewrite(path, tmp_path / "evil.parquet", escape)
    with pytest.raises(CorpusError, match="unsafe file path"):
        export_store(tmp_path / "evil.parquet", tmp_path / "out")
    assert not (tmp_path / "escaped").exists()
    assert not (tmp_path / "out").exists()


def test_a_failing_export_worker_leaves_nothing(tmp_path):
    src = small_corpus(tmp_path / "src")
    for k in range(3):
        shutil.copytree(src / "node" / "test_tiny", src / "node" / f"test_tiny{k}")
    path = tmp_path / "store.parquet"
    write_store(FolderSource(src), path, options=WriteOptions(row_group_bytes=1))

    def changed(table):  # the last README stored (not a copy) is not the file its digest says
        content, copies = table["content"].to_pylist(), table["copy_of"].to_pylist()
        paths = table["path"].to_pylist()
        readmes = [i for i, p in enumerate(paths) if p.endswith("README") and not copies[i]]
        content[readmes[-1]] = b"changed\n"
        column = table.schema.get_field_index("content")
        return table.set_column(column, "content", pa.array(content, pa.binary()))

    evil = tmp_path / "evil.parquet"
    table = changed(pq.read_table(path))
    pq.write_table(table, evil, row_group_size=table.num_rows // 4)
    assert Store(evil).num_row_groups == 4
    with pytest.raises(CorpusError, match="README: the file rebuilt from the rows is not"):
        export_store(evil, tmp_path / "out", jobs=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.parquet", "src", "store.parquet"]


def _four_cases(tmp_path):
    """A store of four small cases, a row group each, and the corpus it holds."""
    src = small_corpus(tmp_path / "src")
    for k in range(3):
        shutil.copytree(src / "node" / "test_tiny", src / "node" / f"test_tiny{k}")
        (src / "node" / f"test_tiny{k}" / "README").write_text(f"case {k}\n")
    path = tmp_path / "store.parquet"
    write_store(FolderSource(src), path, options=WriteOptions(row_group_bytes=1))
    return src, path


def _with_paths(path, out, change):
    """The store ``path`` written to ``out`` with its paths changed, a row group per case."""
    table = pq.read_table(path)
    paths = table["path"].to_pylist()
    change(paths)
    table = table.set_column(table.schema.get_field_index("path"), "path", pa.array(paths))
    pq.write_table(table, out, row_group_size=table.num_rows // 4)


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_path_twice_in_a_store_is_refused_before_anything_is_written(tmp_path, force, jobs):
    _, path = _four_cases(tmp_path)

    def twice(paths):  # the last case's README takes the path of the first case's
        readmes = [i for i, p in enumerate(paths) if p.endswith("README")]
        paths[readmes[-1]] = paths[readmes[0]]

    evil = tmp_path / "evil.parquet"
    _with_paths(path, evil, twice)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("x")
    if not force:
        dest = tmp_path / "out"
    with pytest.raises(CorpusError, match=r"evil\.parquet: 'node/test_tiny/README' is there twice"):
        export_store(evil, dest, force=force, jobs=jobs)
    with pytest.raises(CorpusError, match=r"evil\.parquet: 'node/test_tiny/README' is there twice"):
        Store(evil).export(dest, force=force)  # the method checks as the function does
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "dest", "evil.parquet", "src", "store.parquet"
    ]  # fmt: skip
    assert [p.name for p in (tmp_path / "dest").iterdir()] == ["keep.txt"]


@pytest.mark.parametrize("force", [False, True])
def test_a_name_longer_than_the_file_system_takes_is_refused_before_anything_is_written(
    tmp_path, force
):
    _, path = _four_cases(tmp_path)

    def long(paths):
        readmes = [i for i, p in enumerate(paths) if p.endswith("README")]
        paths[readmes[-1]] = "node/test_tiny2/" + "a" * 300

    evil = tmp_path / "evil.parquet"
    _with_paths(path, evil, long)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("x")
    with pytest.raises(
        CorpusError, match=r"holds a name too long for the file system written to: 300 bytes"
    ):
        export_store(evil, dest if force else tmp_path / "out", force=force)
    assert [p.name for p in dest.iterdir()] == ["keep.txt"]
    assert not (tmp_path / "out").exists()


@pytest.fixture
def small_disk(tmp_path):
    """A folder on a file system of 64 KiB, a tmpfs mounted for the test (where mounting
    is allowed: as root on Linux)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
            capture_output=True,
            check=False,
        )
    except OSError:
        mounted = None
    if mounted is None or mounted.returncode != 0:
        pytest.skip("no right to mount a small file system here (the patched test runs)")
    yield disk
    subprocess.run(["umount", str(disk)], check=True)


def _large_store(tmp_path):
    """A store holding a file of 200 KB, more than a small disk takes."""
    store = tmp_path / "large.parquet"
    files = [CorpusFile("k/c/data.json", b"{}"), CorpusFile("k/c/large.bin", os.urandom(200_000))]
    write_store([Case("k/c", "k", files)], store)
    return store


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("jobs", [1, 2])
def test_an_export_onto_a_full_disk_names_the_file_and_says_the_disk_is_full(
    small_disk, tmp_path, force, jobs
):
    store = _large_store(tmp_path)
    dest = small_disk / "out"
    if force:
        dest.mkdir()
        (dest / "keep.txt").write_text("x")
    with pytest.raises(OSError, match="No space left") as info:
        export_store(store, dest, force=force, jobs=jobs)
    assert isinstance(info.value, CorpusError)
    assert str(info.value).startswith(
        f"{dest}/k/c/large.bin: cannot be written: the disk is full (No space left on device); "
        "free space on it, or write to another disk"
    )
    assert info.value.errno == errno.ENOSPC
    assert sorted(p.name for p in small_disk.rglob("*")) == (
        ["c", "data.json", "k", "keep.txt", "out"] if force else []
    )


@pytest.mark.parametrize("force", [False, True])
def test_an_export_onto_a_full_disk_names_the_file_where_no_disk_can_be_filled(
    tmp_path, monkeypatch, force
):
    # the file system's refusal simulated at the one call that writes a file's bytes,
    # for machines where a small file system cannot be mounted
    store = _large_store(tmp_path)
    dest = tmp_path / "out"
    if force:
        dest.mkdir()
        (dest / "keep.txt").write_text("x")

    def full(name, dir_fd, data):
        if len(data) > 1000:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(name, dir_fd, data)

    real = tree._write_new
    monkeypatch.setattr(tree, "_write_new", full)
    with pytest.raises(CorpusError) as info:
        export_store(store, dest, force=force)
    assert str(info.value).startswith(f"{dest}/k/c/large.bin: cannot be written: the disk is full")
    assert ".partial" not in str(info.value)


def test_tampered_data_is_reported_with_its_file(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)

    def truncate(table):
        shapes = [[5] if s == [2] else s for s in table["shape"].to_pylist()]
        return table.set_column(
            table.schema.get_field_index("shape"), "shape", pa.array(shapes, pa.list_(pa.int64()))
        )

    rewrite(path, tmp_path / "bad.parquet", truncate)
    with pytest.raises(
        # the first file read: a data set's output comes before its input in a store
        CorpusError,
        match=r"node/test_tiny: node/test_tiny/test_data_set_0/output_0\.pb",
    ):
        export_store(tmp_path / "bad.parquet", tmp_path / "out")


def test_a_null_element_is_reported_with_its_own_file(tmp_path):
    cases = [c for c in NodeSuiteSource() if c.name.startswith("node/test_abs")]
    path = tmp_path / "store.parquet"
    write_store(cases, path)
    table = pq.read_table(path)
    data = table["data_float"].to_pylist()
    last = max(i for i, d in enumerate(data) if d)
    data[last][-1] = None
    column = table.schema.get_field_index("data_float")
    table = table.set_column(column, "data_float", pa.array(data, table["data_float"].type))
    pq.write_table(table, tmp_path / "bad.parquet")
    damaged = f"{table['test_case'][last]}: {table['path'][last]}"
    with pytest.raises(CorpusError, match="data_float holds a null element") as info:
        export_store(tmp_path / "bad.parquet", tmp_path / "out")
    assert f"bad.parquet: row group 0: {damaged}" in str(info.value)


def test_a_row_without_a_path_is_refused_naming_it(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)

    def lose_a_path(table):
        paths = [None if p.endswith("README") else p for p in table["path"].to_pylist()]
        return table.set_column(table.schema.get_field_index("path"), "path", pa.array(paths))

    rewrite(path, tmp_path / "damaged.parquet", lose_a_path)
    with pytest.raises(CorpusError, match=r"row \d+ of the row group has no path \(null\)"):
        export_store(tmp_path / "damaged.parquet", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_file_changed_in_the_store_fails_its_digest(tmp_path):
    path, forged = tmp_path / "store.parquet", tmp_path / "forged.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)

    def change(table: pa.Table) -> pa.Table:
        content = table.column("content").to_pylist()
        roles = table.column("role").to_pylist()
        k = roles.index("file")
        content[k] = content[k] + b"!"
        index = table.schema.get_field_index("content")
        return table.set_column(index, "content", pa.array(content, pa.binary()))

    rewrite(path, forged, change)
    with pytest.raises(CorpusError, match=r"README: the file rebuilt from the rows is not"):
        export_store(forged, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("argument", "junk"), [("store", 1), ("store", [None]), ("dest", None)])
def test_junk_arguments_are_refused_before_anything_is_written(tmp_path, argument, junk):
    out = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), out)
    args = {"store": out, "dest": tmp_path / "dest"}
    args[argument] = junk
    with pytest.raises(UnsupportedTypeError, match=rf"^export_store\({argument}\)"):
        export_store(**args)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "store.parquet"]

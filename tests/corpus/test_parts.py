"""The parts of a store (corpus/parts.py): a file that is not a store, or not a regular
file, refused when opened."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from store_helpers import rewrite, small_corpus

from onnx_arrow.corpus import (
    CorpusError,
    FolderSource,
    Store,
    write_store,
)
from onnx_arrow.corpus.format import METADATA_KEY


def test_a_parquet_file_that_is_not_a_store_is_refused(tmp_path):
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": [1]}), path)
    with pytest.raises(CorpusError, match="not an onnx-arrow store"):
        Store(path)
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    with pytest.raises(CorpusError, match="cannot read as Parquet"):
        Store(tmp_path / "junk.parquet")


def test_unknown_format_version_is_refused(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)

    def bump(table):
        meta = json.loads(table.schema.metadata[METADATA_KEY.encode()])
        meta["format_version"] = 99
        return table.replace_schema_metadata({METADATA_KEY: json.dumps(meta)})

    rewrite(path, tmp_path / "v99.parquet", bump)
    with pytest.raises(CorpusError, match="format version 99"):
        Store(tmp_path / "v99.parquet")


def test_a_store_path_that_is_not_a_regular_file_is_refused_at_once(tmp_path):
    """A FIFO would block the open for ever, as a store or as a dataset store's part."""

    from onnx_arrow.corpus import CorpusError

    fifo = tmp_path / "store.parquet"
    os.mkfifo(fifo)
    with pytest.raises(CorpusError, match=r"store\.parquet: a FIFO \(named pipe\), not a regular"):
        Store(fifo)
    with pytest.raises(CorpusError, match=r"store\.parquet: a FIFO \(named pipe\), not a regular"):
        Store(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match=r"empty: holds no \.parquet part"):
        Store(tmp_path / "empty")
    done = subprocess.run(
        [sys.executable, "-m", "onnx_arrow", "info", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "FIFO" in done.stderr


def _as_format(src, dst, version, *, digest=True):
    """``src`` rewritten as a store of format ``version`` (2 or 3) wrote it: no declared
    column (version 4 added it), for version 2 no rtol and atol columns (version 3 added
    them), and no digest column if written before digests were."""

    def older(table):
        meta = json.loads(table.schema.metadata[METADATA_KEY.encode()])
        meta["format_version"] = version
        dropped = ["declared", "copy_of"] + (["rtol", "atol"] if version < 3 else [])
        dropped += [] if digest else ["digest"]
        table = table.drop_columns(dropped)
        return table.replace_schema_metadata({METADATA_KEY: json.dumps(meta)})

    rewrite(src, dst, older)


def _as_format_2(src, dst, *, digest=True):
    _as_format(src, dst, 2, digest=digest)


def test_a_store_of_format_3_reads_with_no_declaration_contradicted(tmp_path):
    src = small_corpus(tmp_path / "src")
    path, old = tmp_path / "store.parquet", tmp_path / "v3.parquet"
    write_store(FolderSource(src), path)
    _as_format(path, old, 3)
    store = Store(old)
    assert store.metadata["format_version"] == 3
    assert [v.to_bytes() for v in store.values()] == [v.to_bytes() for v in Store(path).values()]
    declared = store.read_columns(["declared"]).column("declared")
    assert declared.null_count == len(declared) > 0
    from onnx_arrow.corpus.facts import store_facts

    assert store_facts(store).contradicting == 0


@pytest.mark.parametrize("digest", [True, False], ids=["with digests", "before digests"])
def test_a_store_of_format_2_reads_and_exports_as_it_was_written(tmp_path, digest, capsys):
    from cli_helpers import field_lines
    from store_helpers import tree_bytes

    from onnx_arrow.cli import main
    from onnx_arrow.corpus import export_store

    src = small_corpus(tmp_path / "src")
    path, old = tmp_path / "store.parquet", tmp_path / "v2.parquet"
    write_store(FolderSource(src), path)
    _as_format_2(path, old, digest=digest)
    store = Store(old)
    assert store.metadata["format_version"] == 2
    assert store.digests is digest
    assert store.cases() == Store(path).cases() == ["node/test_tiny"]
    assert [v.to_bytes() for v in store.values()] == [v.to_bytes() for v in Store(path).values()]
    assert store.tolerance("node/test_tiny") is None  # version 2 recorded none
    assert (
        store.read_columns(["rtol", "digest"]).schema
        == Store(path).read_columns(["rtol", "digest"]).schema
    )
    export_store(old, tmp_path / "out")
    assert tree_bytes(tmp_path / "out") == tree_bytes(src)
    assert {f.path: f.data for f in store.case_files("node/test_tiny")} == tree_bytes(src)
    assert main(["info", str(old)]) == 0
    assert field_lines(capsys.readouterr().out)["format"] == (
        "onnx-arrow corpus store, version 2 (older than version 5, read as it; export and "
        "import again to upgrade: docs/store-format.md, Older versions)"
    )
    assert main(["export", str(old), str(tmp_path / "out2")]) == 0
    assert tree_bytes(tmp_path / "out2") == tree_bytes(src)


def test_a_dataset_store_of_parts_of_formats_2_and_4_reads_as_one(tmp_path):
    src = small_corpus(tmp_path / "src")
    path, parts = tmp_path / "store.parquet", tmp_path / "parts"
    write_store(FolderSource(src), path)
    parts.mkdir()
    _as_format_2(path, parts / "part-00000.parquet", digest=False)

    def renamed(table):
        names = pa.array([f"{n}2" for n in table["test_case"].to_pylist()], pa.string())
        paths = pa.array([p.replace("test_tiny", "test_tiny2") for p in table["path"].to_pylist()])
        table = table.set_column(0, table.schema.field(0), names)
        at = table.schema.get_field_index("path")
        return table.set_column(at, table.schema.field(at), paths)

    rewrite(path, parts / "part-00001.parquet", renamed)
    store = Store(parts)
    assert store.cases() == ["node/test_tiny", "node/test_tiny2"]
    assert not store.digests
    files = {f.path: f.data for f in store.files()}
    assert files["node/test_tiny2/model.onnx"] == files["node/test_tiny/model.onnx"]
    assert store.read_columns(["test_case", "digest"]).column("digest").null_count == 4


def test_a_store_of_format_2_with_other_columns_is_refused(tmp_path):
    path, old = tmp_path / "store.parquet", tmp_path / "v2.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)
    _as_format_2(path, old)
    rewrite(old, tmp_path / "bad.parquet", lambda t: t.drop_columns(["case_row"]))
    with pytest.raises(
        CorpusError, match=r"bad\.parquet: the columns differ from those of format version 2 "
    ):
        Store(tmp_path / "bad.parquet")
    # and a store of version 4 lacking the column version 4 added is not taken for one
    rewrite(path, tmp_path / "v4.parquet", lambda t: t.drop_columns(["declared"]))
    with pytest.raises(CorpusError, match=r"the columns differ from those of this version"):
        Store(tmp_path / "v4.parquet")


def test_a_footer_kept_from_an_earlier_open_is_used_only_while_its_bytes_are_the_files(
    tmp_path,
):
    """A file opened again is opened with the footer kept from the last time only if its
    footer holds the same bytes: a footer changed in place, the file's size and
    modification time kept (a clock coarser than two writes), is read again."""
    from onnx_arrow.corpus.format import CASES_KEY
    from onnx_arrow.corpus.parts import open_part

    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)
    assert open_part(path).index == [[("node/test_tiny", 0, 4)]]
    kept = open_part(path)  # opened with the footer kept
    assert kept.index == [[("node/test_tiny", 0, 4)]]
    assert kept.file.read_row_group(0, columns=["test_case"]).num_rows == 4
    st = path.stat()
    data = bytearray(path.read_bytes())
    at = data.rindex(CASES_KEY.encode()) + len(CASES_KEY) + 8  # inside the index's base64
    data[at] = ord("A") if data[at] != ord("A") else ord("B")
    with open(path, "r+b") as f:
        f.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert open_part(path).index is None  # the changed index no longer parses: not used


def test_a_store_replaced_at_its_path_is_read_as_the_new_one(tmp_path):
    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "a")), path)
    first = Store(path)
    assert first.cases() == ["node/test_tiny"]
    first.metadata["format_version"] = 0  # the caller's copy: not what the next open gives
    src = small_corpus(tmp_path / "b")
    (src / "node" / "test_tiny").rename(src / "node" / "test_other")
    write_store(FolderSource(src), path)
    again = Store(path)
    assert again.cases() == ["node/test_other"]
    assert again.metadata["format_version"] != 0
    assert again.case("node/test_other").data_sets()[0]["inputs"]["x"].tolist() == [-1.0, 2.0]


def test_the_footers_kept_stay_within_their_budget(tmp_path, monkeypatch):
    from collections import OrderedDict

    from onnx_arrow.corpus import parts

    path = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), path)
    copies = [path.with_name(f"copy-{i}.parquet") for i in range(3)]
    for copy in copies:
        copy.write_bytes(path.read_bytes())
    footer = int.from_bytes(path.read_bytes()[-8:-4], "little") + 8
    monkeypatch.setattr(parts, "_FOOTERS", OrderedDict())
    monkeypatch.setattr(parts, "_KEPT_FOOTER_BYTES", 2 * footer)
    for copy in copies:
        assert Store(copy).cases() == ["node/test_tiny"]
    assert list(parts._FOOTERS) == [str(c) for c in copies[1:]]  # the oldest let go
    assert Store(copies[0]).cases() == ["node/test_tiny"]
    assert list(parts._FOOTERS) == [str(c) for c in (copies[2], copies[0])]


# --- rows kept from an earlier read -------------------------------------------------------


def _cases_of_one_row_group(root, n=3):
    """``n`` cases of one row group (a small corpus), each case's input ``[-1, k + 0.5]``."""
    import shutil

    import numpy as np
    from onnx import numpy_helper

    src = small_corpus(root)
    for k in range(1, n):
        shutil.copytree(src / "node" / "test_tiny", src / "node" / f"test_tiny_{k}")
    for k, case in enumerate(sorted((src / "node").iterdir())):
        x = numpy_helper.from_array(np.array([-1.0, k + 1234.5], np.float32), "x")
        (case / "test_data_set_0" / "input_0.pb").write_bytes(x.SerializeToString())
    return src


def test_a_store_opened_for_each_case_decodes_their_row_group_once(tmp_path, monkeypatch):
    """As a test per case or an engine's loop reads them: the rows a store decoded last
    are those the next store of the same bytes takes, not decoded again."""
    from onnx_arrow.corpus import store as store_module
    from onnx_arrow.corpus.parts import forget_kept_reads

    path = tmp_path / "store.parquet"
    write_store(FolderSource(_cases_of_one_row_group(tmp_path / "src")), path)
    decoded = []
    read_rows = store_module._read_rows
    monkeypatch.setattr(
        store_module,
        "_read_rows",
        lambda part, groups: decoded.append(groups) or read_rows(part, groups),
    )
    got = [Store(path).case(c).data_sets()[0]["inputs"]["x"].tolist() for c in Store(path).cases()]
    assert got == [[-1.0, 1234.5], [-1.0, 1235.5], [-1.0, 1236.5]]
    assert decoded == [[0]]
    forget_kept_reads()  # let go: the next store decodes its row group again
    assert Store(path).case("node/test_tiny").data_sets()[0]["inputs"]["x"].tolist() == got[0]
    assert decoded == [[0], [0]]


def test_rows_kept_are_not_taken_once_the_file_holds_other_bytes(tmp_path, monkeypatch):
    """A value changed in place, the file's size, modification time and footer kept (a
    clock coarser than two writes): the next store reads the bytes the file holds now
    (here refused: they are not those the digest was taken of), never the rows kept."""
    import struct

    from onnx_arrow.corpus import WriteOptions
    from onnx_arrow.corpus import parts as parts_module

    path = tmp_path / "store.parquet"
    options = WriteOptions(compression="none", float_encoding="PLAIN")
    write_store(FolderSource(_cases_of_one_row_group(tmp_path / "src")), path, options=options)
    case = "node/test_tiny_1"
    assert Store(path).case(case).data_sets()[0]["inputs"]["x"].tolist() == [-1.0, 1235.5]
    assert parts_module._KEPT_READ  # kept
    st = path.stat()
    data = path.read_bytes()
    old, new = struct.pack("<f", 1235.5), struct.pack("<f", 4321.5)
    assert data.count(old) == 1
    path.write_bytes(data.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    with pytest.raises(CorpusError, match="digest"):
        Store(path).case(case).data_sets()
    monkeypatch.setattr(parts_module, "_KEPT_READ_BYTES", 0)  # none kept past the budget
    path.write_bytes(data)
    assert Store(path).case(case).data_sets()[0]["inputs"]["x"].tolist() == [-1.0, 1235.5]
    assert not parts_module._KEPT_READ


def test_rows_whose_copies_come_from_another_row_group_are_not_kept(tmp_path):
    """A copy's payload filled from another row group is bytes the comparison of the row
    group read does not cover: such rows are not kept, and the source changed in place is
    read as it is now (here refused: not the bytes the copy's digest was taken of)."""
    import shutil
    import struct

    import numpy as np
    from onnx import numpy_helper

    from onnx_arrow.corpus import WriteOptions
    from onnx_arrow.corpus import parts as parts_module
    from onnx_arrow.errors import DeclarationWarning

    src = small_corpus(tmp_path / "src")
    shutil.copytree(src / "node" / "test_tiny", src / "node" / "test_tiny_1")
    x = numpy_helper.from_array(np.arange(512, dtype=np.float32) + 0.25, "x")  # 2 KiB: a copy
    for case in ("test_tiny", "test_tiny_1"):
        (src / "node" / case / "test_data_set_0" / "input_0.pb").write_bytes(x.SerializeToString())
    path = tmp_path / "store.parquet"
    options = WriteOptions(row_group_bytes=1, compression="none", float_encoding="PLAIN")
    with pytest.warns(DeclarationWarning):  # the model declares [2]: kept as it is
        write_store(FolderSource(src), path, options=options)
    case = "node/test_tiny_1"
    parts_module.forget_kept_reads()
    assert Store(path).case(case).data_sets()[0]["inputs"]["x"][:2].tolist() == [0.25, 1.25]
    assert not parts_module._KEPT_READ
    st, data = path.stat(), path.read_bytes()
    old = struct.pack("<f", 0.25)
    assert data.count(old) == 1  # in the first case's row group, the copy's source
    path.write_bytes(data.replace(old, struct.pack("<f", 99.5)))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(CorpusError, match="digest"):
        Store(path).case(case).data_sets()

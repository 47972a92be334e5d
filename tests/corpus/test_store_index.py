"""The index of cases in a store file's footer (``onnx_arrow.cases``): written by every
store writer, read by Store in place of the ``test_case`` column, checked against the
footer when opened and against the rows when a case is read; a store without it (older,
or rewritten by another tool) reads as before, and a forged one is ignored or refused,
located, never read as another case."""

from __future__ import annotations

import base64
import json
import shutil
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import numpy_helper
from store_helpers import small_corpus

from onnx_arrow.corpus import FolderSource, Store, export_store, write_dataset, write_store
from onnx_arrow.corpus.copies import resolve
from onnx_arrow.corpus.format import CASES_KEY, build_case_index, case_runs, parse_case_index
from onnx_arrow.corpus.parts import open_part
from onnx_arrow.corpus.sources import CorpusError


def _corpus(root: Path) -> Path:
    """Two cases of the same rows and different values, in one row group."""
    src = small_corpus(root)
    other = src / "node" / "test_other"
    shutil.copytree(src / "node" / "test_tiny", other)
    for name, values in (("input_0", [-3.0, 4.0]), ("output_0", [3.0, 4.0])):
        tensor = numpy_helper.from_array(np.array(values, np.float32), name[0])
        (other / "test_data_set_0" / f"{name}.pb").write_bytes(tensor.SerializeToString())
    return src


def _rewrite(src: Path, dst: Path, index: bytes | None) -> None:
    """The rows of ``src`` in its row groups again, with ``index`` as the footer's index of
    cases (none if None), as a tool that keeps the rows and changes the footer would."""
    file = pq.ParquetFile(src)
    with pq.ParquetWriter(dst, file.schema_arrow) as writer:
        for i in range(file.num_row_groups):
            table = file.read_row_group(i)
            writer.write_table(table, row_group_size=table.num_rows)
        if index is not None:
            writer.add_key_value_metadata({CASES_KEY: index})


def _index(path: Path) -> dict:
    raw = pq.ParquetFile(path).metadata.metadata[CASES_KEY.encode()]
    return _unpacked(raw)


def _unpacked(raw: bytes) -> dict:
    """The JSON of an index as the footer holds it: zlib-compressed, in base64."""
    return json.loads(zlib.decompress(base64.b64decode(raw)))


def _packed(doc: object) -> bytes:
    return base64.b64encode(zlib.compress(json.dumps(doc).encode()))


def _inputs(store: Store, case: str) -> list[float]:
    return store.case(case).data_sets()[0]["inputs"]["x"].tolist()


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "store.parquet"
    write_store(FolderSource(_corpus(tmp_path / "src")), path)
    file = pq.ParquetFile(path)
    runs = [
        case_runs(file.read_row_group(i, columns=["test_case"])["test_case"].to_pylist())
        for i in range(file.num_row_groups)
    ]
    assert _index(path) == _unpacked(build_case_index(runs))
    part = open_part(path)
    assert part.index is not None
    assert [n for spans in part.index for n, _, _ in spans] == ["node/test_other", "node/test_tiny"]
    store = Store(path)
    assert store.cases() == ["node/test_other", "node/test_tiny"]
    assert _inputs(store, "node/test_tiny") == [-1.0, 2.0]
    assert _inputs(store, "node/test_other") == [-3.0, 4.0]
    # every column of the case's rows, as the file holds them, copies given their payload
    whole = resolve(pq.read_table(path), None, where=str(path))
    for case in store.cases():
        rows = whole.filter(pa.compute.equal(whole["test_case"], case))
        assert store.read_case(case).equals(rows)


def test_parse_refuses_what_disagrees_with_the_footer() -> None:
    good = build_case_index([[("a", 2), ("b", 1)]])
    assert parse_case_index(good, [3]) == [[("a", 0, 2), ("b", 2, 3)]]
    assert parse_case_index(good, [3, 1]) is None  # another number of row groups
    assert parse_case_index(build_case_index([[("a", 2), ("a", 1)]]), [3]) is None
    lone = json.loads('{"version":1,"row_groups":[[["\\ud800",1]]]}')
    assert parse_case_index(_packed(lone), [1]) is None
    assert parse_case_index(_packed({"version": 1, "row_groups": [[["a", 0]]]}), [0]) is None
    assert parse_case_index(_packed({"version": 2, "row_groups": []}), []) is None
    assert parse_case_index(_packed([]), []) is None
    assert parse_case_index(b'{"version":1,"row_groups":[]}', []) is None  # not packed
    assert parse_case_index(b"!!", []) is None  # not base64
    bomb = base64.b64encode(zlib.compress(b" " * (200 << 20)))  # past what an index unpacks to
    assert parse_case_index(bomb, []) is None


def test_store_without_index_reads_as_before(tmp_path: Path) -> None:
    path, old = tmp_path / "store.parquet", tmp_path / "old.parquet"
    write_store(FolderSource(_corpus(tmp_path / "src")), path)
    _rewrite(path, old, None)
    assert CASES_KEY.encode() not in pq.ParquetFile(old).metadata.metadata
    assert open_part(old).index is None
    store = Store(old)
    assert store.cases() == Store(path).cases()
    assert _inputs(store, "node/test_tiny") == [-1.0, 2.0]
    assert _inputs(store, "node/test_other") == [-3.0, 4.0]


def test_index_that_disagrees_with_the_footer_is_ignored(tmp_path: Path) -> None:
    path, forged = tmp_path / "store.parquet", tmp_path / "forged.parquet"
    write_store(FolderSource(_corpus(tmp_path / "src")), path)
    doc = _index(path)
    doc["row_groups"][0][0][0] = "node/test_zzz"  # beyond the row group's largest case
    _rewrite(path, forged, _packed(doc))
    assert open_part(forged).index is None
    store = Store(forged)
    assert store.cases() == ["node/test_other", "node/test_tiny"]
    assert _inputs(store, "node/test_tiny") == [-1.0, 2.0]


def test_forged_index_is_a_located_error_never_another_case(tmp_path: Path) -> None:
    # the two cases' names swapped: the footer's row counts and statistics still agree
    path, forged = tmp_path / "store.parquet", tmp_path / "forged.parquet"
    write_store(FolderSource(_corpus(tmp_path / "src")), path)
    doc = _index(path)
    (first, _), (second, _) = doc["row_groups"][0]
    doc["row_groups"][0][0][0], doc["row_groups"][0][1][0] = second, first
    _rewrite(path, forged, _packed(doc))
    assert open_part(forged).index is not None
    store = Store(forged)
    for read in (store.case, store.read_case, store.case_files, store.model):
        with pytest.raises(CorpusError, match=r"row group 0.*index of cases.*'node/test_tiny'"):
            read("node/test_tiny")
    # the readers of every row, which list no case by name, check the index as they read
    with pytest.raises(CorpusError, match=r"row group 0: .*index of cases.*disagrees"):
        export_store(forged, tmp_path / "out")
    with pytest.raises(CorpusError, match=r"row group 0: .*index of cases.*disagrees"):
        list(store.values())


def test_dataset_store(tmp_path: Path) -> None:
    out = tmp_path / "store"
    write_dataset(FolderSource(_corpus(tmp_path / "src")), out, part_cases=1)
    parts = sorted(out.glob("*.parquet"))
    assert len(parts) == 2
    assert all(open_part(p).index is not None for p in parts)
    store = Store(out)
    assert store.cases() == ["node/test_other", "node/test_tiny"]
    assert _inputs(store, "node/test_tiny") == [-1.0, 2.0]
    assert _inputs(store, "node/test_other") == [-3.0, 4.0]


def test_cases_of_every_kind_read_as_the_file_holds_them(node_store) -> None:
    # the data columns of the dtypes a row group does not hold come back as the nulls
    # the file holds; containers, strings, sparse and sub-byte tensors among them
    _, path, _ = node_store
    store = Store(path)
    assert open_part(path).index is not None
    whole = resolve(pq.read_table(path), None, where=str(path))  # copies given their payload
    cases = store.cases()
    for case in cases[:: max(1, len(cases) // 40)]:
        rows = whole.filter(pa.compute.equal(whole["test_case"], case))
        got = store.read_case(case)
        assert got.schema.equals(rows.schema)
        assert repr(got.to_pylist()) == repr(rows.to_pylist()), case  # NaN as NaN

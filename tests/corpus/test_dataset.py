"""Dataset stores: a folder of Parquet parts read as one store, by onnx-arrow and engines."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import ModelProto
from store_helpers import same, small_corpus, tree_bytes

from onnx_arrow.cli import main
from onnx_arrow.compare import Backend, compare, run_backend
from onnx_arrow.corpus import (
    Case,
    CorpusError,
    FolderSource,
    Store,
    WriteOptions,
    default_source,
    export_store,
    write_dataset,
    write_store,
)
from onnx_arrow.corpus.format import METADATA_KEY
from onnx_arrow.corpus.parquet import StoreFile
from onnx_arrow.errors import UnsupportedTypeError


@pytest.fixture(scope="module")
def default_corpus() -> list[Case]:
    return list(default_source())


@pytest.fixture(scope="module")
def dataset(default_corpus: list[Case], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dataset") / "corpus"
    summary = write_dataset(
        default_corpus,
        out,
        part_cases=700,
        by_kind=True,
        options=WriteOptions(row_group_cases=64),
        jobs=2,
    )
    assert summary["cases"] == len(default_corpus) > 2000
    return out


def test_the_default_corpus_as_a_dataset_exports_byte_for_byte(
    default_corpus: list[Case], dataset: Path, tmp_path: Path
) -> None:
    store = Store(dataset)
    relative = [p.relative_to(dataset).as_posix() for p in store.parts]
    assert relative[:2] == ["light/part-00000.parquet", "node/part-00001.parquet"]
    assert sum(r.startswith("node/") for r in relative) == 3  # 1,884 node cases, 700 a part
    # every row group holds at most 64 cases, every part 700
    for part in store.parts:
        cases = pq.read_table(part, columns=["test_case"]).column("test_case")
        assert len(set(cases.to_pylist())) <= 700
    assert store.num_row_groups >= 2042 // 64
    assert store.cases() == [c.name for c in default_corpus]
    export_store(store, tmp_path / "out", jobs=2)
    source = {f.path: f.data for case in default_corpus for f in case.files}
    assert tree_bytes(tmp_path / "out") == source


@pytest.fixture(scope="module")
def one_file(default_corpus: list[Case], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("one") / "one.parquet"
    write_store(default_corpus, path)
    return path


def test_a_dataset_reads_as_the_one_file_store_does(one_file: Path, dataset: Path) -> None:
    path = one_file
    one, many = Store(path), Store(dataset)
    assert pq.read_table(path).num_rows == sum(pq.read_table(p).num_rows for p in many.parts)
    for case in ("node/test_abs", "node/test_sequence_insert_at_back", "simple/test_sign_model"):
        assert same(many.case_arrays(case), one.case_arrays(case))
        assert many.case_table(case).equals(one.case_table(case))
        assert [f.data for f in many.case_files(case)] == [f.data for f in one.case_files(case)]
    echo = _expected_outputs_backend(one, _CHOSEN)
    table = compare(many, echo, cases=_CHOSEN).to_pandas()
    assert table.equals(compare(one, echo, cases=_CHOSEN).to_pandas())
    assert set(table["status"]) == {"match"}
    assert {c.split("/")[0] for c in table["case"]} == {"node", "light"}


#: Cases whose comparison shows a dataset store and a one-file store read alike: node
#: tests with tensors and optionals, and the light/ models fed inputs onnx's runner makes.
_CHOSEN = ["node/test_abs*", "node/test_optional*", "light/*"]


def _fingerprint(value: Any) -> Hashable:
    """What a backend is fed, as a key: equal feeds, equal keys."""
    if isinstance(value, np.ndarray):
        data = tuple(value.flat) if value.dtype == object else value.tobytes()
        return ("array", value.dtype.str, value.shape, data)
    if isinstance(value, list):
        return ("list", *(_fingerprint(v) for v in value))
    if isinstance(value, dict):
        return ("dict", *sorted((repr(k), _fingerprint(v)) for k, v in value.items()))
    return ("other", repr(value))


def _feed_key(model: ModelProto, inputs: dict[str, Any]) -> Hashable:
    return model.SerializeToString(deterministic=True), _fingerprint(inputs)


def _expected_outputs_backend(store: Store, cases: list[str]) -> Backend:
    """A backend that gives the expected outputs ``store`` holds for what it is fed: as
    fast as reading them, where onnx's reference evaluator takes minutes over light/."""
    fed: list[Hashable] = []

    def record(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        fed.append(_feed_key(model, inputs))
        return []

    answers: dict[Hashable, list[Any]] = {}
    for run in run_backend(store, record, cases=cases):
        if run.skipped is None and run.error is None:
            outputs = range(len(run.output_names))
            answers[fed.pop()] = [run.expected[k].to_numpy() for k in outputs]
    assert not fed
    assert answers

    def echo(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        return answers[_feed_key(model, inputs)]

    return echo


@pytest.mark.slow
def test_onnx_reference_evaluator_compares_a_dataset_as_the_one_file_store(
    one_file: Path, dataset: Path
) -> None:
    """The comparison above with onnx's own (pure Python, slow) reference evaluator."""
    one, many = Store(one_file), Store(dataset)
    assert compare(many, cases=_CHOSEN).to_pandas().equals(compare(one, cases=_CHOSEN).to_pandas())


def test_reading_one_case_reads_only_its_part(dataset: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(dataset, copy)
    store = Store(copy)
    # damage every part but the one of node/test_abs, after the footers were read
    holder = next(
        p
        for p in store.parts
        if "node/test_abs" in pq.read_table(p, columns=["test_case"]).column(0).to_pylist()
    )
    for part in store.parts:
        if part != holder:
            data = part.read_bytes()
            footer = int.from_bytes(data[-8:-4], "little")
            with open(part, "r+b") as f:
                f.seek(4)
                f.write(b"\0" * (len(data) - footer - 12))  # every page, not the footer
    with pytest.raises(CorpusError, match=r"invalid|cannot|damaged"):
        list(store.values("simple/test_sign_model"))
    assert store.case_arrays("node/test_abs")[0]["inputs"]["x"].shape == (3, 4, 5)


def _parts(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_append_adds_parts_and_refuses_cases_held(tmp_path: Path) -> None:
    first = FolderSource(small_corpus(tmp_path / "a"))
    second_root = tmp_path / "b"
    small_corpus(second_root)
    (second_root / "node" / "test_tiny").rename(second_root / "node" / "test_other")
    out = tmp_path / "store"
    assert write_dataset(first, out)["parts"] == ["part-00000.parquet"]
    before = _parts(out)
    added = write_dataset(FolderSource(second_root), out, append=True)
    assert added["parts"] == ["part-00001.parquet"]
    assert _parts(out)["part-00000.parquet"] == before["part-00000.parquet"]  # not rewritten
    assert Store(out).cases() == ["node/test_tiny", "node/test_other"]
    now = _parts(out)
    with pytest.raises(CorpusError, match=r"holds case 'node/test_other' already"):
        write_dataset(FolderSource(second_root), out, append=True)
    assert _parts(out) == now  # nothing half-added
    assert sorted(p.name for p in out.iterdir()) == ["part-00000.parquet", "part-00001.parquet"]


def test_a_failed_dataset_write_leaves_nothing(tmp_path: Path) -> None:
    small_corpus(tmp_path / "src")

    def cases() -> Iterator[Case]:
        yield from FolderSource(tmp_path / "src")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_dataset(cases(), tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
    out = tmp_path / "kept"
    write_dataset(FolderSource(tmp_path / "src"), out)
    before = _parts(out)
    with pytest.raises(KeyboardInterrupt):
        write_dataset(cases(), out, replace=True)
    assert _parts(out) == before
    with pytest.raises(CorpusError, match=r"not empty; add to a dataset store with append"):
        write_dataset(FolderSource(tmp_path / "src"), out)


@pytest.mark.parametrize(
    ("argument", "junk"),
    [("cases", None), ("cases", [1]), ("out", 1), ("options", WriteOptions)],
)
def test_junk_arguments_are_refused_before_anything_is_written(
    tmp_path: Path, argument: str, junk: object
) -> None:
    args: dict[str, object] = {"cases": [], "out": tmp_path / "out"}
    args[argument] = junk
    with pytest.raises(UnsupportedTypeError, match=rf"^write_dataset\({argument}\)"):
        write_dataset(**args)
    assert list(tmp_path.iterdir()) == []


def test_a_lazy_source_of_a_dataset_is_checked_as_it_is_read(tmp_path: Path) -> None:
    small_corpus(tmp_path / "src")

    def cases() -> Iterator[object]:
        yield from FolderSource(tmp_path / "src")
        yield tmp_path / "src"

    with pytest.raises(UnsupportedTypeError, match=r"^write_dataset\(cases\)\[1\]: expected"):
        write_dataset(cases(), tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


def _rewrite_metadata(path: Path, change: dict[str, object]) -> None:
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[METADATA_KEY.encode()])
    meta.update(change)
    pq.write_table(table.replace_schema_metadata({METADATA_KEY: json.dumps(meta)}), path)


def test_parts_that_disagree_are_refused_naming_the_part(tmp_path: Path) -> None:
    src = small_corpus(tmp_path / "src")
    out = tmp_path / "store"
    write_dataset(FolderSource(src), out)
    other = out / "part-00007.parquet"
    write_store(FolderSource(src), other)
    with pytest.raises(CorpusError, match=r"case 'node/test_tiny' is in two parts"):
        Store(out).cases()
    _rewrite_metadata(other, {"format_version": 99})
    with pytest.raises(CorpusError, match=r"part-00007\.parquet: store format version 99"):
        Store(out)
    table = pq.read_table(out / "part-00000.parquet")
    pq.write_table(table.drop_columns(["case_row"]), other)
    with pytest.raises(CorpusError, match=r"part-00007\.parquet: the columns differ"):
        Store(out)
    other.unlink()
    os.symlink(out / "part-00000.parquet", out / "part-00009.parquet")
    with pytest.raises(CorpusError, match=r"part-00009\.parquet: is a symlink"):
        Store(out)


def test_a_list_of_store_files_is_one_store(tmp_path: Path) -> None:
    src = small_corpus(tmp_path / "src")
    write_store(FolderSource(src), tmp_path / "a.parquet")
    (src / "node" / "test_tiny").rename(src / "node" / "test_two")
    write_store(FolderSource(src), tmp_path / "b.parquet")
    store = Store([tmp_path / "a.parquet", tmp_path / "b.parquet"])
    assert store.cases() == ["node/test_tiny", "node/test_two"]
    assert store.num_row_groups == 2
    assert len(list(store.files())) == 2 * 4
    with pytest.raises(CorpusError, match="no store files given"):
        Store([])


def test_import_export_verify_and_info_on_a_dataset_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = small_corpus(tmp_path / "src")
    out = tmp_path / "store"
    assert main(["import", "--partition-by", "kind", str(src), str(out)]) == 0
    assert (out / "node" / "part-00000.parquet").is_file()
    assert main(["info", str(out)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"^parts +1 \(a dataset store\)$", printed, re.M)
    assert re.search(r"^cases +1$", printed, re.M)
    assert main(["export", str(out), str(tmp_path / "tree")]) == 0
    assert tree_bytes(tmp_path / "tree") == tree_bytes(src)
    assert main(["verify", "--part-cases", "1", str(src)]) == 0
    assert "files byte-identical" in capsys.readouterr().out
    assert main(["import", "--append", str(src), str(out)]) == 1
    assert "holds case 'node/test_tiny' already" in capsys.readouterr().err


@pytest.mark.parametrize("engine", ["duckdb", "polars", "pyarrow.dataset"])
def test_engines_read_a_dataset_folder_as_one_table(dataset: Path, engine: str) -> None:
    rows = sum(pq.read_metadata(p).num_rows for p in Store(dataset).parts)
    if engine == "duckdb":
        import duckdb

        got = duckdb.sql(
            "SELECT count(*), count(DISTINCT test_case) "
            f"FROM read_parquet('{dataset}/**/*.parquet')"
        ).fetchall()
        assert got == [(rows, 2042)]
    elif engine == "polars":
        import polars as pl

        frame = pl.scan_parquet(f"{dataset}/**/*.parquet").select(
            pl.len(), pl.col("test_case").n_unique()
        )
        assert frame.collect().row(0) == (rows, 2042)
    else:
        import pyarrow.dataset as ds

        table = ds.dataset(dataset, format="parquet").to_table(columns=["test_case"])
        assert table.num_rows == rows
        assert isinstance(table.column(0).type, pa.DataType)


def test_replacing_deletes_only_a_store(tmp_path: Path) -> None:
    src = small_corpus(tmp_path / "src")
    out = tmp_path / "store"
    write_dataset(FolderSource(src), out)
    assert (out.stat().st_mode & 0o777) == 0o777 & ~_umask()  # not mkdtemp's 0o700
    (out / "notes.txt").write_text("mine\n")
    with pytest.raises(CorpusError, match=r"holds notes\.txt, which is not a part of a store"):
        write_dataset(FolderSource(src), out, replace=True)
    assert (out / "notes.txt").read_text() == "mine\n"
    (out / "notes.txt").unlink()
    assert write_dataset(FolderSource(src), out, replace=True)["parts"] == ["part-00000.parquet"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_case_in_two_parts_is_refused_when_read(tmp_path: Path) -> None:
    src = small_corpus(tmp_path / "src")
    out = tmp_path / "store"
    write_dataset(FolderSource(src), out)
    shutil.copy(out / "part-00000.parquet", out / "part-00001.parquet")
    # refused when the store is opened, so by every reader alike
    with pytest.raises(CorpusError, match=r"'node/test_tiny' is in two parts of the store"):
        Store(out).case_arrays("node/test_tiny")
    with pytest.raises(CorpusError, match=r"'node/test_tiny' is in two parts of the store"):
        Store(out).cases()


def test_the_catalog_of_a_dataset_is_the_one_files(one_file: Path, dataset: Path) -> None:
    from onnx_arrow.pandas import catalog

    one, many = catalog(one_file), catalog(dataset)
    assert len(one) > 6000
    pd.testing.assert_frame_equal(many, one)


def _second_corpus(root: Path, name: str = "test_other") -> FolderSource:
    small_corpus(root)
    (root / "node" / "test_tiny").rename(root / "node" / name)
    return FolderSource(root)


@pytest.mark.parametrize("by_kind", [None, True])
def test_append_follows_a_store_in_a_folder_per_kind(tmp_path: Path, by_kind: bool | None) -> None:
    out = tmp_path / "store"
    write_dataset(FolderSource(small_corpus(tmp_path / "a")), out, by_kind=True)
    added = write_dataset(_second_corpus(tmp_path / "b"), out, append=True, by_kind=by_kind)
    assert added["parts"] == ["node/part-00001.parquet"]
    assert sorted(_parts(out)) == ["node/part-00000.parquet", "node/part-00001.parquet"]
    assert Store(out).cases() == ["node/test_tiny", "node/test_other"]


@pytest.mark.parametrize("by_kind", [None, False])
def test_append_follows_a_store_with_its_parts_at_its_root(
    tmp_path: Path, by_kind: bool | None
) -> None:
    out = tmp_path / "store"
    write_dataset(FolderSource(small_corpus(tmp_path / "a")), out)
    added = write_dataset(_second_corpus(tmp_path / "b"), out, append=True, by_kind=by_kind)
    assert added["parts"] == ["part-00001.parquet"]


@pytest.mark.parametrize(
    ("first", "appended", "message"),
    [
        (True, False, r"its parts are in a folder per kind \(node/part-00000\.parquet\), and "
         "parts added go in one too: leave by_kind out, or make it True"),
        (False, True, r"its parts are at its root \(part-00000\.parquet\), not in a folder per "
         r"kind; parts added go there too: append without by_kind \(import --partition-by kind\)"),
    ],
    ids=["by kind", "at the root"],
)  # fmt: skip
def test_append_refuses_a_layout_other_than_the_store_s(
    tmp_path: Path, first: bool, appended: bool, message: str
) -> None:
    out = tmp_path / "store"
    write_dataset(FolderSource(small_corpus(tmp_path / "a")), out, by_kind=first)
    before = _parts(out)
    with pytest.raises(CorpusError, match=f"^{re.escape(str(out))}: {message}$"):
        write_dataset(_second_corpus(tmp_path / "b"), out, append=True, by_kind=appended)
    assert _parts(out) == before
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_append_to_a_store_laid_out_both_ways_asks_which(tmp_path: Path) -> None:
    out = tmp_path / "store"
    write_dataset(FolderSource(small_corpus(tmp_path / "a")), out, by_kind=True)
    write_store(_second_corpus(tmp_path / "b"), out / "part-00001.parquet")
    with pytest.raises(
        CorpusError,
        match=r"its parts are laid out in more than one way \(part-00001\.parquet, "
        r"node/part-00000\.parquet\), so parts added have no layout to follow: say whether "
        r"they go in a folder per kind \(by_kind; import --partition-by kind\)$",
    ):
        write_dataset(_second_corpus(tmp_path / "c", "test_third"), out, append=True)
    added = write_dataset(
        _second_corpus(tmp_path / "d", "test_third"), out, append=True, by_kind=True
    )
    assert added["parts"] == ["node/part-00002.parquet"]


def test_import_append_follows_the_store_s_layout_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = small_corpus(tmp_path / "src")
    out = tmp_path / "store"
    assert main(["import", "--partition-by", "kind", str(src), str(out)]) == 0
    _second_corpus(tmp_path / "more")
    assert main(["import", "--append", str(tmp_path / "more"), str(out)]) == 0
    assert sorted(_parts(out)) == ["node/part-00000.parquet", "node/part-00001.parquet"]
    flat = tmp_path / "flat"
    assert main(["import", "--dataset", str(src), str(flat)]) == 0
    capsys.readouterr()
    argv = ["import", "--append", "--partition-by", "kind", str(tmp_path / "more"), str(flat)]
    assert main(argv) == 1
    line = capsys.readouterr().err.strip()
    assert line == (
        f"onnx-arrow: error: {flat}: its parts are at its root (part-00000.parquet), not in a "
        "folder per kind; parts added go there too: append without by_kind (import "
        "--partition-by kind)"
    )
    assert sorted(_parts(flat)) == ["part-00000.parquet"]


def test_a_dataset_write_onto_a_full_disk_names_the_store_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the file system's refusal at the one call that writes a part's row groups
    def full(self: object, part: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(StoreFile, "append", full)
    out = tmp_path / "store"
    with pytest.raises(OSError, match="No space left") as info:
        write_dataset(FolderSource(small_corpus(tmp_path / "src")), out)
    assert isinstance(info.value, CorpusError)
    assert info.value.errno == errno.ENOSPC
    assert str(info.value).startswith(
        f"{out}: writing the store failed: the disk is full (No space left on device"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]

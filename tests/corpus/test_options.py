"""How a store is written (corpus/options.py): the options and the numbers and callbacks
the writers take, each checked before anything is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from store_helpers import small_corpus

from onnx_arrow.corpus import (
    CorpusError,
    FolderSource,
    WriteOptions,
    export_store,
    write_dataset,
    write_store,
)
from onnx_arrow.corpus.options import check_callback, check_count
from onnx_arrow.errors import UnsupportedTypeError


@pytest.mark.parametrize(
    ("field", "junk", "error", "message"),
    [
        ("compression", "zip", UnsupportedTypeError, "expected one of zstd, snappy"),
        ("compression", None, UnsupportedTypeError, "expected one of zstd, snappy"),
        ("compression_level", "3", UnsupportedTypeError, "expected a compression level \\(int\\)"),
        ("compression_level", True, UnsupportedTypeError, "expected .*, got bool$"),
        ("float_compression_level", 1.5, UnsupportedTypeError, ".*\\(int\\) or None, got float"),
        ("row_group_bytes", 0, CorpusError, "0 is less than 1"),
        ("row_group_bytes", "4M", UnsupportedTypeError, "expected a whole number"),
        ("row_group_cases", -1, CorpusError, "-1 is less than 1"),
        ("keep_undecodable", "no", UnsupportedTypeError, "expected True or False, got str"),
        ("page_index", 1, UnsupportedTypeError, "expected True or False, got int"),
    ],
)
def test_write_options_refuse_a_field_of_the_wrong_kind_naming_it(
    field: str, junk: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=rf"^WriteOptions\({field}\): {message}"):
        WriteOptions(**{field: junk})  # type: ignore[arg-type]


def test_write_options_take_what_pyarrow_takes() -> None:
    WriteOptions(compression="LZ4", compression_level=-1, float_compression_level=None)
    WriteOptions(row_group_bytes=np.int64(1), row_group_cases=1)  # type: ignore[arg-type]


def test_counts_and_callbacks_are_checked() -> None:
    assert check_count(np.int32(3), where="f(n)") == 3
    assert check_count(None, where="f(n)", optional=True) is None
    with pytest.raises(
        UnsupportedTypeError, match=r"^f\(n\): expected a whole number \(int\) of 1"
    ):
        check_count(None, where="f(n)")
    with pytest.raises(UnsupportedTypeError, match=r"or None, got float$"):
        check_count(2.0, where="f(n)", optional=True)
    assert check_callback(print, where="f(progress)") is print
    with pytest.raises(UnsupportedTypeError, match=r"^f\(progress\): expected a function"):
        check_callback("print", where="f(progress)")


def _calls(src: Path, tmp_path: Path) -> dict[str, Any]:
    store = tmp_path / "store.parquet"
    write_store(FolderSource(src), store)
    return {
        "write_store": lambda **kw: write_store(FolderSource(src), tmp_path / "s.parquet", **kw),
        "write_dataset": lambda **kw: write_dataset(FolderSource(src), tmp_path / "ds", **kw),
        "export_store": lambda **kw: export_store(store, tmp_path / "tree", **kw),
    }


@pytest.mark.parametrize("call", ["write_store", "write_dataset", "export_store"])
@pytest.mark.parametrize(
    ("argument", "junk", "error"),
    [
        ("jobs", "2", UnsupportedTypeError),
        ("jobs", 0, CorpusError),
        ("jobs", 1.0, UnsupportedTypeError),
        ("progress", 1, UnsupportedTypeError),
    ],
)
def test_writers_refuse_junk_numbers_and_callbacks_before_anything_is_written(
    tmp_path: Path, call: str, argument: str, junk: object, error: type[Exception]
) -> None:
    src = small_corpus(tmp_path / "src")
    calls = _calls(src, tmp_path)
    with pytest.raises(error, match=rf"^{call}\({argument}\): "):
        calls[call](**{argument: junk})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "store.parquet"]


@pytest.mark.parametrize(
    ("argument", "junk", "error"),
    [
        ("part_bytes", 0, CorpusError),
        ("part_cases", "3", UnsupportedTypeError),
        ("part_cases", -1, CorpusError),
    ],
)
def test_dataset_part_sizes_are_checked_before_anything_is_written(
    tmp_path: Path, argument: str, junk: object, error: type[Exception]
) -> None:
    src = small_corpus(tmp_path / "src")
    with pytest.raises(error, match=rf"^write_dataset\({argument}\): "):
        write_dataset(FolderSource(src), tmp_path / "ds", **{argument: junk})  # type: ignore[arg-type]
    with pytest.raises(UnsupportedTypeError, match=r"^write_dataset\(by_kind\): expected True"):
        write_dataset(FolderSource(src), tmp_path / "ds", by_kind="kind")  # type: ignore[arg-type]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


def test_a_folder_source_checks_its_file_limit(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedTypeError, match=r"^FolderSource\(max_file_bytes\): expected"):
        FolderSource(tmp_path, max_file_bytes="1G")  # type: ignore[arg-type]
    with pytest.raises(CorpusError, match=r"^FolderSource\(max_file_bytes\): 0 is less than 1"):
        FolderSource(tmp_path, max_file_bytes=0)


def test_provenance_is_json_with_the_onnx_version() -> None:
    assert WriteOptions(provenance={"onnx": "1.4.1"}).provenance == {"onnx": "1.4.1"}
    with pytest.raises(UnsupportedTypeError, match=r"WriteOptions\(provenance\).*'onnx'"):
        WriteOptions(provenance={"source": "folder"})
    with pytest.raises(UnsupportedTypeError, match="not JSON values"):
        WriteOptions(provenance={"onnx": "1.4.1", "when": object()})

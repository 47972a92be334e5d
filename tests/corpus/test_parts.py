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

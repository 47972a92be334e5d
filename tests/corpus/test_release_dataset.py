"""A dataset store of releases (:mod:`onnx_arrow.corpus.release_dataset`): releases in
folders of their own, read whole by DuckDB and Polars and one by one as stores, and the
query of the expected outputs that changed."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import duckdb
import polars as pl
import pytest
from release_helpers import make_wheel

from onnx_arrow.cli import main
from onnx_arrow.corpus import Store
from onnx_arrow.corpus.release_dataset import CHANGES_SQL, release_changes, release_stores
from onnx_arrow.errors import CorpusError

pytestmark = pytest.mark.usefixtures("release_cache")


def test_releases_in_one_dataset_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "releases"
    wheels = [make_wheel(tmp_path, "9.9.8"), make_wheel(tmp_path, "9.10.0", y=3.0)]
    assert main(["import", "--append", f"@onnx={wheels[0]}", str(out)]) == 0  # a new one
    assert main(["import", "--append", f"@onnx={wheels[1]}", str(out)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in out.iterdir()) == ["onnx_version=9.10.0", "onnx_version=9.9.8"]
    # a release held already is refused
    assert main(["import", "--append", f"@onnx={wheels[1]}", str(out)]) == 1
    assert "holds onnx 9.10.0 already" in capsys.readouterr().err
    stores = release_stores(out)
    assert list(stores) == ["9.9.8", "9.10.0"]  # in version order
    assert stores["9.10.0"].metadata["provenance"]["onnx"] == "9.10.0"
    with pytest.raises(CorpusError, match="open one release"):
        Store(out)
    # the query of the docs: which cases' expected outputs changed, and when
    changes = duckdb.sql(CHANGES_SQL.format(store=out)).fetchall()
    assert changes == [("simple/test_twice", "9.9.8", "9.10.0", 1)]
    assert release_changes(out) == [
        {
            "case": "simple/test_twice",
            "op_types": "Add",
            "previous": "9.9.8",
            "onnx_version": "9.10.0",
            "outputs_changed": 1,
        }
    ]
    frame = pl.read_parquet(out, hive_partitioning=True, hive_schema={"onnx_version": pl.String})
    assert sorted(set(frame["onnx_version"])) == ["9.10.0", "9.9.8"]


# --- the package index ----------------------------------------------------------------------


_PAGE = Path(__file__).resolve().parents[2] / "docs" / "frozen-corpora.md"


def _page_blocks(language: str) -> list[str]:
    text = _PAGE.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def test_the_docs_query_is_the_one_tested() -> None:
    assert _page_blocks("sql") == [CHANGES_SQL + "\n"]


def test_the_docs_command_lines_are_valid_usage() -> None:
    from onnx_arrow.cli import _parser

    lines = [line for block in _page_blocks("sh") for line in block.splitlines()]
    commands = [shlex.split(line, comments=True) for line in lines if line.startswith("onnx-arrow")]
    assert len(commands) >= 10
    for argv in commands:
        _parser().parse_args(argv[1:])  # raises on bad usage

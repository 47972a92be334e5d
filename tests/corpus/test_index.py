"""The one check of a store's cases every reader shares (corpus.index): a row that names
no case (null, invalid UTF-8) and a case in two parts (a part added twice, a case split
over two parts) are refused alike by Store, info, export, diff, compare and
cases_from_rows, each with one located line and no traceback."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import error_line
from store_helpers import small_corpus

from onnx_arrow.cli import main
from onnx_arrow.corpus import (
    REQUIRED_COLUMNS,
    FolderSource,
    Store,
    cases_from_rows,
    export_store,
    write_dataset,
    write_store,
)
from onnx_arrow.corpus.sources import CorpusError
from onnx_arrow.diff import diff


def _two_cases(root: Path) -> Path:
    src = small_corpus(root)
    shutil.copytree(src / "node" / "test_tiny", src / "node" / "test_tinier")
    return src


def _set_names(path: Path, names: pa.Array) -> None:
    table = pq.read_table(path)
    at = table.schema.get_field_index("test_case")
    pq.write_table(table.set_column(at, table.schema.field(at), names), path)


def _null_name(tmp_path: Path) -> Path:
    path = tmp_path / "store.parquet"
    write_store(FolderSource(_two_cases(tmp_path / "src")), path)
    names = pq.read_table(path)["test_case"].to_pylist()
    names[-1] = None
    _set_names(path, pa.array(names, pa.string()))
    return path


def _invalid_utf8(tmp_path: Path) -> Path:
    path = tmp_path / "store.parquet"
    write_store(FolderSource(_two_cases(tmp_path / "src")), path)
    names = [n.encode() for n in pq.read_table(path)["test_case"].to_pylist()]
    names[-1] = b"node/test_\xff\xfe"
    binary = pa.array(names, pa.binary())
    _set_names(path, pa.Array.from_buffers(pa.string(), len(binary), binary.buffers()))
    return path


def _part_added_twice(tmp_path: Path) -> Path:
    out = tmp_path / "store"
    write_dataset(FolderSource(_two_cases(tmp_path / "src")), out)
    shutil.copy(out / "part-00000.parquet", out / "part-00001.parquet")
    return out


def _case_split(tmp_path: Path) -> Path:
    out = tmp_path / "store"
    write_dataset(FolderSource(_two_cases(tmp_path / "src")), out)
    table = pq.read_table(out / "part-00000.parquet")
    pq.write_table(table.slice(0, 2), out / "part-00000.parquet")
    pq.write_table(table.slice(2), out / "part-00001.parquet")
    return out


STORES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "null test_case": (_null_name, r"1 rows have no test_case \(null\)"),
    "invalid UTF-8 test_case": (_invalid_utf8, r"the test_case column is invalid \(.*UTF8"),
    "a part added twice": (_part_added_twice, r"case 'node/test_\w+' is in two parts"),
    "a case split over two parts": (_case_split, r"case 'node/test_\w+' is in two parts"),
}


@pytest.fixture(params=list(STORES))
def damaged(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    make, said = STORES[request.param]
    return make(tmp_path), said


def test_store_refuses_it_when_opened(damaged: tuple[Path, str]) -> None:
    path, said = damaged
    with pytest.raises(CorpusError, match=said):
        Store(path).cases()


def test_export_and_diff_refuse_it(damaged: tuple[Path, str], tmp_path: Path) -> None:
    path, said = damaged
    with pytest.raises(CorpusError, match=said):
        export_store(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    good = tmp_path / "good.parquet"
    write_store(FolderSource(_two_cases(tmp_path / "good")), good)
    for old, new in ((good, path), (path, good)):
        with pytest.raises(CorpusError, match=said):
            diff(old, new)


@pytest.mark.parametrize("command", ["info", "export", "diff", "compare"])
def test_every_command_refuses_it_in_one_line(
    damaged: tuple[Path, str], command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, said = damaged
    args = {
        "info": ["info", str(path)],
        "export": ["export", str(path), str(tmp_path / "out")],
        "diff": ["diff", str(path), str(path)],
        "compare": ["compare", str(path)],
    }[command]
    assert main(args) == 1
    line = error_line(capsys.readouterr().err)
    assert str(path) in line
    assert re.search(said, line), line


def test_cases_from_rows_refuses_rows_with_no_case_alike(tmp_path: Path) -> None:
    for make, said in (STORES["null test_case"], STORES["invalid UTF-8 test_case"]):
        path = make(tmp_path / make.__name__)
        table = pq.read_table(path, columns=list(REQUIRED_COLUMNS))
        with pytest.raises(CorpusError, match=f"^part-3: {said}"):
            cases_from_rows(table, where="part-3")

"""The results store: runs added as parts, atomically and once; read as one table by
onnx-arrow, pyarrow, pandas, DuckDB and Polars; forged parts refused, located."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from onnx_arrow import compare, results
from onnx_arrow.errors import ResultsError
from onnx_arrow.reports import Report, concat_reports


def _parts(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.name.endswith(".parquet"))


def _rows(table: pa.Table) -> list[tuple[object, ...]]:
    picked = table.select(["run_id", "case", "data_set", "index", "status"]).to_pylist()
    return sorted(tuple(str(v) for v in row.values()) for row in picked)


def test_a_run_per_part_with_its_run_columns(
    results_dir: Path, reports: tuple[Report, Report]
) -> None:
    table = results.read(results_dir)
    assert table.schema == results.RESULTS_SCHEMA
    assert table.num_rows == sum(r.table.num_rows for r in reports)
    runs = sorted(results.runs(table).to_pylist(), key=lambda r: r["runtime_version"])
    assert [(r["runtime"], r["runtime_version"]) for r in runs] == [
        ("mine", "1.0"),
        ("mine", "1.1"),
    ]
    made = reports[0].provenance or {}
    for run in runs:
        assert run["corpus_digest"] == made["store_digest"]
        assert run["corpus_onnx_version"] == made["store_onnx_version"]
        assert run["onnx_arrow_version"] == made["onnx_arrow_version"]
        assert run["platform"] == made["platform"]
        assert json.loads(run["options"])["rtol"] == made["rtol"]
    assert [r["pass"] for r in runs] == [3, 3]  # 1.0 gets Range's shape wrong, 1.1 Add's sum
    assert len(_parts(results_dir)) == 2


def test_the_four_readers_read_the_folder_as_one_table(results_dir: Path) -> None:
    import duckdb
    import polars as pl
    import pyarrow.dataset as ds

    # what a writer killed mid-part leaves: a hidden temporary name, and the writers' lock
    (results_dir / ".run-x.parquet.k2j4.partial").write_bytes(b"PAR1 half a part")
    ours = _rows(results.read(results_dir))
    by_pyarrow = ds.dataset(results_dir, format="parquet").to_table()
    by_pandas = pa.Table.from_pandas(pd.read_parquet(results_dir), preserve_index=False)
    glob = str(results_dir / "*.parquet")
    by_duckdb = pa.table(duckdb.sql(f"SELECT * FROM read_parquet('{glob}')").arrow())
    by_polars = pl.scan_parquet(glob).collect().to_arrow()
    for table in (by_pyarrow, by_pandas, by_duckdb, by_polars):
        assert _rows(table) == ours
        assert table.column_names == results.RESULTS_SCHEMA.names


def test_a_run_already_there_is_not_added_again_unless_asked(
    results_dir: Path, reports: tuple[Report, Report]
) -> None:
    before = _parts(results_dir)
    (again,) = results.add(results_dir, reports[1])
    assert again.present
    assert again.part is None
    assert _parts(results_dir) == before
    (added,) = results.add(results_dir, reports[1], again=True)
    assert not added.present
    assert added.part is not None
    runs = results.runs(results.read(results_dir)).to_pylist()
    assert sorted(r["attempt"] for r in runs if r["runtime_version"] == "1.1") == [1, 2]


def test_a_joined_report_adds_a_run_per_source(
    tmp_path: Path, reports: tuple[Report, Report]
) -> None:
    added = results.add(tmp_path / "r", concat_reports(reports))
    assert [a.runtime_version for a in added] == ["1.0", "1.1"]
    assert [a.rows for a in added] == [r.table.num_rows for r in reports]


def test_a_failed_write_leaves_nothing(
    results_dir: Path, reports: tuple[Report, Report], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = sorted(os.listdir(results_dir))

    def half(table: pa.Table, where: str) -> None:
        Path(where).write_bytes(b"PAR1 half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq, "write_table", half)
    with pytest.raises(OSError, match="No space left"):
        results.add(results_dir, reports[0], again=True)
    assert sorted(os.listdir(results_dir)) == before


def test_only_a_compare_report_with_its_provenance_is_added(
    tmp_path: Path, reports: tuple[Report, Report]
) -> None:
    bare = Report.of(reports[0].table, None)
    with pytest.raises(ResultsError, match="not a compare report"):
        results.add(tmp_path / "r", bare)
    assert not (tmp_path / "r").exists()


def _forge(part: Path, out: Path, change: object) -> None:
    table = pq.read_table(part)
    pq.write_table(change(table), out)  # type: ignore[operator]


def _set(table: pa.Table, name: str, value: object) -> pa.Table:
    k = table.schema.get_field_index(name)
    column = pa.array([value] * table.num_rows, table.schema.field(name).type)
    return table.set_column(k, table.schema.field(name), column)


def _meta(table: pa.Table, **changes: object) -> pa.Table:
    key = results.RESULTS_METADATA_KEY.encode()
    meta = json.loads(table.schema.metadata[key])
    meta.update(changes)
    return table.replace_schema_metadata({key: json.dumps(meta)})


FORGERIES = {
    "wrong schema": (lambda t: pa.table({"case": ["x"]}), "no column run_id"),
    "a run column missing": (
        lambda t: t.drop_columns(["runtime_version"]),
        "no column runtime_version",
    ),
    "a run column of another type": (
        lambda t: t.set_column(2, "attempt", pa.array([1.5] * t.num_rows)),
        "attempt is double, not int64",
    ),
    "a version changed": (lambda t: _set(t, "runtime_version", "9.9"), "do not give its run_key"),
    "two runs of one identity": (
        lambda t: _meta(_set(t, "run_id", "f" * 32), run_id="f" * 32),
        "two runs claim one identity",
    ),
    "one run, another provenance": (
        lambda t: _meta(t, report={"kind": "compare"}),
        "another identity or provenance",
    ),
    "a part copied": (lambda t: t, "twice"),
    "two runs in one part": (
        lambda t: _set(t, "date", None),
        "column date is not one value",
    ),
    "metadata gone": (
        lambda t: t.replace_schema_metadata(None),
        "has no onnx_arrow.results metadata",
    ),
    "a later format": (lambda t: _meta(t, results_format=99), "upgrade onnx-arrow"),
}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_part_is_a_located_error(
    results_dir: Path, reports: tuple[Report, Report], forgery: str
) -> None:
    change, message = FORGERIES[forgery]
    forged = results_dir / "run-forged.parquet"
    _forge(_parts(results_dir)[0], forged, change)
    before = sorted(os.listdir(results_dir))
    with pytest.raises(ResultsError, match=message) as caught:
        results.read(results_dir)
    assert caught.value.where is not None
    assert str(results_dir) in caught.value.where
    if forgery != "a part copied":  # found row by row, in the folder's name
        assert caught.value.where.endswith(".parquet")
    if forgery not in ROW_FORGERIES:  # add reads the footers: nothing added beside them
        with pytest.raises(ResultsError, match=message):
            results.add(results_dir, reports[0], again=True)
        assert sorted(os.listdir(results_dir)) == before


#: The forgeries only the rows show, which read finds and add (reading footers) does not.
ROW_FORGERIES = {"a part copied", "a version changed", "two runs in one part"}


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("run-garbage.parquet", b"not parquet at all", "not a Parquet file"),
        ("run-empty.parquet", b"", "not a Parquet file"),
        ("README.txt", b"notes", r"not named \*.parquet"),
    ],
)
def test_a_file_that_is_no_part_is_a_located_error(
    results_dir: Path, name: str, data: bytes, message: str
) -> None:
    (results_dir / name).write_bytes(data)
    with pytest.raises(ResultsError, match=message) as caught:
        results.read(results_dir)
    assert caught.value.where == str(results_dir / name)


def test_a_folder_or_link_in_the_store_is_a_located_error(
    results_dir: Path, tmp_path: Path
) -> None:
    (results_dir / "more").mkdir()
    with pytest.raises(ResultsError, match="folder") as caught:
        results.read(results_dir)
    assert caught.value.where == str(results_dir / "more")
    shutil.rmtree(results_dir / "more")
    (results_dir / "link.parquet").symlink_to(_parts(results_dir)[0])
    with pytest.raises(ResultsError, match="symbolic link"):
        results.read(results_dir)


def test_a_store_that_is_a_file_or_missing(tmp_path: Path, reports: tuple[Report, Report]) -> None:
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(ResultsError, match="not a results store's folder"):
        results.add(tmp_path / "file", reports[0])
    with pytest.raises(ResultsError, match="no such results store"):
        results.read(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    assert results.read(tmp_path / "empty") == results.RESULTS_SCHEMA.empty_table()


def test_runtime_spelling_is_checked_before_any_work(reports: tuple[Report, Report]) -> None:
    with pytest.raises(compare.CompareError, match="spell it NAME==VERSION"):
        compare.compare("/nonexistent.parquet", "reference", runtime="mine 1.0")


def test_the_docs_page_has_a_row_per_run_column() -> None:
    import re

    page = (Path(__file__).parents[2] / "docs" / "results.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \|", page, re.MULTILINE)
    assert [name for name, _ in rows] == list(results.RUN_COLUMNS)
    for name, kind in rows:
        assert str(results.RUN_SCHEMA.field(name).type).startswith(kind.split()[0][:6])


def test_a_part_holds_no_path_of_this_machine(
    tmp_path: Path, reports: tuple[Report, Report], monkeypatch: pytest.MonkeyPatch
) -> None:
    made = dict(reports[0].provenance or {})
    made["backend"] = {"name": "runner", "runs": f"/usr/bin/node {tmp_path}/run.js {{model}}"}
    monkeypatch.chdir(tmp_path)
    (added,) = results.add("r", Report.of(reports[0].table, made))
    assert added.part is not None
    part = (tmp_path / "r" / added.part.name).read_bytes()
    assert str(tmp_path).encode() not in part
    assert os.path.dirname(str(reports[0].provenance["store"][0])).encode() not in part
    (run,) = results.runs(results.read("r")).to_pylist()
    assert run["runner_command"] == "node run.js '{model}'"


def test_two_writers_at_once_add_a_run_once(tmp_path: Path, reports: tuple[Report, Report]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        added = list(pool.map(lambda _: results.add(tmp_path / "r", reports[0])[0], range(4)))
    assert sorted(a.present for a in added) == [False, True, True, True]
    assert len({a.run_id for a in added}) == 1
    assert len(_parts(tmp_path / "r")) == 1


def test_has_run_finds_a_run_by_what_its_report_says(
    results_dir: Path, reports: tuple[Report, Report], tmp_path: Path
) -> None:
    made = reports[1].provenance or {}
    ids = {a.runtime_version: a.run_id for a in results.add(results_dir, reports[1])}
    assert results.has_run(results_dir, made) == ids["1.1"]
    other = {**made, "backend": {**made["backend"], "runtime_version": "1.2"}}
    assert results.has_run(results_dir, other) is None
    assert results.has_run(tmp_path / "none", made) is None


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_lock_file_that_is_no_regular_file_is_refused(
    tmp_path: Path, reports: tuple[Report, Report], kind: str
) -> None:
    """The writers' lock is opened without following a link or waiting on a FIFO: a link
    planted in its place creates nothing where it points."""
    store, outside = tmp_path / "results", tmp_path / "outside"
    store.mkdir()
    if kind == "link":
        (store / ".lock").symlink_to(outside)
    else:
        os.mkfifo(store / ".lock")
    with pytest.raises(ResultsError, match=r"\.lock: .*lock file") as info:
        results.add(store, reports[0])
    assert "remove what stands in its place" in info.value.message
    assert not outside.exists()
    assert not list(store.glob("*.parquet"))

"""The display of a row of a compare report: the row's facts, expected and actual values
and their difference, and the report read from a DataFrame or a Parquet file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from display_helpers import hostile_store, pngs
from onnx import numpy_helper

import onnx_arrow
from onnx_arrow.corpus import Store
from onnx_arrow.jupyter import ReportView, html, report_view, text

CASE = "node/test_hostile"
ACTUAL = np.array([[0.0, 2.0, 7.0], [4.0, 0.0, 6.0]], np.float32)


def _row(**changes: Any) -> dict[str, Any]:
    row = {
        "case": CASE,
        "index": 0,
        "data_set": 0,
        "name": "y",
        "status": "mismatch",
        "rtol": 1e-3,
        "atol": 1e-5,
        "tolerance": "default",
        "actual": numpy_helper.from_array(ACTUAL, "y").SerializeToString(),
        "detail": None,
        "error": float("nan"),
    }
    row.update(changes)
    return row


def test_a_row_shows_its_facts_both_values_and_their_difference(tmp_path: Path) -> None:
    store = Store(hostile_store(tmp_path))
    view = ReportView(store, _row())
    out = repr(view)
    lines = out.splitlines()
    assert lines[0] == f"{CASE}: output 0 of test_data_set_0 'y'"
    assert f"  store      {store.path}" in lines
    assert "  status     mismatch" in lines
    assert "  tolerance  rtol 0.001, atol 1e-05 (default)" in lines
    assert "detail" not in out  # None and NaN are not shown
    assert "error" not in out
    assert "  expected (tensor(float))" in lines
    assert "  actual (tensor(float))" in lines
    assert "    max       7" in lines  # the actual value's largest element
    assert "    preview   [0, 2, 7, 4, 0, 6]" in lines
    assert lines[-3:] == [
        f"    picture  {side}, 126x84 px (in HTML)"
        for side in ("expected", "actual", "ULP distance")
    ]
    shown = view._repr_html_()
    assert len(pngs(shown)) == 3  # the values' own pictures give way to the side by side
    assert "<figcaption>ULP distance: heatmap" in shown
    assert "</span>NaN</span>" in shown  # NaN on one side only: a NaN of the difference
    assert html(view) == view._repr_html_()
    assert text(view) == out


def test_a_row_says_why_a_value_is_not_shown(tmp_path: Path) -> None:
    store = Store(hostile_store(tmp_path))
    assert "a row without an output (a skipped case)" in text(ReportView(store, _row(index=None)))
    assert "keeps no actual value" in text(ReportView(store, _row(actual=None)))
    broken = text(ReportView(store, _row(actual=b"\xff\xff")))
    assert "the kept bytes do not parse as the declared type" in broken
    missing = text(ReportView(store, _row(data_set=7)))
    assert "expected: not in the store" in missing


def _report(path: Path, **changes: Any) -> Any:
    """A report of one row, as compare gives it, naming the store at ``path``."""
    from onnx_arrow.compare.report import report_frame

    frame = report_frame([_row(**changes)])
    frame.attrs["onnx_arrow"] = {"store": [str(path)]}
    return frame


def test_report_view_reads_a_dataframe_and_a_parquet_report(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    from onnx_arrow.compare import write_report
    from onnx_arrow.compare.report import report_frame

    path = hostile_store(tmp_path)
    expected = text(ReportView(Store(path), _row()))
    frame = _report(path)
    assert text(report_view(frame, 0)) == expected
    write_report(frame, tmp_path / "r.pq")
    assert text(report_view(str(tmp_path / "r.pq"), 0)) == expected
    assert text(report_view(tmp_path / "r.pq", 0, store=str(path))) == expected
    with pytest.raises(onnx_arrow.OnnxArrowError, match="row 1 is outside the report's 1 rows"):
        report_view(frame, 1)
    with pytest.raises(onnx_arrow.OnnxArrowError, match="names no store"):
        report_view(report_frame([_row()]), 0)
    assert isinstance(frame, pd.DataFrame)


def _written(tmp_path: Path, table: pa.Table, made: Any = None, raw: bytes | None = None) -> Path:
    """``table`` written as a report file, its metadata ``made`` as JSON (or ``raw``)."""
    out = tmp_path / "forged.parquet"
    meta = raw if raw is not None else json.dumps(made).encode()
    pq.write_table(table.replace_schema_metadata({b"onnx_arrow.report": meta}), out)
    return out


def test_report_files_that_are_not_reports_are_located_errors(tmp_path: Path) -> None:
    from onnx_arrow.compare import CompareError, write_report

    path = hostile_store(tmp_path)
    good = tmp_path / "good.parquet"
    write_report(_report(path), good)
    table = pq.read_table(good).replace_schema_metadata(None)
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"PAR1 not a report at all PAR1")
    folder = tmp_path / "folder.parquet"
    folder.mkdir()
    cases = {
        "cannot read the report as Parquet": garbage,
        "cannot open the report": tmp_path / "missing.parquet",
        "a directory, not a report's Parquet file": folder,
        "the report has no column 'case'": _written(tmp_path, table.drop_columns(["case"])),
    }
    for message, report in cases.items():
        with pytest.raises(CompareError, match=rf"^{report}: {message}"):
            report_view(report, 0)
        report.unlink() if report.is_file() else None
    forged_types = table.set_column(
        table.schema.get_field_index("index"), "index", pa.array(["zero"])
    )
    forged = {
        "column 'index' is string, where a compare report has int64": (forged_types, None),
        "row 0 has no case": (
            table.set_column(0, "case", pa.nulls(1, pa.string())),
            {"store": [str(path)]},
        ),
        "row 0 has a status that is not one of": (
            table.set_column(
                table.schema.get_field_index("status"), "status", pa.array(["banana"])
            ),
            {"store": [str(path)]},
        ),
        "row 0 has a negative index": (
            table.set_column(table.schema.get_field_index("index"), "index", pa.array([-1])),
            {"store": [str(path)]},
        ),
        "not a JSON object": (table, ["not", "an", "object"]),
        "the report's store is 5, not a list of its files": (table, {"store": 5}),
        "the report's store is 'abc', not a list of its files": (table, {"store": "abc"}),
    }
    for message, (t, made) in forged.items():
        with pytest.raises(CompareError, match=rf"forged\.parquet: .*{re.escape(message)}"):
            report_view(_written(tmp_path, t, made), 0)
    for raw in (b"\xff\xfe", b"[" * 10000, b"{"):
        with pytest.raises(CompareError, match=r"forged\.parquet: the report's metadata"):
            report_view(_written(tmp_path, table, raw=raw), 0)


def test_report_view_refuses_arguments_of_the_wrong_kind(tmp_path: Path) -> None:
    path = hostile_store(tmp_path)
    frame = _report(path)
    for report in (None, 3, [_row()], b"r.parquet"):
        with pytest.raises(onnx_arrow.UnsupportedTypeError, match=r"report_view\(report\)"):
            report_view(report, 0)
    for row in ("0", 0.0, None, True):
        with pytest.raises(onnx_arrow.UnsupportedTypeError, match=r"report_view\(row\)"):
            report_view(frame, row)  # type: ignore[arg-type]
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match=r"report_view\(store\)"):
        report_view(frame, 0, store=3)  # type: ignore[arg-type]
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match=r"ReportView\(row\)"):
        ReportView(Store(path), {"index": 0})
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match=r"ReportView\(store\)"):
        ReportView(str(path), _row())  # type: ignore[arg-type]


def test_a_dataframe_report_is_checked_as_a_file_is(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    from onnx_arrow.compare import CompareError

    path = hostile_store(tmp_path)
    dropped = _report(path).drop(columns=["case"])
    dropped.attrs["onnx_arrow"] = {"store": [str(path)]}
    with pytest.raises(CompareError, match=r"^the report: row 0: the report has no column"):
        report_view(dropped, 0)
    extra = _report(path)
    extra["notes"] = [object()]  # a column of the user's own, not the report's
    assert text(report_view(extra, 0)) == text(report_view(_report(path), 0))
    mixed = _report(path)
    mixed["case"] = pd.Series([b"\xff"], dtype=object)
    with pytest.raises(CompareError, match=r"^the report: row 0: the report's column 'case'"):
        report_view(mixed, 0)
    forged = _report(path)
    forged.attrs["onnx_arrow"] = {"store": 5}
    with pytest.raises(CompareError, match=r"^the report: the report's store is 5"):
        report_view(forged, 0)


def test_numbers_of_a_row_are_shown_so_that_they_read_back(tmp_path: Path) -> None:
    store = Store(hostile_store(tmp_path))
    shown = text(ReportView(store, _row(rtol=1.5686274509803921, atol=1e-7, max_abs_error=1e-9)))
    assert re.search(r"^  tolerance +rtol 1.5686274509803921, atol 1e-07 \(default\)$", shown, re.M)
    assert re.search(r"^  max abs error +1e-09$", shown, re.M)
    frame = _report(hostile_store(tmp_path), atol=1e-7)
    assert "atol 1e-07" in text(report_view(frame, 0))

"""The display of a row of a compare report: the row's facts, expected and actual values
and their difference, and the report read from a DataFrame or a Parquet file."""

from __future__ import annotations

import json
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


def test_report_view_reads_a_dataframe_and_a_parquet_report(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    path = hostile_store(tmp_path)
    expected = text(ReportView(Store(path), _row()))
    frame = pd.DataFrame([_row()])
    frame.attrs["onnx_arrow"] = {"store": [str(path)]}
    assert text(report_view(frame, 0)) == expected
    table = pa.Table.from_pylist([_row()])
    meta = json.dumps({"store": [str(path)]}).encode()
    pq.write_table(table.replace_schema_metadata({b"onnx_arrow.report": meta}), tmp_path / "r.pq")
    assert text(report_view(str(tmp_path / "r.pq"), 0)) == expected
    assert text(report_view(tmp_path / "r.pq", 0, store=str(path))) == expected
    with pytest.raises(onnx_arrow.OnnxArrowError, match="row 1 is outside the report's 1 rows"):
        report_view(frame, 1)
    with pytest.raises(onnx_arrow.OnnxArrowError, match="names no store"):
        report_view(pd.DataFrame([_row()]), 0)

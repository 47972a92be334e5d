"""The report: its rows, the counts per operator, what it was made from, its Parquet file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from compare_helpers import cli, stated_store
from onnx import ModelProto, TensorProto, numpy_helper

from onnx_arrow import compare as cmp
from onnx_arrow.corpus import Store
from onnx_arrow.errors import OnnxArrowError, ProvenanceWarning


def test_too_few_outputs_is_an_error(store: Store) -> None:
    df = cmp.compare(store, lambda m, i: [], cases=["test_abs"]).to_pandas()
    assert df.status.tolist() == ["error"]
    assert "gave 0 outputs" in df.error.iloc[0]


def test_summary_counts_per_op_type(store: Store) -> None:
    table = cmp.summary(cmp.compare(store).to_pandas())
    assert list(table.columns) == ["op_type", "total", *cmp.STATUSES, "non_match"]
    scatter = table[table.op_type == "Scatter"].iloc[0]
    assert (scatter.total, scatter.error, scatter.non_match) == (1, 1, 1)
    assert table.non_match.is_monotonic_decreasing
    assert table[table.op_type == "Abs"].iloc[0].match == 1


def test_report_round_trips_through_parquet(store: Store, tmp_path: Path) -> None:
    df = cmp.compare(store).to_pandas()
    cmp.write_report(df, tmp_path / "report.parquet")
    back = pd.read_parquet(tmp_path / "report.parquet")
    assert back.status.tolist() == df.status.tolist()
    assert back.max_abs_error.isna().tolist() == df.max_abs_error.isna().tolist()


def test_cli_compare_refuses_a_report_path_before_any_work(store: Store, tmp_path: Path) -> None:
    before = store.path.read_bytes()
    code, _, err = cli("compare", str(store.path), "--out", str(store.path))
    assert code == 1
    assert "is a file this command reads" in err
    assert store.path.read_bytes() == before
    report = tmp_path / "report.parquet"
    report.write_bytes(b"mine")
    code, _, err = cli("compare", str(store.path), "--case", "test_abs", "--out", str(report))
    assert (code, report.read_bytes()) == (1, b"mine")
    assert "exists; pass --force" in err
    code, _, _ = cli(
        "compare", str(store.path), "--case", "test_abs", "--out", str(report), "--force"
    )
    assert code == 0
    assert pd.read_parquet(report).shape[0] == 1
    missing = tmp_path / "no" / "report.parquet"
    code, _, err = cli("compare", str(store.path), "--out", str(missing))
    assert code == 1
    assert f"{missing.parent}: the folder to write the report into does not exist" in err


def test_a_report_is_written_with_the_umask_not_private(tmp_path: Path) -> None:
    report = tmp_path / "report.parquet"
    mask = os.umask(0o022)
    try:
        with pytest.warns(ProvenanceWarning, match="without what it was made from"):
            cmp.write_report(pd.DataFrame({"x": [1]}), report)
    finally:
        os.umask(mask)
    assert report.stat().st_mode & 0o777 == 0o644


def test_the_report_says_what_it_was_made_from_and_with(store: Store, tmp_path: Path) -> None:
    import onnx
    import pyarrow.parquet as pq

    df = cmp.compare(store, rtol=1e-4, skip=["test_add"]).to_pandas()
    out = tmp_path / "report.parquet"
    cmp.write_report(df, out)
    meta = pq.read_schema(out).metadata[cmp.REPORT_METADATA_KEY.encode()]
    made = json.loads(meta)
    assert made["backend"] == {
        "name": "reference",
        "runs": f"onnx {onnx.__version__} ReferenceEvaluator",
        "runtime": "onnx.reference",
        "runtime_version": onnx.__version__,
    }
    assert made["platform"]
    assert made["rtol"] == 1e-4
    assert made["skip"] == ["test_add"]
    assert made["store"] == [str(store.path)]
    assert made["onnx_arrow_version"]
    assert len(pd.read_parquet(out)) == len(df)


def test_a_mismatch_names_its_worst_element_and_keeps_the_actual_value(tmp_path: Path) -> None:
    path = stated_store(tmp_path, None)

    def one_off(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        out = np.array(inputs["x"], copy=True)
        out[0, 1] += np.float32(0.5)  # 2.0 -> 2.5
        out[1, 2] += np.float32(0.25)  # 6.0 -> 6.25: further in absolute, less beyond rtol
        return [out]

    (row,) = cmp.compare(path, one_off).to_pandas().itertuples()
    assert row.status == "mismatch"
    assert (row.worst_index, row.worst_expected, row.worst_actual) == ("[0, 1]", "2.0", "2.5")
    kept = numpy_helper.to_array(TensorProto.FromString(row.actual))
    assert np.array_equal(
        kept, one_off(ModelProto(), {"x": np.arange(1, 7, dtype=np.float32).reshape(2, 3)})[0]
    )
    (row,) = cmp.compare(path, one_off, keep_actual="none").to_pandas().itertuples()
    assert pd.isna(row.actual)
    (row,) = cmp.compare(path).to_pandas().itertuples()  # a match: nothing worst, nothing kept
    assert row.status == "match"
    assert pd.isna(row.worst_index)
    assert pd.isna(row.actual)
    (row,) = cmp.compare(path, keep_actual="all").to_pandas().itertuples()
    assert numpy_helper.to_array(TensorProto.FromString(row.actual)).shape == (2, 3)
    with pytest.raises(cmp.CompareError, match="keep_actual is 'some'"):
        cmp.compare(path, keep_actual="some")


def test_a_report_row_is_shown_with_expected_actual_and_their_difference(tmp_path: Path) -> None:
    from onnx_arrow import jupyter

    path = stated_store(tmp_path, None)

    def one_off(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        out = np.array(inputs["x"], copy=True)
        out[0, 1] = np.nan
        return [out]

    df = cmp.compare(path, one_off).to_pandas()
    text = jupyter.text(jupyter.report_view(df, 0))
    assert "status            nan_mismatch" in text
    assert "worst element     [0, 1]" in text
    assert "rtol 0.001, atol 1e-07 (default)" in text
    assert "picture  ULP distance" in text
    html = jupyter.html(jupyter.report_view(df, 0))
    assert html.count("<img") == 3  # expected, actual, difference
    report = tmp_path / "report.parquet"
    cmp.write_report(df, report)
    assert jupyter.text(jupyter.report_view(str(report), 0)) == text  # the store from metadata
    matched = cmp.compare(path).to_pandas()
    assert "keeps no actual value" in jupyter.text(jupyter.report_view(matched, 0, path))
    with pytest.raises(OnnxArrowError, match="row 5 is outside the report's 1 rows"):
        jupyter.report_view(df, 5)
    df.attrs.clear()
    with pytest.raises(OnnxArrowError, match="names no store"):
        jupyter.report_view(df, 0)


def test_the_report_schema_has_every_column_of_a_report(store: Store) -> None:
    import pyarrow as pa

    from onnx_arrow.compare.report import REPORT_SCHEMA, check_report

    assert tuple(REPORT_SCHEMA.names) == cmp.COMPARE_COLUMNS
    df = cmp.compare(store, cases=["test_abs", "test_scatter*"]).to_pandas()
    table = check_report(df, where="the report", metadata=df.attrs["onnx_arrow"])
    assert table.schema == REPORT_SCHEMA
    assert table.column("status").to_pylist() == df.status.tolist()
    widened = pa.Table.from_pandas(df, preserve_index=False)
    assert check_report(widened, where="x").equals(table)


def test_a_written_report_reads_back_as_compare_gave_it(store: Store, tmp_path: Path) -> None:
    from onnx_arrow.compare.report import read_report

    df = cmp.compare(store, keep_actual="all").to_pandas()
    cmp.write_report(df, tmp_path / "report.parquet")
    back = read_report(tmp_path / "report.parquet").to_pandas()
    assert back.attrs["onnx_arrow"] == json.loads(json.dumps(df.attrs["onnx_arrow"], default=str))
    for column in cmp.COMPARE_COLUMNS:
        if column in ("op_types", "shape_expected", "shape_actual"):
            as_lists = [None if v is None else list(v) for v in df[column]]
            assert [None if v is None else list(v) for v in back[column]] == as_lists
        else:
            pd.testing.assert_series_equal(back[column], df[column], check_names=True)


def test_a_report_of_another_kind_is_refused_where_it_is_read(tmp_path: Path) -> None:
    from onnx_arrow.compare.report import read_report
    from onnx_arrow.diff import diff

    left = tmp_path / "a"
    (left / "c").mkdir(parents=True)
    (left / "c" / "loose.pb").write_bytes(b"x")  # a case without a model
    cmp.write_report(diff(left, left), tmp_path / "diff.parquet")
    with pytest.raises(cmp.CompareError, match=r"diff\.parquet: the report has no column"):
        read_report(tmp_path / "diff.parquet")


def test_a_report_of_an_earlier_format_reads_and_a_later_one_is_refused(
    store: Store, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    from onnx_arrow.compare.report import REPORT_FORMAT, read_report

    df = cmp.compare(store, cases=["test_abs"]).to_pandas()
    assert df.attrs["onnx_arrow"]["report_format"] == REPORT_FORMAT == 2
    cmp.write_report(df, tmp_path / "now.parquet")
    table = pq.read_table(tmp_path / "now.parquet")
    made = json.loads(table.schema.metadata[cmp.REPORT_METADATA_KEY.encode()])

    def written(name: str, columns: list[str], **changed: Any) -> Path:
        meta = {cmp.REPORT_METADATA_KEY.encode(): json.dumps({**made, **changed}).encode()}
        out = tmp_path / name
        pq.write_table(table.select(columns).replace_schema_metadata(meta), out)
        return out

    # format 1, before the distributions (and the ULP columns): those read as null
    first = list(cmp.COMPARE_COLUMNS[: cmp.COMPARE_COLUMNS.index("max_ulp")])
    old = read_report(written("old.parquet", first, report_format=1)).to_pandas()
    assert old.status.tolist() == ["match"]
    assert old.n_elements.isna().all()
    assert old.ulp_histogram.isna().all()
    later = written("later.parquet", [*table.column_names], report_format=3)
    with pytest.raises(cmp.CompareError, match=r"later\.parquet: the report is of format 3"):
        read_report(later)
    bad = written("bad.parquet", [*table.column_names], report_format="2")
    with pytest.raises(cmp.CompareError, match="format is '2', not a whole number"):
        read_report(bad)

"""onnx-arrow diff: two corpora that differ in every way a diff tells apart."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from onnx import TensorProto, helper, numpy_helper, save_model

from onnx_arrow.cli import main
from onnx_arrow.corpus import FolderSource, Store, WriteOptions, write_dataset, write_store
from onnx_arrow.diff import DIFF_COLUMNS, STATUSES, diff, equivalent

F32 = np.float32


def _case(
    root: Path,
    name: str,
    x: Any,
    y: Any,
    *,
    elem: int = TensorProto.FLOAT,
    seq: bool = False,
    opset: int = 21,
    y_file: bytes | None = None,
) -> None:
    """A case: Identity of x to y, its model declaring ``elem`` (a sequence with ``seq``)."""
    case = root / "node" / name
    (case / "test_data_set_0").mkdir(parents=True)
    if seq:
        t = helper.make_tensor_sequence_value_info
        vi = [t("x", elem, None), t("y", elem, None)]
    else:
        vi = [helper.make_tensor_value_info(n, elem, None) for n in ("x", "y")]
    model = helper.make_model(
        helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", vi[:1], vi[1:]),
        opset_imports=[helper.make_opsetid("", opset)],
    )
    save_model(model, case / "model.onnx")
    for stem, value in (("input_0", x), ("output_0", y)):
        message = (
            numpy_helper.from_list(value, stem[0])
            if seq
            else numpy_helper.from_array(value, stem[0])
        )
        data = message.SerializeToString()
        if stem == "output_0" and y_file is not None:
            data = y_file
        (case / "test_data_set_0" / f"{stem}.pb").write_bytes(data)


def _float_data(values: np.ndarray, name: str) -> bytes:
    """A FLOAT tensor in float_data instead of raw_data: other bytes, the same values."""
    t = helper.make_tensor(name, TensorProto.FLOAT, values.shape, values.ravel().tolist())
    return t.SerializeToString()


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    old, new = tmp_path_factory.mktemp("old"), tmp_path_factory.mktemp("new")
    x = np.array([0.5, -1.0, 2.0], F32)
    up = np.nextafter(x, F32(np.inf))
    for root in (old, new):
        is_new = root == new
        _case(root, "test_same", x, x)
        _case(root, "test_zero", x, np.array([-0.0 if is_new else 0.0, 1.0, 2.0], F32))
        _case(root, "test_encoding", x, x, y_file=_float_data(x, "y") if is_new else None)
        two_up = np.nextafter(up, F32(np.inf))
        _case(root, "test_drift", x, np.where([True, False, True], two_up, x) if is_new else x)
        _case(root, "test_nan", x, np.array([0.5, np.nan if is_new else -1.0, 2.0], F32))
        ints = np.array([1, 2, 3], np.int64)
        _case(root, "test_ints", ints, ints + (is_new and 1), elem=TensorProto.INT64)
        _case(root, "test_shape", x, (x[:2] if is_new else x))
        wide = x.astype(np.float64) if is_new else x
        _case(
            root, "test_dtype", wide, wide, elem=TensorProto.DOUBLE if is_new else TensorProto.FLOAT
        )
        if is_new:
            _case(root, "test_type", [x], [x], seq=True)
        else:
            _case(root, "test_type", x, x)
        _case(root, "test_opset", x, x, opset=22 if is_new else 21)
        (root / "node" / "test_same" / "README").write_text("new\n" if is_new else "old\n")
        _case(root, "test_added" if is_new else "test_removed", x, x)
    return old, new


def _status(df: pd.DataFrame, path: str) -> str:
    row = df[df["path"] == path]
    assert len(row) == 1, path
    return str(row["status"].iloc[0])


def test_every_status_is_told_apart(sides: tuple[Path, Path]) -> None:
    df = diff(*sides).to_pandas()
    assert tuple(df.columns) == DIFF_COLUMNS
    out = "test_data_set_0/output_0.pb"
    expected = {
        f"node/test_same/{out}": "identical",
        f"node/test_zero/{out}": "same-values",  # -0.0 and +0.0 are 0 ULP apart
        f"node/test_encoding/{out}": "same-values",
        f"node/test_drift/{out}": "float-drift",
        f"node/test_nan/{out}": "nan-changed",
        f"node/test_ints/{out}": "values-changed",
        f"node/test_shape/{out}": "shape-changed",
        f"node/test_dtype/{out}": "dtype-changed",
        f"node/test_type/{out}": "type-changed",
        "node/test_opset/model.onnx": "model-changed",
        "node/test_same/README": "file-changed",
        f"node/test_added/{out}": "added",
        f"node/test_removed/{out}": "removed",
    }
    for path, status in expected.items():
        assert _status(df, path) == status, (path, df[df["path"] == path].to_dict("records"))
    assert set(expected.values()) == set(STATUSES)
    drift = df[df["path"] == f"node/test_drift/{out}"].iloc[0]
    assert drift["max_ulp"] == 2
    assert "2 of 3 elements drift, at most 2 ULP" in drift["detail"]
    assert df[df["path"] == f"node/test_same/{out}"]["max_ulp"].isna().all()
    opset = df[df["path"] == "node/test_opset/model.onnx"]["detail"].iloc[0]
    assert opset == "opset ai.onnx 21 -> 22"
    dtype = df[df["path"] == "node/test_dtype/model.onnx"]["detail"].iloc[0]
    assert "graph inputs [x: tensor(float) (any shape)] -> [x: tensor(double) (any shape)]" in dtype
    nan = df[df["path"] == f"node/test_nan/{out}"]["detail"].iloc[0]
    assert nan.startswith("1 NaN where the other side has a number (first at element 1")


def test_stores_dataset_stores_and_folders_give_the_same_report(
    sides: tuple[Path, Path], tmp_path: Path
) -> None:
    old, new = sides
    write_store(FolderSource(old), tmp_path / "old.parquet", options=None)
    write_dataset(FolderSource(new), tmp_path / "new")
    from_folders = diff(old, new).to_pandas()
    from_stores = diff(tmp_path / "old.parquet", Store(tmp_path / "new")).to_pandas()
    pd.testing.assert_frame_equal(from_stores, from_folders)


def test_equivalence_takes_a_ulp_band_and_accepted_paths(sides: tuple[Path, Path]) -> None:
    df = diff(*sides).to_pandas()
    drift = df["path"] == "node/test_drift/test_data_set_0/output_0.pb"
    assert not equivalent(df)[drift].any()
    assert equivalent(df, max_ulp=2)[drift].all()
    assert not equivalent(df, max_ulp=1)[drift].any()
    accepted = equivalent(df, accept=["node/test_nan/*"])
    assert accepted[df["path"].str.startswith("node/test_nan/")].all()


def test_the_command_line_reports_and_exits_by_equivalence(
    sides: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = sides
    report = tmp_path / "diff.parquet"
    assert main(["diff", str(old), str(new), "--out", str(report)]) == 1
    printed = capsys.readouterr().out
    assert re.search(r"^  float-drift +1$", printed, re.M)
    assert re.search(r"^cases +11 old, 11 new$", printed, re.M)
    assert "largest float drifts" in printed
    written = pd.read_parquet(report)
    assert len(written) == len(diff(old, new).to_pandas())
    import json

    import pyarrow.parquet as pq

    made = json.loads(pq.read_schema(report).metadata[b"onnx_arrow.report"])
    assert (made["old"], made["new"]) == (str(old), str(new))
    assert main(["diff", str(old), str(old)]) == 0
    assert main(["diff", str(old), str(old), "--min-cases", "12"]) == 1
    assert "fewer than 12 cases" in capsys.readouterr().err
    assert main(["diff", str(old), str(tmp_path / "missing")]) == 2


def test_the_node_suite_against_itself_is_identical(tmp_path: Path) -> None:
    from onnx_arrow.corpus import NodeSuiteSource

    cases = [c for c in NodeSuiteSource() if c.name.startswith("node/test_a")]
    write_store(cases, tmp_path / "a.parquet")
    write_dataset(cases, tmp_path / "b", part_cases=50)
    df = diff(tmp_path / "a.parquet", tmp_path / "b").to_pandas()
    assert len(df) > 300
    assert (df["status"] == "identical").all()


def test_a_changed_tensor_is_shown_old_new_and_difference(
    sides: tuple[Path, Path], tmp_path: Path
) -> None:
    from onnx_arrow.jupyter import diff_view, html, text

    old, new = tmp_path / "old.parquet", tmp_path / "new.parquet"
    for folder, store in zip(sides, (old, new), strict=True):
        write_store(FolderSource(folder), store)
    view = diff_view(old, new, "node/test_drift/test_data_set_0/output_0.pb")
    shown = text(view)
    assert "old (tensor(float))" in shown
    assert "new (tensor(float))" in shown
    assert "no difference picture" not in shown
    assert "ULP distance: at most 2 ULP (no picture for fewer than 2 dimensions)" in shown
    shape = diff_view(old, new, "node/test_shape/test_data_set_0/output_0.pb")
    assert "no difference picture: float32[3] vs float32[2]" in text(shape)
    gone = diff_view(old, new, "node/test_removed/test_data_set_0/output_0.pb")
    assert "new: no value at this path" in text(gone)
    assert "<script" not in html(view)


def test_a_two_dimensional_difference_has_three_pictures(tmp_path: Path) -> None:
    from onnx_arrow.jupyter import diff_view, html

    roots = [tmp_path / "a", tmp_path / "b"]
    x = np.arange(12, dtype=F32).reshape(3, 4)
    _case(roots[0], "test_m", x, x)
    _case(roots[1], "test_m", x, np.nextafter(x, F32(np.inf)))
    stores = []
    for root in roots:
        write_store(FolderSource(root), root.with_suffix(".parquet"))
        stores.append(root.with_suffix(".parquet"))
    shown = html(diff_view(*stores, "node/test_m/test_data_set_0/output_0.pb"))
    assert shown.count("<img") == 3
    assert "ULP distance: heatmap" in shown
    assert "at most 1 ULP" in shown


def test_inside_a_sequence_the_worst_element_decides(tmp_path: Path) -> None:
    x = np.array([0.5, 1.0], F32)
    up = np.nextafter(x, F32(np.inf))
    old, new = tmp_path / "old", tmp_path / "new"
    _case(old, "test_seq", [x, x, x], [x, x, x], seq=True)
    _case(new, "test_seq", [x, x, x], [up, np.array([np.nan, 1.0], F32), x], seq=True)
    _case(old, "test_len", [x], [x, x], seq=True)
    _case(new, "test_len", [x], [x], seq=True)
    df = diff(old, new).to_pandas()
    seq = df[df["path"] == "node/test_seq/test_data_set_0/output_0.pb"].iloc[0]
    assert seq["status"] == "nan-changed"
    assert seq["max_ulp"] == 1
    assert "[0]: 2 of 2 elements drift, at most 1 ULP" in seq["detail"]
    assert "[1]: 1 NaN where the other side has a number" in seq["detail"]
    length = df[df["path"] == "node/test_len/test_data_set_0/output_0.pb"].iloc[0]
    assert length["status"] == "shape-changed"
    assert length["detail"] == "a sequence of 2 -> 1"


def test_a_store_row_without_its_digest_is_refused(
    sides: tuple[Path, Path], tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from onnx_arrow.errors import CorpusError

    good = tmp_path / "good.parquet"
    write_store(FolderSource(sides[0]), good)
    table = pq.read_table(good)
    forged = table.set_column(
        table.schema.get_field_index("digest"), "digest", pa.nulls(table.num_rows, pa.binary())
    )
    pq.write_table(forged.replace_schema_metadata(table.schema.metadata), tmp_path / "bad.parquet")
    with pytest.raises(CorpusError, match=r"bad\.parquet: node/.*: the row has no digest"):
        diff(good, tmp_path / "bad.parquet")


def _forged(good: Path, out: Path, change: Any) -> Path:
    """The store ``good`` with its table changed by ``change`` (its metadata kept)."""
    import pyarrow.parquet as pq

    table = pq.read_table(good)
    pq.write_table(change(table).replace_schema_metadata(table.schema.metadata), out)
    return out


def _row_of(table: Any, path: str) -> int:
    return table.column("path").to_pylist().index(path)


def _set(table: Any, column: str, row: int, value: Any) -> Any:
    import pyarrow as pa

    values = table.column(column).to_pylist()
    values[row] = value
    k = table.schema.get_field_index(column)
    return table.set_column(k, table.field(k), pa.array(values, table.field(k).type))


@pytest.fixture(scope="module")
def one_store(sides: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    good = tmp_path_factory.mktemp("good") / "good.parquet"
    write_store(FolderSource(sides[0]), good)
    return good


def test_a_model_changed_under_its_old_digest_is_refused(one_store: Path, tmp_path: Path) -> None:
    from onnx_arrow.errors import CorpusError

    model = "node/test_opset/model.onnx"
    _case(tmp_path, "test_opset", np.zeros(1, F32), np.zeros(1, F32), opset=22)
    changed = (tmp_path / "node" / "test_opset" / "model.onnx").read_bytes()  # other bytes

    def change(table: Any) -> Any:  # the row holds content of its own, not a copy's
        row = _row_of(table, model)
        return _set(_set(table, "copy_of", row, None), "content", row, changed)

    bad = _forged(one_store, tmp_path / "bad.parquet", change)
    with pytest.raises(CorpusError, match=rf"bad\.parquet: .*: {model}: .*digest differs"):
        diff(one_store, bad)
    with pytest.raises(CorpusError, match=rf"bad\.parquet: .*: {model}: .*digest differs"):
        diff(bad, one_store)


def test_a_model_that_does_not_parse_is_a_located_error(one_store: Path, tmp_path: Path) -> None:
    import hashlib

    from onnx_arrow.errors import CorpusError

    model = "node/test_opset/model.onnx"
    garbage = b"\xff\xff\xff\xff not a model"

    def change(table: Any) -> Any:
        row = _row_of(table, model)
        digest = hashlib.blake2b(garbage, digest_size=16).digest()
        table = _set(_set(table, "copy_of", row, None), "content", row, garbage)
        return _set(_set(table, "digest", row, digest), "nbytes", row, len(garbage))

    bad = _forged(one_store, tmp_path / "bad.parquet", change)
    with pytest.raises(CorpusError, match=rf"bad\.parquet: {model}: the model does not parse"):
        diff(one_store, bad)


def test_a_value_row_that_does_not_validate_is_refused(one_store: Path, tmp_path: Path) -> None:
    from onnx_arrow.errors import CorpusError

    value = "node/test_same/test_data_set_0/output_0.pb"

    def change(table: Any) -> Any:
        return _set(table, "value_kind", _row_of(table, value), "banana")

    bad = _forged(one_store, tmp_path / "bad.parquet", change)
    with pytest.raises(CorpusError, match=rf"bad\.parquet: .*: {value}: .*banana"):
        diff(one_store, bad)


def test_a_value_row_without_its_declared_type_is_refused(one_store: Path, tmp_path: Path) -> None:
    import pyarrow as pa

    from onnx_arrow.errors import CorpusError

    value = "node/test_drift/test_data_set_0/output_0.pb"
    new = tmp_path / "new.parquet"
    x = np.array([0.5, -1.0, 2.0], F32)
    root = tmp_path / "new"
    _case(root, "test_drift", x, np.nextafter(x, F32(np.inf)))
    write_store(FolderSource(root), new)

    def change(table: Any) -> Any:
        row = _row_of(table, value)
        k = table.schema.get_field_index("onnx_type")
        types = table.column("onnx_type").to_pylist()
        types[row] = None
        return table.set_column(k, table.field(k), pa.array(types, pa.string()))

    bad = _forged(new, tmp_path / "bad.parquet", change)
    with pytest.raises(CorpusError, match=rf"bad\.parquet: {value}: the value row has no onnx"):
        diff(one_store, bad)


def test_a_path_held_twice_is_refused(one_store: Path, tmp_path: Path) -> None:
    import pyarrow as pa

    from onnx_arrow.errors import CorpusError

    readme = "node/test_same/README"

    def change(table: Any) -> Any:
        row = _row_of(table, readme)
        pieces = [table.slice(0, row + 1), table.slice(row, 1), table.slice(row + 1)]
        return pa.concat_tables(pieces)

    bad = _forged(one_store, tmp_path / "bad.parquet", change)
    with pytest.raises(CorpusError, match=rf"bad\.parquet: {readme}: .*this path twice"):
        diff(one_store, bad)
    with pytest.raises(CorpusError, match=rf"bad\.parquet: {readme}: .*this path twice"):
        diff(bad, one_store)


def test_a_store_of_format_2_before_digests_is_refused_saying_what_to_do(
    sides: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    import pyarrow.parquet as pq

    from onnx_arrow.errors import CorpusError

    good = tmp_path / "good.parquet"
    # every file whole, as a store of format 2 holds them
    write_store(FolderSource(sides[0]), good, options=WriteOptions(dedup=False))
    table = pq.read_table(good)
    meta = json.loads(table.schema.metadata[b"onnx_arrow"])
    for name, dropped in (
        ("v2.parquet", ["rtol", "atol", "declared", "copy_of"]),
        ("v2nd.parquet", ["digest"]),
    ):
        meta["format_version"] = 2
        table = table.drop_columns(dropped)
        pq.write_table(
            table.replace_schema_metadata({"onnx_arrow": json.dumps(meta)}), tmp_path / name
        )
    # a format 2 store with digests diffs as it is
    assert set(diff(good, tmp_path / "v2.parquet").to_pandas()["status"]) == {"identical"}
    said = (
        r"v2nd\.parquet: the store records no digests of its files \(format version 2, "
        r"written before they were\): diff compares them by digest; export the store"
    )
    with pytest.raises(CorpusError, match=said):
        diff(good, tmp_path / "v2nd.parquet")
    assert main(["diff", str(tmp_path / "v2nd.parquet"), str(good)]) == 1
    err = capsys.readouterr().err
    assert re.search(said, err)
    assert "Traceback" not in err

"""The catalog of a store: one row per value, answers to one-line questions."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import onnx
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import TensorProto, helper
from store_helpers import one_data_set_case

import onnx_arrow.pandas as oap
from onnx_arrow.core.dtypes import dtype_of_numpy
from onnx_arrow.corpus import Store, write_store
from onnx_arrow.corpus.format import DATA_COLUMNS
from onnx_arrow.corpus.sources import CorpusError
from onnx_arrow.errors import OnnxArrowError


@pytest.fixture(scope="module")
def cat(node_store: Path) -> pd.DataFrame:
    return oap.catalog(node_store)


def test_catalog_has_one_row_per_value_file(node_store: Path, cat: pd.DataFrame) -> None:
    roles = pq.read_table(node_store, columns=["role"]).column("role").to_pylist()
    assert len(cat) == roles.count("value")
    if onnx.__version__ == "1.23.2":
        assert len(cat) == 6524
    assert list(cat.columns) == list(oap.CATALOG_COLUMNS)
    assert cat.path.is_unique
    dtypes = {name: str(t) for name, t in cat.dtypes.items()}
    assert dtypes["count"] == dtypes["nan_count"] == dtypes["opset"] == "Int64"
    assert dtypes["index"] == dtypes["data_set"] == "Int32"
    assert dtypes["mean"] == "Float64"
    assert dtypes["dtype"] == "string"
    assert cat["count"].notna().all()
    assert set(cat.value_kind) == {"tensor", "sequence", "optional"}
    assert cat.io.isin(["input", "output"]).all()


def test_catalog_declared_name_is_the_graph_name_case_arrays_uses(
    node_store: Path, cat: pd.DataFrame
) -> None:
    assert cat.declared_name.notna().all()
    assert cat.name.isna().sum() < len(cat)  # the .pb names: some files leave theirs out
    store = Store(node_store)
    for case in ("node/test_abs", "node/test_sequence_insert_at_back", "node/test_add_bcast"):
        rows = cat[(cat.case == case) & (cat.data_set == 0)]
        data_set = store.case_arrays(case)[0]
        for io in ("input", "output"):
            declared = rows[rows.io == io].sort_values("index").declared_name.tolist()
            assert declared == list(data_set[f"{io}s"]), case


def test_catalog_reads_no_data_columns(node_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    real_read, real_batches = pq.read_table, pq.ParquetFile.iter_batches

    def read_table(*args: Any, columns: list[str], **kwargs: Any) -> pa.Table:
        read.extend(columns)
        return real_read(*args, columns=columns, **kwargs)

    def iter_batches(self: pq.ParquetFile, *args: Any, columns: list[str], **kwargs: Any) -> Any:
        read.extend(columns)
        return real_batches(self, *args, columns=columns, **kwargs)

    def file_read(self: pq.ParquetFile, *args: Any, columns: list[str], **kwargs: Any) -> Any:
        read.extend(columns)
        return real_file_read(self, *args, columns=columns, **kwargs)

    real_file_read = pq.ParquetFile.read
    monkeypatch.setattr(pq, "read_table", read_table)
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", iter_batches)
    monkeypatch.setattr(pq.ParquetFile, "read", file_read)
    oap.catalog(Store(node_store))
    assert read
    assert not [c for c in read if c in DATA_COLUMNS or c == "envelope"]


def test_catalog_models(node_store: Path, cat: pd.DataFrame) -> None:
    store = Store(node_store)
    for case in ("node/test_abs", "node/test_sequence_insert_at_back", "node/test_if_seq"):
        model = store.model(case)
        rows = cat[cat.case == case]
        ops = tuple(sorted({n.op_type for n in model.graph.node}))
        opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        assert set(rows.op_types) == {ops}
        assert set(rows.opset) == {opset}


def _leaves(value: Any) -> list[np.ndarray[Any, Any]]:
    if value is None:
        return []
    if isinstance(value, np.ndarray):
        return [value]
    return [a for item in value for a in _leaves(item)]


def test_catalog_containers_sum_their_tensors(node_store: Path, cat: pd.DataFrame) -> None:
    store = Store(node_store)
    containers = cat[cat.value_kind != "tensor"]
    assert len(containers) > 0
    for case in containers.case.unique():
        for value in store.values(case):
            row = cat[cat.path == value.path].iloc[0]
            leaves = _leaves(value.to_numpy())
            assert row["tensors"] == len(leaves), value.path
            assert row["count"] == sum(a.size for a in leaves), value.path
            if leaves:
                assert row["dtype"] == dtype_of_numpy(leaves[0].dtype).name
                assert row["shape"] == leaves[0].shape
                non_empty = [a for a in leaves if a.size]
                if non_empty:
                    assert row["max"] == max(float(a.max()) for a in non_empty)
            else:
                assert row["dtype"] is pd.NA
                assert row["shape"] is None


def test_which_tests_use_float8(node_store: Path, cat: pd.DataFrame) -> None:
    answer = cat[cat.dtype.str.startswith("FLOAT8")].case.unique()
    assert len(answer) > 0
    assert "node/test_cast_FLOAT_to_FLOAT8E4M3FN" in set(answer)
    expected = duckdb.execute(
        "SELECT DISTINCT test_case FROM read_parquet(?) "
        "WHERE role IN ('value', 'element') AND dtype LIKE 'FLOAT8%'",
        [str(node_store)],
    ).fetchall()
    assert set(answer) == {case for (case,) in expected}


def test_which_expected_outputs_contain_nan(node_store: Path, cat: pd.DataFrame) -> None:
    answer = cat[(cat.io == "output") & (cat.nan_count > 0)]
    assert len(answer) > 0
    assert (answer["nan_count"] > 0).all()
    assert (answer.io == "output").all()
    expected = duckdb.execute(
        "SELECT DISTINCT path FROM read_parquet(?) "
        "WHERE role IN ('value', 'element') AND io = 'output' AND nan_count > 0",
        [str(node_store)],
    ).fetchall()
    assert set(answer.path) == {path for (path,) in expected}
    value = next(v for v in Store(node_store).values(answer.case.iloc[0]) if v.io == "output")
    assert np.isnan(np.asarray(value.to_numpy(), dtype=np.float64)).any()


def test_largest_tensors_per_operator(cat: pd.DataFrame) -> None:
    largest = (
        cat.explode("op_types").sort_values("count", ascending=False).drop_duplicates("op_types")
    )
    per_op = cat.explode("op_types").groupby("op_types")["count"].max()
    assert len(largest) == len(per_op) > 100
    assert largest.set_index("op_types")["count"].sort_index().equals(per_op.sort_index())
    top = largest.iloc[0]
    assert top["count"] == cat["count"].max()
    assert int(np.prod(top["shape"])) == top["count"]
    assert re.fullmatch(r"node/test_\w+", top["case"])


def _one_case_store(path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = np.array([-1.0, 2.0], np.float32)
    write_store([one_data_set_case("node/test_abs", model, x, np.abs(x))], path)
    return path


def _with_value_kind(src: Path, dst: Path, path: str, text: str) -> Path:
    """The store rewritten with ``text`` as the value_kind of the row of ``path``."""
    table = pq.read_table(src)
    kinds = [
        text if p == path else k
        for p, k in zip(table["path"].to_pylist(), table["value_kind"].to_pylist(), strict=True)
    ]
    i = table.schema.get_field_index("value_kind")
    table = table.set_column(i, table.schema.field(i), pa.array(kinds, pa.string()))
    pq.write_table(table, dst)
    return dst


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("{not json", CorpusError, "value_kind is not JSON (Expecting property name"),
        ("[" * 5000 + "]" * 5000, CorpusError, "value_kind nests 5000 levels deep"),
        ("[" + "9" * 5000 + "]", CorpusError, "value_kind is not JSON (Exceeds the limit"),
        ('["tensr"]', OnnxArrowError, 'value_kind: ["tensr"] is not an ONNX value kind'),
    ],
)
def test_catalog_refuses_a_damaged_value_kind(
    tmp_path: Path, text: str, error: type[Exception], message: str
) -> None:
    good = _one_case_store(tmp_path / "good.parquet")
    assert oap.catalog(good).value_kind.tolist() == ["tensor", "tensor"]
    output = "node/test_abs/test_data_set_0/output_0.pb"
    bad = _with_value_kind(good, tmp_path / "bad.parquet", output, text)
    with pytest.raises(error) as caught:
        oap.catalog(bad)
    assert str(caught.value).startswith(f"{bad}: {output}: ")
    assert message in str(caught.value)


def test_catalog_flags_values_that_contradict_their_declaration(tmp_path) -> None:
    import warnings

    from layout_corpora import contradicting

    from onnx_arrow.corpus import FolderSource
    from onnx_arrow.errors import DeclarationWarning

    contradicting(tmp_path / "src" / "contra")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeclarationWarning)
        write_store(FolderSource(tmp_path / "src"), tmp_path / "s.parquet")
    cat = oap.catalog(tmp_path / "s.parquet")
    # what they hold, the output first as the store holds it
    assert cat.onnx_type.tolist() == ["seq(tensor(int64))", "tensor(float)"]
    flagged = dict(zip(cat.path.str.rsplit("/", n=1).str[-1], cat.declared, strict=True))
    assert flagged == {"input_0.pb": "tensor(float) []", "output_0.pb": "seq(tensor(float))"}

"""The summaries of tensors, models and stores that ``info``, Jupyter, pandas and compare share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow._summary import (
    DECODED_FLOATS,
    dtype_name,
    op_types,
    opsets,
    size,
    statistics,
    store_facts,
)
from onnx_arrow.core.dtypes import DTYPES
from onnx_arrow.corpus import Case, CorpusFile, Store, write_store
from onnx_arrow.corpus.format import DATA_COLUMNS, FORMAT_VERSION


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1.0 KiB"),
        (7271830, "6.9 MiB"),
        (5 << 30, "5.0 GiB"),
        (3 << 40, "3072.0 GiB"),
    ],
)
def test_size(nbytes: int, text: str) -> None:
    assert size(nbytes) == text


def test_statistics_follow_the_stores_rule_nan_ignored_infinities_kept() -> None:
    values = np.array([1.0, np.nan, -np.inf, 4.0], np.float32)
    assert dict(statistics(values)) == {
        "min": "-inf",
        "max": "4",
        "mean": "-inf",
        "nan": "1",
        "inf": "1",
    }
    assert statistics(np.array([np.nan], np.float32)) == [
        ("min", "nan"),
        ("max", "nan"),
        ("mean", "nan"),
        ("nan", "1"),
        ("inf", "0"),
    ]
    assert statistics(np.array([1, 2], np.int32)) == [("min", "1"), ("max", "2"), ("mean", "1.5")]


def test_statistics_by_kind_of_element() -> None:
    assert statistics(np.array([True, False, True])) == [("true", "2")]
    assert statistics(np.array([b"a"], dtype=object)) == []
    assert statistics(np.array([], np.int64)) == []
    assert dict(statistics(np.array([1, 2], ml_dtypes.bfloat16)))["mean"] == "1.5"
    assert dict(statistics(np.array([-8, 7], ml_dtypes.int4)))["min"] == "-8"


# --- dtypes and models -------------------------------------------------------------------


def test_dtype_name_is_the_onnx_name_else_numpys() -> None:
    assert dtype_name(np.dtype(np.float32)) == "FLOAT"
    assert dtype_name(np.dtype(ml_dtypes.bfloat16)) == "BFLOAT16"
    assert dtype_name(np.dtype(object)) == "STRING"
    assert dtype_name(np.dtype("datetime64[s]")) == "datetime64[s]"


def test_decoded_floats_are_exactly_the_dtypes_float32_holds() -> None:
    decoded = {row.name for row in DTYPES.values() if row.arrow_kind in DECODED_FLOATS}
    assert "BFLOAT16" in decoded
    assert {"FLOAT8E4M3FN", "FLOAT4E2M1", "FLOAT6E2M3", "FLOAT8E8M0"} <= decoded
    for row in DTYPES.values():
        if row.arrow_kind in DECODED_FLOATS:
            codes = np.arange(1 << row.bits, dtype=np.uint8).view(row.numpy)
            wide = codes.astype(np.float32)
            finite = np.isfinite(wide)
            assert np.array_equal(wide[finite].astype(row.numpy), codes[finite]), row.name


def test_op_types_and_opsets_of_a_model() -> None:
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"]),
            helper.make_node("Abs", ["a"], ["b"]),
            helper.make_node("Relu", ["b"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 3)]
    )
    assert op_types(model) == ("Abs", "Relu")
    assert opsets(model) == "ai.onnx 21, ai.onnx.ml 3"
    assert op_types(ModelProto()) == ()
    assert opsets(ModelProto()) == "(none)"


# --- stores ------------------------------------------------------------------------------


def _small_store(path: Path) -> Store:
    """A node case (model, an input, a sequence output), a second one, a real/ case."""
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, None))
    graph = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x"], ["s"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.INT64, [4])],
        [helper.make_value_info("s", seq)],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 21)]
    ).SerializeToString()
    x = np.arange(4, dtype=np.int64)
    parts = [x[:1], x[1:]]
    cases = []
    for name in ("node/test_a", "node/test_b"):
        files = [
            CorpusFile(f"{name}/model.onnx", model),
            CorpusFile(
                f"{name}/test_data_set_0/input_0.pb",
                numpy_helper.from_array(x, "x").SerializeToString(),
            ),
            CorpusFile(
                f"{name}/test_data_set_0/output_0.pb",
                numpy_helper.from_list(parts, "s").SerializeToString(),
            ),
        ]
        cases.append(Case(name, "node", files, files[0].path))
    cases.append(Case("real/r", "real", [CorpusFile("real/r/data.json", b"{}")], None))
    write_store(cases, path)
    return Store(path)


def test_store_facts_count_what_the_store_holds(tmp_path: Path) -> None:
    store = _small_store(tmp_path / "store.parquet")
    facts = store_facts(store)
    assert facts.format == f"onnx-arrow corpus store, version {FORMAT_VERSION}"
    assert facts.created_by == f"onnx-arrow {onnx_arrow.__version__} (onnx {onnx.__version__})"
    assert facts.nbytes == store.path.stat().st_size
    assert facts.row_groups == store.num_row_groups
    assert facts.cases == 3
    assert facts.kinds == [("node", 2), ("real", 1)]
    # per node case: a model, two values, two element rows (the sequence's tensors)
    assert facts.roles == {"element": 4, "model": 2, "value": 4, "file": 1}
    assert list(facts.roles) == ["element", "value", "model", "file"]  # most first, ties by name
    assert facts.rows == sum(facts.roles.values())
    assert facts.files == 7
    assert facts.dtypes == {"INT64": 6}  # the inputs, and the sequences' two tensors each
    assert facts.tensors == 6
    assert facts.elements == {"INT64": 16}


def test_store_facts_read_no_data_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _small_store(tmp_path / "store.parquet")
    read: list[str] = []
    real = pq.ParquetFile.read

    def spy(self: pq.ParquetFile, *args: Any, columns: list[str], **kwargs: Any) -> pa.Table:
        read.extend(columns)
        return real(self, *args, columns=columns, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read", spy)
    store_facts(store)
    assert read
    assert not [c for c in read if c in DATA_COLUMNS or c in ("envelope", "content")]

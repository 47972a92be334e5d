"""The facts of a store that ``info`` and Jupyter share, counted from its descriptive columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow.corpus import Case, CorpusFile, Store, write_store
from onnx_arrow.corpus.facts import file_count, store_facts
from onnx_arrow.corpus.format import DATA_COLUMNS, FORMAT_VERSION


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
    assert facts.files == 7 == file_count(store)  # as an export counts them, its role column alone
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

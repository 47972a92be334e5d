"""The display of a trace store: the verdict, the divergence picture in topological order,
the values that diverge, and the first divergent node's values side by side."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from trace_helpers import Perturbed

from onnx_arrow import jupyter
from onnx_arrow.corpus import Store, default_source, write_store
from onnx_arrow.errors import CompareError, UnsupportedTypeError
from onnx_arrow.trace import trace

CASE = "node/test_layer_normalization_4d_axis1_expanded"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    path = tmp_path_factory.mktemp("traces") / "corpus.parquet"
    write_store(default_source(cases=[CASE]), path)
    return Store(path)


def test_a_trace_with_a_divergence(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    found = trace(store, CASE, Perturbed("Sqrt"), out, max_ulp=0)
    view = jupyter.trace_view(out)
    text = jupyter.text(view)
    assert f"trace of {CASE}" in text
    assert f"first divergent node: #{found.verdict.position}" in text
    assert "divergence by node, in topological order" in text
    assert f"values that diverge: {found.verdict.diverging}" in text
    for v in found.verdict.outputs:
        assert f"output {v.name}" in text
    assert "picture  ULP distance" in text  # the verdict's output beside B's, ULPs pictured
    html = jupyter.html(view)
    assert f"log2(1 + max ULP) of each of the {found.metadata['values']} values" in html
    assert "at most 3 ULP" in html
    assert html.count("<img") >= 4
    assert repr(view) == text
    assert view._repr_html_() == html


def test_a_trace_without_a_divergence(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    trace(store, CASE, "reference", out)
    text = jupyter.text(jupyter.trace_view(out))
    assert "no value diverges" in text
    assert "values that diverge" not in text


def test_what_is_not_a_trace_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), other)
    with pytest.raises(CompareError, match="not a trace store"):
        jupyter.trace_view(other)
    with pytest.raises(UnsupportedTypeError, match="expected the path of a trace store"):
        jupyter.trace_view(3)  # type: ignore[arg-type]

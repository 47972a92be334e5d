"""Displays of Arrow columns and tables of ONNX values."""

from __future__ import annotations

import itertools
import re

import numpy as np
import onnx
import pyarrow as pa
from display_helpers import pngs
from onnx import helper, numpy_helper

import onnx_arrow
from onnx_arrow import jupyter
from onnx_arrow.core.types import kind_of_arrow
from onnx_arrow.jupyter.columns import column_kind


def test_message_column_facts() -> None:
    rows = [numpy_helper.from_array(np.full((2, 3), i, np.float32), f"x{i}") for i in range(7)]
    column = onnx_arrow.to_arrow(rows, exact=True)
    out = jupyter.text(column)
    assert "onnx.message" in out
    assert "arrow.fixed_shape_tensor" in out
    assert "onnx kind   tensor" in out
    assert "rows        7" in out
    assert "the first 5 of 7 rows are shown" in out
    assert re.search(r"^  4 +\[2, 3\] +FLOAT +4 +4 +4 ", out, re.MULTILINE)
    assert jupyter.text(column.value).splitlines()[1].startswith("  arrow type  arrow.fixed")
    assert len(pngs(jupyter.html(column))) == 1
    assert "sequence of 2" in jupyter.text(
        onnx_arrow.to_arrow([numpy_helper.from_list([np.zeros(2), np.ones(3)], "s")], exact=True)
    )


def _chunks_with_absences() -> dict[str, pa.Array]:
    """Chunks of one sequence column: none absent, sequences absent, elements absent."""
    seqs = onnx_arrow.to_arrow(
        [
            numpy_helper.from_list([np.zeros(2, np.int64), np.arange(3, dtype=np.int64)], "s"),
            numpy_helper.from_list([np.full(1, 5, np.int64)], "s"),
        ],
        exact=True,
    ).storage.field("value")
    elements = seqs.flatten().take(pa.array([0, None, 1]))
    return {
        "plain": seqs,
        "sequences absent": seqs.take(pa.array([0, None])),
        "elements absent": pa.ListArray.from_arrays(pa.array([0, 2, 3], pa.int32()), elements),
    }


def test_chunked_columns_are_described_as_one_column() -> None:
    chunks = _chunks_with_absences()
    for r in (1, 2, 3):
        for names in itertools.permutations(chunks, r):
            column = pa.chunked_array([chunks[n] for n in names])
            whole = column.combine_chunks()
            assert column_kind(column) == kind_of_arrow(whole.type, whole), names
            assert jupyter.text(column) == jupyter.text(whole), names
            assert jupyter.html(column) == jupyter.html(whole), names
    tensors = onnx_arrow.to_arrow(
        [numpy_helper.from_array(np.eye(2, dtype=np.float32))] * 3, exact=True
    )
    values = tensors.storage.field("value")
    column = pa.chunked_array([values, values.take(pa.array([0, None]))] * 4)
    out = jupyter.text(column)
    assert re.search(r"onnx kind +optional\(tensor\)\n", out)
    assert re.search(r"rows +20\n +nulls +4\n", out)
    assert "the first 5 of 20 rows are shown" in out
    assert out == jupyter.text(column.combine_chunks())
    assert jupyter.text(pa.chunked_array([], type=values.type)) == jupyter.text(values.slice(0, 0))


def test_a_columns_picture_says_which_row_it_draws() -> None:
    tensors = [numpy_helper.from_array(np.eye(3, dtype=np.float32) * i) for i in range(4)]
    html = jupyter.html(onnx_arrow.to_arrow(tensors))
    assert "<figcaption>row 0 of 4: heatmap" in html
    present = numpy_helper.from_array(np.eye(3, dtype=np.float32))
    optional = onnx_arrow.to_arrow(
        [
            onnx.OptionalProto(name="o", elem_type=onnx.OptionalProto.TENSOR),  # absent
            helper.make_optional("o", onnx.OptionalProto.TENSOR, present),
        ]
    )
    assert "<figcaption>row 1 of 2: heatmap" in jupyter.html(optional)

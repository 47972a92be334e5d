"""Displays of single values: tensors, exotic dtypes, sequences, maps, optionals, sparse tensors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from display_helpers import decode, pngs
from onnx import helper, numpy_helper

from onnx_arrow import jupyter


def test_tensor_message_facts() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    tensor = numpy_helper.from_array(x, "x")
    out = jupyter.text(tensor)
    for fact in ("FLOAT", "[3, 4]", "min       0", "max       11", "mean      5.5", "nan       0"):
        assert fact in out
    html = jupyter.html(tensor)
    assert "FLOAT" in html
    assert "[3, 4]" in html
    assert "5.5" in html
    (picture,) = pngs(html)
    width, height, color_type, _ = decode(picture)
    assert color_type == 2
    assert (width, height) == (128, 96)


def test_exotic_dtypes_have_statistics() -> None:
    values = np.array([1.5, -2.0, np.nan], dtype=ml_dtypes.bfloat16)
    out = jupyter.text(values)
    assert "BFLOAT16" in out
    assert "min       -2" in out
    assert "nan       1" in out
    out = jupyter.text(np.array([1, -3, 7], dtype=ml_dtypes.int4))
    assert "INT4" in out
    assert "min       -3" in out
    assert "max       7" in out


def test_sequence_map_optional_sparse_messages() -> None:
    seq = numpy_helper.from_list([np.zeros(2, np.int64), np.ones((3, 3), np.int64)], "s")
    out = jupyter.text(seq)
    assert "sequence" in out
    assert "items  2" in out
    assert "[3, 3]" in out
    mapping = numpy_helper.from_dict({7: np.arange(3.0)}, "m")
    out = jupyter.text(mapping)
    assert "map" in out
    assert "keys     [7]" in out
    assert "DOUBLE" in out
    assert "absent" in jupyter.text(numpy_helper.from_optional(None, name="o"))
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "v"),
        numpy_helper.from_array(np.array([0, 3], np.int64), "i"),
        [2, 2],
    )
    out = jupyter.text(sparse)
    assert "sparse tensor" in out
    assert "dense shape    [2, 2]" in out


def test_long_sequences_are_cut() -> None:
    seq = numpy_helper.from_list([np.full(2, i, np.int64) for i in range(50)], "s")
    out = jupyter.text(seq)
    assert "the first 8 of 50 items are shown" in out
    assert "item [8]" not in out

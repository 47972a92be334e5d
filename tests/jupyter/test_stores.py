"""Displays of a store, of a case and of a stored value."""

from __future__ import annotations

import re
from pathlib import Path

import onnx
from display_helpers import HOSTILE, hostile_store, pngs

import onnx_arrow
from onnx_arrow import jupyter
from onnx_arrow.corpus import Store
from onnx_arrow.corpus.format import FORMAT_VERSION


def test_store_facts(tmp_path: Path) -> None:
    store = Store(hostile_store(tmp_path))
    out = jupyter.text(store)
    assert f"onnx-arrow corpus store, version {FORMAT_VERSION}" in out
    assert f"onnx-arrow {onnx_arrow.__version__} (onnx {onnx.__version__})" in out
    assert re.search(r"cases +1\n", out)
    assert re.search(r"files +3\n", out)
    assert re.search(r"FLOAT +2 +12", out)  # two FLOAT tensors, 12 elements
    assert "node" in jupyter.html(store)


def test_case_view_escapes_names_and_shows_values(tmp_path: Path) -> None:
    view = jupyter.case_view(str(hostile_store(tmp_path, name=HOSTILE)), "node/test_hostile")
    html = view._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    out = repr(view)
    assert "Relu" in out
    assert "tensor(float) [2, 3]" in out
    assert "test_data_set_0" in out
    assert "min        -5" in out
    assert "nan        1" in out
    assert len(pngs(html)) == 2


def test_stored_value_facts(tmp_path: Path) -> None:
    store = Store(hostile_store(tmp_path))
    value = next(v for v in store.values("node/test_hostile") if v.io == "output")
    out = jupyter.text(value)
    assert "node/test_hostile/test_data_set_0/output_0.pb" in out
    assert "max        6" in out
    assert "nan        1" in out
    out = jupyter.text(store.case_table("node/test_hostile"))
    assert "column 'y'" in out
    assert "[2, 3]" in out

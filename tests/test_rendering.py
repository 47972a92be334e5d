"""The Jupyter displays as a notebook's HTML export shows them, rendered by Chromium.

A notebook of displays runs, nbconvert exports it with JupyterLab's stylesheet and with
classic Notebook's (both right-align table cells and centre tables), and headless
Chromium lays it out: every cell of every display must be left-aligned, each value next
to its key, each table at the left of its output.  Set ``ONNX_ARROW_SCREENSHOTS`` to a
folder to keep the screenshots.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from chromium import chromium, measure, screenshot

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
nbconvert = pytest.importorskip("nbconvert")
pytest.importorskip("ipykernel")

CELLS = [
    "%load_ext onnx_arrow.jupyter",
    "import numpy as np\nimport onnx_arrow\nfrom onnx import numpy_helper",
    "x = np.linspace(-1, 1, 48, dtype=np.float32).reshape(6, 8)\n"
    "x[0, 1], x[2, 2], x[3, 0] = np.inf, -np.inf, np.nan\n"
    "numpy_helper.from_array(x, 'with_nan_and_inf')",
    "logits = np.linspace(-5, 5, 1000, dtype=np.float32).reshape(1, 1000)\n"
    "numpy_helper.from_array(logits, 'logits')",
    "eyes = [numpy_helper.from_array(np.eye(4, dtype=np.float32) * i) for i in range(3)]\n"
    "onnx_arrow.to_arrow(eyes)",
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> object:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    folder = tmp_path_factory.mktemp("rendering")
    nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    return notebook


@pytest.mark.parametrize("template", ["lab", "classic"])
def test_displays_hold_their_layout_in_notebook_stylesheets(
    executed: object, template: str, tmp_path: Path
) -> None:
    chromium()
    body, _ = nbconvert.HTMLExporter(template_name=template).from_notebook_node(executed)
    assert ".onnx-arrow.onnx-arrow td" in body
    rule = ".jp-RenderedHTMLCommon td" if template == "lab" else ".rendered_html td"
    assert rule in body  # the notebook's own table rules are on the page
    page = tmp_path / f"{template}.html"
    page.write_text(body, encoding="utf-8")
    measured = measure(page)
    tables = measured["tables"]
    assert len(tables) == 4  # two tensors' facts, a column's facts and rows
    for table in tables:
        assert table["left"] < 40, "a table is centred, not at the left of its output"
        for row in table["rows"]:
            assert {cell["align"] for cell in row} <= {"left", "start"}, row
            if len(row) == 2:  # a key and its value, side by side
                assert row[1]["left"] - row[0]["right"] < 60, row
    prose = measured["prose"]
    assert "row 0 of 3: heatmap" in prose
    assert "folded in order" in prose
    for label in ("NaN", "+inf", "-inf"):
        assert label in prose
    keep = os.environ.get("ONNX_ARROW_SCREENSHOTS")
    shots = Path(keep) if keep else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    screenshot(page, shots / f"displays-{template}.png")

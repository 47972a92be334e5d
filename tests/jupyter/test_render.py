"""The renderers: escaped and bounded, scoped styles."""

from __future__ import annotations

import re

import numpy as np
from display_helpers import HOSTILE
from onnx import numpy_helper

from onnx_arrow import jupyter


def test_strings_are_escaped_and_bounded() -> None:
    tensor = numpy_helper.from_array(np.array([HOSTILE.encode() * 10], dtype=object), HOSTILE)
    html = jupyter.html(tensor)
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "STRING" in jupyter.text(tensor)
    assert len(jupyter.text(tensor)) < 1000


def test_styles_are_scoped_and_outrank_notebook_table_rules() -> None:
    style = jupyter.html(np.eye(2)).split("<style>", 1)[1].split("</style>", 1)[0]
    selectors = [s for rule in re.findall(r"([^{}]+)\{", style) for s in rule.split(",")]
    assert selectors
    assert all(s.startswith(".onnx-arrow.onnx-arrow") for s in selectors), selectors
    td = re.search(r"\.onnx-arrow\.onnx-arrow td[^{]*\{([^}]*)\}", style)
    assert td is not None
    assert "text-align:left" in td.group(1)

"""The renderers: escaped and bounded, scoped styles."""

from __future__ import annotations

import re

import numpy as np
from display_helpers import HOSTILE, legend_of, pngs
from onnx import numpy_helper

from onnx_arrow import jupyter
from onnx_arrow.jupyter.colormap import COLORMAP, hex_color
from onnx_arrow.jupyter.png_encoder import png
from onnx_arrow.jupyter.render import render_html, render_text
from onnx_arrow.jupyter.sections import Picture, Section


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


def _sections() -> list[Section]:
    data = png(np.arange(18, dtype=np.uint8).reshape(2, 3, 3))
    heatmap = Picture(data, f"heatmap of {HOSTILE}", 3, 2, scale=("-1", "<1>"))
    heatmap.keys.append(("NaN", "#ff00ff"))
    first = Section(
        HOSTILE,
        [("key", "<v>"), ("longer key", "2")],
        table=(["a", "bb"], [["1", "<x>"], ["333", "4"]]),
        picture=heatmap,
        note="a <note>",
        level=1,
    )
    pair = Section("pair", level=1)
    pair.pictures += [Picture(data, "old: image", 30, 20, kind="image"), heatmap]
    return [Section("top"), first, pair]


def test_text_aligns_fields_and_table_columns_and_names_the_pictures() -> None:
    assert render_text(_sections()).splitlines() == [
        "top",
        f"  {HOSTILE}",
        "    key         <v>",
        "    longer key  2",
        "    picture     heatmap, 3x2 px (in HTML)",
        "    a    bb",
        "    1    <x>",
        "    333  4",
        "    (a <note>)",
        "  pair",
        "    picture  old, 30x20 px (in HTML)",
        "    picture  heatmap of <script>alert(1)</script>, 3x2 px (in HTML)",
    ]


def test_html_escapes_every_string_and_embeds_the_pictures_as_they_are() -> None:
    out = render_html(_sections())
    assert "<script>" not in out
    assert out.count("&lt;script&gt;") == 5  # a title; the heatmap's caption and alt, twice
    for fact in ("<td>&lt;v&gt;</td>", "<th>bb</th>", "<td>&lt;x&gt;</td>", "a &lt;note&gt;"):
        assert fact in out
    assert out.count("margin-left:16px") == 2
    data = png(np.arange(18, dtype=np.uint8).reshape(2, 3, 3))
    assert pngs(out) == [data] * 3
    assert 'width="3" height="2"' in out
    assert 'width="30" height="20"' in out
    assert 'aria-label="colour scale, -1 to &lt;1&gt;"' in out
    assert 'style="background:#ff00ff"></span>NaN' in legend_of(out)
    # the legend's bar is a gradient of the colormap's own colours, low to high
    bar = re.search(r'class="oa-bar"[^>]*background:linear-gradient\(to right,([^)]*)\)', out)
    assert bar is not None
    stops = bar.group(1).split(",")
    assert len(stops) == 9
    for stop, row in ((stops[0], COLORMAP[0]), (stops[-1], COLORMAP[255])):
        assert stop == hex_color((int(row[0]), int(row[1]), int(row[2])))

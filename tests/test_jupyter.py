"""The Jupyter adapter: HTML and text displays, PNG pictures, IPython registration."""

from __future__ import annotations

import base64
import itertools
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pyarrow as pa
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow import jupyter
from onnx_arrow.jupyter.columns import column_kind
from onnx_arrow.core.types import kind_of_arrow
from onnx_arrow.corpus import Case, CorpusFile, Store, write_store
from onnx_arrow.corpus.format import FORMAT_VERSION

HOSTILE = "<script>alert(1)</script>"


def _pngs(html: str) -> list[bytes]:
    """The pictures of a display (not the colour bars of their legends)."""
    found = re.findall(r'class="oa-picture" src="data:image/png;base64,([^"]+)"', html)
    return [base64.b64decode(m) for m in found]


def _decode(data: bytes) -> tuple[int, int, int, np.ndarray[Any, Any]]:
    """Width, height, colour type and pixels of one of our PNGs (8 bit, filter 0)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (size,) = struct.unpack(">I", data[pos : pos + 4])
        tag = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + size]
        (crc,) = struct.unpack(">I", data[pos + 8 + size : pos + 12 + size])
        assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF
        chunks[tag] = chunks.get(tag, b"") + body
        pos += 12 + size
    width, height, depth, color_type = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert depth == 8
    channels = {0: 1, 2: 3, 6: 4}[color_type]
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8)
    rows = raw.reshape(height, 1 + width * channels)
    assert (rows[:, 0] == 0).all()
    return width, height, color_type, rows[:, 1:].reshape(height, width, channels)


def test_png_encodes_sizes_and_colour_types() -> None:
    for shape, color_type in (((5, 7), 0), ((5, 7, 3), 2), ((5, 7, 4), 6)):
        pixels = np.arange(np.prod(shape), dtype=np.uint8).reshape(shape)
        width, height, ct, decoded = _decode(jupyter.png(pixels))
        assert (width, height, ct) == (7, 5, color_type)
        assert np.array_equal(decoded.reshape(shape), pixels)


def test_png_refuses_other_pixels() -> None:
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match="uint8"):
        jupyter.png(np.zeros((2, 2), np.float32))


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
    (picture,) = _pngs(html)
    width, height, color_type, _ = _decode(picture)
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


def test_strings_are_escaped_and_bounded() -> None:
    tensor = numpy_helper.from_array(np.array([HOSTILE.encode() * 10], dtype=object), HOSTILE)
    html = jupyter.html(tensor)
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "STRING" in jupyter.text(tensor)
    assert len(jupyter.text(tensor)) < 1000


def test_heatmap_shows_nan_in_its_own_colour() -> None:
    x = np.zeros((4, 4), np.float32)
    x[1, 2] = np.nan
    x[3, 3] = 1.0
    (picture,) = _pngs(jupyter.html(x))
    width, _height, _, pixels = _decode(picture)
    cell = width // 4
    assert tuple(pixels[1 * cell, 2 * cell]) == jupyter.NAN_COLOR
    assert tuple(pixels[0, 0]) == tuple(jupyter.COLORMAP[0])
    assert tuple(pixels[3 * cell, 3 * cell]) == tuple(jupyter.COLORMAP[255])
    assert not (jupyter.COLORMAP == jupyter.NAN_COLOR).all(axis=1).any()


def test_heatmap_of_the_last_two_axes() -> None:
    html = jupyter.html(np.random.default_rng(0).random((2, 5, 8, 16)))
    assert "heatmap of [0, 0, :, :]" in html
    width, height, _, _ = _decode(_pngs(html)[0])
    assert (width, height) == (128, 64)


@pytest.mark.parametrize(
    ("shape", "dtype", "layout"),
    [
        ((16, 24, 3), np.uint8, "image, channels last (HWC)"),
        ((16, 24, 4), np.uint8, "image, channels last (HWC)"),
        ((3, 16, 24), np.float32, "image, channels first (CHW)"),
        ((1, 16, 24), np.float32, "image, channels first (CHW)"),
        ((2, 3, 16, 24), np.float32, "image of [0] (NCHW)"),
    ],
)
def test_image_like_tensors_are_pictures(shape: tuple[int, ...], dtype: Any, layout: str) -> None:
    rng = np.random.default_rng(1)
    values = rng.integers(0, 256, shape).astype(dtype)
    if dtype == np.float32:
        values /= 255
    html = jupyter.html(values)
    assert layout in html
    width, height, color_type, pixels = _decode(_pngs(html)[0])
    assert (width, height) == (120, 80)  # 24x16 upscaled 5 times
    last = "HWC" in layout
    channels = 1 if 1 in shape[-3:-2] else (shape[-1] if last else 3)
    assert color_type == {1: 0, 3: 2, 4: 6}[channels]
    if last:
        assert np.array_equal(pixels[::5, ::5], values)


def test_floats_outside_0_1_are_a_heatmap_not_an_image() -> None:
    html = jupyter.html(np.full((3, 8, 8), 2.0, np.float32))
    assert "image (" not in html
    assert "heatmap" in html


def test_huge_tensor_gives_bounded_html() -> None:
    big = np.random.default_rng(2).random((4096, 4096), dtype=np.float32)
    html = jupyter.html(big)
    assert len(html) < 200_000
    assert "[4096, 4096]" in html
    assert "16777216 elements" in html
    width, height, _, _ = _decode(_pngs(html)[0])
    assert max(width, height) <= 256


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
    assert len(_pngs(jupyter.html(column))) == 1
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


def test_foreign_arrow_arrays_are_refused() -> None:
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match="holds no ONNX values"):
        jupyter.html(pa.array(["a", "b"]))
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match="cannot display a dict"):
        jupyter.html({})


def _store(tmp_path: Path, name: str = "x") -> Path:
    graph = helper.make_graph(
        [helper.make_node("Relu", [name], ["y"])],
        "g",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    x = np.array([[-1.0, 2.0, np.nan], [4.0, -5.0, 6.0]], np.float32)
    files = [
        CorpusFile("node/test_hostile/model.onnx", model.SerializeToString()),
        CorpusFile(
            "node/test_hostile/test_data_set_0/input_0.pb",
            numpy_helper.from_array(x, name).SerializeToString(),
        ),
        CorpusFile(
            "node/test_hostile/test_data_set_0/output_0.pb",
            numpy_helper.from_array(np.maximum(x, 0), "y").SerializeToString(),
        ),
    ]
    path = tmp_path / "store.parquet"
    write_store([Case("node/test_hostile", "node", files, files[0].path)], path)
    return path


def test_store_facts(tmp_path: Path) -> None:
    store = Store(_store(tmp_path))
    out = jupyter.text(store)
    assert f"onnx-arrow corpus store, version {FORMAT_VERSION}" in out
    assert f"onnx-arrow {onnx_arrow.__version__} (onnx {onnx.__version__})" in out
    assert re.search(r"cases +1\n", out)
    assert re.search(r"files +3\n", out)
    assert re.search(r"FLOAT +2 +12", out)  # two FLOAT tensors, 12 elements
    assert "node" in jupyter.html(store)


def test_case_view_escapes_names_and_shows_values(tmp_path: Path) -> None:
    view = jupyter.case_view(str(_store(tmp_path, name=HOSTILE)), "node/test_hostile")
    html = view._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    out = repr(view)
    assert "Relu" in out
    assert "tensor(float) [2, 3]" in out
    assert "test_data_set_0" in out
    assert "min        -5" in out
    assert "nan        1" in out
    assert len(_pngs(html)) == 2


def test_stored_value_facts(tmp_path: Path) -> None:
    store = Store(_store(tmp_path))
    value = next(v for v in store.values("node/test_hostile") if v.io == "output")
    out = jupyter.text(value)
    assert "node/test_hostile/test_data_set_0/output_0.pb" in out
    assert "max        6" in out
    assert "nan        1" in out
    out = jupyter.text(store.case_table("node/test_hostile"))
    assert "column 'y'" in out
    assert "[2, 3]" in out


class _Formatter:
    def __init__(self) -> None:
        self.types: dict[type, Any] = {}

    def for_type(self, cls: type, func: Any) -> None:
        self.types[cls] = func


class _Shell:
    def __init__(self) -> None:
        self.display_formatter = type("DF", (), {"formatters": {"text/html": _Formatter()}})()


def test_register_with_a_stub_shell() -> None:
    shell = _Shell()
    jupyter.load_ipython_extension(shell)
    types = shell.display_formatter.formatters["text/html"].types
    assert {pa.ExtensionArray, Store, TensorProto, onnx.SequenceProto} <= set(types)
    column = onnx_arrow.to_arrow([numpy_helper.from_array(np.ones((2, 2), np.float32))], exact=True)
    assert "onnx.message" in types[pa.ExtensionArray](column)
    assert (
        types[pa.ExtensionArray](
            pa.ExtensionArray.from_storage(pa.uuid(), pa.nulls(1, pa.binary(16)))
        )
        is None
    )


def test_register_with_ipython() -> None:
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        jupyter.register(shell)
        tensor = numpy_helper.from_array(np.eye(3, dtype=np.float32), "<b>")
        data, _ = shell.display_formatter.format(tensor)
        assert "&lt;b&gt;" in data["text/html"]
        assert "<img" in data["text/html"]
        data, _ = shell.display_formatter.format(pa.array([1, 2]))
        assert "text/html" not in data
    finally:
        InteractiveShell.clear_instance()


def test_show_prints_text_outside_a_notebook(capsys: pytest.CaptureFixture[str]) -> None:
    jupyter.show(np.arange(3, dtype=np.int64))
    assert "INT64" in capsys.readouterr().out


def test_import_does_not_need_ipython() -> None:
    code = "import onnx_arrow.jupyter, sys; print('IPython' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


# --- pictures that say what they show ---------------------------------------------------


def _legend(html: str) -> str:
    return html.split('class="oa-legend">', 1)[1].split("</div>", 1)[0]


def test_infinities_are_drawn_as_themselves_and_the_legend_names_every_colour() -> None:
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    x[0, 1], x[2, 2], x[3, 0] = np.inf, -np.inf, np.nan
    html = jupyter.html(x)
    (picture,) = _pngs(html)
    width, _, _, pixels = _decode(picture)
    cell = width // 4
    assert tuple(pixels[0, 1 * cell]) == jupyter.POSINF_COLOR
    assert tuple(pixels[2 * cell, 2 * cell]) == jupyter.NEGINF_COLOR
    assert tuple(pixels[3 * cell, 0]) == jupyter.NAN_COLOR
    # the largest finite value, not +inf, is the top of the scale
    assert tuple(pixels[3 * cell, 3 * cell]) == tuple(jupyter.COLORMAP[255])
    legend = _legend(html)
    assert 'aria-label="colour scale, -1 to 1"' in legend
    for label, color in (
        ("NaN", jupyter.NAN_COLOR),
        ("+inf", jupyter.POSINF_COLOR),
        ("-inf", jupyter.NEGINF_COLOR),
    ):
        assert f'background:#{"".join(f"{c:02x}" for c in color)}"></span>{label}' in legend
    for color in (jupyter.NAN_COLOR, jupyter.POSINF_COLOR, jupyter.NEGINF_COLOR):
        assert not (color == jupyter.COLORMAP).all(axis=1).any()


def test_the_legend_names_only_the_colours_the_picture_shows() -> None:
    legend = _legend(jupyter.html(np.arange(12, dtype=np.float32).reshape(3, 4)))
    assert "colour scale, 0 to 11" in legend
    assert "NaN" not in legend
    assert "inf" not in legend


def test_a_long_row_is_folded_to_a_readable_picture() -> None:
    logits = np.linspace(-5, 5, 1000, dtype=np.float32).reshape(1, 1000)
    html = jupyter.html(logits)
    (picture,) = _pngs(html)
    width, height, _, pixels = _decode(picture)
    assert width <= 4 * height  # not a hairline
    assert "folded in order into 23 rows of 45" in html
    assert tuple(pixels[-1, -1]) == jupyter.PAD_COLOR  # past the 1000th element
    assert "past the last element" in _legend(html)
    assert tuple(pixels[0, 0]) == tuple(jupyter.COLORMAP[0])  # the first element, the lowest
    tall = jupyter.html(logits.reshape(1000, 1))
    assert "folded in order" in tall


def test_sampling_keeps_a_lone_nan_in_sight() -> None:
    big = np.random.default_rng(3).random((1000, 1000), dtype=np.float32)
    big[501, 333] = np.nan
    html = jupyter.html(big)
    _, _, _, pixels = _decode(_pngs(html)[0])
    assert (pixels == jupyter.NAN_COLOR).all(axis=2).any()
    assert "every 8th row and 8th column" in html


@pytest.mark.parametrize(
    "values",
    [
        np.ones((8, 3, 3, 3), np.float32),  # a convolution's weights
        np.ones((64, 3, 11, 11), np.float32),  # AlexNet's first convolution
        np.full((1, 3, 32, 32), 0.5, np.float32),  # constant: nothing to see as an image
        np.zeros((3, 20, 20), np.uint8),
    ],
    ids=["conv-3x3", "conv-11x11", "constant-float", "constant-uint8"],
)
def test_no_image_guess_where_an_image_is_unlikely(values: np.ndarray[Any, Any]) -> None:
    html = jupyter.html(values)
    assert "<figcaption>image" not in html
    assert "heatmap of [0, 0, :, :]" in html or "heatmap of [0, :, :]" in html


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


def test_styles_are_scoped_and_outrank_notebook_table_rules() -> None:
    style = jupyter.html(np.eye(2)).split("<style>", 1)[1].split("</style>", 1)[0]
    selectors = [s for rule in re.findall(r"([^{}]+)\{", style) for s in rule.split(",")]
    assert selectors
    assert all(s.startswith(".onnx-arrow.onnx-arrow") for s in selectors), selectors
    td = re.search(r"\.onnx-arrow\.onnx-arrow td[^{]*\{([^}]*)\}", style)
    assert td is not None
    assert "text-align:left" in td.group(1)

"""Helpers shared by the tests of onnx_arrow.jupyter: a hostile name, the pictures of a
display decoded, and a one-case store."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onnx_arrow.corpus import Case, CorpusFile, write_store

HOSTILE = "<script>alert(1)</script>"


def pngs(html: str) -> list[bytes]:
    """The pictures of a display (not the colour bars of their legends)."""
    found = re.findall(r'class="oa-picture" src="data:image/png;base64,([^"]+)"', html)
    return [base64.b64decode(m) for m in found]


def decode(data: bytes) -> tuple[int, int, int, np.ndarray[Any, Any]]:
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


def legend_of(html: str) -> str:
    """The legend under the first picture of a display."""
    return html.split('class="oa-legend">', 1)[1].split("</div>", 1)[0]


def hostile_store(tmp_path: Path, name: str = "x") -> Path:
    """A store of one Relu case whose input is called ``name``, with a NaN in its data."""
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

"""What html and text take, and what they refuse."""

from __future__ import annotations

import pyarrow as pa
import pytest

import onnx_arrow
from onnx_arrow import jupyter


def test_foreign_arrow_arrays_are_refused() -> None:
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match="holds no ONNX values"):
        jupyter.html(pa.array(["a", "b"]))
    with pytest.raises(onnx_arrow.UnsupportedTypeError, match="cannot display a dict"):
        jupyter.html({})

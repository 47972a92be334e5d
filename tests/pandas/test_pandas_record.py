"""The column record in ``attrs``."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

import onnx_arrow
import onnx_arrow.pandas as oap


def test_the_column_record_prints_short() -> None:
    big = numpy_helper.from_array(np.ones((100, 100), np.float32))
    s = oap.to_pandas(onnx_arrow.to_arrow([big] * 50, exact=True), cells="numpy")
    assert len(repr(s.attrs)) < 300

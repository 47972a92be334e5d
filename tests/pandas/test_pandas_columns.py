"""Arrow data in: every column through the core's gate before pandas holds it."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import onnx_arrow
import onnx_arrow.pandas as oap


def test_malformed_arrow_is_refused_before_a_buffer_is_read() -> None:
    """Offsets that run backwards: pandas never sees them, onnx-arrow refuses them located."""
    offsets = pa.py_buffer(np.array([0, 1000, 2], dtype=np.int32).tobytes())
    strings = pa.Array.from_buffers(pa.binary(), 2, [None, offsets, pa.py_buffer(b"ab")])
    storage = pa.FixedSizeListArray.from_arrays(strings, 1)
    column = pa.ExtensionArray.from_storage(pa.fixed_shape_tensor(pa.binary(), [1]), storage)
    for cells in ("arrow", "numpy"):
        with pytest.raises(onnx_arrow.ArrowLayoutError, match=r"^column 's': the Arrow data is"):
            oap.to_pandas(pa.table({"s": column}), cells=cells)

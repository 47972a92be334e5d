"""The ``onnx`` accessor: one read of the column per call, zero-copy stacking."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from onnx import numpy_helper
from pandas_helpers import (
    _optional_column,
)

import onnx_arrow
import onnx_arrow.pandas as oap
from onnx_arrow.pandas import accessor


def test_accessor_reads_the_column_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    arr = onnx_arrow.to_arrow(_optional_column(), exact=True)
    built: list[str] = []
    real_column = accessor.read_column

    def column(data: Any, where: str) -> Any:
        built.append(where)
        return real_column(data, where)

    monkeypatch.setattr(accessor, "read_column", column)
    s = oap.to_pandas(arr, cells="arrow")
    for name in ("shape", "dtype", "stats", "to_numpy", "to_arrow", "to_float32"):
        built.clear()
        member = getattr(s.onnx, name)  # a property reads the column here
        if callable(member):
            member()
        assert len(built) == 1, name
    scanned: list[int] = []
    real_kind = accessor.kind_of_cells

    def kind_of_cells(cells: Any, labels: Any, where: str) -> Any:
        scanned.append(len(cells))
        return real_kind(cells, labels, where)

    monkeypatch.setattr(accessor, "kind_of_cells", kind_of_cells)
    unrecorded = pd.Series([np.eye(2, dtype=np.float32), None], dtype=object)
    assert unrecorded.onnx.shape.tolist() == [(2, 2), None]
    assert scanned == [2]


@pytest.mark.parametrize("cells", ["numpy", "arrow"])
def test_to_numpy_is_zero_copy_for_float32(cells: oap.Cells) -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    arr = onnx_arrow.to_arrow([numpy_helper.from_array(r) for r in x], exact=True)
    address = arr.value.storage.values.buffers()[1].address
    s = oap.to_pandas(arr, cells=cells)
    stacked = s.onnx.to_numpy()
    assert stacked.ctypes.data == address
    np.testing.assert_array_equal(stacked, x)
    if cells == "numpy":
        assert s[0].ctypes.data == address
        assert s.iloc[1:].onnx.to_numpy().ctypes.data == address + 6 * 4
        np.testing.assert_array_equal(s.iloc[::-1].onnx.to_numpy(), x[::-1])  # a copy
    else:
        assert s.onnx.to_arrow().value.storage.values.buffers()[1].address == address

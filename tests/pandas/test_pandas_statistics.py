"""Per-row statistics and float32 decoding of numpy cells."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pandas as pd
import pytest
from onnx import numpy_helper

import onnx_arrow
import onnx_arrow.pandas as oap
from onnx_arrow.errors import UnsupportedTypeError


def test_to_float32_decodes_exotic_floats() -> None:
    codes = np.arange(256, dtype=np.uint8)
    tensors = [numpy_helper.from_array(codes.view(ml_dtypes.float8_e5m2), "f8")]
    s = oap.to_pandas(onnx_arrow.to_arrow(tensors, exact=True), cells="arrow")
    decoded = s.onnx.to_float32()
    assert decoded[0].dtype == np.float32
    want = codes.view(ml_dtypes.float8_e5m2).astype(np.float32)
    np.testing.assert_array_equal(decoded[0], want)
    assert decoded.onnx.dtype == "FLOAT"
    arr = onnx_arrow.to_arrow([numpy_helper.from_array(np.arange(3))], exact=True)
    ints = oap.to_pandas(arr, cells="numpy")
    assert ints.onnx.to_float32()[0].dtype == np.int64  # not a float: left as it is


def test_stats_take_each_rows_own_dtype_and_name_a_row_they_cannot_take() -> None:
    s = pd.Series([np.array([1, 2], np.int32), np.array([np.nan, 3], np.float32)], name="x")
    stats = s.onnx.stats()
    assert stats.iloc[0].tolist()[:4] == [2, 1.0, 2.0, 1.5]
    assert stats.iloc[0]["nan_count"] is pd.NA  # no NaN count for integers
    assert stats.iloc[1].tolist() == [2, 3.0, 3.0, 3.0, 1, 0]
    dates = pd.Series([np.array(["2020-01-01"], "datetime64[D]")], name="t")
    with pytest.raises(UnsupportedTypeError, match="column 't': row 0: numpy dtype datetime64"):
        dates.onnx.stats()


def test_stats_say_nan_where_every_element_is_nan_as_the_html_view_does() -> None:
    from onnx_arrow import jupyter

    nans = np.array([np.nan, np.nan], np.float32)
    s = pd.Series([nans, np.array([], np.float32), None], name="x", dtype=object)
    stats = s.onnx.stats()
    assert np.isnan(stats.loc[0, "min"])
    assert np.isnan(stats.loc[0, "mean"])
    assert stats["min"].isna().tolist() == [False, True, True]  # NaN is a value, <NA> is none
    row = stats.to_string().splitlines()[1]
    assert "NaN" in row
    assert "<NA>" not in row
    html = jupyter.html(onnx_arrow.to_arrow([numpy_helper.from_array(nans)]))
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html.split("<table")[-1])
    assert cells[3:6] == ["nan", "nan", "nan"]  # min, max, mean of row 0

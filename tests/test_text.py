"""Numbers, sizes, dtypes and tensor statistics in words, as ``info``, Jupyter, pandas and
compare show them."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from onnx_arrow.core.dtypes import DTYPES
from onnx_arrow.core.model import DECODED_FLOATS
from onnx_arrow.text import dtype_name, size, statistics


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1.0 KiB"),
        (7271830, "6.9 MiB"),
        (5 << 30, "5.0 GiB"),
        (3 << 40, "3072.0 GiB"),
    ],
)
def test_size(nbytes: int, text: str) -> None:
    assert size(nbytes) == text


def test_statistics_follow_the_stores_rule_nan_ignored_infinities_kept() -> None:
    values = np.array([1.0, np.nan, -np.inf, 4.0], np.float32)
    assert dict(statistics(values)) == {
        "min": "-inf",
        "max": "4",
        "mean": "-inf",
        "nan": "1",
        "inf": "1",
    }
    assert statistics(np.array([np.nan], np.float32)) == [
        ("min", "nan"),
        ("max", "nan"),
        ("mean", "nan"),
        ("nan", "1"),
        ("inf", "0"),
    ]
    assert statistics(np.array([1, 2], np.int32)) == [("min", "1"), ("max", "2"), ("mean", "1.5")]


def test_statistics_by_kind_of_element() -> None:
    assert statistics(np.array([True, False, True])) == [("true", "2")]
    assert statistics(np.array([b"a"], dtype=object)) == []
    assert statistics(np.array([], np.int64)) == []
    assert dict(statistics(np.array([1, 2], ml_dtypes.bfloat16)))["mean"] == "1.5"
    assert dict(statistics(np.array([-8, 7], ml_dtypes.int4)))["min"] == "-8"


# --- dtypes -------------------------------------------------------------------------------


def test_dtype_name_is_the_onnx_name_else_numpys() -> None:
    assert dtype_name(np.dtype(np.float32)) == "FLOAT"
    assert dtype_name(np.dtype(ml_dtypes.bfloat16)) == "BFLOAT16"
    assert dtype_name(np.dtype(object)) == "STRING"
    assert dtype_name(np.dtype("datetime64[s]")) == "datetime64[s]"


def test_decoded_floats_are_exactly_the_dtypes_float32_holds() -> None:
    decoded = {row.name for row in DTYPES.values() if row.arrow_kind in DECODED_FLOATS}
    assert "BFLOAT16" in decoded
    assert {"FLOAT8E4M3FN", "FLOAT4E2M1", "FLOAT6E2M3", "FLOAT8E8M0"} <= decoded
    for row in DTYPES.values():
        if row.arrow_kind in DECODED_FLOATS:
            codes = np.arange(1 << row.bits, dtype=np.uint8).view(row.numpy)
            wide = codes.astype(np.float32)
            finite = np.isfinite(wide)
            assert np.array_equal(wide[finite].astype(row.numpy), codes[finite]), row.name

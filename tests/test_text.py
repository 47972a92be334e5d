"""Numbers, sizes, dtypes and tensor statistics in words, as ``info``, Jupyter, pandas and
compare show them."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from onnx_arrow.core.dtypes import DTYPES
from onnx_arrow.core.model import DECODED_FLOATS
from onnx_arrow.text import dtype_name, number, size, statistics


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


# --- numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        1e-7,
        0.1,
        1 / 3,
        1.5686274509803921,
        -2.5e-300,
        1e20,
        np.float64(1e-7),
        np.float32(0.1),
        np.float32(1e-7),
        np.float32(3.4028235e38),
        np.float16(0.1),
        ml_dtypes.bfloat16(0.1),
        ml_dtypes.float8_e4m3fn(0.1),
    ],
)
def test_a_number_reads_back_as_the_same_value_of_its_precision(value: object) -> None:
    shown = number(value)
    dtype = np.asarray(value).dtype
    assert np.asarray(float(shown)).astype(dtype) == np.asarray(value), (value, shown)
    assert shown != "0"


def test_a_number_is_the_shortest_form_of_its_own_precision() -> None:
    assert number(1e-7) == "1e-07"  # not 0, not 1e-07 rounded to 6 digits of 0
    assert number(np.float32(0.1)) == "0.1"  # not 0.10000000149011612
    assert number(1.5686274509803921) == "1.5686274509803921"  # not 1.56863
    assert number(ml_dtypes.bfloat16(1.5)) == "1.5"
    assert number(2.0) == "2"
    assert number(np.int64(-3)) == "-3"
    assert number(float("nan")) == "nan"
    assert number(float("-inf")) == "-inf"


def test_statistics_read_back_exactly() -> None:
    values = np.array([0.1, 1e-7, 0.3], np.float32)
    shown = dict(statistics(values))
    assert (shown["min"], shown["max"]) == ("1e-07", "0.3")
    assert float(shown["mean"]) == float(np.mean(values, dtype=np.float64))

"""The summary of a tensor that ``onnx-arrow info`` and the Jupyter views share."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from onnx_arrow._summary import size, statistics


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


def test_statistics_of_finite_elements_with_nan_and_inf_counted() -> None:
    values = np.array([1.0, np.nan, np.inf, 4.0], np.float32)
    assert dict(statistics(values)) == {
        "min": "1",
        "max": "4",
        "mean": "2.5",
        "nan": "1",
        "inf": "1",
    }
    assert statistics(np.array([np.nan], np.float32))[0] == ("min", "(no finite elements)")


def test_statistics_by_kind_of_element() -> None:
    assert statistics(np.array([True, False, True])) == [("true", "2")]
    assert statistics(np.array([b"a"], dtype=object)) == []
    assert statistics(np.array([], np.int64)) == []
    assert dict(statistics(np.array([1, 2], ml_dtypes.bfloat16)))["mean"] == "1.5"
    assert dict(statistics(np.array([-8, 7], ml_dtypes.int4)))["min"] == "-8"

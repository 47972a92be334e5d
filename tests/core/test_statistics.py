"""Summary statistics: one tensor at a time against numpy, for every dtype of the table."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onnx_arrow.core.codec import codes_to_storage
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of
from onnx_arrow.core.statistics import STATISTICS, has_nan_and_inf, tensor_statistics

NUMERIC = [r for r in DTYPES.values() if r.arrow_kind not in (ArrowKind.BINARY, ArrowKind.COMPLEX)]


@st.composite
def tensors(draw: st.DrawFn, row: DType) -> np.ndarray:
    """Any elements of ``row``: every bit pattern, so NaN, Inf and extremes too."""
    count = draw(st.integers(0, 6))
    if row.is_packed or row.arrow_kind is ArrowKind.BOOL8:
        limit = 1 if row.arrow_kind is ArrowKind.BOOL8 else (1 << row.bits) - 1
        values = draw(st.lists(st.integers(0, limit), min_size=count, max_size=count))
        return np.array(values, dtype=np.uint8).view(row.numpy)
    data = draw(st.binary(min_size=count * row.numpy.itemsize, max_size=count * row.numpy.itemsize))
    return np.frombuffer(data, dtype=row.numpy).copy()


def reference(row: DType, codes: np.ndarray) -> dict[str, float | int | None]:
    """The rule, one tensor at a time, in plain numpy and math.fsum."""
    x = codes.astype(np.float64)
    nan = np.isnan(x)
    kept = x[~nan]
    floating = has_nan_and_inf(row)
    out: dict[str, float | int | None] = {
        "nan_count": int(nan.sum()) if floating else None,
        "inf_count": int(np.isinf(x).sum()) if floating else None,
        "min": float(kept.min()) if kept.size else None,
        "max": float(kept.max()) if kept.size else None,
        "mean": None,
    }
    if kept.size:
        finite = kept[np.isfinite(kept)]
        infinities = set(kept[np.isinf(kept)].tolist())
        if len(infinities) == 2:
            out["mean"] = math.nan
        elif infinities:
            out["mean"] = infinities.pop()
        else:
            out["mean"] = math.fsum(finite.tolist()) / finite.size
    return out


def got(stats: dict, i: int) -> dict[str, float | int | None]:
    return {
        name: (stats[name].values[i].item() if stats[name].defined[i] else None)
        for name in STATISTICS
    }


def same(a: float | int | None, b: float | int | None) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, float) and math.isinf(b):  # a float64 sum may overflow where fsum does not
        return abs(a) > 1e300
    return a == b or math.isclose(a, b, rel_tol=1e-12)


@pytest.mark.parametrize("row", NUMERIC, ids=lambda r: r.name)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_each_tensor_as_numpy_computes_it(row: DType, data: st.DataObject) -> None:
    parts = data.draw(st.lists(tensors(row), max_size=5))
    # the codes (ml_dtypes included) and the numbers of the store's data column agree
    for given_parts in (parts, [codes_to_storage(p, row) for p in parts]):
        stats = tensor_statistics(row, given_parts)
        for i, codes in enumerate(parts):
            expected = reference(row, codes)
            result = got(stats, i)
            assert all(same(result[k], expected[k]) for k in STATISTICS), (codes, result)


def test_nan_is_ignored_and_infinities_count() -> None:
    row = dtype_of("FLOAT")
    parts = [
        np.array([1, np.nan, 3], np.float32),
        np.array([np.nan, np.nan], np.float32),
        np.array([], np.float32),
        np.array([-np.inf, 2], np.float32),
    ]
    stats = tensor_statistics(row, parts)
    assert [got(stats, i) for i in range(4)] == [
        {"min": 1.0, "max": 3.0, "mean": 2.0, "nan_count": 1, "inf_count": 0},
        {"min": None, "max": None, "mean": None, "nan_count": 2, "inf_count": 0},
        {"min": None, "max": None, "mean": None, "nan_count": 0, "inf_count": 0},
        {"min": -math.inf, "max": 2.0, "mean": -math.inf, "nan_count": 0, "inf_count": 1},
    ]


def test_integers_have_no_nan_counts_and_exotic_dtypes_their_values() -> None:
    ints = tensor_statistics(dtype_of("INT64"), [np.array([2**62, -3], np.int64)])
    assert got(ints, 0) == {
        "min": -3.0,
        "max": float(2**62),
        "mean": float(2**62 - 3) / 2,
        "nan_count": None,
        "inf_count": None,
    }
    bf16 = tensor_statistics(dtype_of("BFLOAT16"), [np.array([1, 2], ml_dtypes.bfloat16)])
    assert got(bf16, 0)["mean"] == 1.5
    int4 = tensor_statistics(dtype_of("INT4"), [np.array([-8, 7], ml_dtypes.int4)])
    assert (got(int4, 0)["min"], got(int4, 0)["max"]) == (-8.0, 7.0)


@pytest.mark.parametrize("name", ["STRING", "COMPLEX64"])
def test_strings_and_complex_have_none(name: str) -> None:
    row = dtype_of(name)
    codes = np.array([b"a"], dtype=object) if name == "STRING" else np.ones(2, np.complex64)
    stats = tensor_statistics(row, [codes])
    assert not any(stats[k].defined.any() for k in STATISTICS)

"""How an output's errors are spread: mean, median and 99th percentile against numpy on
hand-built outputs, the share beyond the rule, NaN and infinity position mismatches, and
the ULP histogram of every floating dtype against a brute-force binning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from compare_helpers import stated_store
from onnx import ModelProto

from onnx_arrow import compare as cmp
from onnx_arrow.compare.distribution import ULP_BINS, ulp_bin, ulp_histogram
from onnx_arrow.compare.similarity import compare_value
from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.ulp import FLOATING, ulp_distance


def _bin(d: int) -> int:
    """The bin of a distance, one Python int at a time: 0, 1, then (2**(k-2), 2**(k-1)]."""
    return 0 if d == 0 else (d - 1).bit_length() + 1


def test_bins_have_their_upper_edges_and_cover_every_uint64() -> None:
    edges = [0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 2**53 + 1, 2**63, 2**63 + 1, 2**64 - 1]
    near = [(1 << k) + j for k in range(1, 64) for j in (-1, 0, 1, 2)]
    rounding = [(1 << k) - (1 << (k - 54)) + j for k in range(55, 65) for j in (-1, 0, 1)]
    got = ulp_bin(np.array(edges, np.uint64)).tolist()
    assert got == [_bin(d) for d in edges]
    every = np.array(near + rounding, np.uint64)  # float64 rounds some up a power of two
    assert ulp_bin(every).tolist() == [_bin(int(d)) for d in every.tolist()]
    rng = np.random.default_rng(0)
    drawn = rng.integers(0, 2**64 - 1, 2000, dtype=np.uint64, endpoint=True)
    drawn >>= rng.integers(0, 64, drawn.size).astype(np.uint64)  # every bit length
    assert ulp_bin(drawn).tolist() == [_bin(int(d)) for d in drawn.tolist()]
    assert got[-1] == ULP_BINS - 1 == 65
    histogram = ulp_histogram(np.array(edges, np.uint64))
    assert histogram.dtype == np.int64
    assert histogram.shape == (ULP_BINS,)
    assert histogram.sum() == len(edges)


def _random_pair(name: str, rng: np.random.Generator) -> tuple[np.ndarray[Any, Any], ...]:
    """Expected and actual of dtype ``name``: random codes (all distances, NaNs, infinities),
    and a few elements a handful of codes apart."""
    row = dtype_of(name)
    n = 400
    if row.numpy.kind == "c":
        part = np.float32 if row.numpy.itemsize == 8 else np.float64
        real, imag = (_random_pair(dtype_of_part(part), rng) for _ in range(2))
        # real and imaginary parts side by side (1j * inf would make a NaN real part)
        e = np.stack([real[0], imag[0]], axis=-1).reshape(-1).view(row.numpy)
        a = np.stack([real[1], imag[1]], axis=-1).reshape(-1).view(row.numpy)
        return e, a
    if row.numpy.itemsize <= 2:
        width = np.uint8 if row.numpy.itemsize == 1 else np.uint16
        e_codes = rng.integers(0, 1 << row.bits, n).astype(width)
        a_codes = rng.integers(0, 1 << row.bits, n).astype(width)
    else:
        width = np.uint32 if row.numpy.itemsize == 4 else np.uint64
        e_codes = rng.integers(0, np.iinfo(width).max, n, dtype=width, endpoint=True)
        a_codes = rng.integers(0, np.iinfo(width).max, n, dtype=width, endpoint=True)
    near = rng.integers(0, 6, n // 4).astype(width)  # a few codes apart
    a_codes[: n // 4] = np.minimum(e_codes[: n // 4] + near, (1 << row.bits) - 1)
    return e_codes.view(row.numpy), a_codes.view(row.numpy)


def dtype_of_part(part: type[np.floating[Any]]) -> str:
    return "FLOAT" if part is np.float32 else "DOUBLE"


@pytest.mark.parametrize("name", FLOATING)
def test_the_ulp_histogram_of_every_floating_dtype(name: str) -> None:
    rng = np.random.default_rng(sum(map(ord, name)))
    e, a = _random_pair(name, rng)
    counted = ulp_distance(e, a, dtype_of(name))
    brute = [0] * ULP_BINS
    for d, moved in zip(counted.distance.tolist(), counted.nan_mismatch.tolist(), strict=True):
        if not moved:  # a NaN on one side only has no distance, and no bin
            brute[_bin(int(d))] += 1
    diff = compare_value(e, a, 1e-3, 1e-7)
    assert diff.spread.histogram is not None
    assert diff.spread.histogram.tolist() == brute
    assert sum(brute[_bin(int(counted.distance.max())) + 1 :]) == 0
    # every element is in a bin, or a NaN mismatch (complex: of either part)
    assert diff.spread.nan_mismatches == int(counted.nan_mismatch.sum())
    assert diff.spread.n_elements == sum(brute) + diff.spread.nan_mismatches


def test_statistics_against_numpy_on_hand_built_outputs() -> None:
    e = np.array([1.0, 2.0, 0.0, -4.0, 8.0, np.nan, np.inf, 5.0, 1e-3, 7.0], np.float32)
    a = np.array([1.0, 2.5, 0.0, -4.0, 9.0, np.nan, -np.inf, np.nan, 2e-3, np.inf], np.float32)
    diff = compare_value(e, a, 1e-3, 1e-7)
    e64, a64 = e.astype(np.float64), a.astype(np.float64)
    both = ~np.isnan(e64) & ~np.isnan(a64)
    with np.errstate(invalid="ignore"):
        delta = np.where(a64[both] == e64[both], 0.0, np.abs(a64[both] - e64[both]))
    with np.errstate(invalid="ignore"):  # inf / inf: inf against -inf is infinitely off
        rel = np.where(
            np.isinf(delta), np.inf, np.where(delta == 0, 0.0, delta / np.abs(e64[both]))
        )
    stats = diff.spread.statistics()
    for what, errors in (("abs", delta), ("rel", rel)):
        assert stats[f"mean_{what}_error"] == np.mean(errors)
        assert stats[f"median_{what}_error"] == np.median(errors)
        assert stats[f"p99_{what}_error"] == np.percentile(errors, 99, method="inverted_cdf")
    assert np.isinf(stats["mean_abs_error"])  # inf against -inf is infinitely off
    assert diff.spread.n_elements == 10
    assert diff.spread.nan_mismatches == 1  # 5.0 against NaN; NaN against NaN is equal
    assert diff.spread.inf_mismatches == 2  # inf against -inf, 7 against inf
    assert diff.beyond == 6  # 2.5, 9, -inf, NaN, 2e-3, inf

    finite = np.linspace(1, 2, 1000, dtype=np.float64)
    moved = finite + np.arange(1000) * 1e-6
    stats = compare_value(finite, moved, 1e-3, 1e-7).spread.statistics()
    errors = np.abs(moved - finite)
    assert stats["mean_abs_error"] == pytest.approx(np.mean(errors), rel=1e-12)
    assert stats["median_abs_error"] == np.median(errors)
    assert stats["p99_abs_error"] == np.percentile(errors, 99, method="inverted_cdf")


def test_containers_pool_their_tensors_and_integers_and_strings_count() -> None:
    f = np.array([1.0, 2.0], np.float32)
    seq = compare_value([f, f], [f, f * 2], 1e-3, 1e-7)
    assert seq.spread.n_elements == 4
    assert seq.spread.histogram is not None
    assert seq.spread.histogram.sum() == 4
    assert seq.spread.statistics()["median_abs_error"] == np.median([0, 0, 1, 2])
    ints = compare_value(np.array([1, 2, 3]), np.array([1, 2, 7]), 0, 0)
    assert (ints.spread.n_elements, ints.spread.histogram, ints.beyond) == (3, None, 1)
    assert ints.spread.statistics()["mean_abs_error"] == pytest.approx(4 / 3)
    assert ints.spread.nan_mismatches is None
    text = compare_value(np.array(["a", "b"], object), np.array(["a", "c"], object), 0, 0)
    assert (text.spread.n_elements, text.beyond) == (2, 1)
    assert text.spread.statistics()["mean_abs_error"] is None
    shape = compare_value(f, f.reshape(1, 2), 0, 0)
    assert shape.spread.n_elements is None


def test_the_report_row_has_the_distribution(tmp_path: Path) -> None:
    path = stated_store(tmp_path, None)  # Identity of 1..6 as float32, 2x3

    def ulps_off(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        out = np.array(inputs["x"], copy=True).reshape(-1)
        view = out.view(np.uint32)
        view[:] += np.array([0, 1, 3, 4, 5, 9], np.uint32)  # 0, 1, 3, 4, 5 and 9 ULP
        return [out.reshape(2, 3)]

    (row,) = cmp.compare(path, ulps_off, max_ulp=4).to_pandas().itertuples()
    assert (row.status, row.n_elements, row.n_beyond_tolerance) == ("mismatch", 6, 2)
    assert row.share_beyond == pytest.approx(2 / 6)
    assert row.ulp_histogram[:6] == (1, 1, 0, 2, 1, 1)
    assert len(row.ulp_histogram) == ULP_BINS
    assert (row.nan_mismatches, row.inf_mismatches) == (0, 0)
    assert row.max_ulp == 9
    (row,) = cmp.compare(path).to_pandas().itertuples()
    assert (row.n_elements, row.share_beyond, row.mean_abs_error) == (6, 0.0, 0.0)
    assert row.ulp_histogram[0] == 6


#: Outputs where at most 1% of the elements are more than 4 ULP off: bins 0 to 3 (DuckDB
#: lists count from 1) are the elements within 4 ULP; a NaN mismatch is in no bin.
NEAR_QUERY = """
    SELECT "case", data_set, name
    FROM '{report}'
    WHERE ulp_histogram IS NOT NULL
      AND n_elements - list_sum(ulp_histogram[1:4]) <= 0.01 * n_elements
"""


def test_one_duckdb_query_finds_the_outputs_at_most_1_percent_beyond_4_ulp(
    tmp_path: Path,
) -> None:
    import pandas as pd
    from onnx import TensorProto, helper
    from store_helpers import one_data_set_case

    from onnx_arrow.corpus import write_store

    duckdb = pytest.importorskip("duckdb")
    x = np.arange(1, 1001, dtype=np.float32)
    info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1000])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1000])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [info], [out])
    )
    path = tmp_path / "store.parquet"
    write_store([one_data_set_case("node/test_near", model, x, x)], path)

    def moved(how_many: int, ulps: int, nan: int = 0) -> cmp.Backend:
        def backend(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
            y = np.array(inputs["x"], copy=True)
            y.view(np.uint32)[:how_many] += np.uint32(ulps)
            y[how_many : how_many + nan] = np.nan
            return [y]

        return backend

    # (elements moved, by how many ULP, NaNs): more than 4 ULP off, in all
    runs = {
        "exact": (0, 0, 0),  # 0
        "all within 4": (1000, 4, 0),  # 0
        "ten at 5": (10, 5, 0),  # 10: 1%
        "eleven at 5": (11, 5, 0),  # 11
        "nine at 9 and a NaN": (9, 9, 1),  # 10
        "nine at 9 and two NaNs": (9, 9, 2),  # 11
    }
    frames = []
    for label, (n, ulps, nan) in runs.items():
        df = cmp.compare(path, moved(n, ulps, nan)).to_pandas()
        frames.append(df.assign(name=label))
    report = tmp_path / "report.parquet"
    cmp.write_report(pd.concat(frames, ignore_index=True), report)
    found = duckdb.sql(NEAR_QUERY.format(report=report)).fetchall()
    assert sorted(name for _, _, name in found) == sorted(
        ["exact", "all within 4", "ten at 5", "nine at 9 and a NaN"]
    )


@pytest.mark.parametrize("n", [1, 2, 3, 99, 100, 101, 199, 200, 1000, 1001, 4097])
def test_median_and_p99_are_numpys_for_every_size(n: int) -> None:
    rng = np.random.default_rng(n)
    e = rng.normal(size=n)
    a = e + rng.normal(size=n) * rng.choice([0.0, 1e-9, 1.0, np.inf], size=n)
    stats = compare_value(e, a, 1e-3, 1e-7).spread.statistics()
    with np.errstate(invalid="ignore"):
        errors = np.where(a == e, 0.0, np.abs(a - e))
    assert stats["median_abs_error"] == np.median(errors)
    assert stats["p99_abs_error"] == np.percentile(errors, 99, method="inverted_cdf")
    assert stats["mean_abs_error"] == np.mean(errors)

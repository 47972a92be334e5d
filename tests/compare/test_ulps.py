"""ULPs in the compare report: the largest ULP distance of every floating dtype against a
brute-force count, ULP budgets as the verdict (bit-exactness at 0, the floor of zero),
budgets per pattern and the command line's options."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest
from compare_helpers import cli, stated_store
from onnx import ModelProto

from onnx_arrow import compare as cmp
from onnx_arrow.compare.report import read_report
from onnx_arrow.compare.similarity import compare_value
from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.ulp import FLOATING
from onnx_arrow.corpus import Store


def _core_ulp_tests() -> ModuleType:
    """The brute-force helpers of ``diff``'s ULP tests (tests/core/test_ulp.py)."""
    path = Path(__file__).parents[1] / "core" / "test_ulp.py"
    spec = importlib.util.spec_from_file_location("_core_test_ulp", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ULP_TESTS = _core_ulp_tests()


def _steps(x: float, y: float, numpy: type[np.floating[Any]]) -> int:
    """How many representable values of ``numpy`` lie in (min, max]: one nextafter at a
    time (-0.0 and +0.0 one value)."""
    lo, hi = numpy(min(x, y)), numpy(max(x, y))
    count = 0
    while lo < hi:
        lo = np.nextafter(lo, hi)
        count += 1
    return count


def _pairs(name: str, rng: np.random.Generator) -> tuple[np.ndarray[Any, Any], ...]:
    """Hand-built expected and actual of dtype ``name`` (a few ULPs apart, zeros of both
    signs, a NaN on both sides) and the brute-force distance of each element."""
    row = dtype_of(name)
    if name in ULP_TESTS.SMALL:
        values = ULP_TESTS._all_values(name)
        width = np.uint8 if row.numpy.itemsize == 1 else np.uint16
        numbers = [c for c in range(1 << row.bits) if not math.isnan(values[c])]
        nans = [c for c in range(1 << row.bits) if math.isnan(values[c])]
        e_codes = list(rng.choice(numbers, 40)) + nans[:1]
        a_codes = list(rng.choice(numbers, 40)) + nans[:1]
        e = np.array(e_codes, width).view(row.numpy)
        a = np.array(a_codes, width).view(row.numpy)
        counts = [
            0 if math.isnan(values[x]) else ULP_TESTS._brute_force(values, values[x], values[y])
            for x, y in zip(e_codes, a_codes, strict=True)
        ]
        return e, a, np.array(counts)
    part = np.float32 if name in ("FLOAT", "COMPLEX64") else np.float64

    def side() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], list[int]]:
        e = np.concatenate([rng.normal(size=20), [0.0, -0.0, 1e-30, np.nan]]).astype(part)
        moved = e.copy()
        for k, n in enumerate(rng.integers(0, 40, size=20)):
            for _ in range(int(n)):
                moved[k] = np.nextafter(moved[k], part(np.inf))
        moved[21] = part(1e-44 if part is np.float32 else 1e-320)  # -0.0 to a subnormal
        counts = [0 if math.isnan(x) else _steps(x, y, part) for x, y in zip(e, moved, strict=True)]
        return e, moved, counts

    if name in ("FLOAT", "DOUBLE"):
        e, a, counts = side()
        return e, a, np.array(counts)
    er, ar, cr = side()
    ei, ai, ci = side()
    ei, ai, ci = ei[::-1].copy(), ai[::-1].copy(), ci[::-1]
    complex_ = row.numpy
    return (
        (er + 1j * ei).astype(complex_),
        (ar + 1j * ai).astype(complex_),
        np.maximum(cr, ci),
    )


@pytest.mark.parametrize("name", FLOATING)
def test_max_ulp_is_the_brute_force_count_for_every_floating_dtype(name: str) -> None:
    e, a, counts = _pairs(name, np.random.default_rng(len(name)))
    assert e.dtype == a.dtype == dtype_of(name).numpy
    diff = compare_value(e, a, 1e-3, 1e-7)
    assert diff.max_ulp == int(counts.max()) > 0, name
    worst = int(np.argmax(counts))
    assert diff.max_ulp_index == f"[{worst}]"
    assert not diff.by_ulp
    # the budget of the largest passes, one fewer fails (elements more than it counted)
    assert compare_value(e, a, 0.0, 0.0, max_ulp=int(counts.max())).status == "match"
    fewer = compare_value(e, a, 0.0, 0.0, max_ulp=int(counts.max()) - 1)
    assert fewer.by_ulp
    assert fewer.status == "mismatch"
    assert fewer.beyond == int(np.count_nonzero(counts > counts.max() - 1))
    assert fewer.worst is not None
    assert fewer.worst[1] == f"[{worst}]"


def test_max_ulp_zero_is_bit_exactness() -> None:
    e = np.array([[1.0, 0.0], [np.nan, -2.5]], np.float32)
    same = e.copy()
    same[0, 1] = -0.0  # -0.0 and +0.0 are one value; NaN equals NaN
    diff = compare_value(e, same, 0.0, 0.0, max_ulp=0)
    assert (diff.status, diff.max_ulp, diff.beyond) == ("match", 0, 0)
    off = e.copy()
    off[1, 1] = np.nextafter(off[1, 1], np.float32(0))
    diff = compare_value(e, off, 1e-3, 1e-7, max_ulp=0)
    assert (diff.status, diff.max_ulp, diff.max_ulp_index) == ("mismatch", 1, "[1, 1]")
    assert "1 of 4 elements more than 0 ULPs off" in diff.details[0]
    assert compare_value(e, off, 1e-3, 1e-7).status == "match"  # the tolerance hides it
    nan = e.copy()
    nan[0, 0] = np.nan
    assert compare_value(e, nan, 0.0, 0.0, max_ulp=1000).status == "nan_mismatch"


def test_the_floor_of_zero() -> None:
    e = np.array([0.0, -0.0, 1.0], np.float32)
    a = np.array([1e-30, -1e-30, 1.0], np.float32)
    assert compare_value(e, a, 0.0, 0.0).max_ulp > 10**8  # billions of ULPs from 0
    assert compare_value(e, a, 0.0, 0.0, max_ulp=4).status == "mismatch"
    assert compare_value(e, a, 0.0, 0.0, max_ulp=4, ulp_floor=2e-30).status == "match"
    assert compare_value(e, a, 0.0, 0.0, max_ulp=4, ulp_floor=1e-31).status == "mismatch"
    # the floor is of zero only: 1.0 against 1.0 + 1e-30 is not helped by it
    far = np.array([0.0, 0.0, 1.5], np.float32)
    assert compare_value(e, far, 0.0, 0.0, max_ulp=4, ulp_floor=2e-30).status == "mismatch"


def test_a_scalar_and_an_empty_tensor() -> None:
    one = np.float32(1.0)
    up = np.nextafter(one, np.float32(2))
    diff = compare_value(np.array(one), np.array(up), 0.0, 0.0, max_ulp=0)
    assert (diff.status, diff.max_ulp, diff.max_ulp_index, diff.beyond) == ("mismatch", 1, "[]", 1)
    empty = np.zeros((0, 3), np.float16)
    diff = compare_value(empty, empty, 0.0, 0.0, max_ulp=0)
    assert (diff.status, diff.max_ulp, diff.max_ulp_index) == ("match", 0, None)


def test_integers_and_strings_have_no_ulps() -> None:
    diff = compare_value(np.arange(3), np.arange(3), 0.0, 0.0, max_ulp=0)
    assert (diff.status, diff.max_ulp, diff.by_ulp) == ("match", None, False)


def test_max_ulp_zero_over_a_store_agrees_with_the_max_ulp_column(store: Store) -> None:
    df = cmp.compare(store, max_ulp=0).to_pandas()
    floats = df[df["max_ulp"].notna()]
    assert len(floats) >= 4
    assert (floats["rule"] == "ulp").all()
    assert (floats["ulp_budget"] == 0).all()
    assert (floats["tolerance"] == "default").all()
    exact = floats["max_ulp"] == 0
    assert (floats.loc[exact, "status"] == "match").all()
    assert (floats.loc[~exact, "status"] != "match").all()
    others = df[df["max_ulp"].isna() & df["status"].isin(["match", "mismatch"])]
    assert (others["rule"] == "tolerance").all()
    # without a budget, the same ULPs are counted and the tolerances judge
    plain = cmp.compare(store).to_pandas()
    assert plain["max_ulp"].equals(df["max_ulp"])
    assert (plain.loc[plain["max_ulp"].notna(), "rule"] == "tolerance").all()
    assert plain["ulp_budget"].isna().all()


def _next_up(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """A backend that gives the float after input ``x``: one ULP off."""
    x = np.asarray(inputs["x"])
    return [np.nextafter(x, np.inf).astype(x.dtype)]


def test_a_budget_per_pattern(tmp_path: Path) -> None:
    path = stated_store(tmp_path, None)
    one_ulp = _next_up
    df = cmp.compare(path, one_ulp, rtol=0.0, atol=0.0).to_pandas()
    assert (df["status"].iloc[0], df["rule"].iloc[0], df["max_ulp"].iloc[0]) == (
        "mismatch",
        "tolerance",
        1,
    )
    text = tmp_path / "budgets.txt"
    text.write_text("# one ULP for the tiny case\ntolerance tiny$ ulp=1\n")
    given = tmp_path / "budgets.json"
    given.write_text(json.dumps({"tolerance": {"tiny$": {"ulp": 1}, "other": [0.1, 0.0]}}))
    for file in (text, given):
        patterns = cmp.Expectations.read(file)
        assert list(patterns.ulp) == [("tiny$", 1)]
        row = cmp.compare(path, one_ulp, rtol=0.0, atol=0.0, patterns=patterns).to_pandas().iloc[0]
        assert (row.status, row.rule, row.tolerance, row.ulp_budget) == (
            "match",
            "ulp",
            "pattern 'tiny$'",
            1,
        )
    assert cmp.Expectations.read(given).tolerance == [("other", 0.1, 0.0)]
    # a pattern's budget wins over --max-ulp; a pattern's tolerance over --max-ulp too
    row = (
        cmp.compare(path, one_ulp, max_ulp=0, patterns=cmp.Expectations.read(text))
        .to_pandas()
        .iloc[0]
    )
    assert (row.status, row.rule) == ("match", "ulp")
    row = cmp.compare(path, one_ulp, max_ulp=0, tolerance={"tiny": (1e-3, 0.0)}).to_pandas().iloc[0]
    assert (row.status, row.rule, row.tolerance) == ("match", "tolerance", "pattern 'tiny'")
    assert cmp.compare(path, one_ulp, max_ulp=0).to_pandas().iloc[0].status == "mismatch"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tolerance": {"tiny": {"ulp": -1}}}))
    with pytest.raises(cmp.CompareError, match="ULP budget"):
        cmp.Expectations.read(bad)
    with pytest.raises(cmp.CompareError, match="max_ulp"):
        cmp.compare(path, max_ulp=-1)
    with pytest.raises(cmp.CompareError, match="ulp_floor"):
        cmp.compare(path, max_ulp=0, ulp_floor=float("nan"))


def test_the_command_line_options(tmp_path: Path) -> None:
    path = stated_store(tmp_path, None)
    out = tmp_path / "report.parquet"
    code, _, _ = cli(
        "compare", str(path), "--max-ulp", "0", "--ulp-floor", "1e-30", "--out", str(out)
    )
    assert code == 0
    df = read_report(out).to_pandas()
    assert df.attrs["onnx_arrow"]["max_ulp"] == 0
    assert df.attrs["onnx_arrow"]["ulp_floor"] == 1e-30
    row = df.iloc[0]
    assert (row.rule, row.max_ulp, row.ulp_budget, row.ulp_floor) == ("ulp", 0, 0, 1e-30)
    code, _, err = cli("compare", str(path), "--max-ulp", "-1")
    assert code == 2
    assert "-1 is not 0 or more" in err  # as every whole-number option says it
    code, out_text, _ = cli("compare", "--help")
    assert "--max-ulp" in out_text
    assert "--ulp-floor" in out_text


def test_a_report_without_the_ulp_columns_still_reads(tmp_path: Path) -> None:
    path = stated_store(tmp_path, None)
    df = cmp.compare(path).to_pandas()
    old = tmp_path / "old.parquet"
    pd.DataFrame(
        df.drop(columns=["max_ulp", "max_ulp_index", "rule", "ulp_budget", "ulp_floor"])
    ).to_parquet(old)
    back = read_report(old).to_pandas()
    assert list(back.columns) == list(cmp.COMPARE_COLUMNS)
    assert back["max_ulp"].isna().all()

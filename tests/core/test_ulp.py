"""ULP distances against a brute-force count of the representable values between two numbers."""

from __future__ import annotations

import dataclasses
import math
import struct

import ml_dtypes
import numpy as np
import pytest

from onnx_arrow.core import model
from onnx_arrow.core.dtypes import DTYPES, UlpKind, dtype_of
from onnx_arrow.core.ulp import FLOATING, ulp_distance
from onnx_arrow.errors import UnsupportedTypeError

SMALL = [n for n in FLOATING if n not in ("FLOAT", "DOUBLE", "COMPLEX64", "COMPLEX128")]


def test_the_floating_dtypes_are_the_fourteen() -> None:
    assert set(FLOATING) == {
        "FLOAT", "DOUBLE", "FLOAT16", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
        "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0", "FLOAT4E2M1", "FLOAT6E2M3",
        "FLOAT6E3M2", "COMPLEX64", "COMPLEX128",
    }  # fmt: skip
    assert not dtype_of("INT64").is_floating
    assert tuple(row.name for row in DTYPES.values() if row.is_floating) == FLOATING
    with pytest.raises(UnsupportedTypeError, match="INT64 is not a floating dtype"):
        ulp_distance(np.zeros(1, np.int64), np.zeros(1, np.int64), dtype_of("INT64"))


def _all_values(name: str) -> list[float]:
    """Every value of a small dtype, decoded one code at a time (NaN included)."""
    row = dtype_of(name)
    width = np.uint8 if row.numpy.itemsize == 1 else np.uint16
    out = []
    for code in range(1 << row.bits):
        with np.errstate(invalid="ignore"):
            out.append(float(np.array([code], width).view(row.numpy).astype(np.float64)[0]))
    return out


def _brute_force(values: list[float], x: float, y: float) -> int:
    """How many distinct values lie in (min, max]: a loop over every representable value."""
    lo, hi = min(x, y), max(x, y)
    return len({v for v in values if not math.isnan(v) and lo < v <= hi})


@pytest.mark.parametrize("name", SMALL)
def test_small_dtypes_match_the_brute_force_count(name: str) -> None:
    row = dtype_of(name)
    values = _all_values(name)
    codes = list(range(1 << row.bits))
    rng = np.random.default_rng(len(name))
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, len(codes), size=(300, 2))]
    numbers = [c for c in codes if not math.isnan(values[c])]
    ordered = sorted(numbers, key=lambda c: values[c])
    pairs += [(ordered[0], ordered[-1]), (ordered[-1], ordered[0])]  # the ends of the scale
    pairs += [(a, b) for a in numbers if values[a] == 0 for b in numbers if values[b] == 0]
    width = np.uint8 if row.numpy.itemsize == 1 else np.uint16
    a = np.array([p[0] for p in pairs], width).view(row.numpy)
    b = np.array([p[1] for p in pairs], width).view(row.numpy)
    got = ulp_distance(a, b, row)
    for k, (x, y) in enumerate(pairs):
        vx, vy = values[x], values[y]
        if math.isnan(vx) or math.isnan(vy):
            assert got.distance[k] == 0
            assert got.nan_mismatch[k] == (math.isnan(vx) != math.isnan(vy)), (x, y)
        else:
            assert got.distance[k] == _brute_force(values, vx, vy), (name, x, y, vx, vy)
            assert not got.nan_mismatch[k]


def test_small_dtypes_span_every_value_once() -> None:
    """From the lowest value to the highest is one step fewer than the distinct values."""
    for name in SMALL:
        row = dtype_of(name)
        values = [v for v in _all_values(name) if not math.isnan(v)]
        lo, hi = min(values), max(values)
        pair = np.array([lo, hi], np.float64).astype(row.numpy)
        got = ulp_distance(pair[:1], pair[1:], row)
        assert got.max == len(set(values)) - 1, name


@pytest.mark.parametrize(("name", "numpy"), [("FLOAT", np.float32), ("DOUBLE", np.float64)])
def test_ieee_distances_count_the_steps_between(name: str, numpy: type[np.floating]) -> None:
    row = dtype_of(name)
    rng = np.random.default_rng(7)
    starts = [numpy(0.0), numpy(-0.0), numpy(-1e-40 if name == "FLOAT" else -1e-310)]
    starts += [numpy(x) for x in rng.standard_normal(20) * 10.0 ** rng.integers(-30, 30, 20)]
    a, b, want = [], [], []
    for start in starts:
        steps = int(rng.integers(0, 40))
        x = start
        for _ in range(steps):  # the brute force: one representable value at a time
            x = np.nextafter(x, numpy(np.inf))
        a.append(start)
        b.append(x)
        want.append(steps)
    got = ulp_distance(np.array(a, numpy), np.array(b, numpy), row)
    assert got.distance.tolist() == want


def _ordered(x: float, name: str) -> int:
    """A Python int, monotonic in the value: no fixed width, so nothing can overflow."""
    fmt, unsigned, sign = ("<f", "<I", 1 << 31) if name == "FLOAT" else ("<d", "<Q", 1 << 63)
    code = struct.unpack(unsigned, struct.pack(fmt, x))[0]
    return -(code - sign) if code >= sign else code


@pytest.mark.parametrize(("name", "numpy"), [("FLOAT", np.float32), ("DOUBLE", np.float64)])
def test_ieee_extremes_do_not_overflow(name: str, numpy: type[np.floating]) -> None:
    info = np.finfo(numpy)
    values = [-np.inf, -info.max, -1.0, -info.smallest_subnormal, -0.0, 0.0]
    values += [info.smallest_subnormal, 1.0, info.max, np.inf]
    pairs = [(x, y) for x in values for y in values]
    a = np.array([p[0] for p in pairs], numpy)
    b = np.array([p[1] for p in pairs], numpy)
    got = ulp_distance(a, b, dtype_of(name))
    for k, (x, y) in enumerate(pairs):
        assert int(got.distance[k]) == abs(_ordered(x, name) - _ordered(y, name)), (x, y)
    top = ulp_distance(np.array([-np.inf], numpy), np.array([np.inf], numpy), dtype_of(name))
    assert top.max == 2 * (0x7F800000 if name == "FLOAT" else 0x7FF0000000000000)


def test_nan_equals_nan_whatever_its_payload() -> None:
    quiet = np.array([0x7FC00000], np.uint32).view(np.float32)
    payload = np.array([0xFFC00123], np.uint32).view(np.float32)
    one = np.array([1.0], np.float32)
    a, b = np.concatenate([quiet, quiet]), np.concatenate([payload, one])
    got = ulp_distance(a, b, dtype_of("FLOAT"))
    assert got.distance.tolist() == [0, 0]
    assert got.nan_mismatch.tolist() == [False, True]


def test_complex_takes_the_larger_part() -> None:
    one_up = np.nextafter(np.float32(1), np.float32(2))
    a = np.array([1 + 1j, 1 + 1j], np.complex64)
    b = np.array([complex(one_up, 1), complex(1, np.nan)], np.complex64)
    got = ulp_distance(a, b, dtype_of("COMPLEX64"))
    assert got.distance.tolist() == [1, 0]
    assert got.nan_mismatch.tolist() == [False, True]


def test_fnuz_has_one_zero_and_e8m0_no_sign() -> None:
    fnuz = dtype_of("FLOAT8E4M3FNUZ")
    zero = np.array([0.0], ml_dtypes.float8_e4m3fnuz)
    tiny = np.array([2.0**-10], ml_dtypes.float8_e4m3fnuz)  # its smallest subnormal
    assert ulp_distance(zero, tiny, fnuz).max == 1
    assert ulp_distance(zero, -tiny, fnuz).max == 1
    e8m0 = dtype_of("FLOAT8E8M0")
    assert (
        ulp_distance(
            np.array([1.0], ml_dtypes.float8_e8m0fnu),
            np.array([4.0], ml_dtypes.float8_e8m0fnu),
            e8m0,
        ).max
        == 2
    )


@pytest.mark.parametrize("row", list(DTYPES.values()), ids=lambda r: r.name)
def test_is_floating_is_the_one_fact(row: object) -> None:
    """The dtype table's row answers, from its ULP kind, as FLOATING lists, complex included."""
    assert (row.name in FLOATING) == (row.name in model.FLOATING) == row.is_floating  # type: ignore[attr-defined]
    assert row.is_floating == (row.ulp_kind is not UlpKind.NONE)  # type: ignore[attr-defined]


def test_ulp_distance_follows_the_ulp_kind_not_the_name() -> None:
    """A row that says FLOAT16 has no ULPs is refused, whatever its name."""
    none = dataclasses.replace(dtype_of("FLOAT16"), ulp_kind=UlpKind.NONE)
    with pytest.raises(UnsupportedTypeError, match="FLOAT16 is not a floating dtype"):
        ulp_distance(np.zeros(1, np.float16), np.zeros(1, np.float16), none)


def test_the_small_dtypes_are_the_rank_table_ones() -> None:
    assert [row.name for row in DTYPES.values() if row.ulp_kind is UlpKind.RANK_TABLE] == SMALL

"""How one actual output value compares with its expected value: tolerances, element by
element, NaNs, dtypes, shapes, container structure, the worst element and how the errors
are spread (:mod:`~onnx_arrow.compare.distribution`).

The rules (onnx's backend test runner's, stricter where it is loose) are stated once,
for users, in the docstring of :mod:`onnx_arrow.compare`; this module implements them.

Floats of one floating dtype (all 14, complex part by part) also have their ULP distance
counted on the dtype's own codes (:func:`~onnx_arrow.core.ulp.ulp_distance`, as ``diff``
counts it): the largest and where it is.  Given a ULP budget (``max_ulp``), ULPs are the
verdict instead of ``rtol`` / ``atol``: an element passes within that many ULPs, or where
the expected value is 0 and ``|actual| <= ulp_floor``; two NaNs are equal, a NaN against a
number is a NaN mismatch.  A budget of 0 is bit-exactness (-0.0 and +0.0 are 0 apart).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from onnx_arrow.compare.distribution import Distribution
from onnx_arrow.compare.statuses import RANK
from onnx_arrow.core.model import (
    DECODED_FLOATS,
    ArrowKind,
    UlpDistance,
    dtype_of_numpy,
    ulp_distance,
)
from onnx_arrow.errors import OnnxArrowError
from onnx_arrow.text import dtype_name

__all__ = ["Diff", "compare_value", "detail_text"]


#: onnx's runner compares bfloat16 with at least this rtol (two bfloat16 ULPs).
_BFLOAT16_RTOL: Final = 2.0**-6


_DETAILS_KEPT: Final = 3


@dataclass
class Diff:
    """The comparison of one output value, accumulated over its tensors."""

    status: str = "match"
    dtype_expected: str | None = None
    dtype_actual: str | None = None
    shape_expected: tuple[int, ...] | None = None
    shape_actual: tuple[int, ...] | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    beyond: int = 0
    nan_expected: int | None = None
    nan_actual: int | None = None
    details: list[str] = field(default_factory=list)
    #: The rtol the floats were compared with (raised for bfloat16), None if none were.
    rtol: float | None = None
    #: The worst element so far: (how far beyond tolerance, where, expected, actual).
    worst: tuple[float, str, str, str] | None = None
    #: The largest ULP distance of the floats (None if none were of one floating dtype).
    max_ulp: int | None = None
    #: Where the element of the largest ULP distance is.
    max_ulp_index: str | None = None
    #: Whether the ULP budget judged the floats (else the tolerances did).
    by_ulp: bool = False
    #: How the errors are spread over the elements.
    spread: Distribution = field(default_factory=Distribution)

    def note_ulp(self, distance: np.ndarray[Any, Any], shape: tuple[int, ...], where: str) -> None:
        """Keep the largest of the ULP ``distance`` (uint64) and its place."""
        if distance.size == 0:
            largest, at = 0, None
        else:
            flat = int(np.argmax(distance))
            largest = int(distance.flat[flat])
            index = np.unravel_index(flat, shape) if shape else ()
            at = f"{where}[{', '.join(map(str, index))}]"
        if self.max_ulp is None or largest > self.max_ulp:
            self.max_ulp, self.max_ulp_index = largest, at

    def note_worst(
        self, excess: np.ndarray[Any, Any], e: np.ndarray[Any, Any], a: np.ndarray[Any, Any],
        where: str,
    ) -> None:  # fmt: skip
        """Keep the element of largest ``excess`` (> 0: beyond tolerance) if it is the worst."""
        if excess.size == 0:
            return
        flat = int(np.argmax(excess))
        amount = float(excess.flat[flat])
        if not amount > 0 or (self.worst is not None and amount <= self.worst[0]):
            return
        index = np.unravel_index(flat, e.shape) if e.ndim else ()
        at = f"{where}[{', '.join(map(str, index))}]"
        self.worst = (amount, at, _element_text(e[index]), _element_text(a[index]))

    def worse(self, status: str, detail: str | None = None) -> None:
        if RANK[status] > RANK[self.status]:
            self.status = status
        if detail is not None:
            self.details.append(detail)

    def add_errors(
        self, delta: np.ndarray[Any, Any], expected: np.ndarray[Any, Any], beyond: int
    ) -> None:
        """The errors ``delta`` (``|a - e|``) of elements whose expected values are
        ``expected``, ``beyond`` of them beyond the rule."""
        absolute, relative = _errors(delta, expected)
        self.spread.add_errors(absolute, relative)
        max_abs = float(np.max(absolute)) if absolute.size else 0.0
        max_rel = float(np.max(relative)) if relative.size else 0.0
        self.max_abs = max_abs if self.max_abs is None else max(self.max_abs, max_abs)
        self.max_rel = max_rel if self.max_rel is None else max(self.max_rel, max_rel)
        self.beyond += beyond

    def add_nans(self, expected: int, actual: int) -> None:
        self.nan_expected = (self.nan_expected or 0) + expected
        self.nan_actual = (self.nan_actual or 0) + actual


def _element_text(x: Any) -> str:
    """One element, exactly and briefly: numpy's shortest round-trip form for its dtype."""
    if isinstance(x, bytes):
        return repr(x)
    if isinstance(x, str):
        return repr(x)
    return str(x)


@dataclass(frozen=True)
class _Rule:
    rtol: float
    atol: float
    max_ulp: int | None
    ulp_floor: float


def compare_value(
    expected: Any,
    actual: Any,
    rtol: float,
    atol: float,
    *,
    max_ulp: int | None = None,
    ulp_floor: float = 0.0,
) -> Diff:
    """How ``actual`` compares with ``expected`` (tensors, sequences, maps, optionals, as a
    backend gives them), elements beyond ``atol + rtol * |expected|`` counted, or, given
    ``max_ulp``, those more than ``max_ulp`` ULPs off (and not within ``ulp_floor`` of an
    expected 0)."""
    diff = Diff()
    rule = _Rule(rtol, atol, max_ulp, ulp_floor)
    with np.errstate(all="ignore"):  # inf - inf, overflow: handled where they matter
        _walk(expected, actual, rule, diff, "", top=True)
    return diff


def detail_text(details: list[str]) -> str | None:
    """The first few places where a value differs, and how many more there are."""
    if not details:
        return None
    more = len(details) - _DETAILS_KEPT
    return "; ".join(details[:_DETAILS_KEPT]) + (f"; ... {more} more" if more > 0 else "")


def _kind_name(value: Any) -> str:
    if value is None:
        return "an absent optional"
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, list | tuple):
        return "a sequence"
    return f"a {type(value).__name__}"


def _walk(expected: Any, actual: Any, rule: _Rule, diff: Diff, where: str,
          *, top: bool = False) -> None:  # fmt: skip
    at = where or "the value"
    if expected is None or actual is None:
        if (expected is None) != (actual is None):
            diff.worse(
                "shape_mismatch", f"{at}: expected {_kind_name(expected)}, got {_kind_name(actual)}"
            )
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            diff.worse("shape_mismatch", f"{at}: expected a map, got {_kind_name(actual)}")
            return
        e_keys = {_key(k): k for k in expected}
        a_keys = {_key(k): k for k in actual}
        if e_keys.keys() != a_keys.keys():
            missing = sorted(map(repr, e_keys.keys() - a_keys.keys()))[:_DETAILS_KEPT]
            extra = sorted(map(repr, a_keys.keys() - e_keys.keys()))[:_DETAILS_KEPT]
            diff.worse("shape_mismatch", f"{at}: map keys missing {missing}, extra {extra}")
        for k in sorted(e_keys.keys() & a_keys.keys(), key=repr):
            _walk(expected[e_keys[k]], actual[a_keys[k]], rule, diff, f"{where}[{k!r}]")
        return
    if isinstance(expected, list | tuple):
        if not isinstance(actual, list | tuple):
            diff.worse("shape_mismatch", f"{at}: expected a sequence, got {_kind_name(actual)}")
            return
        if len(expected) != len(actual):
            diff.worse(
                "shape_mismatch", f"{at}: expected {len(expected)} elements, got {len(actual)}"
            )
            return
        for j, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _walk(e, a, rule, diff, f"{where}[{j}]")
        return
    if isinstance(actual, dict | list | tuple):
        diff.worse("shape_mismatch", f"{at}: expected a tensor, got {_kind_name(actual)}")
        return
    _compare_tensors(np.asarray(expected), np.asarray(actual), rule, diff, at, top)


def _key(key: Any) -> Any:
    """A map key comparable across backends: numpy scalars as Python, str as UTF-8."""
    if isinstance(key, np.generic):
        key = key.item()
    return key.encode() if isinstance(key, str) else key


def _arrow_kind(dtype: np.dtype[Any]) -> ArrowKind | None:
    """How onnx-arrow holds a dtype's elements; None for a dtype ONNX does not have."""
    try:
        return dtype_of_numpy(dtype).arrow_kind
    except OnnxArrowError:
        return None


def _compare_tensors(
    e: np.ndarray[Any, Any],
    a: np.ndarray[Any, Any],
    rule: _Rule,
    diff: Diff,
    at: str,
    top: bool,
) -> None:
    rtol, atol = rule.rtol, rule.atol
    e_name, a_name = dtype_name(e.dtype), dtype_name(a.dtype)
    if diff.dtype_expected is None:
        diff.dtype_expected, diff.dtype_actual = e_name, a_name
    if top:
        diff.shape_expected, diff.shape_actual = tuple(e.shape), tuple(a.shape)
    if e.shape != a.shape:
        diff.worse("shape_mismatch", f"{at}: expected shape {list(e.shape)}, got {list(a.shape)}")
        return
    if e_name != a_name:
        diff.worse("dtype_mismatch", f"{at}: expected {e_name}, got {a_name}")
    e_text, a_text = e.dtype.kind in "OSU", a.dtype.kind in "OSU"
    place = "" if at == "the value" else at  # where the tensor sits in a container
    if e_text or a_text:
        if e_text and a_text:
            differs = np.fromiter(
                (_utf8(x) != _utf8(y) for x, y in zip(e.flat, a.flat, strict=True)),
                dtype=bool,
                count=e.size,
            ).reshape(e.shape)
            unequal = int(np.count_nonzero(differs))
            diff.beyond += unequal
            diff.spread.add_elements(e.size)
            diff.note_worst(differs.astype(np.float64), e, a, place)  # the first that differs
            if unequal:
                diff.worse("mismatch", f"{at}: {unequal} of {e.size} strings differ")
        return
    if _exact(e.dtype) and _exact(a.dtype):
        e64, a64 = _as_number(e), _as_number(a)
        unequal_mask = _as_exact(e) != _as_exact(a)
        delta = np.abs(a64 - e64)
        unequal = int(np.count_nonzero(unequal_mask))
        diff.spread.add_elements(e.size)
        diff.add_errors(delta, e64, unequal)
        # the largest difference (at least 1: integers 2**53 apart may round to equal)
        diff.note_worst(np.where(unequal_mask, np.maximum(delta, 1.0), 0.0), e, a, place)
        if unequal:
            diff.worse("mismatch", f"{at}: {unequal} of {e.size} elements differ")
        return
    e64, a64 = _as_number(e), _as_number(a)
    if _arrow_kind(e.dtype) is ArrowKind.BFLOAT16:
        rtol = max(rtol, _BFLOAT16_RTOL)
    diff.rtol = rtol if diff.rtol is None else max(diff.rtol, rtol)
    e_nan, a_nan = np.isnan(e64), np.isnan(a64)
    diff.add_nans(int(np.count_nonzero(e_nan)), int(np.count_nonzero(a_nan)))
    close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    counted = ~(e_nan | a_nan)
    delta = np.where(counted & (a64 != e64), np.abs(a64 - e64), 0.0)
    # worst: a NaN on one side only, else the furthest beyond atol + rtol * |e| (inf - inf
    # and inf against a finite value are infinitely far)
    excess = np.where(close, 0.0, delta - (atol + rtol * np.abs(np.where(counted, e64, 0.0))))
    excess = np.where(~close & (np.isnan(excess) | (excess <= 0)), np.inf, excess)
    counted_ulps = _ulps(e, a)
    if counted_ulps is not None:
        ulps = counted_ulps.distance
        diff.note_ulp(ulps, tuple(e.shape), place)
        if rule.max_ulp is not None:  # the ULP budget is the verdict
            diff.by_ulp = True
            floor = (e64 == 0) & (np.abs(a64) <= rule.ulp_floor)
            close = ((ulps <= rule.max_ulp) | floor) & ~counted_ulps.nan_mismatch
            excess = np.where(close, 0.0, ulps.astype(np.float64) - rule.max_ulp)
    beyond = int(np.count_nonzero(~close))
    moved = e_nan != a_nan
    diff.spread.add_elements(e.size)
    diff.add_errors(delta[counted], e64[counted], beyond)
    infinite = counted & (np.isinf(e64) | np.isinf(a64)) & (a64 != e64)
    nan_moved = moved if counted_ulps is None else counted_ulps.nan_mismatch  # complex: by part
    diff.spread.add_positions(int(np.count_nonzero(nan_moved)), int(np.count_nonzero(infinite)))
    if counted_ulps is not None:
        diff.spread.add_ulps(counted_ulps.distance, ~counted_ulps.nan_mismatch)
    diff.note_worst(np.where(moved, np.inf, 0.0) if moved.any() else excess, e, a, place)
    if np.any(e_nan != a_nan):
        moved = int(np.count_nonzero(e_nan != a_nan))
        diff.worse("nan_mismatch", f"{at}: NaN in {moved} places where the other has none")
    elif beyond:
        what = f"more than {rule.max_ulp} ULPs off" if diff.by_ulp else "beyond tolerance"
        diff.worse("mismatch", f"{at}: {beyond} of {e.size} elements {what}")


def _ulps(e: np.ndarray[Any, Any], a: np.ndarray[Any, Any]) -> UlpDistance | None:
    """The ULP distance of each element, if both are of one floating dtype."""
    if e.dtype != a.dtype:
        return None
    try:
        row = dtype_of_numpy(e.dtype)
    except OnnxArrowError:
        return None
    if not row.is_floating:
        return None
    counted = ulp_distance(np.ascontiguousarray(e), np.ascontiguousarray(a), row)
    # ascontiguousarray gives a scalar one dimension: back to the tensor's shape
    return UlpDistance(counted.distance.reshape(e.shape), counted.nan_mismatch.reshape(e.shape))


def _utf8(x: Any) -> Any:
    return x.encode("utf-8", "surrogateescape") if isinstance(x, str) else x


def _exact(dtype: np.dtype[Any]) -> bool:
    """Integers and booleans (ml_dtypes int4 / int2 too) are compared exactly."""
    return dtype.kind in "biu" or _arrow_kind(dtype) is ArrowKind.SUBBYTE_INT


def _as_exact(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return x.astype(np.int8 if x.dtype.kind == "V" else x.dtype)


def _as_number(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """float64 (complex128 for complex); ml_dtypes floats through float32, which holds them."""
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if _arrow_kind(x.dtype) in DECODED_FLOATS:
        return x.astype(np.float32).astype(np.float64)
    return x.astype(np.float64)


def _errors(
    delta: np.ndarray[Any, Any], expected: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``|a - e|`` and ``|a - e| / |e|`` (inf where e is 0 and a is not, and where ``|a -
    e|`` is: inf against -inf), float64."""
    delta = np.asarray(delta, dtype=np.float64)
    scale = np.abs(expected)
    rel = np.full(delta.shape, np.inf)
    np.divide(delta, scale, out=rel, where=(scale != 0) & np.isfinite(delta))
    rel[delta == 0] = 0.0
    return delta, rel

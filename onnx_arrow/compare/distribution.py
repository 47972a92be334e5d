"""How an output's errors are spread over its elements: the mean, median and 99th
percentile of the absolute and relative errors, the share of elements beyond the rule that
judged it, NaN and infinity position mismatches, and a histogram of the ULP distances.

Everything is computed on whole arrays (numpy), tensor by tensor of an output (the tensors
of a sequence or map pooled), from the errors and ULP distances
:mod:`~onnx_arrow.compare.similarity` computes with :func:`~onnx_arrow.core.ulp.ulp_distance`
(as ``diff`` counts them).

The ULP histogram has :data:`ULP_BINS` (66) bins of powers of two, upper edges included:
bin 0 counts the elements 0 ULP apart, bin 1 those 1 ULP apart, and bin ``k >= 2`` those
more than ``2**(k-2)`` and at most ``2**(k-1)`` ULP apart (bin 2: 2, bin 3: 3 to 4, bin 4:
5 to 8 ... bin 65: beyond ``2**63``, up to the largest distance of any dtype).  So the
elements within ``2**j`` ULP are the first ``j + 2`` bins, exactly: within 1 ULP bins 0-1,
within 4 ULP bins 0-3, within 16 ULP bins 0-5.  Elements NaN on one side only have no ULP
distance and are in no bin (two NaNs are equal: bin 0).

>>> import numpy as np
>>> ulp_histogram(np.array([0, 1, 2, 3, 4, 5, 8, 9], np.uint64))[:6].tolist()
[1, 1, 1, 2, 2, 1]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

__all__ = ["ULP_BINS", "Distribution", "ulp_bin", "ulp_histogram"]

#: The upper edges of the ULP histogram's bins: 0, 1, 2, 4 ... 2**63 (bin ``k`` holds the
#: distances above edge ``k - 1`` and at most edge ``k``; the last bin those above 2**63).
_EDGES: Final = np.array([0, *(1 << k for k in range(64))], dtype=np.uint64)

#: How many bins a ULP histogram has: 0 ULP, 1 ULP, then one per power of two up to 2**64.
ULP_BINS: Final = len(_EDGES) + 1


def ulp_bin(distance: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.intp]]:
    """The histogram bin of each ULP ``distance`` (``uint64``; see the module docs).

    >>> ulp_bin(np.array([0, 1, 2, 3, 4, 5, 2**64 - 1], np.uint64)).tolist()
    [0, 1, 2, 3, 3, 4, 65]
    """
    return np.searchsorted(_EDGES, np.asarray(distance, dtype=np.uint64), side="left")


def ulp_histogram(distance: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """How many of the ULP distances fall in each of the :data:`ULP_BINS` bins (``int64``)."""
    bins = ulp_bin(distance.reshape(-1))
    return np.bincount(bins, minlength=ULP_BINS).astype(np.int64)


@dataclass
class Distribution:
    """The errors of the elements of one output, gathered tensor by tensor."""

    #: How many elements were compared (None: no tensor was).
    n_elements: int | None = None
    #: Elements NaN on one side only.
    nan_mismatches: int | None = None
    #: Elements not NaN on either side, an infinity on one side and not the same on the other.
    inf_mismatches: int | None = None
    #: The ULP histogram (None: no tensor of one floating dtype was compared).
    histogram: np.ndarray[Any, np.dtype[np.int64]] | None = None
    _abs: list[np.ndarray[Any, Any]] = field(default_factory=list)
    _rel: list[np.ndarray[Any, Any]] = field(default_factory=list)

    def add_elements(self, n: int) -> None:
        """Count ``n`` more elements compared."""
        self.n_elements = (self.n_elements or 0) + n

    def add_errors(self, absolute: np.ndarray[Any, Any], relative: np.ndarray[Any, Any]) -> None:
        """The absolute and relative errors of more elements (float64, any shape)."""
        self._abs.append(absolute.reshape(-1))
        self._rel.append(relative.reshape(-1))

    def add_positions(self, nan: int, inf: int) -> None:
        """Count NaN and infinity position mismatches of a tensor of floats."""
        self.nan_mismatches = (self.nan_mismatches or 0) + nan
        self.inf_mismatches = (self.inf_mismatches or 0) + inf

    def add_ulps(self, distance: np.ndarray[Any, Any], counted: np.ndarray[Any, Any]) -> None:
        """The ULP distances of a tensor, of the elements ``counted`` (no NaN mismatch)."""
        histogram = ulp_histogram(distance[counted])
        self.histogram = histogram if self.histogram is None else self.histogram + histogram

    def statistics(self) -> dict[str, float | None]:
        """``mean``, ``median`` and ``p99`` (the smallest error at least 99% of the elements
        are within: numpy's ``inverted_cdf`` percentile, never interpolated) of the
        absolute and relative errors, by column name; None where no error was computed."""
        out: dict[str, float | None] = {}
        for what, parts in (("abs", self._abs), ("rel", self._rel)):
            errors = np.concatenate(parts) if parts else np.empty(0)
            n = errors.size
            if n == 0:
                out.update(dict.fromkeys(f"{s}_{what}_error" for s in ("mean", "median", "p99")))
                continue
            # one partition for both: numpy's median (the middle one, or the mean of the
            # middle two) and its inverted_cdf 99th percentile (element ceil(0.99 n) - 1)
            low, high, p99 = (n - 1) // 2, n // 2, max(int(np.ceil(n * 0.99)) - 1, 0)
            ranked = np.partition(errors, sorted({low, high, p99}))
            out[f"mean_{what}_error"] = float(np.mean(errors))
            out[f"median_{what}_error"] = float(np.mean(ranked[[low, high]]))
            out[f"p99_{what}_error"] = float(ranked[p99])
        return out

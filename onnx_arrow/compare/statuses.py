"""The statuses of a compared output, from best to worst: the words every part of a
comparison (the value comparison, the patterns, the report) gives its verdicts in."""

from __future__ import annotations

from typing import Final

__all__ = ["DIFFERS", "PASSING", "RANK", "STATUSES"]


#: The statuses of a compared output, from best to worst.  A value with several
#: problems gets the worst one (a sequence with one element of the wrong shape and
#: another with a NaN is a ``shape_mismatch``).
#:
#: ``match``: within tolerance.  ``mismatch``: elements beyond tolerance (or unequal
#: strings or integers).  ``nan_mismatch``: NaN where the other has none.
#: ``dtype_mismatch``: another element type (errors are still computed when both are
#: numbers).  ``shape_mismatch``: another shape, sequence length, set of map keys, an
#: absent optional against a present one, or another kind of value.  ``error``: the
#: backend raised (or gave too few outputs, or an output missing from the actual
#: store, or an expected value kept as bytes).  ``skipped``: a case without a model or
#: without data sets, or one a skip pattern names.  ``xfail``: a failure (of any of the
#: statuses before ``skipped``, named in ``detail``) of a case an xfail pattern names;
#: ``xpass``: every output of such a case matched.
STATUSES: Final = (
    "match",
    "mismatch",
    "nan_mismatch",
    "dtype_mismatch",
    "shape_mismatch",
    "error",
    "skipped",
    "xfail",
    "xpass",
)

#: Each status's place in :data:`STATUSES`: the larger, the worse.
RANK: Final = {status: rank for rank, status in enumerate(STATUSES)}
#: The statuses that do not fail a run: ``xpass`` does only when asked (``strict``).
PASSING: Final = frozenset({"match", "skipped", "xfail", "xpass"})
#: The statuses of an output whose actual value a report keeps by default.
DIFFERS: Final = frozenset({"mismatch", "nan_mismatch", "dtype_mismatch", "shape_mismatch"})

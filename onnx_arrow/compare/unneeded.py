"""Which entries of the expectation files a report shows are not needed: the skip, xfail
and tolerance patterns that find no case of the report, and the xfail patterns whose
cases all pass (with skip patterns run as xfail ones, :meth:`Expectations.running_skips`,
the skip patterns whose cases all pass too), each with its file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

import pandas as pd

from onnx_arrow.compare.expectation_files import Pattern
from onnx_arrow.compare.plans import Expectations, searched_names
from onnx_arrow.reports import Report, as_frame

__all__ = ["UNNEEDED_COLUMNS", "unneeded_entries"]

#: The columns of :func:`unneeded_entries`.
UNNEEDED_COLUMNS: Final = ("where", "group", "kind", "pattern", "reason", "why")

#: The statuses of an output that passed: a case whose outputs all have one of these does
#: not need an xfail pattern.
_PASSED: Final = frozenset({"match", "xpass"})


def unneeded_entries(
    report: Report | pd.DataFrame, patterns: Expectations, onnx_version: str | None = None
) -> pd.DataFrame:
    r"""The entries of ``patterns`` that matched no failing case of ``report`` (a
    :func:`~onnx_arrow.compare.compare` table made with them): the ones a project can
    remove, in the order of its files.

    Only the patterns of files (:class:`~onnx_arrow.compare.expectation_files.Pattern`\ s
    with a ``where``) that apply to the corpus (built by onnx ``onnx_version``, see
    :meth:`Expectations.for_corpus`) are judged, and not those that find a case only
    under another device's test name (``test_x_cuda``, as onnx's runner names the CUDA
    tests).  A pattern that finds no case of the report is unneeded whatever its kind; an
    xfail pattern is also unneeded when every case it finds passed (``match`` or
    ``xpass``).  A skip pattern that finds cases is never listed: they were not run (run
    them with :meth:`Expectations.running_skips`).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`UNNEEDED_COLUMNS`: ``where`` (``file:line``), ``group`` (the
        onnxruntime list, or what the file calls it), ``kind`` (skip, xfail, tolerance,
        ulp), ``pattern``, ``reason`` (its comment) and ``why`` it is not needed.
    """
    applied = patterns.for_corpus(onnx_version)
    statuses: dict[str, set[str]] = {}
    report = as_frame(report)
    for case, status in zip(report["case"], report["status"], strict=True):
        statuses.setdefault(case, set()).add(status)
    names = [(case, searched_names(case)) for case in statuses]
    rows = []
    kinds: Iterable[tuple[str, Iterable[str]]] = (
        ("skip", applied.skip),
        ("xfail", applied.xfail),
        ("tolerance", (t[0] for t in applied.tolerance)),
        ("ulp", (u[0] for u in applied.ulp)),
    )
    for kind, entries in kinds:
        for pattern in entries:
            if not (isinstance(pattern, Pattern) and pattern.where):
                continue  # given in code or on the command line, or a script's own
            search = re.compile(pattern).search
            found = [case for case, n in names if any(search(x) for x in n)]
            if not found and any(search(f"{n[1]}_cuda") for _, n in names):
                continue  # an entry for the tests of another device: not judged here
            if not found:
                why = "finds no case"
            elif kind == "xfail" and all(statuses[c] <= _PASSED for c in found):
                why = "its case passes" if len(found) == 1 else f"its {len(found)} cases pass"
            else:
                continue
            rows.append(
                {
                    "where": pattern.where,
                    "group": pattern.group,
                    "kind": kind,
                    "pattern": str(pattern),
                    "reason": pattern.reason,
                    "why": why,
                }
            )
    return pd.DataFrame(rows, columns=list(UNNEEDED_COLUMNS))

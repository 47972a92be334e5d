"""Where verdicts changed: per case and output, along a runtime's versions (its corpus
and options fixed) and along the corpus's onnx releases (the runtime's version fixed),
each change of verdict, pass to fail or fail to pass, with what the runs on both sides
said."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any, Final

import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa

from onnx_arrow.errors import ResultsError

__all__ = ["CHANGES_SCHEMA", "FAILING", "PASSES", "changes"]

#: The statuses whose verdict is *pass*: the output matched (``xpass``: though expected
#: to fail).  ``skipped`` has no verdict; every other status is *fail* (``xfail`` too: a
#: failure, however expected).
PASSES: Final = frozenset({"match", "xpass"})

#: The statuses whose verdict is *fail*.
FAILING: Final = frozenset(
    {"mismatch", "nan_mismatch", "dtype_mismatch", "shape_mismatch", "error", "xfail"}
)

#: The table :func:`changes` gives: a row per change of an output's verdict between two
#: runs next to each other along an ``axis`` (``runtime_version``: the versions of one
#: ``runtime`` and ``execution_provider`` over one corpus, ``corpus_onnx_version`` set,
#: with one set of options; ``onnx_release``: the onnx releases of the corpus, under one
#: ``runtime_version``); ``before`` and ``after`` are the versions (or releases) on either
#: side, ``after`` the first where the verdict is the new one; each side's status, largest
#: ULP distance, the first line of its error and its run.
CHANGES_SCHEMA: Final = pa.schema(
    [
        ("axis", pa.string()),
        ("runtime", pa.string()),
        ("execution_provider", pa.string()),
        ("runtime_version", pa.string()),
        ("corpus_onnx_version", pa.string()),
        ("case", pa.string()),
        ("data_set", pa.int64()),
        ("index", pa.int64()),
        ("name", pa.string()),
        ("change", pa.string()),
        ("before", pa.string()),
        ("after", pa.string()),
        ("before_status", pa.string()),
        ("after_status", pa.string()),
        ("before_max_ulp", pa.uint64()),
        ("after_max_ulp", pa.uint64()),
        ("before_error", pa.string()),
        ("after_error", pa.string()),
        ("before_run_id", pa.string()),
        ("after_run_id", pa.string()),
    ]
)

_OUTPUT: Final = ["case", "data_set", "index"]
_SIDE: Final = ["status", "max_ulp", "error", "run_id"]

#: Each axis: the column it orders runs by, and the columns that hold a line of runs.
_AXES: Final = {
    "runtime_version": (
        "runtime_version",
        ["runtime", "execution_provider", "corpus_digest", "corpus_onnx_version", "options"],
    ),
    "onnx_release": (
        "corpus_onnx_version",
        ["runtime", "execution_provider", "runtime_version", "options"],
    ),
}


def _order(versions: list[str], column: str, runs: pd.DataFrame) -> list[str]:
    """``versions`` in version order (:class:`packaging.version.Version`)."""
    from packaging.version import InvalidVersion, Version

    keyed = []
    for text in versions:
        try:
            keyed.append((Version(text), text))
        except InvalidVersion:
            run = runs.loc[runs[column] == text, "run_id"].iloc[0]
            raise ResultsError(
                f"{column} {text!r:.80} is not a version packaging.version can order (as "
                "PEP 440 spells them: 1.20.1, 2.0.0rc1); record the runtime with such a "
                "version (--runtime NAME==VERSION)",
                where=f"run {run}",
            ) from None
    keyed.sort()
    for (a, text_a), (b, text_b) in itertools.pairwise(keyed):
        if a == b:
            raise ResultsError(
                f"{column} {text_a!r} and {text_b!r} are one version to packaging.version; "
                "they cannot be ordered",
                where=f"the runs of {column} {text_a!r}",
            )
    return [text for _, text in keyed]


def _first_line(text: object) -> object:
    if not isinstance(text, str):
        return None
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def _pairs(frame: pd.DataFrame, axis: str) -> Iterator[dict[str, Any]]:
    column, line = _AXES[axis]
    usable = frame[frame[column].notna()]
    runs = usable.drop_duplicates("run_id")
    for _, group in runs.groupby(line, dropna=False, sort=True):
        # of several runs of one version (attempts, other runners), the latest speaks
        latest = group.sort_values(["date", "attempt", "run_id"]).groupby(column).tail(1)
        if len(latest) < 2:
            continue
        versions = _order(list(latest[column]), column, latest)
        run_of = dict(zip(latest[column], latest["run_id"], strict=True))
        for before, after in itertools.pairwise(versions):
            a = usable[usable["run_id"] == run_of[before]]
            b = usable[usable["run_id"] == run_of[after]]
            both = a.merge(b, on=_OUTPUT, suffixes=("_a", "_b"))
            flipped = both[both["verdict_a"].notna() & both["verdict_b"].notna()]
            flipped = flipped[flipped["verdict_a"] != flipped["verdict_b"]]
            first = group.iloc[0]
            for _, row in flipped.iterrows():
                yield {
                    "axis": axis,
                    "runtime": first["runtime"],
                    "execution_provider": first["execution_provider"],
                    "runtime_version": first["runtime_version"] if axis == "onnx_release" else None,
                    "corpus_onnx_version": (
                        first["corpus_onnx_version"] if axis == "runtime_version" else None
                    ),
                    **{k: row[k] for k in _OUTPUT},
                    "name": row["name_b"] if isinstance(row["name_b"], str) else row["name_a"],
                    "change": f"{row['verdict_a']}->{row['verdict_b']}",
                    "before": before,
                    "after": after,
                    **{f"before_{k}": row[f"{k}_a"] for k in _SIDE},
                    **{f"after_{k}": row[f"{k}_b"] for k in _SIDE},
                }


def changes(table: pa.Table) -> pa.Table:
    """Per case and output, where its verdict (*pass*: :data:`PASSES`, *fail*:
    :data:`FAILING`; ``skipped`` has none) changed between two runs next to each other
    along a runtime's versions and along the corpus's onnx releases: a table of
    :data:`CHANGES_SCHEMA`, ordered by axis, runtime, case and output.

    Runs line up when they share the columns of their axis (a runtime's versions: its
    execution provider, the corpus by digest and the options; the onnx releases: the
    runtime's version and the options).  Runs without a version (a runner recorded
    without ``--runtime``) take no part; of several runs of one version the latest does.

    Raises
    ------
    ResultsError
        If a version cannot be ordered by :class:`packaging.version.Version`, naming the
        run that gives it.
    """
    columns = [
        "run_id", "attempt", "date", "runtime", "runtime_version", "execution_provider",
        "corpus_onnx_version", "corpus_digest", "options", *_OUTPUT, "name", "status",
        "max_ulp", "error",
    ]  # fmt: skip
    frame = table.select(columns).to_pandas(types_mapper=_TYPES.get)
    frame["verdict"] = frame["status"].map(
        lambda s: "pass" if s in PASSES else "fail" if s in FAILING else None
    )
    frame["error"] = frame["error"].map(_first_line)
    rows = [row for axis in _AXES for row in _pairs(frame, axis)]
    out = pa.Table.from_pylist(
        [{k: (None if _missing(v) else v) for k, v in row.items()} for row in rows],
        schema=CHANGES_SCHEMA,
    )
    if not out.num_rows:
        return out
    keys = [("axis", "ascending"), ("runtime", "ascending"), ("case", "ascending"),
            ("data_set", "ascending"), ("index", "ascending")]  # fmt: skip
    # a stable sort: each output's changes stay in the order of its axis
    return out.sort_by(keys)


_TYPES: Final = {
    pa.int64(): pd.Int64Dtype(),
    pa.uint64(): pd.UInt64Dtype(),
    pa.string(): pd.StringDtype(),
}


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))

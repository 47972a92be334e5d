"""The report: a row per expected output (its status, errors and how they are spread,
worst element, largest ULP distance and ULP histogram, the rule that judged it,
tolerances, the actual value it keeps), the table's columns, the counts per status and
operator, what the report was made from and with (and the report format), and its
Parquet file."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import stat
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

import numpy as np
import onnx
import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import onnx_arrow
from onnx_arrow.compare.distribution import ULP_BINS
from onnx_arrow.compare.plans import Rules
from onnx_arrow.compare.runs import DataSetRun, kept_message, output_name
from onnx_arrow.compare.serialize import serialized
from onnx_arrow.compare.similarity import Diff, compare_value, detail_text
from onnx_arrow.compare.statuses import DIFFERS, PASSING, STATUSES
from onnx_arrow.core.model import file_kind, load_json, op_types
from onnx_arrow.corpus.format import METADATA_KEY as STORE_METADATA_KEY
from onnx_arrow.corpus.store import Store
from onnx_arrow.corpus.tree import atomic_file
from onnx_arrow.errors import CompareError, CorpusError, ProvenanceWarning, UnsupportedTypeError
from onnx_arrow.reports import REPORT_METADATA_KEY, Report, as_frame

__all__ = [
    "COMPARE_COLUMNS",
    "REPORT_FORMAT",
    "REPORT_METADATA_KEY",
    "REPORT_SCHEMA",
    "check_made",
    "check_report",
    "missing_provenance",
    "output_rows",
    "provenance",
    "read_report",
    "report_frame",
    "report_table",
    "run_platform",
    "skipped_row",
    "status_counts",
    "store_digest",
    "summary",
    "write_report",
]


#: The columns of the DataFrame :func:`compare` returns.
COMPARE_COLUMNS: Final = (
    "case", "op_types", "data_set", "index", "name", "onnx_type", "status",
    "dtype_expected", "dtype_actual", "shape_expected", "shape_actual",
    "max_abs_error", "max_rel_error", "n_beyond_tolerance", "nan_expected", "nan_actual",
    "rtol", "atol", "tolerance", "worst_index", "worst_expected", "worst_actual",
    "error", "detail", "actual",
    "max_ulp", "max_ulp_index", "rule", "ulp_budget", "ulp_floor",
    "n_elements", "share_beyond", "mean_abs_error", "median_abs_error", "p99_abs_error",
    "mean_rel_error", "median_rel_error", "p99_rel_error", "nan_mismatches",
    "inf_mismatches", "ulp_histogram",
)  # fmt: skip

#: The format of the reports this version writes, in their metadata (``report_format``):
#: 2 added the error distributions (``n_elements`` to ``ulp_histogram``).  A report
#: without it is of format 1 (its later columns read as null); one of a later format is
#: refused, naming the onnx-arrow that wrote it.
REPORT_FORMAT: Final = 2


def skipped_row(store: Store, case: str, pattern: str) -> dict[str, Any]:
    """The one row of a case a skip pattern names (not run, its data sets not read)."""
    try:
        ops = op_types(store.model(case))
    except CorpusError:  # a case without a model
        ops = ()
    return {
        "case": case,
        "op_types": ops,
        "status": "skipped",
        "detail": f"skip pattern {pattern!r}",
    }


def output_rows(plan: Rules, runs: Iterable[DataSetRun]) -> list[dict[str, Any]]:
    """The rows of the data sets of one case: one per expected output (compared as
    ``plan`` says), one for a data set not run."""
    return [row for run in runs for row in _rows(plan, run)]


def _rows(plan: Rules, run: DataSetRun) -> Iterator[dict[str, Any]]:
    base = {"case": run.case, "op_types": run.op_types, "data_set": run.data_set}
    if run.skipped is not None:
        yield {**base, "status": "skipped", "detail": run.skipped}
        return
    rtol, atol, source = plan.expect.tolerance_for(run.case, run.tolerance, plan.rtol, plan.atol)
    actual = run.actual or []
    kept = {k: path for (io, k), path in run.kept_as_bytes.items() if io == "output"}
    for k in sorted(run.expected.keys() | kept.keys()):
        if k in kept:  # an expected output that cannot be compared fails, never passes
            name = run.output_names[k] if k < len(run.output_names) else None
            error = f"{CompareError.__name__}: {kept_message(kept[k])}"
            yield {**base, "index": k, "name": name, "status": "error", "error": error}
            continue
        value = run.expected[k]
        row = {**base, "index": k, "name": output_name(run, k, value), "onnx_type": value.onnx_type}
        if run.actual is None or k >= len(actual):
            error = run.error or (
                f"the backend gave {len(actual)} outputs, the case expects output {k}"
            )
            yield {**row, "status": "error", "error": error}
            continue
        budget = plan.expect.ulp_for(run.case, plan.max_ulp, source)
        max_ulp, ulp_source = (None, source) if budget is None else budget
        diff = compare_value(
            value.to_numpy(), actual[k], rtol, atol, max_ulp=max_ulp, ulp_floor=plan.ulp_floor
        )
        worst = (None,) * 3 if diff.worst is None else diff.worst[1:]
        keep = plan.keep_actual == "all" or (
            plan.keep_actual == "failed" and diff.status in DIFFERS
        )
        raised = diff.rtol is not None and diff.rtol > rtol
        kept_actual = (
            serialized(run.model, k, actual[k], output_name(run, k, value)) if keep else None
        )
        if isinstance(kept_actual, str):  # said, never dropped without a word
            diff.details.append(f"the actual value is not kept: {kept_actual}")
        yield {
            **row,
            "status": diff.status,
            "dtype_expected": diff.dtype_expected,
            "dtype_actual": diff.dtype_actual,
            "shape_expected": diff.shape_expected,
            "shape_actual": diff.shape_actual,
            "max_abs_error": diff.max_abs,
            "max_rel_error": diff.max_rel,
            "n_beyond_tolerance": diff.beyond,
            "nan_expected": diff.nan_expected,
            "nan_actual": diff.nan_actual,
            "rtol": diff.rtol if raised else rtol,
            "atol": atol,
            "tolerance": (
                ulp_source
                if diff.by_ulp
                else f"{source}, bfloat16 at least 2**-6"
                if raised
                else source
            ),
            "worst_index": worst[0],
            "worst_expected": worst[1],
            "worst_actual": worst[2],
            "detail": detail_text(diff.details),
            "actual": kept_actual if isinstance(kept_actual, bytes) else None,
            "max_ulp": diff.max_ulp,
            "max_ulp_index": diff.max_ulp_index,
            "rule": "ulp" if diff.by_ulp else "tolerance",
            "ulp_budget": max_ulp if diff.by_ulp else None,
            "ulp_floor": plan.ulp_floor if diff.by_ulp else None,
            **_spread(diff),
        }


def _spread(diff: Diff) -> dict[str, Any]:
    """The columns of how an output's errors are spread over its elements."""
    spread = diff.spread
    n = spread.n_elements
    histogram = spread.histogram
    return {
        "n_elements": n,
        "share_beyond": diff.beyond / n if n else None,
        **spread.statistics(),
        "nan_mismatches": spread.nan_mismatches,
        "inf_mismatches": spread.inf_mismatches,
        "ulp_histogram": None if histogram is None else tuple(histogram.tolist()),
    }


# the pandas dtypes of the columns: nullable numbers, binary, objects; the others strings
_INT_COLUMNS: Final = (
    "data_set", "index", "n_beyond_tolerance", "nan_expected", "nan_actual", "ulp_budget",
    "n_elements", "nan_mismatches", "inf_mismatches",
)  # fmt: skip
_UINT_COLUMNS: Final = ("max_ulp",)  # DOUBLE's -inf to +inf is beyond int64
_FLOAT_COLUMNS: Final = (
    "max_abs_error", "max_rel_error", "rtol", "atol", "ulp_floor", "share_beyond",
    "mean_abs_error", "median_abs_error", "p99_abs_error",
    "mean_rel_error", "median_rel_error", "p99_rel_error",
)  # fmt: skip
_BINARY_COLUMNS: Final = ("actual",)
_OBJECT_COLUMNS: Final = ("op_types", "shape_expected", "shape_actual", "ulp_histogram")


def report_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The report of ``rows``: columns :data:`COMPARE_COLUMNS`, a column absent from a row
    null in it."""
    records = list(rows)
    data: dict[str, Any] = {}
    for name in COMPARE_COLUMNS:
        values = [r.get(name) for r in records]
        if name in _INT_COLUMNS:
            data[name] = pd.array(values, dtype="Int64")
        elif name in _UINT_COLUMNS:
            data[name] = pd.array(values, dtype="UInt64")
        elif name in _FLOAT_COLUMNS:
            data[name] = pd.array(values, dtype="Float64")
        elif name in _BINARY_COLUMNS:  # Arrow-backed: binary in Parquet, even when all null
            data[name] = pd.array(values, dtype=pd.ArrowDtype(pa.binary()))
        elif name in _OBJECT_COLUMNS:
            data[name] = pd.Series(values, dtype=object)
        else:
            data[name] = pd.array(values, dtype=pd.StringDtype())
    return pd.DataFrame(data)


def summary(df: Report | pd.DataFrame) -> pd.DataFrame:
    """Per operator, how many outputs of a report (or its DataFrame) have each status,
    most non-matches first.

    A case's outputs count for each of its op types (``op_types`` exploded); a case
    without a model counts under ``(none)``.  Columns: ``op_type``, ``total``, one
    per status of :data:`STATUSES`, and ``non_match`` (``total`` less the
    :data:`PASSING` statuses).
    """
    df = as_frame(df)
    exploded = df[["op_types", "status"]].copy()
    exploded["op_type"] = exploded["op_types"].map(lambda t: tuple(t) if len(t) else ("(none)",))
    exploded = exploded.explode("op_type")
    counts = pd.crosstab(exploded["op_type"].astype(object), exploded["status"].astype(object))
    counts = counts.reindex(columns=list(STATUSES), fill_value=0)
    out = counts.reset_index().rename_axis(columns=None)
    out.insert(1, "total", counts.sum(axis=1).to_numpy())
    out["non_match"] = out["total"] - sum(out[status] for status in sorted(PASSING))
    out = out.sort_values(["non_match", "op_type"], ascending=[False, True], kind="stable")
    return out.reset_index(drop=True).astype({"op_type": pd.StringDtype()})


def status_counts(df: Report | pd.DataFrame) -> dict[str, int]:
    """How many rows of a report (or its DataFrame) have each status, in the order of
    :data:`STATUSES`."""
    counts = as_frame(df)["status"].value_counts()
    return {status: int(counts.get(status, 0)) for status in STATUSES}


def provenance(store: Store, **options: Any) -> dict[str, Any]:
    """What a compare report was made from and with: its kind, the versions, the store
    (its files, its digest, the onnx release that built it, where its data came from),
    the options."""
    return {
        "kind": "compare",
        "onnx_arrow_version": onnx_arrow.__version__,
        "onnx_version": onnx.__version__,
        "numpy_version": np.__version__,
        "platform": run_platform(),
        "store": [str(p) for p in store.parts],
        "store_digest": store_digest(store),
        "store_onnx_version": store.metadata.get("onnx_version"),
        "store_created_by": store.metadata.get("created_by"),
        "report_format": REPORT_FORMAT,
        "store_provenance": store.metadata.get("provenance"),
        **options,
    }


def run_platform() -> str:
    """The platform a report is made on, as a results store records it: the operating
    system and the machine (``linux-x86_64``, ``darwin-arm64``, ``win32-AMD64``)."""
    return f"{sys.platform}-{platform.machine() or 'unknown'}"


def store_digest(store: Store) -> str | None:
    """A digest of what ``store`` holds, cheap to take: BLAKE2b-128 over each of its files'
    size and Parquet footer (the Arrow schema, the store's metadata and every row group's
    offsets, sizes and statistics, so another content gives another digest in practice),
    leaving out when it was imported (its provenance's ``imported_at``): a corpus built
    again from the same source, as ``@onnx`` is on each use, has the same digest.  None
    where a file cannot be read."""
    digest = hashlib.blake2b(digest_size=16)
    try:
        for part in store.parts:
            meta = pq.read_metadata(part)
            digest.update(os.stat(part).st_size.to_bytes(8, "little"))
            digest.update(meta.schema.to_arrow_schema().remove_metadata().serialize())
            layout = meta.to_dict()
            layout.pop("serialized_size", None)  # the footer's length, the date's with it
            digest.update(json.dumps(layout, sort_keys=True, default=str).encode())
            for key, value in sorted((meta.metadata or {}).items()):
                if key != b"ARROW:schema":  # the schema with this metadata, again
                    digest.update(key + b"=" + _undated(key, value) + b"\n")
    except (OSError, pa.ArrowException, ValueError):
        return None
    return digest.hexdigest()


def _undated(key: bytes, value: bytes) -> bytes:
    """A store's metadata without the time its corpus was imported."""
    if key != STORE_METADATA_KEY.encode():
        return value
    try:
        meta = json.loads(value)
        meta.get("provenance", {}).pop("imported_at", None)
    except (ValueError, AttributeError):
        return value  # not the JSON a store writes: taken as it is
    return json.dumps(meta, sort_keys=True).encode()


def report_table(rows: Iterable[dict[str, Any]]) -> pa.Table:
    """The rows of a compare report as a table of :data:`REPORT_SCHEMA`, a column absent
    from a row null in it."""
    return pa.Table.from_pandas(report_frame(rows), schema=REPORT_SCHEMA, preserve_index=False)


def write_report(report: Report | pd.DataFrame, out: str | os.PathLike[str]) -> None:
    """Write a report (from :func:`compare`, :func:`compare_stores`,
    :func:`onnx_arrow.diff.diff` or :func:`~onnx_arrow.reports.concat_reports`) to
    Parquet, atomically: its table, with what it was made from and with (versions, store,
    backend, options) as JSON under the file's :data:`REPORT_METADATA_KEY` metadata.

    A DataFrame is written with its ``attrs["onnx_arrow"]`` as what it was made from.

    Warns
    -----
    ProvenanceWarning
        If the report does not say what it was made from, or leaves out part of it (a
        DataFrame made by ``pd.concat`` of two reports keeps none): the warning names
        what is missing.
    """
    if isinstance(report, Report):
        table = report.table
        made = report.provenance
    elif isinstance(report, pd.DataFrame):
        made = report.attrs.get("onnx_arrow")
        table = pa.Table.from_pandas(report, preserve_index=False)
        if made is not None:
            meta = dict(table.schema.metadata or {})
            meta[REPORT_METADATA_KEY.encode()] = json.dumps(made, default=str).encode()
            table = table.replace_schema_metadata(meta)
    else:
        raise UnsupportedTypeError(
            f"expected a Report (or a DataFrame), got {type(report).__module__}."
            f"{type(report).__name__}",
            where="write_report(report)",
        )
    missing = missing_provenance(made)
    if missing:
        warnings.warn(
            f"{os.fspath(out)}: the report is written without {missing}; join reports "
            "with concat_reports, which keeps what each was made from",
            ProvenanceWarning,
            stacklevel=2,
        )
    with atomic_file(out, what="the report") as tmp:
        pq.write_table(table, tmp)


#: What a report of each kind names as what it was made from, and that part in words.
_SOURCES: Final = {
    "compare": (("store", "its store"),),
    "diff": (("old", "its old side"), ("new", "its new side")),
    "trace": (("store", "its store"),),
}


def missing_provenance(made: object) -> str | None:
    """What a report's provenance ``made`` leaves out, in words: all of it, or what it was
    made from (a joined report's: each source's); None if nothing."""
    if not isinstance(made, Mapping) or not made:
        return "what it was made from (no store, backend or versions)"
    sources = made.get("sources")
    if isinstance(sources, list) and sources:
        said = [missing_provenance(s) for s in sources]
        gaps = [f"source {k}: {gap}" for k, gap in enumerate(said) if gap]
        return "; ".join(gaps) or None
    kind = made.get("kind", "compare")
    gaps = [what for key, what in _SOURCES.get(str(kind), ()) if made.get(key) in (None, [])]
    return ", ".join(gaps) or None


# --- reading a report back -------------------------------------------------------------

#: The Arrow schema of a report: each column of :data:`COMPARE_COLUMNS` with the type of
#: what it holds, as :func:`write_report` writes it.  A report read back is checked
#: against it (:func:`check_report`): a column of another kind of type is refused; one of
#: a wider or narrower type of the same kind (``large_string``, ``int32``), or all null,
#: is cast to it.
REPORT_SCHEMA: Final = pa.schema(
    [
        ("case", pa.string()),
        ("op_types", pa.list_(pa.string())),
        ("data_set", pa.int64()),
        ("index", pa.int64()),
        ("name", pa.string()),
        ("onnx_type", pa.string()),
        ("status", pa.string()),
        ("dtype_expected", pa.string()),
        ("dtype_actual", pa.string()),
        ("shape_expected", pa.list_(pa.int64())),
        ("shape_actual", pa.list_(pa.int64())),
        ("max_abs_error", pa.float64()),
        ("max_rel_error", pa.float64()),
        ("n_beyond_tolerance", pa.int64()),
        ("nan_expected", pa.int64()),
        ("nan_actual", pa.int64()),
        ("rtol", pa.float64()),
        ("atol", pa.float64()),
        ("tolerance", pa.string()),
        ("worst_index", pa.string()),
        ("worst_expected", pa.string()),
        ("worst_actual", pa.string()),
        ("error", pa.string()),
        ("detail", pa.string()),
        ("actual", pa.binary()),
        ("max_ulp", pa.uint64()),
        ("max_ulp_index", pa.string()),
        ("rule", pa.string()),
        ("ulp_budget", pa.int64()),
        ("ulp_floor", pa.float64()),
        ("n_elements", pa.int64()),
        ("share_beyond", pa.float64()),
        ("mean_abs_error", pa.float64()),
        ("median_abs_error", pa.float64()),
        ("p99_abs_error", pa.float64()),
        ("mean_rel_error", pa.float64()),
        ("median_rel_error", pa.float64()),
        ("p99_rel_error", pa.float64()),
        ("nan_mismatches", pa.int64()),
        ("inf_mismatches", pa.int64()),
        ("ulp_histogram", pa.list_(pa.int64())),
    ]
)

#: The columns of :data:`REPORT_SCHEMA` a report written before them lacks: read as null
#: (the ULP columns came after format 1 began, the distributions with format 2).
_LATER_COLUMNS: Final = (
    "max_ulp", "max_ulp_index", "rule", "ulp_budget", "ulp_floor",
    *COMPARE_COLUMNS[COMPARE_COLUMNS.index("n_elements"):],
)  # fmt: skip

#: The kinds of Arrow types a report column may come as, by the kind of its schema type.
_KINDS: Final = (
    pa.types.is_string,
    pa.types.is_large_string,
    pa.types.is_string_view,
    pa.types.is_binary,
    pa.types.is_large_binary,
    pa.types.is_binary_view,
    pa.types.is_integer,
    pa.types.is_floating,
    pa.types.is_list,
    pa.types.is_large_list,
    pa.types.is_list_view,
)
_KIND_GROUPS: Final = (_KINDS[0:3], _KINDS[3:6], _KINDS[6:7], _KINDS[7:8], _KINDS[8:11])


def _fits(got: pa.DataType, want: pa.DataType) -> bool:
    """Whether a column of type ``got`` holds what ``want`` holds: the same type, all null,
    or a type of the same kind (a string of any width, an integer of any width, a list of
    such items)."""
    if got == want or pa.types.is_null(got):
        return True
    for group in _KIND_GROUPS:
        if any(test(want) for test in group):
            if not any(test(got) for test in group):
                return False
            if pa.types.is_list(want):
                return _fits(got.value_type, want.value_type)
            return True
    return False


def check_report(
    report: Report | pa.Table | pd.DataFrame, *, where: str, metadata: object = None
) -> pa.Table:
    """A compare report as an Arrow table of :data:`REPORT_SCHEMA`, checked: every column
    there, each of its type (see :data:`REPORT_SCHEMA`), every row naming its case with a
    status of :data:`STATUSES`, no negative ``data_set``, ``index`` or count, a
    ``ulp_histogram`` (where there is one) of :data:`~onnx_arrow.compare.distribution.ULP_BINS`
    counts of 0 or more; and what the
    report was made from (``metadata``: a DataFrame's ``attrs["onnx_arrow"]``, a file's
    :data:`REPORT_METADATA_KEY` parsed) a JSON object whose ``store``, if any, lists the
    store's files, of a ``report_format`` up to :data:`REPORT_FORMAT` (1 if it says none:
    the columns added since read as null).

    Raises
    ------
    CompareError
        Located at ``where`` (the report's path, or ``the report``), saying what is wrong.
    """
    if isinstance(report, Report):
        metadata = report.provenance if metadata is None else metadata
        report = report.table
    check_made(metadata, where=where)  # a report of a later format: said before its columns
    table = report if isinstance(report, pa.Table) else _as_table(report, where)
    for name in _LATER_COLUMNS:
        if name not in table.column_names:
            table = table.append_column(name, pa.nulls(table.num_rows))
    missing = [name for name in REPORT_SCHEMA.names if name not in table.column_names]
    if missing:
        raise CompareError(
            f"the report has no column {', '.join(map(repr, missing))}; it is not a compare "
            "report, or was changed after it was written",
            where=where,
        )
    columns = []
    for field in REPORT_SCHEMA:
        column = table.column(field.name)
        if not _fits(column.type, field.type):
            raise CompareError(
                f"the report's column {field.name!r} is {column.type}, where a compare "
                f"report has {field.type}; it is not a compare report, or was changed",
                where=where,
            )
        try:
            columns.append(column.cast(field.type, safe=True))
        except (pa.ArrowException, OverflowError) as exc:
            raise CompareError(
                f"the report's column {field.name!r} does not fit {field.type} ({exc})",
                where=where,
            ) from None
    checked = pa.Table.from_arrays(columns, schema=REPORT_SCHEMA)
    _check_rows(checked, where)
    return checked


def _as_table(report: object, where: str) -> pa.Table:
    if not isinstance(report, pd.DataFrame):
        raise CompareError(
            "expected a compare report: the DataFrame compare gives, or the path of a "
            f"report write_report wrote; got {type(report).__module__}.{type(report).__name__}",
            where=where,
        )
    try:  # the report's columns only: a column a user added is theirs
        names = [name for name in REPORT_SCHEMA.names if name in report.columns]
        return pa.Table.from_pandas(report[names], preserve_index=False)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise CompareError(
            f"the report's columns do not convert to Arrow ({exc}); it is not a compare "
            "report, or was changed",
            where=where,
        ) from None


def _check_rows(table: pa.Table, where: str) -> None:
    """Every row names its case, has a known status, no negative data set, output or
    count, and a ULP histogram (where it has one) of :data:`ULP_BINS` counts of 0 or
    more."""

    def first(mask: Any) -> int | None:
        hits = np.flatnonzero(mask.to_numpy(zero_copy_only=False))
        return int(hits[0]) if hits.size else None

    case, status = table.column("case"), table.column("status")
    histogram = table.column("ulp_histogram")
    checks = (
        (pc.is_null(case), "has no case"),
        (pc.invert(pc.fill_null(pc.is_in(status, pa.array(STATUSES)), False)),
         f"has a status that is not one of {', '.join(STATUSES)}"),
        (pc.fill_null(pc.less(table.column("data_set"), 0), False), "has a negative data_set"),
        (pc.fill_null(pc.less(table.column("index"), 0), False), "has a negative index"),
        *((pc.fill_null(pc.less(table.column(name), 0), False), f"has a negative {name}")
          for name in _COUNT_COLUMNS),
        (pc.fill_null(pc.not_equal(pc.list_value_length(histogram), ULP_BINS), False),
         f"has a ulp_histogram whose length is not the {ULP_BINS} bins of a ULP histogram"),
    )  # fmt: skip
    for mask, what in checks:
        row = first(mask)
        if row is not None:
            raise CompareError(
                f"row {row} {what}; the report was changed after it was written", where=where
            )
    negative = first(pc.fill_null(pc.less(pc.list_flatten(histogram), 0), False))
    if negative is not None:
        row = int(pc.list_parent_indices(histogram)[negative].as_py())
        raise CompareError(
            f"row {row} has a negative count in its ulp_histogram; the report was changed "
            "after it was written",
            where=where,
        )


#: The columns that count (elements, NaN, data): none of them is below 0.
_COUNT_COLUMNS: Final = (
    "n_beyond_tolerance", "nan_expected", "nan_actual", "ulp_budget", "n_elements",
    "nan_mismatches", "inf_mismatches",
)  # fmt: skip


def check_made(made: object, *, where: str) -> dict[str, Any]:
    """What a report says it was made from: a JSON object (empty when None) of a
    ``report_format`` this version reads (see :data:`REPORT_FORMAT`) whose ``store``, if
    it has one, is a non-empty list of paths; else a located :class:`CompareError`."""
    if made is None:
        return {}
    if not isinstance(made, Mapping) or not all(isinstance(k, str) for k in made):
        raise CompareError(
            "what the report was made from is not a JSON object; the report's metadata was "
            "changed after it was written",
            where=where,
        )
    made_format = made.get("report_format", 1)
    if not isinstance(made_format, int) or isinstance(made_format, bool) or made_format < 1:
        raise CompareError(
            f"the report's format is {made_format!r:.60}, not a whole number of 1 or more; the "
            "report's metadata was changed after it was written",
            where=where,
        )
    if made_format > REPORT_FORMAT:
        raise CompareError(
            f"the report is of format {made_format}, written by onnx-arrow "
            f"{made.get('onnx_arrow_version', '(unknown)')}; this onnx-arrow reads formats "
            f"up to {REPORT_FORMAT}: upgrade onnx-arrow to read it",
            where=where,
        )
    sources = made.get("sources")
    if sources is not None:
        if not isinstance(sources, list) or not sources:
            raise CompareError(
                f"the report's sources are {sources!r:.60}, not a list of what each joined "
                "report was made from; the report's metadata was changed after it was written",
                where=where,
            )
        for k, source in enumerate(sources):
            check_made(source, where=f"{where}: sources[{k}]")
    parts = made.get("store")
    if parts is not None and (
        not isinstance(parts, list) or not parts or not all(isinstance(p, str) for p in parts)
    ):
        raise CompareError(
            f"the report's store is {parts!r:.60}, not a list of its files; the "
            "report's metadata was changed after it was written",
            where=where,
        )
    return dict(made)


def read_report(path: str | os.PathLike[str]) -> Report:
    """A compare report :func:`write_report` wrote, read back as the :class:`Report`
    :func:`compare` gives (its provenance what the file's metadata says the report was
    made from and with), checked by :func:`check_report` first; its metadata parsed
    within limits.  A report written before reports said their kind reads as a
    ``compare`` one.

    Raises
    ------
    CompareError
        If the file cannot be opened, is not a regular file, does not read as Parquet,
        or is not a compare report; located at ``path``.
    """
    where = os.fspath(path)
    try:
        mode = os.stat(where).st_mode
    except OSError as exc:
        raise CompareError(f"cannot open the report ({exc.strerror})", where=where) from None
    if not stat.S_ISREG(mode):
        raise CompareError(f"{file_kind(mode)}, not a report's Parquet file", where=where)
    try:
        file = pq.ParquetFile(where)
        meta = file.schema_arrow.metadata or {}
        names = [n for n in REPORT_SCHEMA.names if n in file.schema_arrow.names]
        table = file.read(columns=names)
    except (OSError, pa.ArrowException) as exc:
        raise CompareError(f"cannot read the report as Parquet ({exc})", where=where) from None
    raw = meta.get(REPORT_METADATA_KEY.encode())
    made = (
        None
        if raw is None
        else load_json(raw, what="the report's metadata", where=where, error=CompareError)
    )
    checked = check_report(table, where=where, metadata=made)
    if made is None:
        return Report.of(checked, None)
    return Report.of(checked, {"kind": "compare", **check_made(made, where=where)})

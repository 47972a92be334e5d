"""A report: an Arrow table of rows (a compare report's outputs, a diff's paths, a trace's
values) whose schema metadata says what it was made from and with, its provenance.

The table is the report's truth: :attr:`Report.table` holds the rows and, under
:data:`REPORT_METADATA_KEY`, the provenance as JSON (the report's ``kind``, its
``report_format``, the store and its digest, the corpus's onnx release, the backend and
its version, the plan, onnx-arrow's version).  :meth:`Report.to_pandas` gives the rows as
a DataFrame to analyse (nullable numbers, tuples for lists); the DataFrame's ``attrs``
carry a copy of the provenance, which pandas drops in ``pd.concat`` and most other
operations.  Reports are joined with :func:`concat_reports`, which keeps every report's
provenance (``sources``, with the rows each gave) and refuses reports of different kinds
or without provenance.  The table is exposed through the Arrow PyCapsule stream protocol,
so polars, DuckDB and pyarrow read a report without a copy through pandas.

Examples
--------
>>> import pyarrow as pa
>>> a = Report.of(pa.table({"case": ["node/test_abs"]}), {"kind": "compare", "backend": "x"})
>>> b = Report.of(pa.table({"case": ["node/test_add"]}), {"kind": "compare", "backend": "y"})
>>> both = concat_reports([a, b])
>>> both.table.num_rows, [(s["backend"], s["rows"]) for s in both.sources]
(2, [('x', 1), ('y', 1)])
>>> both.source_of(1)["backend"]
'y'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa

from onnx_arrow.core.model import load_json
from onnx_arrow.errors import CompareError, UnsupportedTypeError

__all__ = [
    "REPORT_KINDS",
    "REPORT_METADATA_KEY",
    "Report",
    "as_frame",
    "concat_reports",
    "frame_of",
]

#: The key of a report's schema metadata (and of its Parquet file's) that holds what it
#: was made from and with, as JSON.
REPORT_METADATA_KEY: Final = "onnx_arrow.report"

#: The kinds of reports: of :func:`~onnx_arrow.compare.compare` and
#: :func:`~onnx_arrow.compare.compare_stores` (``compare``), of
#: :func:`~onnx_arrow.diff.diff` (``diff``) and of a trace store's rows (``trace``).
REPORT_KINDS: Final = ("compare", "diff", "trace")

# the pandas dtypes of a report's Arrow types; lists become tuples, others stay objects
_PANDAS_TYPES: Final = {
    pa.int64(): pd.Int64Dtype(),
    pa.uint64(): pd.UInt64Dtype(),
    pa.float64(): pd.Float64Dtype(),
    pa.string(): pd.StringDtype(),
    pa.binary(): pd.ArrowDtype(pa.binary()),
}


@dataclass(frozen=True, eq=False)
class Report:
    """The rows of a report as an Arrow table, with what they were made from and with.

    Build one with :meth:`of`; the functions that make reports (``compare``,
    ``compare_stores``, ``diff``, :meth:`~onnx_arrow.trace.Trace.report`) return one, and
    :func:`~onnx_arrow.compare.read_report` reads one back from its Parquet file.
    """

    #: The rows; its schema metadata holds the provenance under
    #: :data:`REPORT_METADATA_KEY`.
    table: pa.Table

    def __post_init__(self) -> None:
        if not isinstance(self.table, pa.Table):
            raise UnsupportedTypeError(
                f"expected a pyarrow.Table, got {type(self.table).__name__}",
                where="Report(table)",
            )

    @classmethod
    def of(cls, table: pa.Table, provenance: Mapping[str, Any] | None) -> Report:
        """``table`` with ``provenance`` (a JSON object; None: none) as its metadata."""
        meta = dict(table.schema.metadata or {})
        meta.pop(b"pandas", None)  # a DataFrame's index and dtypes: not the report's
        meta.pop(REPORT_METADATA_KEY.encode(), None)
        if provenance is not None:
            meta[REPORT_METADATA_KEY.encode()] = json.dumps(dict(provenance), default=str).encode()
        return cls(table.replace_schema_metadata(meta or None))

    @property
    def provenance(self) -> dict[str, Any] | None:
        """What the report was made from and with (its metadata parsed), None if nothing."""
        raw = (self.table.schema.metadata or {}).get(REPORT_METADATA_KEY.encode())
        if raw is None:
            return None
        # the project's one JSON gate: its size cap, depth guard and located errors
        made = load_json(
            raw, what="what the report was made from", where="Report.provenance", error=CompareError
        )
        if not isinstance(made, dict):
            raise CompareError(
                "what the report was made from is not a JSON object; its metadata was changed",
                where="Report.provenance",
            )
        return made

    @property
    def kind(self) -> str | None:
        """The report's kind (see :data:`REPORT_KINDS`), None where it says none."""
        made = self.provenance
        kind = None if made is None else made.get("kind")
        return kind if isinstance(kind, str) else None

    @property
    def sources(self) -> list[dict[str, Any]]:
        """The provenance of each report this one was made of, in row order, each with
        the number of ``rows`` it gave: one for a report as made, several for one from
        :func:`concat_reports`, none for a report without provenance."""
        made = self.provenance
        if made is None:
            return []
        sources = made.get("sources")
        if isinstance(sources, list):
            return [dict(s) for s in sources]
        return [{**made, "rows": self.table.num_rows}]

    def source_of(self, row: int) -> dict[str, Any]:
        """The provenance of the report row ``row`` came from.

        Raises
        ------
        CompareError
            If the report has no provenance or the row is outside it.
        """
        first = 0
        for source in self.sources:
            rows = source.get("rows")
            if not isinstance(rows, int):
                break
            if first <= row < first + rows:
                return source
            first += rows
        raise CompareError(
            f"no provenance covers row {row} of the report's {self.table.num_rows} rows",
            where="Report.source_of(row)",
        )

    def to_pandas(self) -> pd.DataFrame:
        """The rows as a new DataFrame (see :func:`frame_of`), a copy of the provenance in
        its ``attrs["onnx_arrow"]``."""
        frame = frame_of(self.table)
        made = self.provenance
        if made is not None:
            frame.attrs["onnx_arrow"] = made
        return frame

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """The rows through the Arrow PyCapsule stream protocol (the table's)."""
        return self.table.__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        sources = self.sources
        made = f"{len(sources)} sources" if len(sources) > 1 else "no provenance"
        if len(sources) == 1:
            made = _describe(sources[0])
        return f"<Report {self.kind or '(no kind)'}: {self.table.num_rows} rows, {made}>"


def _describe(made: Mapping[str, Any]) -> str:
    backend = made.get("backend")
    name = backend.get("name") if isinstance(backend, Mapping) else backend
    store = made.get("store") or made.get("old")
    return (
        ", ".join(f"{k} {v}" for k, v in (("backend", name), ("store", store)) if v is not None)
        or "provenance"
    )


def frame_of(table: pa.Table) -> pd.DataFrame:
    """A report's rows as a DataFrame: integers ``Int64`` / ``UInt64``, floats
    ``Float64`` and strings ``string`` (nullable), binary Arrow-backed, lists as tuples
    (None where null), a ``RangeIndex``."""
    frame = table.replace_schema_metadata(None).to_pandas(types_mapper=_PANDAS_TYPES.get)
    for field in table.schema:
        if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
            frame[field.name] = pd.Series(
                [None if v is None else tuple(v) for v in table.column(field.name).to_pylist()],
                dtype=object,
            )
    return frame


def as_frame(report: Report | pd.DataFrame) -> pd.DataFrame:
    """A report's rows as a DataFrame: :meth:`Report.to_pandas` of a :class:`Report`, a
    DataFrame as it is (what the functions that analyse a report take)."""
    return report.to_pandas() if isinstance(report, Report) else report


def concat_reports(reports: Iterable[Report]) -> Report:
    """One report of the rows of ``reports``, in order, that keeps each one's provenance.

    The provenance of the result is ``{"kind", "report_format", "sources"}``: ``sources``
    lists every report's provenance (a joined report's sources in its place) with the
    number of ``rows`` it gave, so :meth:`Report.source_of` finds where a row came from.

    Raises
    ------
    CompareError
        Located at the report: if one is not a :class:`Report` (a DataFrame has lost what
        it was made from), has no provenance, is of another kind than the first, or has
        other columns; or if no report is given.
    """
    given = list(reports)
    if not given:
        raise CompareError("no report to join", where="concat_reports(reports)")
    sources: list[dict[str, Any]] = []
    kind: str | None = None
    formats: list[int] = []
    for k, report in enumerate(given):
        where = f"concat_reports(reports[{k}])"
        if not isinstance(report, Report):
            raise CompareError(
                f"expected a Report (what compare, diff and read_report give), got "
                f"{type(report).__module__}.{type(report).__name__}; a DataFrame does not "
                "keep what it was made from",
                where=where,
            )
        made = report.provenance
        if made is None:
            raise CompareError(
                "the report says nothing of what it was made from; a joined report keeps "
                "each one's provenance, so it cannot take this one",
                where=where,
            )
        if k == 0:
            kind = report.kind
        elif report.kind != kind:
            raise CompareError(
                f"the report is a {report.kind or '(no kind)'} report, the first a "
                f"{kind or '(no kind)'} one; join reports of one kind",
                where=where,
            )
        if report.table.schema.remove_metadata() != given[0].table.schema.remove_metadata():
            raise CompareError(
                "the report's columns are not those of the first report",
                where=where,
            )
        if isinstance(made.get("report_format"), int):
            formats.append(made["report_format"])
        sources += report.sources
    table = pa.concat_tables([r.table.replace_schema_metadata(None) for r in given])
    joined: dict[str, Any] = {"kind": kind}
    if formats:
        joined["report_format"] = max(formats)
    joined["sources"] = sources
    return Report.of(table, joined)

"""The display of a row of a ``compare`` report (:class:`ReportView`): what the row says,
the expected value from the store, the actual value the row keeps, and their pictures."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
from google.protobuf.message import Message
from onnx import MapProto, OptionalProto, SequenceProto, SparseTensorProto, TensorProto

import onnx_arrow
from onnx_arrow.core.model import declared_type
from onnx_arrow.corpus.arguments import type_name
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError
from onnx_arrow.jupyter.pictures import side_by_side
from onnx_arrow.jupyter.render import render_html, render_text
from onnx_arrow.jupyter.sections import Section
from onnx_arrow.jupyter.values import value_sections
from onnx_arrow.text import number

__all__ = ["ReportView", "report_view"]

#: The message class of each kind of declared type (``TypeProto``'s ``value`` field).
_MESSAGE_OF_TYPE: Final[dict[str, type[Message]]] = {
    "tensor_type": TensorProto,
    "sparse_tensor_type": SparseTensorProto,
    "sequence_type": SequenceProto,
    "map_type": MapProto,
    "optional_type": OptionalProto,
}
#: The report fields a :class:`ReportView` lists, with their labels.
_REPORT_FIELDS: Final = (
    ("status", "status"),
    ("onnx_type", "onnx type"),
    ("dtype_expected", "expected dtype"),
    ("dtype_actual", "actual dtype"),
    ("max_abs_error", "max abs error"),
    ("max_rel_error", "max rel error"),
    ("n_beyond_tolerance", "beyond tolerance"),
    ("worst_index", "worst element"),
    ("worst_expected", "worst expected"),
    ("worst_actual", "worst actual"),
    ("detail", "detail"),
    ("error", "error"),
)


class ReportView:
    """A row of a ``compare`` report, displayed: what the row says (status, the tolerance
    and where it came from, errors, the worst element), then the expected value from the
    store and the actual value the row keeps (its ``actual`` column), and for tensors of one
    shape pictures of both and of their difference.

    Made by :func:`report_view`; reads the store when displayed.
    """

    def __init__(self, store: Store, row: dict[str, Any]) -> None:
        if not isinstance(store, Store):
            raise UnsupportedTypeError(
                f"expected a Store, got {type_name(store)}", where="ReportView(store)"
            )
        if not isinstance(row, Mapping) or not isinstance(row.get("case"), str):
            raise UnsupportedTypeError(
                "expected a row of a compare report, a dict naming its case (str), got "
                f"{type_name(row) if not isinstance(row, Mapping) else 'a row without one'}",
                where="ReportView(row)",
            )
        self.store, self.row = store, dict(row)

    def sections(self) -> list[Section]:
        """The facts the displays show."""
        row = self.row
        case, index = row["case"], row.get("index")
        data_set = row.get("data_set")
        where = f"output {index}" + ("" if data_set is None else f" of test_data_set_{data_set}")
        fields = [("store", str(self.store.path))]
        fields += [(label, _shown(row[k])) for k, label in _REPORT_FIELDS if _present(row.get(k))]
        if _present(row.get("rtol")):
            rtol, atol = _shown(row["rtol"]), _shown(row.get("atol"))
            fields.append(("tolerance", f"rtol {rtol}, atol {atol} ({row.get('tolerance')})"))
        head = Section(f"{case}: {where} {row.get('name')!r}", fields)
        out = [head]
        if index is None:
            head.note = "a row without an output (a skipped case)"
            return out
        expected = next(
            (
                v
                for v in self.store.values(case)
                if v.io == "output" and v.index == index and v.data_set == data_set
            ),
            None,
        )
        arrays = []
        if expected is None:
            out.append(Section("expected: not in the store", level=1))
        else:
            arrays.append(expected.to_numpy(strings="bytes"))
            out += self._value("expected", arrays[-1], expected.onnx_type)
        actual = self._actual(case, index)
        if isinstance(actual, str):
            out.append(Section("actual", note=actual, level=1))
        else:
            arrays.append(actual)
            out += self._value("actual", actual, expected.onnx_type if expected else "")
        if len(arrays) == 2 and all(isinstance(a, np.ndarray) for a in arrays):
            out.append(side_by_side(arrays[0], arrays[1], ("expected", "actual")))
        return out

    @staticmethod
    def _value(label: str, value: Any, onnx_type: str) -> list[Section]:
        sections = value_sections(value, f"{label} ({onnx_type})", level=1)
        for section in sections:
            section.picture = None  # shown below, beside the other side's
        return sections

    def _actual(self, case: str, index: int) -> Any:
        """The actual value the row keeps, or why there is none (a str)."""
        data: Any = self.row.get("actual")
        if not _present(data):
            return (
                "the report keeps no actual value for this row (compare keeps those of "
                "outputs that differ; keep_actual='all' keeps every one)"
            )
        declared = declared_type(self.store.model(case), "output", index)
        kind = "tensor_type" if declared is None else declared.WhichOneof("value")
        cls = _MESSAGE_OF_TYPE.get(kind or "")
        if cls is None:
            return f"the model declares output {index} as {kind}, which onnx-arrow does not take"
        try:
            message = cls.FromString(bytes(data))
            array = onnx_arrow.to_arrow([message], declared)
        except Exception as exc:  # protobuf's DecodeError, onnx-arrow's errors
            return f"the kept bytes do not parse as the declared type: {exc}"
        return onnx_arrow.to_pylist(array, strings="bytes")[0]

    def _repr_html_(self) -> str:
        return render_html(self.sections())

    def __repr__(self) -> str:
        return render_text(self.sections())


def _shown(value: Any) -> str:
    """A field of the row as text: a number in the shortest form that reads back."""
    if isinstance(value, float | np.floating | int | np.integer) and not isinstance(
        value, bool | np.bool_
    ):
        return number(value)
    return str(value)


def _present(value: Any) -> bool:
    """Not None and not a missing value (pandas' NA, NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    try:
        bool(value)
    except TypeError:  # pandas' NA: its truth value is ambiguous
        return False
    return True


def report_view(
    report: Any, row: int, store: Store | str | os.PathLike[str] | None = None
) -> ReportView:
    """A displayable row of a ``compare`` report (see :class:`ReportView`).

    ``report`` is the :class:`~onnx_arrow.reports.Report` :func:`onnx_arrow.compare.compare`
    gives (a joined one too: a row's store is that of the run it came from), its
    DataFrame or the path of a report it wrote; ``row`` the row's position.  ``store``
    is the store of the expected outputs; without it, the one the report names in its metadata.

    The report is checked as it is read (:func:`onnx_arrow.compare.report.check_report`):
    its columns and their types against the report's schema, its rows, and what it says
    it was made from (the file's metadata parsed within limits).

    Raises
    ------
    CompareError
        If the report does not read, is not a compare report (a column missing or of
        another type, a row without its case) or its metadata is not what
        :func:`~onnx_arrow.compare.write_report` writes; located at the report.
    OnnxArrowError
        If the report names no store and none is given, or ``row`` is out of range.
    UnsupportedTypeError
        If ``report``, ``row`` or ``store`` is of a type it cannot be.
    """
    # compare imports pandas and its backends: only when a report is shown
    import pandas as pd

    from onnx_arrow.compare.report import check_made, check_report, read_report
    from onnx_arrow.reports import Report

    if isinstance(report, str | os.PathLike):
        where = os.fspath(report)
        report = read_report(report)
    elif isinstance(report, Report | pd.DataFrame):
        where = "the report"
    else:
        raise UnsupportedTypeError(
            "expected a compare report: the Report compare gives, its DataFrame or the path "
            f"of a report it wrote, got {type_name(report)}",
            where="report_view(report)",
        )
    if not isinstance(row, int | np.integer) or isinstance(row, bool):
        raise UnsupportedTypeError(
            f"expected a row's position (int), got {type_name(row)}", where="report_view(row)"
        )
    if store is not None and not isinstance(store, Store | str | os.PathLike):
        raise UnsupportedTypeError(
            "expected the store of the expected outputs (a Store, or its path), got "
            f"{type_name(store)}",
            where="report_view(store)",
        )
    if isinstance(report, Report):
        made = check_made(report.provenance, where=where)
        n = report.table.num_rows
        piece: Any = report.table.slice(int(row), 1) if 0 <= row < n else None
    else:
        made = check_made(report.attrs.get("onnx_arrow"), where=where)
        n = len(report)
        piece = report.iloc[[int(row)]] if 0 <= row < n else None
    if piece is None:
        raise OnnxArrowError(f"row {row} is outside the report's {n} rows")
    if isinstance(report, Report) and report.sources:  # a joined report: the row's own
        made = check_made(report.source_of(int(row)), where=where)
    table = check_report(piece, where=f"{where}: row {row}", metadata=made)
    record = table.to_pylist()[0]
    if store is None:
        parts = made.get("store")
        if not parts:
            raise OnnxArrowError(
                "the report names no store; pass the store of the expected outputs"
            )
        store = Store(parts if len(parts) > 1 else parts[0])
    return ReportView(as_store(store, where="report_view(store)"), record)

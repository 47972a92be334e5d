"""A scoreboard of compare reports: operator x element type x backend, each cell the cases
that pass, are expected to fail, fail and raise, with the largest ULP distance, and the
errors grouped by cause; as Markdown to commit, HTML to read in a browser, or JSON.

Each report is one column (its backend, named from what the report says it was made
with: the backend, then what it runs, the onnx version and the file when that is needed
to tell two apart; of a report of ``compare --actual``, the backend the actual store says
made its outputs).  The column heads say what each backend runs, the onnx release of the
corpus (from its store's provenance) and the onnx of the comparison; no absolute path of
the machine is written (a runner's command with its paths relative to the working folder,
or their last names; a report and its store by their file names).  A row is an operator
and an element type:

* the operator of a case is the op type of its model when it has one; a function's
  expansion (``test_softmax_axis_0_expanded``, ``..._expanded_ver18``) is its base case's
  operator followed by ``(expanded)``; a case of several op types that is no expansion
  (a model) is its own row, by name; a case without a model is ``(no model)``;
* the element type is the output's (``FLOAT``, as ``dtype_expected`` says, or as its
  declared ``onnx_type`` says when it was not compared); ``(none)`` when neither says.

Rows are in the order of the operators' names, then of ONNX's element type enum.

A cell counts cases (a case with outputs of several element types counts in each of their
rows), each by the worst verdict of its outputs there: ``error`` (the backend raised),
``fail`` (``mismatch``, ``nan_mismatch``, ``dtype_mismatch``, ``shape_mismatch``),
``xfail``, ``pass`` (``match``, ``xpass``), ``skip``; and the largest ``max_ulp`` of its
outputs.  Each backend's column heads with its counts of cases per verdict, and of float
outputs all of whose elements are within 0 (bit-exact), 1, 4 and 16 ULP
(:data:`ULP_BANDS`, read from the ``ulp_histogram`` column).  An error's cause is
:func:`~onnx_arrow.compare.failures.error_cause`: the exception type and the first words
of the message of the line that says it (of a runner's error, the last exception line
of the command's stderr, not the first line of its traceback), the specific words
(numbers, names in quotes, paths, op versions) left out as ``…``, so that "Could not
find an implementation for Add(14)" and "... for Mul(14)" are one cause.  onnxruntime's
``[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED :`` prefix is left out.

The Markdown and the JSON hold no time and list everything in a fixed order, so the same
reports give the same bytes.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd  # no pandas-stubs: pandas is Any

from onnx_arrow.compare.backends import portable_command
from onnx_arrow.compare.distribution import ULP_BINS
from onnx_arrow.compare.failures import error_cause
from onnx_arrow.compare.report import check_made, check_report, read_report
from onnx_arrow.core.model import DTYPES
from onnx_arrow.errors import CompareError
from onnx_arrow.reports import Report
from onnx_arrow.text import printable

__all__ = ["FORMATS", "ULP_BANDS", "VERDICTS", "Scoreboard", "error_cause", "scoreboard"]

#: The verdicts of a cell, best to worst, and the report statuses each stands for.
VERDICTS: Final = {
    "pass": ("match", "xpass"),
    "xfail": ("xfail",),
    "fail": ("mismatch", "nan_mismatch", "dtype_mismatch", "shape_mismatch"),
    "error": ("error",),
    "skip": ("skipped",),
}
#: Which verdict of a case's outputs is its verdict: the worst, skips the least.
_WORST_FIRST: Final = ("error", "fail", "xfail", "pass", "skip")
_VERDICT_OF: Final = {status: v for v, statuses in VERDICTS.items() for status in statuses}

#: The formats a scoreboard renders to.
FORMATS: Final = ("md", "html", "json")

#: The version of the JSON a scoreboard renders (its ``format``).
_JSON_FORMAT: Final = 1

_ELEMENT: Final = re.compile(r"tensor\((\w+)\)")
_EXPANDED: Final = re.compile(r"^(.*)_expanded(_ver\d+)?$")
#: Element types in the order of ONNX's enum (FLOAT first); others after, by name.
_TYPE_ORDER: Final = {row.name: row.onnx for row in DTYPES.values()}


@dataclass(frozen=True)
class Scoreboard:
    """Compare reports side by side (made by :func:`scoreboard`).

    ``backends`` has a row per report, in the order given: ``backend`` (the column's
    label), ``name``, ``runs`` (a runner's command with its paths relative to the
    working folder, or their last names), ``corpus`` (the onnx release of the corpus, as
    its store's provenance says: ``onnx 1.14.1 (wheel onnx-1.14.1-...whl)``),
    ``onnx_version`` (the onnx of the comparison), ``report`` (its file name, or None),
    ``store`` (its store's file names), and the counts of its cases per verdict.
    ``cells`` has a row per operator, element type and backend (only where the backend
    has a case): ``operator``, ``element_type``, ``backend``, a count per verdict of
    :data:`VERDICTS` and ``max_ulp`` (null where no float was compared).  ``causes`` has
    a row per cause of error and backend: ``cause``, ``backend``, ``cases`` (how many
    cases raised it) and ``example`` (the first such case).
    """

    backends: pd.DataFrame
    cells: pd.DataFrame
    causes: pd.DataFrame

    def render(self, format: str = "md") -> str:
        """The scoreboard as ``md`` (Markdown), ``html`` (a page) or ``json``."""
        if format == "md":
            return _markdown(self)
        if format == "html":
            return _html(self)
        if format == "json":
            return _json(self)
        raise CompareError(
            f"format is {format!r}; a scoreboard renders to {', '.join(FORMATS)}",
            where="Scoreboard.render(format)",
        )


def scoreboard(
    reports: Sequence[str | os.PathLike[str] | Report | pd.DataFrame],
    *,
    labels: Sequence[str] | None = None,
) -> Scoreboard:
    """The scoreboard of one or more compare reports (see the module docs).

    Parameters
    ----------
    reports
        Reports :func:`~onnx_arrow.compare.compare` gave, or
        :func:`~onnx_arrow.compare.write_report` wrote (paths), or their DataFrames: one
        column each.  A report joined by :func:`~onnx_arrow.reports.concat_reports` is
        one column if every run it joins ran one backend.
    labels
        The columns' labels, one per report; by default named from what each report says
        it was made with.

    Raises
    ------
    CompareError
        If a report does not read or is not a compare report (located at it), there is
        none, or the labels are not one per report or not distinct.

    Examples
    --------
    >>> import pandas as pd
    >>> from onnx_arrow.compare.report import report_frame
    >>> rows = [
    ...     {"case": "node/test_abs", "op_types": ("Abs",), "status": "match",
    ...      "dtype_expected": "FLOAT", "max_ulp": 0},
    ...     {"case": "node/test_abs_expanded", "op_types": ("Sub", "Max"), "status": "error",
    ...      "onnx_type": "tensor(float)", "error": "ValueError: shape (3,) is wrong"}]
    >>> board = scoreboard([report_frame(rows)], labels=["mine"])
    >>> board.cells[["operator", "element_type", "pass", "error", "max_ulp"]]
             operator element_type  pass  error  max_ulp
    0             Abs        FLOAT     1      0        0
    1  Abs (expanded)        FLOAT     0      1     <NA>
    >>> board.causes[["cause", "cases", "example"]].to_numpy().tolist()
    [['ValueError: shape … is wrong', 1, 'node/test_abs_expanded']]
    """
    if isinstance(reports, str | os.PathLike | pd.DataFrame | Report) or not len(reports):
        raise CompareError(
            "expected a list of one or more compare reports (paths or DataFrames)",
            where="scoreboard(reports)",
        )
    loaded = [_load(report, k) for k, report in enumerate(reports)]
    names = _labels(loaded, labels)
    rows = pd.concat(
        [frame.assign(backend=name) for name, (_, frame) in zip(names, loaded, strict=True)],
        ignore_index=True,
    )
    rows["operator"] = rows["case"].map(_operators(rows))
    rows["element_type"] = [
        _element_type(d, t) for d, t in zip(rows["dtype_expected"], rows["onnx_type"], strict=True)
    ]
    rows["verdict"] = rows["status"].map(_VERDICT_OF)
    per_case = _per_case(rows)
    return Scoreboard(_backends(loaded, names, rows), _cells(per_case, names), _causes(rows, names))


_COLUMNS: Final = (
    "case", "op_types", "status", "dtype_expected", "onnx_type", "max_ulp", "error",
    "n_elements", "ulp_histogram",
)  # fmt: skip

#: The ULP bands a scoreboard counts the float outputs of each report in: every element
#: within that many ULP (the first ``log2(band) + 2`` bins of ``ulp_histogram``; 0: bin 0).
ULP_BANDS: Final = {"bit_exact": 0, "within_1_ulp": 1, "within_4_ulp": 4, "within_16_ulp": 16}


def _load(report: Any, k: int) -> tuple[dict[str, Any], pd.DataFrame]:
    """What a report was made with, and the columns a scoreboard reads."""
    where = f"scoreboard(reports[{k}])"
    file = None
    if isinstance(report, str | os.PathLike):
        loaded = read_report(report)
        file = Path(report).name
    elif isinstance(report, Report):
        made = check_made(report.provenance, where=where)
        loaded = Report.of(check_report(report, where=where, metadata=made), made or None)
    elif isinstance(report, pd.DataFrame):
        made = check_made(report.attrs.get("onnx_arrow"), where=where)
        loaded = Report.of(check_report(report, where=where, metadata=made), made or None)
    else:
        raise CompareError(
            "expected a compare report: a Report compare gives, the path of a report "
            f"write_report wrote or a DataFrame; got {type(report).__module__}."
            f"{type(report).__name__}",
            where=where,
        )
    made = {**_one_backend(loaded, where), "_file": file}
    frame = loaded.to_pandas()[list(_COLUMNS)].copy()
    frame["max_ulp"] = frame["max_ulp"].astype(pd.UInt64Dtype())
    return made, frame


def _one_backend(report: Report, where: str) -> dict[str, Any]:
    """What a report was made with: its one source's provenance, or the first of a joined
    report's sources when all ran one backend (a scoreboard's column is one backend)."""
    sources = report.sources
    if not sources:
        return {}
    backends = {json.dumps(_backend_of(s), sort_keys=True) for s in sources}
    if len(backends) > 1:
        raise CompareError(
            f"the report joins the runs of {len(backends)} backends "
            f"({', '.join(sorted(str(_backend_of(s).get('name')) for s in sources))}); a "
            "scoreboard's column is one backend: give each run as a report of its own",
            where=where,
        )
    return sources[0]


def _labels(
    loaded: list[tuple[dict[str, Any], pd.DataFrame]], given: Sequence[str] | None
) -> list[str]:
    """The columns' labels: given, or the least that tells the reports apart."""
    if given is not None:
        names = list(given)
        if len(names) != len(loaded) or len(set(names)) != len(names):
            raise CompareError(
                f"{len(names)} labels for {len(loaded)} reports; give one distinct label "
                "per report",
                where="scoreboard(labels)",
            )
        return names

    def parts(made: dict[str, Any], k: int) -> list[str]:
        backend = _backend_of(made)
        provider = made.get("provider") or made.get("providers")
        return [
            str(backend.get("name") or f"report {k + 1}"),
            _runs(backend) or "",
            "" if provider is None else str(provider),
            f"onnx {made['onnx_version']}" if made.get("onnx_version") else "",
            str(made.get("_file") or ""),
            f"#{k + 1}",
        ]

    all_parts = [parts(made, k) for k, (made, _) in enumerate(loaded)]
    for depth in range(1, len(all_parts[0]) + 1):
        names = [_label(p[:depth]) for p in all_parts]
        if len(set(names)) == len(names):
            return names
    raise AssertionError("the report's number makes every label distinct")  # pragma: no cover


def _runs(backend: dict[str, Any]) -> str | None:
    """What a backend runs, a runner's command without the paths of the machine it ran on
    (:func:`~onnx_arrow.compare.backends.portable_command`)."""
    runs = backend.get("runs")
    if runs is None:
        return None
    return portable_command(str(runs)) if backend.get("name") == "runner" else str(runs)


def _corpus(made: dict[str, Any]) -> str | None:
    """The onnx release of the corpus a report compared against, and where its store's
    data came from (``installed``, a ``wheel`` by its file name, a ``folder``), as its
    store's provenance says; the store's onnx version alone for a store without one."""
    prov = made.get("store_provenance")
    if isinstance(prov, dict) and prov.get("onnx"):
        wheel = prov.get("wheel")
        source = (
            f"wheel {wheel.get('file')}"
            if isinstance(wheel, dict) and wheel.get("file")
            else str(prov.get("source") or "")
        )
        return f"onnx {prov['onnx']}" + (f" ({source})" if source else "")
    version = made.get("store_onnx_version")
    return None if version is None else f"onnx {version}"


def _backend_of(made: dict[str, Any]) -> dict[str, Any]:
    """What a report says of its backend (``name``, ``runs``), empty if nothing."""
    backend = made.get("backend")
    return backend if isinstance(backend, dict) else {}


def _label(parts: list[str]) -> str:
    head, *rest = parts
    rest = [p for p in rest if p]
    return f"{head} ({', '.join(rest)})" if rest else head


def _operators(rows: pd.DataFrame) -> dict[str, str]:
    """The operator of each case (see the module docs)."""
    ops = {  # a row may say no op types (None): a case without a model
        case: () if t is None else tuple(t)
        for case, t in zip(rows["case"], rows["op_types"], strict=True)
    }
    single = {case: t[0] for case, t in ops.items() if len(t) == 1}
    out = {}
    for case, types in ops.items():
        if len(types) == 1:
            out[case] = types[0]
            continue
        expanded = _EXPANDED.match(case)
        if expanded is not None and expanded.group(1) in single:
            out[case] = f"{single[expanded.group(1)]} (expanded)"
        else:
            out[case] = case if types else "(no model)"
    return out


def _element_type(dtype: Any, onnx_type: Any) -> str:
    if isinstance(dtype, str):
        return dtype
    if isinstance(onnx_type, str):
        found = _ELEMENT.findall(onnx_type)
        if found:
            return str(found[-1]).upper()
    return "(none)"


def _per_case(rows: pd.DataFrame) -> pd.DataFrame:
    """A row per backend, operator, element type and case: its verdict, the worst of its
    outputs', and their largest ULP distance."""
    rank = {v: k for k, v in enumerate(_WORST_FIRST)}
    keys = ["backend", "operator", "element_type", "case"]
    ranked = rows.assign(rank=rows["verdict"].map(rank))
    grouped = ranked.groupby(keys, sort=False, dropna=False)
    out = grouped.agg(rank=("rank", "min"), max_ulp=("max_ulp", "max")).reset_index()
    out["verdict"] = out["rank"].map(dict(enumerate(_WORST_FIRST)))
    return out


def _cells(per_case: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    keys = ["operator", "element_type", "backend"]
    counts = pd.crosstab([per_case[k] for k in keys], per_case["verdict"]).reindex(
        columns=list(VERDICTS), fill_value=0
    )
    ulps = per_case.groupby(keys)["max_ulp"].max()
    cells = counts.join(ulps).reset_index().rename_axis(columns=None)
    order = {name: k for k, name in enumerate(names)}
    cells["_order"] = cells["backend"].map(order)
    cells["_type"] = cells["element_type"].map(lambda t: (_TYPE_ORDER.get(t, 1 << 30), t))
    cells = cells.sort_values(["operator", "_type", "_order"], kind="stable")
    cells = cells.drop(columns=["_order", "_type"]).reset_index(drop=True)
    for verdict in VERDICTS:
        cells[verdict] = cells[verdict].astype("int64")
    cells["max_ulp"] = cells["max_ulp"].astype(pd.UInt64Dtype())
    return cells


def _causes(rows: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    errors = rows[rows["error"].notna()]
    columns = ["cause", "backend", "cases", "example"]
    if errors.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    errors = errors.assign(cause=errors["error"].map(error_cause))
    grouped = errors.groupby(["cause", "backend"])["case"]
    out = grouped.agg(cases="nunique", example="min").reset_index()
    totals = out.groupby("cause")["cases"].transform("sum")
    order = {name: k for k, name in enumerate(names)}
    out = out.assign(_total=-totals, _order=out["backend"].map(order))
    out = out.sort_values(["_total", "cause", "_order"], kind="stable")
    return out[columns].reset_index(drop=True)


def _backends(
    loaded: list[tuple[dict[str, Any], pd.DataFrame]], names: list[str], rows: pd.DataFrame
) -> pd.DataFrame:
    """A row per report: what it was made with, and its cases per verdict."""
    rank = {v: k for k, v in enumerate(_WORST_FIRST)}
    ranked = rows.assign(rank=rows["verdict"].map(rank))
    worst = ranked.groupby(["backend", "case"])["rank"].min().map(dict(enumerate(_WORST_FIRST)))
    records = []
    for name, (made, frame) in zip(names, loaded, strict=True):
        backend = _backend_of(made)
        verdicts = worst.loc[name].value_counts() if name in worst.index else pd.Series()
        records.append(
            {
                "backend": name,
                "name": backend.get("name"),
                "runs": _runs(backend),
                "corpus": _corpus(made),
                "onnx_version": made.get("onnx_version"),
                "report": made.get("_file"),
                "store": [Path(p).name for p in made.get("store") or []],
                "cases": int(verdicts.sum()),
                **{v: int(verdicts.get(v, 0)) for v in VERDICTS},
                **_bands(frame),
            }
        )
    out = pd.DataFrame.from_records(records)
    return out.astype(dict.fromkeys(_BAND_LABELS, "Int64"))  # None where not counted


def _bands(frame: pd.DataFrame) -> dict[str, int | None]:
    """How many float outputs (of one dtype, with a ULP histogram) a report has, and how
    many of them have every element within each of :data:`ULP_BANDS`; None for a report
    that compared no element (or was written before the distributions)."""
    if frame["n_elements"].isna().all():  # written before the distributions, or no output
        return {"float_outputs": None, **dict.fromkeys(ULP_BANDS)}
    kept = frame[frame["ulp_histogram"].map(lambda h: h is not None)]
    counts = np.array([list(h) for h in kept["ulp_histogram"]], dtype=np.int64)
    counts = counts.reshape(len(kept), ULP_BINS)
    within = np.cumsum(counts, axis=1)
    n = kept["n_elements"].to_numpy(dtype=np.int64)
    out: dict[str, int | None] = {"float_outputs": len(kept)}
    for key, band in ULP_BANDS.items():
        bins = 1 if band == 0 else band.bit_length() + 1
        out[key] = int(np.count_nonzero(within[:, bins - 1] == n))
    return out


# --- rendering ---------------------------------------------------------------------------


def _cell_text(cell: Any) -> str:
    """``3 pass, 1 fail; max 2 ULP``: the verdicts a cell has, and its largest ULP distance."""
    counts = [f"{int(cell[v])} {v}" for v in VERDICTS if int(cell[v])]
    text = ", ".join(counts)
    if not pd.isna(cell["max_ulp"]):
        text += f"; max {int(cell['max_ulp'])} ULP"
    return text


def _cell_class(cell: Any) -> str:
    """The worst verdict a cell has, for its colour."""
    return next(v for v in _WORST_FIRST if int(cell[v])) if cell is not None else "none"


def _matrix(board: Scoreboard) -> list[tuple[str, str, list[Any]]]:
    """Rows of (operator, element type, the cell of each backend or None), in order."""
    names = board.backends["backend"].tolist()
    out = []
    grouped = board.cells.groupby(["operator", "element_type"], sort=False)  # cells' order
    for (op, element), group in grouped:
        by_backend = {row["backend"]: row for _, row in group.iterrows()}
        out.append((op, element, [by_backend.get(name) for name in names]))
    return out


def _causes_matrix(board: Scoreboard) -> list[tuple[str, list[int], str]]:
    names = board.backends["backend"].tolist()
    out = []
    for cause, group in board.causes.groupby("cause", sort=False):
        counts = dict(zip(group["backend"], group["cases"], strict=True))
        out.append((cause, [int(counts.get(n, 0)) for n in names], str(group["example"].min())))
    return out


_LEGEND: Final = (
    "Each cell counts the cases of an operator with outputs of an element type, each by "
    "the worst verdict of those outputs (pass, xfail, fail, error, skip), and gives the "
    "largest ULP distance of their floats."
)


_BAND_LABELS: Final = {
    "float_outputs": "float outputs",
    "bit_exact": "bit-exact",
    "within_1_ulp": "within 1 ULP",
    "within_4_ulp": "within 4 ULP",
    "within_16_ulp": "within 16 ULP",
}


def _facts(board: Scoreboard) -> list[tuple[str, list[str | int]]]:
    """The rows of the table of backends: what each ran, its cases per verdict, its float
    outputs per ULP band; a count as an int, the rest as text ("" for nothing)."""
    b = board.backends

    def shown(values: list[Any]) -> list[str | int]:
        return ["" if v is None or pd.isna(v) else v if isinstance(v, int) else str(v)
                for v in values]  # fmt: skip

    return [
        ("runs", shown(b["runs"].tolist())),
        ("corpus", shown(b["corpus"].tolist())),
        ("onnx", shown(b["onnx_version"].tolist())),
        ("store", [", ".join(s) for s in b["store"]]),
        ("cases", shown(b["cases"].tolist())),
        *((v, shown(b[v].tolist())) for v in VERDICTS),
        *((label, shown(b[k].tolist())) for k, label in _BAND_LABELS.items()),
    ]


#: What a string from a report must not be in a Markdown table cell: HTML (``<``, ``>``,
#: ``&``, written as entities) and Markdown syntax (backslash-escaped): the cell's ``|``,
#: code spans, emphasis and strikethrough, links and images, math; an ``_`` only where it
#: can open or close emphasis (not inside a word, as in ``test_add``).
_MARKDOWN: Final = re.compile(r"[\\`*\[\]|~$]|(?<!\w)_|_(?!\w)")
_ENTITIES: Final = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def _md(text: Any) -> str:
    """``text`` as the text of a Markdown table cell, as it is: on one line, no control
    characters, and nothing in it read as HTML or Markdown."""
    plain = re.sub("[<>&]", lambda m: _ENTITIES[m[0]], printable(str(text)))
    return _MARKDOWN.sub(lambda m: "\\" + m[0], plain)


def _markdown(board: Scoreboard) -> str:
    names = board.backends["backend"].tolist()
    lines = ["# Scoreboard", ""]
    header = "| | " + " | ".join(_md(n) for n in names) + " |"
    lines += [header, "|---" * (len(names) + 1) + "|"]
    for what, values in _facts(board):
        lines.append(f"| {what} | " + " | ".join(_md(v) for v in values) + " |")
    lines += ["", "## By operator and element type", "", _LEGEND, ""]
    lines += ["| operator | type | " + " | ".join(_md(n) for n in names) + " |"]
    lines += ["|---" * (len(names) + 2) + "|"]
    for op, element, cells in _matrix(board):
        texts = ["" if c is None else _cell_text(c) for c in cells]
        lines.append(f"| {_md(op)} | {_md(element)} | " + " | ".join(_md(t) for t in texts) + " |")
    lines += ["", "## Errors by cause", ""]
    causes = _causes_matrix(board)
    if not causes:
        lines.append("No errors.")
    else:
        lines += ["| cause | " + " | ".join(_md(n) for n in names) + " | example |"]
        lines += ["|---" * (len(names) + 2) + "|"]
        for cause, counts, example in causes:
            lines.append(
                f"| {_md(cause)} | " + " | ".join(str(n) for n in counts) + f" | {_md(example)} |"
            )
    return "\n".join(lines) + "\n"


_STYLE: Final = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1a1a1a; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
thead th { position: sticky; top: 0; background: #f4f4f4; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.pass { background: #dff3df; } .xfail { background: #ececec; }
.fail { background: #fbe0c4; } .error { background: #f6c9c9; }
.skip { background: #f8f8f8; color: #777; } .none { background: #fff; }
.legend span { display: inline-block; padding: 0 0.5em; margin-right: 0.3em; }
"""


def _html(board: Scoreboard) -> str:
    e = html.escape
    names = board.backends["backend"].tolist()
    head = "".join(f"<th>{e(n)}</th>" for n in names)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Scoreboard</title>',
        f"<style>{_STYLE}</style></head><body><main class='onnx-arrow'>",
        "<h1>Scoreboard</h1>",
        f"<table class='backends'><thead><tr><th></th>{head}</tr></thead><tbody>",
    ]
    for what, values in _facts(board):
        tds = "".join(
            f"<td class='n'>{v}</td>" if isinstance(v, int) else f"<td>{e(v)}</td>" for v in values
        )
        out.append(f"<tr><th>{e(what)}</th>{tds}</tr>")
    out += ["</tbody></table>", "<h2>By operator and element type</h2>", f"<p>{e(_LEGEND)}</p>"]
    legend = "".join(f"<span class='{v}'>{v}</span>" for v in reversed(_WORST_FIRST))
    out.append(f"<p class='legend'>{legend}</p>")
    out.append(
        f"<table class='matrix'><thead><tr><th>operator</th><th>type</th>{head}</tr></thead><tbody>"
    )
    for op, element, cells in _matrix(board):
        tds = "".join(
            "<td class='none'></td>"
            if c is None
            else f"<td class='{_cell_class(c)}'>{e(_cell_text(c))}</td>"
            for c in cells
        )
        out.append(f"<tr><th>{e(op)}</th><td>{e(element)}</td>{tds}</tr>")
    out += ["</tbody></table>", "<h2>Errors by cause</h2>"]
    causes = _causes_matrix(board)
    if not causes:
        out.append("<p>No errors.</p>")
    else:
        columns = f"<tr><th>cause</th>{head}<th>example</th></tr>"
        out.append(f"<table class='causes'><thead>{columns}</thead><tbody>")
        for cause, counts, example in causes:
            tds = "".join(f"<td class='n'>{n or ''}</td>" for n in counts)
            out.append(f"<tr><td>{e(cause)}</td>{tds}<td>{e(example)}</td></tr>")
        out.append("</tbody></table>")
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"


def _json(board: Scoreboard) -> str:
    def plain(df: pd.DataFrame) -> list[dict[str, Any]]:
        records = df.astype(object).where(df.notna(), None).to_dict(orient="records")
        return [{k: _plain(v) for k, v in r.items()} for r in records]

    data = {
        "format": _JSON_FORMAT,
        "verdicts": {v: list(s) for v, s in VERDICTS.items()},
        "backends": plain(board.backends),
        "cells": plain(board.cells),
        "causes": plain(board.causes),
    }
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def _plain(value: Any) -> Any:
    """A JSON value: numpy and pandas scalars as Python's, lists as lists."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value

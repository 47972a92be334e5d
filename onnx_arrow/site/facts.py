"""What a results site shows, computed from a results store's table before any page is
drawn: the runtimes at their versions (the matrix's rows), the onnx releases (its
columns), the run each cell shows, each run's cases by verdict, the Interop score of each
release and its trend, the failures only one runtime has, and the scoreboard of operator
x element type x cell.

The rules, in one place:

* **A line** is a runtime at a version: the run columns ``runtime``,
  ``runtime_version``, ``execution_provider``, ``runner_command`` and ``backend`` alike.
  A **runtime** is a line without its version: its name (``runtime``; else ``runner``
  and the runner's command, else ``backend``) and its execution provider.
* **A cell** is a line over an onnx release (``corpus_onnx_version``): it shows the
  latest of the line's runs there (by ``date``, then ``attempt``); the earlier ones are
  listed on the case pages.
* **A case's verdict** in a run is the worst of its outputs' (error, fail, xfail, pass,
  skip), as ``onnx-arrow report`` counts it: the counts of a cell are those of ``report
  --format json`` over the cell's run (:func:`~onnx_arrow.compare.side_by_side.scoreboard`
  makes both).
* **The Interop score** of a release is the share of its cases (those any of its cells
  ran) that pass on every runtime of the release, each at its latest version there; a
  case a runtime did not run does not pass on it.  **Its trend**: per runtime and each
  of its versions (in version order), the score with that version in place of the
  latest, the other runtimes at their latest.
* **The failures only a runtime has** over a release: the cases that do not pass (fail,
  xfail, error) on its latest version there, and pass on the latest version of every
  other runtime that ran them (one other at least).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa

from onnx_arrow.compare.report import REPORT_SCHEMA
from onnx_arrow.compare.side_by_side import VERDICTS, Scoreboard, scoreboard
from onnx_arrow.reports import Report

__all__ = ["VERDICT_OF", "WORST_FIRST", "Cell", "Facts", "Line", "facts", "version_key"]

#: The columns that make a line: a runtime at a version.
LINE_COLUMNS: Final = (
    "runtime",
    "runtime_version",
    "execution_provider",
    "runner_command",
    "backend",
)
#: Which verdict of a case's outputs is its verdict: the worst (skips the least).
WORST_FIRST: Final = ("error", "fail", "xfail", "pass", "skip")
#: The verdict of each report status.
VERDICT_OF: Final = {status: v for v, statuses in VERDICTS.items() for status in statuses}
#: What a release is called when a run does not say its corpus's onnx release.
NO_RELEASE: Final = "(unknown)"


def version_key(version: str | None) -> tuple[int, Any]:
    """An order of versions: those :class:`packaging.version.Version` reads in its order,
    then the others by their text, then none."""
    from packaging.version import InvalidVersion, Version

    if version is None:
        return (2, "")
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)


@dataclass(frozen=True)
class Line:
    """A runtime at a version (a row of the matrix): its ``runtime`` (the name and
    provider that make it one runtime), ``version``, ``label`` (distinct among lines) and
    the run columns that make it (``key``)."""

    key: tuple[str | None, ...]
    runtime: str
    version: str | None
    label: str


@dataclass(frozen=True)
class Cell:
    """A line over an onnx release: the run it shows (the latest there), its label in the
    scoreboard, its cases per verdict and how many runs the line has there."""

    line: Line
    release: str
    run_id: str
    label: str
    date: datetime.datetime
    counts: dict[str, int]
    runs: int


@dataclass(frozen=True)
class Facts:
    """Everything the pages show (see the module for the rules)."""

    lines: list[Line]
    releases: list[str]
    cells: list[Cell]
    #: The scoreboard of the cells' runs, a column per cell (its label).
    board: Scoreboard
    #: Every run (:func:`onnx_arrow.results.runs`'s columns) and its line.
    runs: list[dict[str, Any]]
    #: Per run id and case, the case's verdict in that run.
    verdicts: dict[str, dict[str, str]]
    #: Per release: ``score`` (0..1, None without cases), ``passing``, ``cases``,
    #: ``runtimes``, and ``trend`` (per runtime, [(version, score)] in version order).
    interop: dict[str, dict[str, Any]]
    #: Per runtime and release, the cases only it fails, each with its verdict.
    only_failures: dict[str, dict[str, list[tuple[str, str]]]]
    #: Every case, sorted.
    cases: list[str]
    #: The rows of each case (a dict per output row, of every run), in run order.
    case_rows: dict[str, list[dict[str, Any]]] = field(repr=False)


def _runtime_name(run: Mapping[str, Any]) -> str:
    """A runtime's name: its ``runtime``; else a runner's command (two commands, two
    runtimes), else its ``backend``; with its execution provider."""
    name = run["runtime"] or (
        f"runner {run['runner_command']}" if run["runner_command"] else run["backend"]
    )
    name = name or "(unnamed runtime)"
    provider = run["execution_provider"]
    return f"{name} ({provider})" if provider else str(name)


def _lines(runs: list[dict[str, Any]]) -> dict[tuple[str | None, ...], Line]:
    """A line per distinct key, labels told apart by what differs."""
    keys: dict[tuple[str | None, ...], dict[str, Any]] = {}
    for run in runs:
        keys.setdefault(tuple(run[c] for c in LINE_COLUMNS), run)
    ordered = sorted(
        keys.items(),
        key=lambda kv: (_runtime_name(kv[1]), version_key(kv[1]["runtime_version"]), str(kv[0])),
    )

    def label(run: Mapping[str, Any], depth: int, k: int) -> str:
        base = _runtime_name(run)
        version = run["runtime_version"]
        text = f"{base} {version}" if version else base
        more = [run["runner_command"] or "", run["backend"] or "", f"#{k + 1}"][:depth]
        more = [m for m in more if m]
        return f"{text} [{', '.join(more)}]" if more else text

    for depth in range(4):
        labels = [label(run, depth, k) for k, (_, run) in enumerate(ordered)]
        if len(set(labels)) == len(labels):
            break
    return {
        key: Line(key, _runtime_name(run), run["runtime_version"], text)
        for (key, run), text in zip(ordered, labels, strict=True)
    }


def facts(
    table: pa.Table, run_table: pa.Table, made: Mapping[str, Mapping[str, Any]] | None = None
) -> Facts:
    """The facts of a results store's ``table`` (:func:`onnx_arrow.results.read`'s), its
    runs (:func:`onnx_arrow.results.runs` of it) and what each run's report said it was
    made from, by run id (:func:`onnx_arrow.results.provenances`; the scoreboard's facts
    of each cell)."""
    runs = run_table.to_pylist()
    lines = _lines(runs)
    for run in runs:
        run["line"] = lines[tuple(run[c] for c in LINE_COLUMNS)]
        run["release"] = run["corpus_onnx_version"] or NO_RELEASE
    releases = sorted({r["release"] for r in runs}, key=version_key)
    chosen: dict[tuple[Any, str], list[dict[str, Any]]] = {}
    for run in runs:
        chosen.setdefault((run["line"].key, run["release"]), []).append(run)
    picks = []
    for (key, release), group in chosen.items():
        latest = max(group, key=lambda r: (r["date"], r["attempt"], r["run_id"]))
        picks.append((lines[key], release, latest, len(group)))
    line_order = {key: k for k, key in enumerate(lines)}
    release_order = {r: k for k, r in enumerate(releases)}
    picks.sort(key=lambda p: (line_order[p[0].key], release_order[p[1]]))

    frame = _frame(table)
    per_run = dict(tuple(frame.groupby("run_id", sort=False)))
    labels = [f"{line.label} · onnx {release}" for line, release, _, _ in picks]
    reports = [_report(table, per_run, pick[2]["run_id"], made or {}) for pick in picks]
    board = scoreboard(reports, labels=labels) if reports else _empty_board()
    counts = {row["backend"]: row for row in board.backends.to_dict(orient="records")}
    cells = [
        Cell(line, release, run["run_id"], text, run["date"],
             {v: int(counts[text][v]) for v in VERDICTS}, n)
        for (line, release, run, n), text in zip(picks, labels, strict=True)
    ]  # fmt: skip
    verdicts = _verdicts(frame)
    cases = sorted(set(frame["case"]))
    return Facts(
        lines=list(lines.values()),
        releases=releases,
        cells=cells,
        board=board,
        runs=runs,
        verdicts=verdicts,
        interop={r: _interop(r, cells, verdicts) for r in releases},
        only_failures=_only_failures(cells, verdicts),
        cases=cases,
        case_rows=_case_rows(table, runs),
    )


_FRAME_COLUMNS: Final = ("run_id", "case", "status")


def _frame(table: pa.Table) -> pd.DataFrame:
    frame = table.select(list(_FRAME_COLUMNS)).to_pandas()
    frame["verdict"] = frame["status"].map(VERDICT_OF)
    return frame


def _report(
    table: pa.Table,
    per_run: Mapping[str, pd.DataFrame],
    run_id: str,
    made: Mapping[str, Mapping[str, Any]],
) -> Report:
    """A run's rows as the compare report they came from (its columns, in its order, and
    its provenance)."""
    index = per_run[run_id].index.to_numpy()
    rows = table.take(pa.array(index)).select(REPORT_SCHEMA.names)
    return Report.of(rows, made.get(run_id))


def _empty_board() -> Scoreboard:
    return Scoreboard(pd.DataFrame(columns=["backend"]), pd.DataFrame(), pd.DataFrame())


def _verdicts(frame: pd.DataFrame) -> dict[str, dict[str, str]]:
    rank = {v: k for k, v in enumerate(WORST_FIRST)}
    ranked = frame.assign(rank=frame["verdict"].map(rank))
    worst = ranked.groupby(["run_id", "case"], sort=False)["rank"].min()
    out: dict[str, dict[str, str]] = {}
    for (run_id, case), k in worst.items():
        out.setdefault(run_id, {})[case] = WORST_FIRST[int(k)]
    return out


def _latest_per_runtime(cells: Iterable[Cell], release: str) -> dict[str, list[Cell]]:
    """A release's cells per runtime, in version order (the latest last)."""
    out: dict[str, list[Cell]] = {}
    for cell in cells:
        if cell.release == release:
            out.setdefault(cell.line.runtime, []).append(cell)
    for group in out.values():
        group.sort(key=lambda c: (version_key(c.line.version), c.date))
    return out


def _score(
    chosen: Mapping[str, Cell], cases: set[str], verdicts: Mapping[str, Mapping[str, str]]
) -> tuple[int, float | None]:
    passing = sum(
        1 for case in cases if all(verdicts[c.run_id].get(case) == "pass" for c in chosen.values())
    )
    return passing, (passing / len(cases) if cases else None)


def _interop(
    release: str, cells: list[Cell], verdicts: Mapping[str, Mapping[str, str]]
) -> dict[str, Any]:
    per_runtime = _latest_per_runtime(cells, release)
    cases = {case for group in per_runtime.values() for c in group for case in verdicts[c.run_id]}
    latest = {name: group[-1] for name, group in per_runtime.items()}
    passing, score = _score(latest, cases, verdicts)
    trend = {
        name: [(c.line.version, _score({**latest, name: c}, cases, verdicts)[1]) for c in group]
        for name, group in per_runtime.items()
    }
    return {
        "score": score,
        "passing": passing,
        "cases": len(cases),
        "runtimes": {name: c.line.label for name, c in latest.items()},
        "trend": trend,
    }


def _only_failures(
    cells: list[Cell], verdicts: Mapping[str, Mapping[str, str]]
) -> dict[str, dict[str, list[tuple[str, str]]]]:
    out: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for release in sorted({c.release for c in cells}, key=version_key):
        latest = {name: g[-1] for name, g in _latest_per_runtime(cells, release).items()}
        for name, cell in latest.items():
            others = [verdicts[c.run_id] for other, c in latest.items() if other != name]
            found = []
            for case, verdict in sorted(verdicts[cell.run_id].items()):
                if verdict not in ("fail", "xfail", "error"):
                    continue
                ran = [o[case] for o in others if case in o]
                if ran and all(v == "pass" for v in ran):
                    found.append((case, verdict))
            out.setdefault(name, {})[release] = found
    return out


#: The columns a case page shows of each output row.
CASE_COLUMNS: Final = (
    "run_id", "case", "data_set", "index", "name", "status", "max_ulp", "max_ulp_index",
    "worst_index", "worst_expected", "worst_actual", "error", "detail", "rtol", "atol",
    "tolerance", "rule", "ulp_budget", "ulp_floor", "dtype_expected", "op_types",
)  # fmt: skip


def _case_rows(table: pa.Table, runs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    order = {run["run_id"]: k for k, run in enumerate(runs)}
    out: dict[str, list[dict[str, Any]]] = {}
    for row in table.select(list(CASE_COLUMNS)).to_pylist():
        out.setdefault(row["case"], []).append(row)
    for rows in out.values():
        rows.sort(key=lambda r: (order[r["run_id"]], r["data_set"] or 0, r["index"] or 0))
    return out

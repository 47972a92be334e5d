"""``onnx-arrow results``: a results store's runs and their outputs by verdict, where
verdicts changed between runs (``--changes``), and compare reports added (``add``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa

from onnx_arrow import results
from onnx_arrow.cli._shared import EXIT_OK
from onnx_arrow.cli.work._shared import print_fields
from onnx_arrow.compare import read_report
from onnx_arrow.text import printable

__all__ = ["added_line", "run"]


def _runtime(runtime: str | None, version: str | None) -> str:
    return f"{runtime or '(runtime not recorded)'} {version or '(no version)'}"


def added_line(added: results.Added, store: str | Path) -> str:
    """What adding a run to ``store`` did, in one line."""
    said = _runtime(added.runtime, added.runtime_version)
    if added.present:
        return (
            f"results: {said}: the run is in {store} already (run {added.run_id}, same "
            "corpus digest, runtime, version and options); not added (--again adds it)"
        )
    name = "" if added.part is None else f" as {added.part.name}"
    return f"results: {said}: run {added.run_id}, {added.rows} outputs, added to {store}{name}"


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Add reports, or print a results store's runs or changes."""
    paths = args.paths
    if paths[0] == "add":
        if len(paths) < 3:
            args.subparser.error("add takes REPORT... RESULTS: one report or more, then the store")
        if args.changes:
            args.subparser.error("--changes applies to 'results RESULTS', not to add")
        *reports, store = paths[1:]
        read = [(path, read_report(path)) for path in reports]  # all read before any is added
        results.check(store)
        for path, report in read:
            for added in results.add(store, report, again=args.again, where=path):
                print(printable(added_line(added, store)), file=out)
        return EXIT_OK
    if len(paths) != 1:
        args.subparser.error(
            f"one results store, got {len(paths)} paths (to add reports: results add "
            "REPORT... RESULTS)"
        )
    if args.again:
        args.subparser.error("--again applies to 'results add'")
    table = results.read(paths[0])
    if args.changes:
        _print_changes(results.changes(table), out)
    else:
        _print_runs(paths[0], table, out)
    return EXIT_OK


def _print_runs(store: str, table: pa.Table, out: TextIO) -> None:
    runs = results.runs(table).to_pylist()
    print_fields([("results", store), ("runs", len(runs)), ("outputs", table.num_rows)], out)
    if not runs:
        return
    print(file=out)
    header = ("run", "date", "runtime", "provider or runner", "corpus", "outputs",
              "pass", "fail", "error", "skipped")  # fmt: skip
    rows = [header]
    for r in runs:
        corpus = f"onnx {r['corpus_onnx_version'] or '?'} {(r['corpus_digest'] or '')[:8]}"
        attempt = f" #{r['attempt']}" if r["attempt"] > 1 else ""
        rows.append(
            (
                r["run_id"][:12],
                r["date"].strftime("%Y-%m-%d %H:%M"),
                _runtime(r["runtime"], r["runtime_version"]) + attempt,
                r["execution_provider"] or r["runner_command"] or r["backend"] or "",
                corpus,
                *(str(r[k]) for k in ("outputs", "pass", "fail", "error", "skipped")),
            )
        )
    widths = [max(len(row[k]) for row in rows) for k in range(len(header))]
    for row in rows:
        line = "  ".join(
            cell.rjust(w) if k >= 5 else cell.ljust(w)
            for k, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        print(printable(line.rstrip()), file=out)


_AXES: dict[str, str] = {
    "runtime_version": "changes along runtime versions",
    "onnx_release": "changes along onnx releases",
}


def _side(version: str, status: Any, max_ulp: Any, error: Any) -> str:
    said = f"{version}: {status}"
    if max_ulp is not None:
        said += f", max ULP {max_ulp}"
    if error:
        said += f", {error}"
    return said


def _print_changes(table: pa.Table, out: TextIO) -> None:
    rows = table.to_pylist()
    for axis, title in _AXES.items():
        mine = [r for r in rows if r["axis"] == axis]
        print(f"{title}: {len(mine)}", file=out)
        headed = sorted(((_heading(r, axis), r) for r in mine), key=lambda pair: pair[0])
        line = None
        for heading, r in headed:  # by runtime and what stays fixed, each in case order
            if heading != line:
                print(printable(heading), file=out)
                line = heading
            name = f" {r['name']!r}" if r["name"] else ""
            before = _side(r["before"], r["before_status"], r["before_max_ulp"], r["before_error"])
            after = _side(r["after"], r["after_status"], r["after_max_ulp"], r["after_error"])
            text = (
                f"    {r['case']} output {r['index']}{name} (data set {r['data_set']}): "
                f"{r['change']} at {r['after']} ({before}; {after})"
            )
            print(printable(text), file=out)


def _heading(r: dict[str, Any], axis: str) -> str:
    """The line a change is listed under: the runtime, and the corpus (along its versions)
    or the version (along onnx releases)."""
    fixed = (
        f"the corpus of onnx {r['corpus_onnx_version'] or '?'}"
        if axis == "runtime_version"
        else f"version {r['runtime_version']}"
    )
    provider = f" ({r['execution_provider']})" if r["execution_provider"] else ""
    return f"  {r['runtime']}{provider} on {fixed}:"

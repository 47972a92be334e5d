"""``onnx-arrow compare``: a backend's outputs, or a store of them, against a store's
expected outputs; the outputs by status and the op types that do not match."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

import pandas as pd

from onnx_arrow import compare, results
from onnx_arrow.cli._shared import EXIT_DATA_ERROR, EXIT_OK, MAX_LISTED, print_error
from onnx_arrow.cli.work._shared import check_file_target, print_fields
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.cli.work.results import added_line
from onnx_arrow.cli.work.run import backend
from onnx_arrow.compare.failures import error_cause, failing, failure_line
from onnx_arrow.corpus import Store
from onnx_arrow.corpus.releases import is_release, open_release_store
from onnx_arrow.text import printable

__all__ = ["plan_of_args", "run"]


def _patterns(args: argparse.Namespace) -> compare.Expectations | None:
    """The patterns of the --patterns files, in order (skips run as xfail with
    --run-skipped)."""
    if not args.patterns:
        return None
    read = [compare.Expectations.read(path, provider=args.provider) for path in args.patterns]
    patterns = read[0]
    for more in read[1:]:
        patterns += more
    return patterns.running_skips() if args.run_skipped else patterns


def plan_of_args(args: argparse.Namespace) -> compare.Plan:
    """The plan the options of :func:`onnx_arrow.cli.compare.judging_options` give."""
    return compare.Plan(
        skip=[] if args.run_skipped else args.skip,
        xfail=[*args.skip, *args.xfail] if args.run_skipped else args.xfail,
        tolerance=args.tolerance,
        patterns=_patterns(args),
        keep_actual=args.keep_actual,
        rtol=args.rtol,
        atol=args.atol,
        max_ulp=args.max_ulp,
        ulp_floor=args.ulp_floor,
    )


def _print_unneeded(
    df: pd.DataFrame,
    patterns: compare.Expectations,
    onnx_version: str | None,
    ran: bool,
    out: TextIO,
) -> None:
    """The entries of the --patterns files that matched no failing case."""
    table = compare.unneeded_entries(df, patterns, onnx_version)
    print(f"\nentries that matched no failing case (can be removed): {len(table)}", file=out)
    for row in table.itertuples():
        group = f" [{row.group}]" if row.group else ""
        print(f"  {row.where or '(given)'}{group} {row.kind} {row.pattern!r}: {row.why}", file=out)
    if not ran and len(patterns.skip):
        print("  (skip entries that find cases are judged with --run-skipped)", file=out)


def _update(args: argparse.Namespace, df: pd.DataFrame, store: Store, out: TextIO) -> bool:
    """Write (or with --check, show) the expectation file as the run showed; whether it
    was stale."""
    from onnx_arrow.compare.expectation_update import update_expectations, write_update

    update = update_expectations(
        args.update_expectations,
        df,
        store.cases(),
        ran_skips=args.run_skipped,
        provider=args.provider,
        onnx_version=store.metadata.get("onnx_version"),
    )
    path = printable(args.update_expectations)
    verb = "would change" if args.check else "changed"
    if not update.stale:
        print(f"\nexpectation file {path}: as the run showed, nothing to change", file=out)
        return False
    print(f"\nexpectation file {path} {verb}:", file=out)
    for line in update.removed:
        print(printable(f"  removed {line}"), file=out)
    for line in update.added:
        print(printable(f"  added {line}"), file=out)
    if args.check:
        print("", file=out)
        out.write("".join(printable(x) + "\n" for x in update.diff().splitlines()))
        print(f"(--check: {path} not written; run without --check to write it)", file=out)
    else:
        write_update(update)
    return True


def _made_by(made: dict[str, object]) -> str:
    """What made the actual outputs, in words: the backend and what it runs."""
    backend = made.get("backend")
    if isinstance(backend, dict):
        return printable(f"{backend.get('name')} ({backend.get('runs')})")
    return "not recorded in ACTUAL (a store 'onnx-arrow run' wrote before stores said it)"


def _print_failures(df: pd.DataFrame, args: argparse.Namespace, out: TextIO) -> None:
    """The first ``--show`` failing outputs, a line each, and the errors by cause."""
    failed = failing(df, strict=args.strict)
    if args.show and len(failed):
        shown = failed.head(args.show)
        print(f"\nfailing outputs (the first {len(shown)} of {len(failed)}):", file=out)
        for _, row in shown.iterrows():
            print(f"  {failure_line(row)}", file=out)
        more = len(failed) - len(shown)
        if more:
            where = "--out FILE" if args.out is None else args.out
            print(f"  and {more} more ({where} for all)", file=out)
    errors = failed[failed["error"].notna()]
    if len(errors):
        causes = errors.assign(cause=errors["error"].map(error_cause))
        grouped = causes.groupby("cause", sort=False)["case"]
        table = grouped.agg(outputs="size", cases="nunique", example="first").reset_index()
        table = table.sort_values(["outputs", "cause"], ascending=[False, True], kind="stable")
        print(f"\nerrors by cause (up to {MAX_LISTED}):", file=out)
        for row in table.head(MAX_LISTED).itertuples():
            outputs = f"{row.outputs} output{'s' if row.outputs != 1 else ''}"
            cases = f"{row.cases} case{'s' if row.cases != 1 else ''}"
            print(printable(f"  {outputs} of {cases}: {row.cause}  e.g. {row.example}"), file=out)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Compare, print the outputs by status; exit status 1 if any does not pass."""
    if is_release(args.store):
        with open_release_store(args.store, offline=args.offline) as path:
            return _run(args, out, Store(path))
    return _run(args, out, Store(args.store))


def _run(args: argparse.Namespace, out: TextIO, store: Store) -> int:
    if args.all_cases and args.actual is None:
        args.subparser.error("--all-cases applies to --actual only")
    if args.actual is not None and (
        args.timeout is not None or args.engine is not None or args.jobs > 1 or args.in_process
    ):
        args.subparser.error(
            "--timeout, --jobs, --engine and --in-process apply to a backend, not to --actual"
        )
    if args.again and args.results is None:
        args.subparser.error("--again applies to --results")
    if args.results is not None:
        results.check(args.results)  # a store that does not read: said before any work
    if args.out is not None:
        reading = [store.path] + ([Path(args.actual)] if args.actual is not None else [])
        check_file_target(Path(args.out), force=args.force, what="the report", reading=reading)
    if args.check and args.update_expectations is None:
        args.subparser.error("--check applies to --update-expectations FILE")
    if args.update_expectations is not None and args.update_expectations not in args.patterns:
        args.patterns = [*args.patterns, args.update_expectations]
    plan = plan_of_args(args)
    patterns = plan.patterns
    total = len(compare.select_cases(store, args.case))
    with Progress("comparing", "cases", total=total) as progress:
        if args.actual is not None:
            report = compare.compare_stores(
                store,
                Store(args.actual),
                cases=args.case,
                progress=progress.step,
                missing="error" if args.all_cases else "leave_out",
                plan=plan,
                runtime=args.runtime,
            )
        else:
            chosen = backend(args)  # first: it settles args.timeout
            report = compare.compare(
                store,
                chosen,
                cases=args.case,
                timeout=args.timeout,
                progress=progress.step,
                jobs=args.jobs,
                engine=args.engine,
                in_process=args.in_process,
                plan=plan,
                runtime=args.runtime,
            )
    if args.out is not None:
        compare.write_report(report, args.out)
    df = report.to_pandas()
    counts = compare.status_counts(df)
    total = len(df)
    lines: list[tuple[str, object]] = [("backend", _made_by(report.provenance or {}))]
    lines.append(("outputs", total))
    lines += [(f"  {status}", n) for status, n in counts.items()]
    left_out = int((report.provenance or {}).get("left_out") or 0)
    if left_out:
        lines.append(("left out", f"{left_out} expected cases not in ACTUAL (--all-cases: errors)"))
    print_fields(lines, out)
    _print_failures(df, args, out)
    table = compare.summary(df)
    table = table[table["non_match"] > 0].head(MAX_LISTED)
    if len(table):
        print(file=out)
        print(f"op types with the most outputs that do not match (up to {MAX_LISTED}):", file=out)
        columns = ["op_type", "total", "non_match"] + [
            s for s in compare.STATUSES if s not in compare.PASSING and table[s].any()
        ]
        text = table[columns].to_string(index=False)  # op types come from the models
        print("\n".join(printable(line) for line in text.splitlines()), file=out)
    if patterns is not None:
        _print_unneeded(df, patterns, store.metadata.get("onnx_version"), args.run_skipped, out)
    if args.out is not None:
        print(f"\nreport: {args.out} (a row per output)", file=out)
    if args.results is not None:
        for added in results.add(args.results, report, again=args.again):
            print(printable(added_line(added, args.results)), file=out)
    stale = args.update_expectations is not None and _update(args, df, store, out)
    if stale and args.check:
        return EXIT_DATA_ERROR
    failed = sum(n for status, n in counts.items() if status not in compare.PASSING)
    failed += counts["xpass"] if args.strict else 0
    if total - counts["skipped"] == 0:  # nothing compared is no pass
        print_error("no output was compared; check STORE, --case and ACTUAL")
        return EXIT_DATA_ERROR
    return EXIT_DATA_ERROR if failed else EXIT_OK

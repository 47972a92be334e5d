"""``onnx-arrow compare``: a backend's outputs, or a store of them, against a store's
expected outputs; the outputs by status and the op types that do not match."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from onnx_arrow import compare
from onnx_arrow.cli._shared import EXIT_DATA_ERROR, EXIT_OK, MAX_LISTED, print_error
from onnx_arrow.cli.work._shared import check_file_target, print_fields
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.cli.work.run import backend
from onnx_arrow.corpus import Store
from onnx_arrow.corpus.releases import is_release, open_release_store

__all__ = ["run"]


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
        args.timeout is not None or args.engine is not None or args.jobs > 1
    ):
        args.subparser.error("--timeout, --jobs and --engine apply to a backend, not to --actual")
    if args.out is not None:
        reading = [store.path] + ([Path(args.actual)] if args.actual is not None else [])
        check_file_target(Path(args.out), force=args.force, what="the report", reading=reading)
    plan = {
        "skip": args.skip,
        "xfail": args.xfail,
        "tolerance": {pattern: (rtol, atol) for pattern, rtol, atol in args.tolerance},
        "patterns": None if args.patterns is None else compare.Expectations.read(args.patterns),
        "keep_actual": args.keep_actual,
        "rtol": args.rtol,
        "atol": args.atol,
        "max_ulp": args.max_ulp,
        "ulp_floor": args.ulp_floor,
    }
    total = len(compare.select_cases(store, args.case))
    with Progress("comparing", "cases", total=total) as progress:
        if args.actual is not None:
            df = compare.compare_stores(
                store,
                Store(args.actual),
                cases=args.case,
                progress=progress.step,
                missing="error" if args.all_cases else "leave_out",
                **plan,
            )
        else:
            chosen = backend(args)  # first: it settles args.timeout
            df = compare.compare(
                store,
                chosen,
                cases=args.case,
                timeout=args.timeout,
                progress=progress.step,
                jobs=args.jobs,
                engine=args.engine,
                **plan,
            )
    if args.out is not None:
        compare.write_report(df, args.out)
    counts = compare.status_counts(df)
    total = len(df)
    lines: list[tuple[str, object]] = [("outputs", total)]
    lines += [(f"  {status}", n) for status, n in counts.items()]
    left_out = int(df.attrs.get("left_out", 0))
    if left_out:
        lines.append(("left out", f"{left_out} expected cases not in ACTUAL (--all-cases: errors)"))
    print_fields(lines, out)
    table = compare.summary(df)
    table = table[table["non_match"] > 0].head(MAX_LISTED)
    if len(table):
        print(file=out)
        print(f"op types with the most outputs that do not match (up to {MAX_LISTED}):", file=out)
        columns = ["op_type", "total", "non_match"] + [
            s for s in compare.STATUSES if s not in compare.PASSING and table[s].any()
        ]
        print(table[columns].to_string(index=False), file=out)
    if args.out is not None:
        print(f"\nreport: {args.out} (a row per output)", file=out)
    failed = sum(n for status, n in counts.items() if status not in compare.PASSING)
    failed += counts["xpass"] if args.strict else 0
    if total - counts["skipped"] == 0:  # nothing compared is no pass
        print_error("no output was compared; check STORE, --case and ACTUAL")
        return EXIT_DATA_ERROR
    return EXIT_DATA_ERROR if failed else EXIT_OK

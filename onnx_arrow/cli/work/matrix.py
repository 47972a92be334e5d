"""``onnx-arrow matrix``: every corpus x every backend or runner into a results store, a
line per pair as it ends, then the table of the pairs."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TextIO

from onnx_arrow import compare, results
from onnx_arrow.cli._shared import EXIT_DATA_ERROR, EXIT_OK, print_error, settle_timeout
from onnx_arrow.cli.work.compare import plan_of_args
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.text import printable

__all__ = ["run"]


def _backends(args: argparse.Namespace) -> list[results.MatrixBackend]:
    """The --backend and --runner options as given, each with its --runtime; a runner's
    command checked now (a usage error), a backend's spec passed on as given."""
    if not args.runs:
        args.subparser.error("give one --backend or --runner or more: what runs each corpus")
    if args.in_process:  # compare's and run's option, shared with them: not taken here
        args.subparser.error(
            "--in-process applies to compare and run: a matrix runs its backends protected, "
            "each in a worker process"
        )
    made = []
    for kind, what, runtime in args.runs:
        if kind == "runner":
            try:
                compare.CommandRunner(what)
            except compare.CompareError as exc:
                args.subparser.error(f"--runner: {exc.message}")
            made.append(results.MatrixBackend(runner=what, runtime=runtime))
        else:
            made.append(results.MatrixBackend(backend=what, runtime=runtime))
    return made


def _counts(pair: results.Pair) -> str:
    return (
        f"{pair.outputs} outputs: {pair.passed} pass, {pair.failed} fail, {pair.errors} "
        f"error, {pair.skipped} skipped"
    )


def pair_line(pair: results.Pair, k: int, total: int) -> str:
    """The line a pair gets once it is done."""
    head = f"matrix: pair {k} of {total}: {pair.corpus} x {pair.label}"
    if pair.state == "failed":
        return f"{head}: failed ({pair.seconds:.1f} s): {pair.error}"
    runtime = f"{pair.runtime or '(runtime not recorded)'} {pair.runtime_version or ''}".rstrip()
    if pair.state == "present":
        return f"{head}: {runtime}: in the results store already, not run ({_counts(pair)})"
    return f"{head}: {runtime}: {_counts(pair)}, {pair.seconds:.1f} s, added"


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run the matrix; exit status 1 if a pair failed."""
    backends = _backends(args)
    settle_timeout(args)
    if args.backend_logs:  # read by the backend where it runs: workers inherit it
        os.environ[compare.ORT_LOG_SEVERITY_VARIABLE] = str(compare.ORT_DEFAULT_LOG_SEVERITY)
    plan = plan_of_args(args)
    total = len(args.corpus) * len(backends)
    with Progress("matrix", "cases") as progress:
        done = 0

        def on_pair(pair: results.Pair) -> None:
            nonlocal done
            done += 1
            progress.say(pair_line(pair, done, total))

        pairs = results.matrix(
            args.results,
            args.corpus,
            backends,
            plan=plan,
            cases=args.case,
            timeout=args.timeout,
            jobs=args.jobs,
            engine=args.engine,
            again=args.again,
            offline=args.offline,
            progress=lambda corpus, label, case: progress.step(f"{corpus} x {label}  {case}"),
            on_pair=on_pair,
        )
    print_pairs(pairs, args.results, out)
    failed = [p for p in pairs if p.state == "failed"]
    if failed:
        print_error(f"{len(failed)} of {len(pairs)} pairs failed; their errors are listed above")
        return EXIT_DATA_ERROR
    return EXIT_OK


def print_pairs(pairs: Sequence[results.Pair], store: str, out: TextIO) -> None:
    """The table of the pairs, then the errors of those that failed."""
    added = sum(p.state == "added" for p in pairs)
    present = sum(p.state == "present" for p in pairs)
    failed = [p for p in pairs if p.state == "failed"]
    print(
        f"{store}: {len(pairs)} pairs, {added} added, {present} present (not run again), "
        f"{len(failed)} failed",
        file=out,
    )
    header = ("corpus", "onnx", "runtime", "recorded as", "outputs", "pass", "fail",
              "error", "skipped", "seconds", "pair")  # fmt: skip
    rows: list[tuple[str, ...]] = [header]
    for p in pairs:
        recorded = f"{p.runtime or '?'} {p.runtime_version or '?'}" if p.state != "failed" else ""
        seconds = "" if p.state == "present" else f"{p.seconds:.1f}"
        rows.append(
            (
                p.corpus,
                p.corpus_onnx_version or "?",
                p.label,
                recorded,
                *(str(n) for n in (p.outputs, p.passed, p.failed, p.errors, p.skipped)),
                seconds,
                p.state,
            )
        )
    widths = [max(len(row[k]) for row in rows) for k in range(len(header))]
    print(file=out)
    for row in rows:
        line = "  ".join(
            cell.rjust(w) if 4 <= k <= 9 else cell.ljust(w)
            for k, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        print(printable(line.rstrip()), file=out)
    if failed:
        print("\nfailed pairs:", file=out)
        for p in failed:
            print(printable(f"  {p.corpus} x {p.label}: {p.error}"), file=out)

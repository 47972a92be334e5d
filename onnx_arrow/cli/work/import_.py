"""``onnx-arrow import``: a corpus into one Parquet store or a dataset store, and the
summary it prints."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

import onnx

from onnx_arrow.cli._shared import EXIT_OK, PROG
from onnx_arrow.cli.work._shared import (
    bytes_text,
    check_file_target,
    count_cases,
    default_total,
    print_fields,
    starting,
    warnings_as_lines,
)
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.corpus import (
    Case,
    FolderSource,
    WriteOptions,
    default_source,
    write_dataset,
    write_store,
)

__all__ = ["run"]


def _default_corpus_name() -> str:
    return f"the built-in default corpus (onnx {onnx.__version__}: node suite, wheel model tests)"


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Import SRC (or the default corpus) into OUT and print the summary; exit status 0."""
    with warnings_as_lines():
        return _run(args, out)


def _run(args: argparse.Namespace, out: TextIO) -> int:
    out_path = Path(args.out)
    if args.src is not None:
        src = Path(args.src)
        if _is_within(out_path, src):
            args.subparser.error(
                f"OUT {args.out} is inside SRC {args.src}; write the store outside the corpus"
            )
        folder = FolderSource(src, cases=args.case)
        source: Iterable[Case] = folder
        total: int | Callable[[], int | None] = count_cases(src)
        if args.case is not None:  # the cases chosen, listed now: a pattern that finds none
            total = sum(1 for _ in folder.refs())  # is refused before any work
        described = str(src)
    else:
        source = default_source(cases=args.case)
        total = default_total(source) if args.case is None else _unknown
        described = _default_corpus_name()
    if args.case is not None:
        described += ", the cases matching " + ", ".join(map(repr, args.case)) + ","
    as_dataset = (
        args.dataset
        or args.append
        or args.partition_by is not None
        or (args.part_bytes is not None or args.part_cases is not None)
    )
    if args.append and args.force:
        args.subparser.error("--append adds to OUT and --force replaces it: give one")
    if not as_dataset:
        check_file_target(out_path, force=args.force)
    levels = (
        {}
        if args.compression_level is None
        else {
            "compression_level": args.compression_level,
            "float_compression_level": args.compression_level,
        }
    )
    options = WriteOptions(
        **levels,
        keep_undecodable=args.keep_undecodable,
        row_group_cases=args.row_group_cases,
    )
    with Progress("importing", "cases", start=starting(args.src), total=total) as progress:
        step = progress.step
        if as_dataset:
            summary = write_dataset(
                source,
                out_path,
                options=options,
                part_bytes=args.part_bytes,
                part_cases=args.part_cases,
                by_kind=True if args.partition_by == "kind" else None,  # None: as OUT's
                append=args.append,
                replace=args.force,
                progress=lambda c: step(c.name),
                jobs=args.jobs,
            )
        else:
            summary = write_store(
                source, out_path, options=options, progress=lambda c: step(c.name), jobs=args.jobs
            )
    source_bytes = summary["source_bytes"]
    for warning in summary["warnings"]:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    ratio = summary["bytes"] / source_bytes if source_bytes else 0.0
    lines: list[tuple[str, object]] = [
        ("  cases", summary["cases"]),
        ("  files", summary["files"]),
        ("  rows", summary["rows"]),
        ("  row groups", summary["row_groups"]),
    ]
    if as_dataset:
        parts = len(summary["parts"])
        lines.append(("  parts", f"{parts} added" if args.append else parts))
    lines += [
        (
            "  store size",
            bytes_text(summary["bytes"]) + (" (the parts added)" if args.append else ""),
        ),
        ("  source", bytes_text(source_bytes)),
        ("  ratio", f"{ratio:.3f} (store size / source bytes)"),
    ]
    if summary["warnings"]:
        lines.append(("  warnings", f"{len(summary['warnings'])} files kept as bytes (on stderr)"))
    print(f"imported {described} into {out_path}", file=out)
    print_fields(lines, out)
    return EXIT_OK


def _unknown() -> None:
    """The number of cases the patterns choose in the default corpus: known at the end."""


def _is_within(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())

"""``onnx-arrow verify``: import a corpus to a temporary store, export it to a temporary
folder, and compare every file with the source, path and bytes."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

from onnx_arrow.cli._shared import EXIT_DATA_ERROR, EXIT_OK, MAX_LISTED, print_error
from onnx_arrow.cli.work._shared import (
    bytes_text,
    count_cases,
    default_total,
    reading,
    starting,
    tree_files,
    warnings_as_lines,
)
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.core.model import read_regular_file
from onnx_arrow.corpus import (
    Case,
    FolderSource,
    WriteOptions,
    default_source,
    export_store,
    write_dataset,
    write_store,
)
from onnx_arrow.corpus.releases import is_release, parse_release, release_tree
from onnx_arrow.corpus.sources import MAX_FILE_BYTES

__all__ = ["run"]


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Import, export and compare; exit status 1 if any file differs."""
    with warnings_as_lines():  # a value that contradicts its declaration, said once
        return _verify(args, out)


def _verify(args: argparse.Namespace, out: TextIO) -> int:
    if args.src is None or not is_release(args.src) or parse_release(args.src).installed:
        if args.src is not None and is_release(args.src):
            args.src = None  # @onnx: the built-in default corpus
        return _run(args, out)
    # a release: its data tree, fetched (or generated) into a temporary folder, verified
    with release_tree(args.src, offline=args.offline) as (root, _):
        args.src = str(root)
        # a release's files are what it shipped: one that does not decode is kept as bytes
        return _run(args, out, WriteOptions(keep_undecodable=True))


def _run(args: argparse.Namespace, out: TextIO, options: WriteOptions | None = None) -> int:
    if args.src is not None:
        src = Path(args.src)
        total: int | Callable[[], int | None] = count_cases(src)  # checked before any work

        def source() -> Iterable[Case]:
            return FolderSource(src)

    else:
        source = default_source
    imported = source()
    if args.src is None:
        total = default_total(imported)
    with (
        tempfile.TemporaryDirectory(prefix="onnx-arrow-verify-store-") as store_dir,
        tempfile.TemporaryDirectory(prefix="onnx-arrow-verify-tree-") as tree_dir,
    ):
        store_path = Path(store_dir) / "corpus.parquet"
        with Progress("importing", "cases", start=starting(args.src), total=total) as progress:
            if args.part_cases is not None:
                store_path = Path(store_dir) / "corpus"
                summary = write_dataset(
                    imported,
                    store_path,
                    part_cases=args.part_cases,
                    by_kind=True,
                    options=options,
                    progress=lambda c: progress.step(c.name),
                    jobs=args.jobs,
                )
            else:
                summary = write_store(
                    imported,
                    store_path,
                    options=options,
                    progress=lambda c: progress.step(c.name),
                    jobs=args.jobs,
                )
        tree = Path(tree_dir) / "corpus"
        files = summary["files"]
        with Progress("exporting", "files", total=files) as progress, reading(store_path):
            export_store(store_path, tree, progress=lambda f: progress.step(f.path), jobs=args.jobs)
        with Progress("comparing", "files", start=starting(args.src), total=files) as progress:
            same, differences = _compare(source(), tree, progress)
    if not differences:
        print(
            f"{same} files byte-identical after import and export; "
            f"{summary['cases']} cases, store {bytes_text(summary['bytes'])}",
            file=out,
        )
        return EXIT_OK
    for line in differences[:MAX_LISTED]:
        print(line, file=out)
    if len(differences) > MAX_LISTED:
        print(f"... and {len(differences) - MAX_LISTED} more differences", file=out)
    print(f"{same} files byte-identical, {len(differences)} differences", file=out)
    print_error(f"{len(differences)} differences between the source and its export from the store")
    return EXIT_DATA_ERROR


def _compare(source: Iterable[Case], tree: Path, progress: Progress) -> tuple[int, list[str]]:
    """Compare the source's files with the tree: same paths, same bytes, nothing extra."""
    exported = set(tree_files(tree))
    same = 0
    differences: list[str] = []
    for case in source:
        for f in case.files:
            progress.step(f.path)
            if f.path not in exported:
                differences.append(f"missing from the export: {f.path}")
                continue
            exported.discard(f.path)
            got = read_regular_file(str(tree / f.path), max_bytes=MAX_FILE_BYTES, where=f.path)
            if got == f.data:
                same += 1
            else:
                differences.append(f"different bytes: {f.path}: {_first_difference(f.data, got)}")
    differences += [f"not in the source: {p}" for p in sorted(exported)]
    return same, differences


def _first_difference(expected: bytes, got: bytes) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
        min(len(expected), len(got)),
    )
    return f"source {len(expected)} bytes, export {len(got)} bytes, first difference at byte {at}"

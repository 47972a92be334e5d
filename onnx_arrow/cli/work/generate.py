"""``onnx-arrow generate``: the node test suite the installed onnx builds, written as a
folder tree."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from onnx_arrow.cli._shared import EXIT_OK
from onnx_arrow.cli.work._shared import bytes_text, check_folder_target, starting
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.corpus import CorpusFile, NodeSuiteSource
from onnx_arrow.corpus.releases import parse_release, release_tree, source_text
from onnx_arrow.corpus.tree import write_tree

__all__ = ["run"]


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Write the node suite into DEST and print how many files; exit status 0."""
    dest = Path(args.dest)
    check_folder_target(dest, force=args.force)
    if args.src is not None and not parse_release(args.src).installed:
        return _release(args, dest, out)
    cases = 0

    def files() -> Iterator[CorpusFile]:
        nonlocal cases
        for case in NodeSuiteSource():
            cases += 1
            yield from case.files

    with Progress("generating", "files", start=starting(None)) as progress:
        counts = write_tree(
            files(), dest, force=args.force, progress=lambda f: progress.step(f.path)
        )
    print(
        f"wrote {counts['files']} files, {bytes_text(counts['bytes'])}, of {cases} node suite "
        f"cases to {dest}",
        file=out,
    )
    return EXIT_OK


def _release(args: argparse.Namespace, dest: Path, out: TextIO) -> int:
    """Write a release's whole data tree into DEST, as its wheel ships it."""
    with tempfile.TemporaryDirectory(prefix=".onnx-arrow-", dir=dest.parent) as tmp:
        with release_tree(args.src, Path(tmp) / "data", offline=args.offline) as (root, prov):
            files = [
                CorpusFile(p.relative_to(root).as_posix(), p.read_bytes())
                for p in sorted(root.rglob("*"))
                if p.is_file()
            ]
        counts = write_tree(files, dest, force=args.force)
    print(
        f"wrote {counts['files']} files, {bytes_text(counts['bytes'])}, of "
        f"{source_text(prov)} to {dest}",
        file=out,
    )
    return EXIT_OK

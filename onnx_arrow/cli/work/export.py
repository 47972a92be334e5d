"""``onnx-arrow export``: a store back to the corpus folder tree, byte for byte."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import TextIO

from onnx_arrow.cli._shared import EXIT_OK
from onnx_arrow.cli.work._shared import bytes_text, check_folder_target, reading
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.corpus import Store, export_store
from onnx_arrow.corpus.facts import file_count

__all__ = ["run"]


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Write every file of STORE into DEST and print how many; exit status 0."""
    dest = Path(args.dest)
    store = Store(args.store)
    check_folder_target(dest, force=args.force)
    # counted when a progress line first shows it (a terminal's, at the first file), once
    total = functools.cache(lambda: _file_count(store))
    with Progress("exporting", "files", total=total) as progress, reading(args.store):
        counts = export_store(
            store, dest, force=args.force, progress=lambda f: progress.step(f.path), jobs=args.jobs
        )
    print(f"exported {counts['files']} files, {bytes_text(counts['bytes'])}, to {dest}", file=out)
    return EXIT_OK


def _file_count(store: Store) -> int:
    """The files of a store, for progress."""
    with reading(store.path):
        return file_count(store)

"""``onnx-arrow site``: a results store built into a static site, replacing the one before."""

from __future__ import annotations

import argparse
import contextlib
from typing import TextIO

from onnx_arrow.cli._shared import EXIT_OK
from onnx_arrow.corpus.releases import is_release, open_release_store
from onnx_arrow.site import build_site
from onnx_arrow.text import printable, size

__all__ = ["run"]


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Build RESULTS into OUT."""
    with contextlib.ExitStack() as stack:
        store = args.store
        if store is not None and is_release(store):
            store = stack.enter_context(open_release_store(store, offline=args.offline))
        built = build_site(args.results, args.out, store=store, triage=args.triage)
    print(
        printable(
            f"site: {args.out} ({built.pages} pages, {built.runs} runs, {built.cases} cases, "
            f"{built.zips} case zips; {built.files} files, {size(built.nbytes)}, "
            f"{built.seconds:.2f} s)"
        ),
        file=out,
    )
    return EXIT_OK

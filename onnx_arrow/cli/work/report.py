"""``onnx-arrow report``: compare reports rendered as a scoreboard, to stdout or a file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from onnx_arrow.cli._shared import EXIT_OK
from onnx_arrow.cli.work._shared import check_file_target
from onnx_arrow.compare.scoreboard import scoreboard
from onnx_arrow.corpus.tree import atomic_file

__all__ = ["run"]


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Render REPORT... as a scoreboard."""
    labels = args.label
    if labels is not None and len(labels) != len(args.reports):
        args.subparser.error(
            f"{len(labels)} --label for {len(args.reports)} reports; give one per REPORT"
        )
    if labels is not None and len(set(labels)) != len(labels):
        args.subparser.error("the --label names must differ")
    if args.out is not None:
        reading = [Path(p) for p in args.reports]
        check_file_target(Path(args.out), force=args.force, what="the scoreboard", reading=reading)
    text = scoreboard(args.reports, labels=labels).render(args.format)
    if args.out is None:
        out.write(text)
        return EXIT_OK
    with atomic_file(args.out, what="the scoreboard") as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    print(f"scoreboard: {args.out} ({len(args.reports)} reports, {args.format})", file=out)
    return EXIT_OK

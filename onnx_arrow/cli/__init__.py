"""The ``onnx-arrow`` command: the corpus store, a built-in example, a look inside files.

Commands: ``import`` a corpus (the built-in default corpus, or a folder) into one
Parquet store, ``export`` a store back to the folder tree, ``verify`` that a
corpus survives the round trip byte for byte, ``generate`` the node suite as a
folder, ``info`` on a ``.pb`` file, a store or a case folder, and ``example``;
``run`` a backend over a store, writing its outputs as a store, and ``compare``
a backend's outputs (or such a store) with the expected ones (exit 1 if any
output does not match), ``report`` compare reports as a scoreboard, ``coverage`` what a
corpus tests of the ONNX specification, and ``results``: a results store's runs, where
their verdicts changed, reports added to it; ``matrix`` every corpus x every backend or
runner into a results store; ``site`` a results store as a static site.

Exit codes: 0 success, 1 a data error (a file, case or store onnx-arrow cannot
read, an output it will not overwrite, a round trip that differs; one line on
stderr), 2 a usage error, 130 interrupted (Ctrl-C; nothing half-written is left).

This module is the entry point: :func:`main` builds the parser from every command's
module (each adds its sub-parser, and imports nothing heavy), and once the arguments
have parsed loads the work of the one command asked for, from
:mod:`onnx_arrow.cli.work`, so that ``--help`` and a usage error answer at once.

>>> main(["--version"])  # doctest: +ELLIPSIS
onnx-arrow ...
0
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Final

import onnx_arrow
from onnx_arrow._startup import interrupted, work_ended, work_starts
from onnx_arrow.cli import (
    compare,
    coverage,
    diff,
    example,
    export,
    generate,
    import_,
    info,
    matrix,
    report,
    results,
    run,
    site,
    trace,
    verify,
)
from onnx_arrow.cli._shared import (
    EXIT_DATA_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CommandModule,
    Parser,
    UsageError,
    print_error,
)
from onnx_arrow.errors import OnnxArrowError

__all__ = ["main"]

#: Each command's module, in the order --help lists them: ``register(commands)`` adds
#: its sub-parser, ``load()`` imports its work and returns it.
COMMANDS: Final[dict[str, CommandModule]] = {
    "import": import_,
    "export": export,
    "verify": verify,
    "generate": generate,
    "info": info,
    "run": run,
    "compare": compare,
    "diff": diff,
    "example": example,
    "report": report,
    "coverage": coverage,
    "results": results,
    "matrix": matrix,
    "site": site,
    "trace": trace,
}

_DESCRIPTION: Final = """\
ONNX values as Apache Arrow data, exactly, both ways.

Tensors become arrow.fixed_shape_tensor (or a variable-shape layout) columns
with every one of ONNX's 28 element types, and come back byte for byte.
Corpora of ONNX test cases go to one Parquet store that DuckDB, Polars and
pandas query, and come back as the same folder tree, byte for byte."""

_EPILOG: Final = """\
examples:
  onnx-arrow import corpus.parquet
      the built-in default corpus (the installed onnx's node suite and the model
      tests in its wheel) to one Parquet store
  onnx-arrow import path/to/onnx/backend/test/data corpus.parquet
      a corpus folder to one Parquet store
  onnx-arrow export corpus.parquet corpus/
      the store back to the folder tree, byte for byte
  onnx-arrow verify
      import, export and compare every file of the default corpus
  onnx-arrow info corpus.parquet
      what a store holds; also takes a case folder, a model or a .pb file
  onnx-arrow example
      convert a built-in set of tensors to Arrow and back, and show them
  python -m onnx_arrow --version

exit status: 0 success, 1 a file, case or store onnx-arrow cannot read, an output
it will not overwrite, or a round trip that differs, 2 bad usage, 130 interrupted"""


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {onnx_arrow.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS.values():
        command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status instead of exiting.

    A Ctrl-C ends it with :data:`EXIT_INTERRUPTED` and one line wherever it comes
    (:mod:`onnx_arrow._startup`): outputs are written beside their target and renamed
    when complete, temporary folders are removed and worker processes stopped on the
    way out, so nothing half-done is left.
    """
    try:
        status = _run(argv)
    except KeyboardInterrupt:
        status = _interrupted()
    finally:
        work_ended()  # a Ctrl-C from here on exits at once: everything is cleaned up
    work_ended(status)
    return status


def _run(argv: Sequence[str] | None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except UsageError:
        return EXIT_USAGE
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    out = sys.stdout
    try:
        work = COMMANDS[args.command].load()  # a Ctrl-C here still exits at once
        work_starts()  # from here on a Ctrl-C unwinds, cleaning up
        status = work(args, out)
    except UsageError:
        return EXIT_USAGE
    except OnnxArrowError as exc:  # a command's own errors too: one line, exit status 1
        status = _report(str(exc))
    except MemoryError:
        # a legal but huge input (a sparse file) on a machine without the memory for it
        status = _report("out of memory; free memory, or leave the largest files out")
    except BrokenPipeError:
        # The reader went away (``onnx-arrow example | head``): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:  # a folder that cannot be created, a full disk ...
        where = f"{exc.filename}: " if exc.filename else ""
        status = _report(f"{where}{exc.strerror or exc}")
    if interrupted():
        # a Ctrl-C came, but what it raised was swallowed on the way (in a finalizer) or
        # turned into another error: the command was interrupted all the same
        raise KeyboardInterrupt
    return status


def _report(message: str) -> int:
    """A data error: its one line, and its exit status (unless a Ctrl-C caused it)."""
    if not interrupted():
        print_error(message)
    return EXIT_DATA_ERROR


def _interrupted() -> int:
    """The one way an interrupted command ends: its one line, no process of its left,
    :data:`EXIT_INTERRUPTED`."""
    work_ended()  # a second Ctrl-C exits at once: the workers die with this process
    print(f"{PROG}: interrupted", file=sys.stderr)
    _stop_children()
    return EXIT_INTERRUPTED


def _stop_children() -> None:
    """End any worker process still running: every pool stops and waits for its own, so
    this is the last net, for one started where no pool records it; by now every pool has
    stopped writing, so nothing such a process holds is half-written."""
    import multiprocessing

    for child in multiprocessing.active_children():
        child.terminate()
    for child in multiprocessing.active_children():
        child.join(5)

"""``onnx-arrow run``: a backend over a store, its outputs written as a store.  Its
arguments here; its work in :mod:`onnx_arrow.cli.work.run`, imported only to run it.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

from onnx_arrow.cli._shared import (
    Command,
    add_command,
    backend_options,
    offline_option,
    onnxruntime_options,
)

_EPILOG: Final = """\
examples:
  onnx-arrow run corpus.parquet actual.parquet
      onnx's reference evaluator on every case
  onnx-arrow run --backend onnxruntime --case 'node/test_add*' corpus.parquet ort.parquet
      onnxruntime (pip install onnxruntime) on the Add cases
  onnx-arrow run corpus.parquet node.parquet --runner 'node run.js {model} {inputs} {outputs}'
      a command per data set, through files (examples/runners/onnxruntime-node)
  onnx-arrow run corpus.parquet tract.parquet --runner 'tract {model} ...' --runtime tract==0.21.13
      the runner's runtime and version recorded in OUT (and by 'compare --actual')
  onnx-arrow run --backend my_package.backend:MyBackend corpus.parquet mine.parquet
      a backend with onnx's interface (prepare, and a rep's run), named MODULE:NAME
  onnx-arrow run --backend onnxruntime==1.20.1 corpus.parquet ort-1.20.1.parquet
      onnxruntime 1.20.1 from the package index, in an environment made for it (cached)

Exit status 0 when OUT is written, backend errors or not (compare reports them);
1 if STORE cannot be read, OUT exists (without --force) or onnxruntime is missing."""


def register(commands: Any) -> None:
    """Add ``run`` and its arguments."""
    run = add_command(
        commands,
        "run",
        "run a backend over a store and write its outputs as a store",
        "Run a backend (onnx's reference evaluator, onnxruntime, or one with onnx's backend "
        "interface) on every data set of every "
        "case of STORE and write a store OUT of the same models and inputs with the backend's "
        "outputs; compare the two with 'onnx-arrow compare STORE --actual OUT'.  A backend "
        "error is kept in OUT (output_K.error.txt) and counted, never fatal.",
        _EPILOG,
    )
    run.add_argument("store", metavar="STORE", help="a Parquet store written by import")
    run.add_argument("out", metavar="OUT", help="the Parquet store of actual outputs to write")
    runner_option(backend_options(run))
    runtime_option(run)
    onnxruntime_options(run)
    offline_option(run)
    run.add_argument("--force", action="store_true", help="replace OUT if it exists")


def runner_option(group: Any) -> None:
    """--runner COMMAND, in the group of --backend (``compare`` has it too)."""
    group.add_argument(
        "--runner",
        metavar="COMMAND",
        help="run COMMAND per data set instead of a backend (any runtime, through files): "
        "{model} is the model file, {inputs} a folder of input_K.pb, {outputs} an empty "
        "folder it writes output_K.pb into, {case} a folder with model.onnx and "
        "test_data_set_0/; split as a shell does, run without one, in a temporary folder",
    )


def parsed_runtime(text: str) -> str:
    """An argparse type: ``NAME==VERSION``, checked."""
    # imported only once a --runtime is given: --help does not need it
    from onnx_arrow.compare.backends import parse_runtime
    from onnx_arrow.errors import CompareError

    try:
        parse_runtime(text)
    except CompareError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
    return text


def runtime_option(parser: Any) -> None:
    """--runtime NAME==VERSION (``compare`` has it too)."""
    parser.add_argument(
        "--runtime",
        type=parsed_runtime,
        metavar="NAME==VERSION",
        help="the runtime and version that ran, recorded in the provenance and a results "
        "store's runtime and runtime_version columns: a --runner's (its command says no "
        "version), or over what a --backend says of itself (default: the backend's own, "
        "e.g. onnxruntime and its version)",
    )


def load() -> Command:
    """The command's work, imported now (onnx, the store and the backend with it)."""
    from onnx_arrow.cli.work.run import run

    return run

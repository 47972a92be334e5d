"""``onnx-arrow trace``: a case's intermediate values on two backends, the first node where
they part ways, and that node as a case of its own.  Its arguments here; its work in
:mod:`onnx_arrow.cli.work.trace`, imported only to run it.
"""

from __future__ import annotations

from typing import Any, Final

from onnx_arrow.cli._shared import (
    DEFAULT_TIMEOUT,
    Command,
    add_command,
    onnxruntime_options,
    positive,
    rule_options,
    whole_number,
)
from onnx_arrow.cli.run import runtime_option

_EPILOG: Final = """\
examples:
  onnx-arrow trace corpus.parquet --case light/light_squeezenet --backend onnxruntime
      every value of the model on onnxruntime against onnx's reference evaluator
  onnx-arrow trace corpus.parquet --case node/test_gemm_default_scalar_bias \\
        --backend my_package.backend:MyBackend --max-ulp 0 --repro repro/
      bit-exactness; the first node that differs written as a case folder
  onnx-arrow trace corpus.parquet --case light/light_densenet121 --backend onnxruntime \
        --session-option graph_optimization_level=ORT_DISABLE_ALL
      onnxruntime without its graph optimizations: each value as the whole model makes it
  onnx-arrow import repro/ repro.parquet && onnx-arrow compare repro.parquet \\
        --backend my_package.backend:MyBackend --max-ulp 0
      the divergence again, from the repro alone
  onnx-arrow trace corpus.parquet --case light/light_squeezenet \\
        --runner 'node run.js {model} {inputs} {outputs}'
      a runtime that is not Python, through files (examples/runners/onnxruntime-node)

The model runs on both backends with its nodes' outputs added as graph outputs, --chunk
of them at a time (peak memory is a chunk's values, not the model's; each chunk is one
run of the model).  Every value is compared as 'compare' compares an output: the case's
tolerance (its own, else --rtol and --atol), or --max-ulp.  TRACE.parquet holds a row per
value per backend (its data in the store's typed columns, its comparison beside it) and
the verdict in its metadata.  The values made inside If, Loop and Scan bodies and local
functions are not traced (the node's outputs are); the metadata lists them.  A runtime
that fuses nodes computes the values as exposed (a fusion is undone where its inner
values are asked for), so another --chunk may give it other bits; --providers and
--session-option apply to the side (or sides) named onnxruntime.

The first divergent node is the first, in topological order, whose outputs diverge while
all its inputs agree and whose divergence reaches an output the case checks (through
values that diverge too); divergent values that reach none are listed apart.  With
--runner each chunk is one run of the command: the model's outputs are the chunk's
values, those shape inference cannot type declared by name alone, and {untyped} names a
file listing their numbers K.  A backend or runner that cannot give a chunk's values is
run on halves of it until one value alone fails: the error names that value, its node
and the cause (of a runner's error, the last exception line of its stderr).

Exit status 0 if no value diverges, 1 if one does (or the trace cannot be made: the case
has no model, a value is written twice, a backend cannot give a value), 2 bad usage."""


def register(commands: Any) -> None:
    """Add ``trace`` and its arguments."""
    cmd = add_command(
        commands,
        "trace",
        "find the first node where two backends part ways",
        "Run a case of STORE on --backend and on --against (onnx's reference evaluator by "
        "default) with every intermediate value exposed, write them to a trace store, and "
        "print the first node, in topological order, whose outputs diverge while all its "
        "inputs agree and whose divergence reaches an output the case checks, with the "
        "worst elements and the later divergences it explains.",
        _EPILOG,
    )
    cmd.add_argument("store", metavar="STORE", help="a Parquet store written by import")
    cmd.add_argument("--case", required=True, metavar="CASE", help="the case: node/test_abs")
    cmd.add_argument(
        "--data-set",
        type=whole_number(0),
        metavar="N",
        help="the data set to feed (test_data_set_N; default: the case's first)",
    )
    traced = cmd.add_mutually_exclusive_group(required=True)
    traced.add_argument(
        "--backend",
        metavar="A",
        help="the backend traced: reference, onnxruntime, or MODULE / MODULE:NAME (onnx's "
        "backend interface, or a callable (model, inputs)), as compare takes it",
    )
    traced.add_argument(
        "--runner",
        metavar="COMMAND",
        help="trace COMMAND instead of a backend (any runtime, through files), as compare's "
        "--runner runs it: {model}, {inputs}, {outputs}, {case}, and {untyped}: a file "
        "listing the outputs K declared without a type, which it writes as the values its "
        "runtime computed",
    )
    cmd.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help=f"kill --runner's command after SECONDS on one run (default: {DEFAULT_TIMEOUT:g}; "
        "0: no limit)",
    )
    runtime_option(cmd)
    cmd.add_argument(
        "--against",
        default="reference",
        metavar="B",
        help="the backend it is held to, named the same ways (default: %(default)s)",
    )
    onnxruntime_options(cmd)
    cmd.add_argument(
        "--out",
        metavar="TRACE.parquet",
        help="the trace store to write (default: the case's name, .trace.parquet, here)",
    )
    cmd.add_argument("--force", action="store_true", help="replace TRACE.parquet if it exists")
    cmd.add_argument(
        "--chunk",
        type=positive,
        default=64,
        metavar="N",
        help="values exposed, run and held at once (default: %(default)s)",
    )
    rule_options(cmd, rtol_default_of="a case that states none of its own")
    cmd.add_argument(
        "--repro",
        metavar="DIR",
        help="write the first divergent node as a case folder (model.onnx, "
        "test_data_set_0/input_K.pb, output_K.pb); DIR must be new or empty",
    )


def load() -> Command:
    """The command's work, imported now (onnx, the store and the backends with it)."""
    from onnx_arrow.cli.work.trace import run

    return run

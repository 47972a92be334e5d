"""``onnx-arrow info``: a look inside a .pb file, a model, a store or a case folder.
Its arguments here; its work and renderers in :mod:`onnx_arrow.cli.work.info`,
imported only to run it.
"""

from __future__ import annotations

from typing import Any, Final

from onnx_arrow.cli._shared import Command, add_command, offline_option

_EPILOG: Final = """\
examples:
  onnx-arrow info corpus.parquet
      format version, creator, cases, files by role, tensors by dtype, size
  onnx-arrow info node/test_abs
      a case folder: declared inputs and outputs, each data set's values
  onnx-arrow info node/test_abs/test_data_set_0/input_0.pb
      name, dtype, dims, Arrow type and statistics of one value file, typed by
      the model.onnx of its case folder
  onnx-arrow info node/test_abs/model.onnx
      a model's inputs, outputs, opsets and operators
  onnx-arrow info input_0.pb --model model.onnx --input x
      the same, typed by what the model declares for its input x"""


def register(commands: Any) -> None:
    """Add ``info`` and its arguments."""
    info = add_command(
        commands,
        "info",
        "describe a .pb file, a model, a corpus store or a case folder",
        "Describe PATH.  A .pb value file: its name, dtype, dims, Arrow type, element count "
        "and, for numbers, min/max/mean and NaN/Inf counts (external data is resolved "
        "relative to the file's folder); it is read as the type the model declares, the "
        "model of --model or, for test_data_set_N/input_K.pb or output_K.pb, of the case "
        "folder it sits in (the input or output the name inside the file names, else K, "
        "as import pairs them), and as a TensorProto otherwise (a sequence, map or optional "
        "needs its model).  A model (.onnx): its declared inputs and outputs, opsets and "
        "operators.  A corpus store (.parquet): its format version, creator, cases, files by "
        "role, tensors by dtype and size, and where its data came from (the onnx version, "
        "the wheel or generator: its provenance).  A case folder (holding model.onnx, or one "
        "NAME.onnx beside test_data_set_N folders): the model's declared inputs and outputs, "
        "and the dtype and shape of every value of every data set.",
        _EPILOG,
    )
    info.add_argument(
        "path",
        metavar="PATH",
        help="a .pb file, a store (.parquet), a case folder or a release, @onnx==VERSION "
        "(its store, built once and cached)",
    )
    offline_option(info)
    info.add_argument(
        "--model",
        metavar="MODEL.onnx",
        help="type a .pb file by what this model declares (needs --input or --output)",
    )
    which = info.add_mutually_exclusive_group()
    which.add_argument("--input", metavar="K", help="graph input of --model: its name or its index")
    which.add_argument(
        "--output", metavar="K", help="graph output of --model: its name or its index"
    )


def load() -> Command:
    """The command's work, imported now (onnx and the store with it)."""
    from onnx_arrow.cli.work.info import run

    return run

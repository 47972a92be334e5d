"""The ``onnx-arrow`` command: a built-in example, and a look inside ``.pb`` files.

Exit codes: 0 success, 1 a data error (the file or model is not what onnx-arrow
can read; one line on stderr), 2 a usage error.

>>> main(["--version"])  # doctest: +ELLIPSIS
onnx-arrow ...
0
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TextIO

import ml_dtypes
import numpy as np
import pyarrow as pa
from google.protobuf.message import DecodeError
from onnx import ModelProto, TensorProto, TypeProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow.core.dtypes import ArrowKind, DType, dtype_of, dtype_of_numpy
from onnx_arrow.core.extension_types import extension_metadata
from onnx_arrow.errors import OnnxArrowError

__all__ = ["example_tensors", "main"]

PROG: Final = "onnx-arrow"
EXIT_OK: Final = 0
EXIT_DATA_ERROR: Final = 1
EXIT_USAGE: Final = 2

_PREVIEW_ELEMENTS: Final = 6
_MAX_MODEL_BYTES: Final = 2 << 30  # protobuf's own limit on one message

_DESCRIPTION: Final = """\
ONNX values as Apache Arrow data, exactly, both ways.

Tensors become arrow.fixed_shape_tensor (or a variable-shape layout) columns
with every one of ONNX's 28 element types, and come back byte for byte."""

_EPILOG: Final = """\
examples:
  onnx-arrow example
      convert a built-in set of tensors to Arrow and back, and show them
  onnx-arrow info test_data_set_0/input_0.pb
      name, dtype, dims, Arrow type and statistics of one tensor file
  onnx-arrow info input_0.pb --model model.onnx --input 0
      the same, typed by what the model declares for its first input
  python -m onnx_arrow --version

exit status: 0 success, 1 a file or model onnx-arrow cannot read, 2 bad usage"""


class _UsageError(Exception):
    """Raised by argparse instead of exiting, so :func:`main` returns the code."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse declares NoReturn
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise _UsageError(message)


class _DataError(Exception):
    """A problem with the user's files that is not an :class:`OnnxArrowError`."""


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {onnx_arrow.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    commands.add_parser(
        "example",
        help="convert a built-in example to Arrow and back, and print it",
        description="Convert six built-in tensors (float32, int64, bfloat16, float8e4m3fn, "
        "bool, and strings that are not valid UTF-8) to Arrow, print each, convert them back "
        "and check that every message is byte-identical. Exits 1 if one is not.",
    )

    info = commands.add_parser(
        "info",
        help="describe the tensor in a .pb file",
        description="Read one .pb file holding a TensorProto and print its name, dtype, dims, "
        "Arrow type, element count and, for numbers, min/max/mean and NaN/Inf counts. "
        "External data is resolved relative to the file's folder.",
        epilog="example:\n  onnx-arrow info input_0.pb --model model.onnx --input x",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    info.set_defaults(subparser=info)
    info.add_argument("path", metavar="PATH", help="a .pb file holding one TensorProto")
    info.add_argument(
        "--model",
        metavar="MODEL.onnx",
        help="type the value by what this model declares (needs --input or --output)",
    )
    which = info.add_mutually_exclusive_group()
    which.add_argument("--input", metavar="K", help="graph input of --model: its name or its index")
    which.add_argument(
        "--output", metavar="K", help="graph output of --model: its name or its index"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status instead of exiting."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError:
        return EXIT_USAGE
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    out = sys.stdout
    try:
        if args.command == "example":
            return _example(out)
        if (args.input is not None or args.output is not None) and args.model is None:
            args.subparser.error("--input and --output need --model")
        if args.model is not None and args.input is None and args.output is None:
            args.subparser.error("--model needs --input K or --output K")
        return _info(args.path, args.model, args.input, args.output, out)
    except _UsageError:
        return EXIT_USAGE
    except (OnnxArrowError, _DataError) as exc:
        message = " ".join(str(exc).split())
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return EXIT_DATA_ERROR
    except BrokenPipeError:
        # The reader went away (``onnx-arrow example | head``): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


# --- example --------------------------------------------------------------------


def example_tensors() -> list[TensorProto]:
    """The built-in example: six small tensors, made the ways ONNX tools make them."""
    image = numpy_helper.from_array(
        (np.arange(12, dtype=np.float32) / 8).reshape(1, 3, 2, 2), "image"
    )
    image.doc_string = "an NCHW image batch"
    token_ids = helper.make_tensor("token_ids", TensorProto.INT64, [5], [101, 7592, 2088, 999, 102])
    weights = numpy_helper.from_array(
        np.array([[0.5, -1.25], [3.140625, np.inf]], dtype=ml_dtypes.bfloat16), "weights"
    )
    scales = numpy_helper.from_array(
        np.array([0.5, -2.0, 448.0, np.nan], dtype=ml_dtypes.float8_e4m3fn), "scales"
    )
    mask = helper.make_tensor(
        "mask", TensorProto.BOOL, [2, 3], [True, False, True, True, True, False]
    )
    labels = numpy_helper.from_array(
        np.array([b"cat", "caf\u00e9".encode(), b"\xff\xfe"], dtype=object), "labels"
    )
    return [image, token_ids, weights, scales, mask, labels]


def _example(out: TextIO) -> int:
    tensors = example_tensors()
    print(f"{PROG} {onnx_arrow.__version__}: built-in example, TensorProto -> Arrow", file=out)
    arrays = []
    for tensor in tensors:
        arr = onnx_arrow.to_arrow([tensor])
        arrays.append(arr)
        row = dtype_of(tensor.data_type)
        values = onnx_arrow.to_numpy(arr)[0]
        print(file=out)
        print(f"{tensor.name}", file=out)
        print(f"  onnx   {row.name} {list(tensor.dims)}", file=out)
        print(f"  arrow  {describe_type(arr.value.type)}", file=out)
        print(f"  values {_preview(values, row)}", file=out)
    print(file=out)
    identical = 0
    for tensor, arr in zip(tensors, arrays, strict=True):
        back = onnx_arrow.from_arrow(arr)
        if len(back) == 1 and back[0].SerializeToString() == tensor.SerializeToString():
            identical += 1
        else:
            print(f"{tensor.name}: the round trip changed the message", file=out)
    print(f"round trip: {identical}/{len(tensors)} byte-identical", file=out)
    return EXIT_OK if identical == len(tensors) else EXIT_DATA_ERROR


def _preview(values: np.ndarray[Any, Any], row: DType) -> str:
    flat = values.reshape(-1)
    shown = [_format_element(x, row) for x in flat[:_PREVIEW_ELEMENTS]]
    if flat.size > _PREVIEW_ELEMENTS:
        shown.append(f"... ({flat.size} elements)")
    return "[" + ", ".join(shown) + "]"


def _format_element(x: Any, row: DType) -> str:
    if row.arrow_kind is ArrowKind.BINARY:
        return repr(bytes(x))
    if row.arrow_kind is ArrowKind.BOOL8:
        return str(bool(x))
    if row.arrow_kind is ArrowKind.COMPLEX:
        return str(complex(x))
    if row.arrow_kind in _FLOAT_KINDS:
        return str(np.float32(x))  # exact: every such value is a float32
    if np.dtype(row.numpy).kind == "f":
        return str(x)  # numpy's shortest repr that reads back as the same value
    return str(int(x))


_FLOAT_KINDS: Final = frozenset({ArrowKind.BFLOAT16, ArrowKind.MINIFLOAT})


def describe_type(arrow_type: pa.DataType) -> str:
    """A short name of an Arrow type: pyarrow's notation without Python class names.

    >>> import pyarrow as pa
    >>> describe_type(pa.fixed_shape_tensor(pa.float32(), [2, 3]))
    'arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]'
    """
    name = getattr(arrow_type, "extension_name", None)
    if name is None:
        return str(arrow_type)
    storage = arrow_type.storage_type
    if name == "arrow.fixed_shape_tensor":
        shape = ",".join(str(d) for d in arrow_type.shape)
        return f"{name}[value_type={describe_type(arrow_type.value_type)}, shape=[{shape}]]"
    if name in ("arrow.variable_shape_tensor", "onnx.variable_shape_tensor"):
        value = describe_type(storage.field("data").type.value_type)
        ndim = storage.field("shape").type.list_size
        text = f"{name}[value_type={value}, ndim={ndim}"
        uniform = extension_metadata(arrow_type).get("uniform_shape")
        if uniform is not None:
            text += ", uniform_shape=[" + ",".join(_null(d) for d in uniform) + "]"
        return text + "]"
    if name == "onnx.variable_rank_tensor":
        return f"{name}[value_type={describe_type(storage.field('data').type.value_type)}]"
    if name == "onnx.message":
        return f"{name}[value={describe_type(storage.field('value').type)}]"
    return str(name)


def _null(d: int | None) -> str:
    return "null" if d is None else str(d)


# --- info -----------------------------------------------------------------------


def _info(
    path: str, model: str | None, input_key: str | None, output_key: str | None, out: TextIO
) -> int:
    type_proto = None
    declared = None
    if model is not None:
        if input_key is not None:
            declared, type_proto = _declared_type(model, "input", input_key)
        elif output_key is not None:
            declared, type_proto = _declared_type(model, "output", output_key)
    try:
        arr = onnx_arrow.read_pb(path, type=type_proto, base_dir=Path(path).parent)
    except OnnxArrowError as exc:
        raise (exc if path in str(exc) else exc.at(path)) from None
    envelope = TensorProto.FromString(arr.envelope[0].as_py())
    values = onnx_arrow.to_numpy(arr)[0]
    row = dtype_of_numpy(values.dtype)
    lines = [
        ("file", path),
        ("name", envelope.name or "(none)"),
        ("dtype", f"{row.name} ({row.onnx})"),
        ("dims", str(list(values.shape))),
        ("arrow", describe_type(arr.value.type)),
    ]
    if declared is not None:
        lines.insert(1, ("typed by", declared))
    lines.append(("elements", str(values.size)))
    lines += _statistics(values, row)
    width = max(len(k) for k, _ in lines)
    for key, value in lines:
        print(f"{key:<{width}}  {value}", file=out)
    return EXIT_OK


def _statistics(values: np.ndarray[Any, Any], row: DType) -> list[tuple[str, str]]:
    """min/max/mean (of finite elements) and NaN/Inf counts; nothing for STRING."""
    if row.arrow_kind is ArrowKind.BINARY:
        return []
    if row.arrow_kind is ArrowKind.BOOL8:
        return [("true", str(int(np.count_nonzero(values))))]
    if row.arrow_kind in _FLOAT_KINDS:
        values = values.astype(np.float32)
    elif row.arrow_kind is ArrowKind.SUBBYTE_INT:
        values = values.astype(np.int8)
    if values.size == 0:
        return []
    out: list[tuple[str, str]] = []
    if values.dtype.kind in "fc":
        nan = np.isnan(values)
        inf = np.isinf(values)
        out += [("nan", str(int(np.count_nonzero(nan)))), ("inf", str(int(np.count_nonzero(inf))))]
        values = values[~(nan | inf)]
    if values.size == 0:
        return [("min/max/mean", "(no finite elements)"), *out]
    if values.dtype.kind == "c":
        stats = [("mean", str(complex(values.mean(dtype=np.complex128))))]
    else:
        stats = [
            ("min", _number(values.min())),
            ("max", _number(values.max())),
            ("mean", f"{float(values.mean(dtype=np.float64)):.6g}"),
        ]
    return stats + out


def _number(x: Any) -> str:
    return f"{float(x):.6g}" if np.asarray(x).dtype.kind == "f" else str(int(x))


def _declared_type(model_path: str, io: str, key: str) -> tuple[str, TypeProto]:
    model = _read_model(model_path)
    infos = model.graph.input if io == "input" else model.graph.output
    names = [info.name for info in infos]
    if key in names:
        index = names.index(key)
    elif key.isdigit() and int(key) < len(names):
        index = int(key)
    else:
        listed = ", ".join(f"{i}: {n!r}" for i, n in enumerate(names)) or "none"
        raise _DataError(f"{model_path}: graph has no {io} {key!r}; its {io}s are {listed}")
    return f"{model_path}: {io} {index} {names[index]!r}", infos[index].type


def _read_model(path: str) -> ModelProto:
    """The model in a file; a FIFO or device is an error, never a hang."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _DataError(f"{path}: cannot open: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _DataError(f"{path}: not a regular file; pass an .onnx model file")
        if info.st_size > _MAX_MODEL_BYTES:
            raise _DataError(f"{path}: {info.st_size} bytes is more than one protobuf can hold")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read()
    finally:
        os.close(fd)
    try:
        return ModelProto.FromString(data)
    except DecodeError as exc:
        raise _DataError(f"{path}: not an ONNX model: {exc}") from None


if __name__ == "__main__":
    sys.exit(main())

"""``onnx-arrow example``: six built-in tensors, made the ways ONNX tools make them,
converted to Arrow and back and printed."""

from __future__ import annotations

import argparse
from typing import Any, Final, TextIO

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow.cli._shared import EXIT_DATA_ERROR, EXIT_OK, PROG
from onnx_arrow.core.model import DECODED_FLOATS, ArrowKind, DType, describe_type, dtype_of

__all__ = ["example_tensors", "run"]

_PREVIEW_ELEMENTS: Final = 6


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Print the example; exit status 1 if a round trip changed a message."""
    return _example(out)


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
        arr = onnx_arrow.to_arrow([tensor], exact=True)
        arrays.append(arr)
        row = dtype_of(tensor.data_type)
        values = onnx_arrow.to_pylist(arr, strings="bytes")[0]
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
    if row.arrow_kind in DECODED_FLOATS:
        return str(np.float32(x))  # exact: every such value is a float32
    if row.is_floating:
        return str(x)  # numpy's shortest repr that reads back as the same value
    return str(int(x))

"""Shared builders of the pandas adapter's tests: sample tensors, containers, exact bytes."""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import MapProto, OptionalProto, SequenceProto, TensorProto, numpy_helper

from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType

ROWS = list(DTYPES.values())


def _serialized(messages: Any) -> list[bytes]:
    return [m.SerializeToString() for m in messages]


def _bits(array: np.ndarray[Any, Any]) -> Any:
    """An array's exact content: bytes objects for STRING, raw bytes otherwise (NaN payloads)."""
    if array.dtype == object:
        return (array.shape, array.reshape(-1).tolist())
    return (array.shape, array.dtype, np.ascontiguousarray(array).view(np.uint8).tobytes())


def _sample(row: DType, shape: tuple[int, ...], seed: int = 0) -> np.ndarray[Any, Any]:
    """Elements of ``row`` over its whole range: every bit pattern may come up."""
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape))
    if row.arrow_kind is ArrowKind.BINARY:
        words = [b"", b"a", b"\xff\xfe invalid utf-8", "\u00e9".encode(), b"\x00"]
        out = np.empty(count, dtype=object)
        out[:] = [words[i % len(words)] for i in range(count)]
        return out.reshape(shape)
    if row.arrow_kind is ArrowKind.BOOL8:
        return rng.integers(0, 2, count).astype(np.bool_).reshape(shape)
    if row.bits < 8 or row.name.startswith("FLOAT6"):
        codes = rng.integers(0, 1 << row.bits, count).astype(np.uint8)
        return codes.view(row.numpy).reshape(shape)
    raw = rng.integers(0, 256, count * row.numpy.itemsize).astype(np.uint8)
    return raw.view(row.numpy).reshape(shape)


def _tensors(
    row: DType, shapes: list[tuple[int, ...]]
) -> tuple[list[np.ndarray[Any, Any]], list[TensorProto]]:
    arrays = [_sample(row, shape, seed=i) for i, shape in enumerate(shapes)]
    return arrays, [numpy_helper.from_array(a, f"t{i}") for i, a in enumerate(arrays)]


def _optional_column() -> list[OptionalProto]:
    return [
        numpy_helper.from_optional(None, "o", dtype=OptionalProto.TENSOR),
        numpy_helper.from_optional(np.array([1.0, np.nan, np.inf], np.float32), "o"),
        numpy_helper.from_optional(None, "o", dtype=OptionalProto.TENSOR),
    ]


def _sequences() -> list[SequenceProto]:
    return [
        numpy_helper.from_list([np.zeros(2, np.int64), np.arange(3, dtype=np.int64)], "s"),
        numpy_helper.from_list([np.full(1, 5, np.int64)], "s"),
    ]


def _map(keys: list[Any], key_type: int) -> MapProto:
    m = MapProto(name="m", key_type=key_type)
    if key_type == TensorProto.STRING:
        m.string_keys.extend(keys)
    else:
        m.keys.extend(keys)
    m.values.elem_type = SequenceProto.TENSOR
    m.values.tensor_values.extend(
        numpy_helper.from_array(np.full(2, i, np.float32)) for i in range(len(keys))
    )
    return m


def _named(n: int = 3, start: int = 0) -> list[TensorProto]:
    out = []
    for i in range(start, start + n):
        t = numpy_helper.from_array(np.full((2, 2), i, np.float32), f"x{i}")
        t.doc_string = f"tensor {i}"
        out.append(t)
    return out

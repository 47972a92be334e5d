"""Nodes as Python values: numpy arrays at the leaves, lists, pairs, dicts and None.

The form :func:`onnx_arrow.to_pylist` gives one value per row in.
"""

from __future__ import annotations

from typing import Any

from onnx_arrow.core.codec import Strings, decode_strings
from onnx_arrow.core.dtypes import ArrowKind
from onnx_arrow.core.nodes import MapValue, Node, OptionalValue, SequenceValue
from onnx_arrow.core.tensors import Tensor

__all__ = ["python_value"]


def python_value(
    node: Node | None, *, maps_as_dicts: bool = False, strings: Strings = "bytes"
) -> Any:
    """A value with numpy arrays at its leaves: an ndarray for a tensor, a list for a
    sequence, the value or None for an optional, ``(key, value)`` pairs for a map (order
    and duplicate keys kept; a dict with ``maps_as_dicts``, as ``onnx.numpy_helper``
    gives), and ``{"dims", "values", "indices"}`` for a sparse tensor.  STRING elements
    and keys are ``bytes``, or ``str`` with ``strings="str"``."""
    if node is None:
        return None
    if isinstance(node, Tensor):
        return node.to_numpy(strings)
    if isinstance(node, SequenceValue):
        return [python_value(n, maps_as_dicts=maps_as_dicts, strings=strings) for n in node.items]
    if isinstance(node, OptionalValue):
        return python_value(node.value, maps_as_dicts=maps_as_dicts, strings=strings)
    if isinstance(node, MapValue):
        values = [
            python_value(v, maps_as_dicts=maps_as_dicts, strings=strings) for v in node.values
        ]
        keys = node.keys
        if strings == "str" and node.key.arrow_kind is ArrowKind.BINARY:
            keys = decode_strings(keys)
        pairs = list(zip(keys.tolist(), values, strict=True))
        return dict(pairs) if maps_as_dicts else pairs
    return {
        "dims": node.dims,
        "values": node.values.to_numpy(strings),
        "indices": node.indices.to_numpy(),
    }

"""Nodes: an ONNX value between its message and its Arrow row.

A node is a :class:`~onnx_arrow.core.tensors.Tensor`, :class:`SequenceValue`,
:class:`MapValue`, :class:`OptionalValue` or :class:`SparseValue`, nested as deep as
ONNX allows.  :mod:`onnx_arrow.core.containers` decodes messages into nodes and
encodes them back, :mod:`onnx_arrow.core.arrays` builds their Arrow columns and reads
them back, :mod:`onnx_arrow.core.python_values` gives them as Python values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from onnx_arrow.core.dtypes import DType
from onnx_arrow.core.tensors import Tensor
from onnx_arrow.errors import InvalidMessageError, join_path

__all__ = [
    "MapValue",
    "Node",
    "OptionalValue",
    "SequenceValue",
    "SparseValue",
    "check_sparse",
    "field_name",
]


@dataclass(slots=True)
class SequenceValue:
    """The elements of a ``SequenceProto``."""

    items: list[Node | None]


@dataclass(slots=True)
class MapValue:
    """Keys (int64 array, or bytes for STRING) and values of a ``MapProto``."""

    key: DType
    keys: np.ndarray[Any, Any]
    values: list[Node | None]


@dataclass(slots=True)
class OptionalValue:
    """An ``OptionalProto``: its value, or None when absent."""

    value: Node | None


@dataclass(slots=True)
class SparseValue:
    """A ``SparseTensorProto``: dense dims, values ``[NNZ]``, indices ``[NNZ]``/``[NNZ, rank]``."""

    dims: tuple[int, ...]
    values: Tensor
    indices: Tensor


Node = Tensor | SequenceValue | MapValue | OptionalValue | SparseValue


def field_name(kind: str, singular: bool) -> str:
    """The SequenceProto / OptionalProto field of elements of ``kind``: ``tensor_values`` ..."""
    return f"{kind}_value" if singular else f"{kind}_values"


def check_sparse(dims: tuple[int, ...], values: Tensor, indices: Tensor, where: str) -> None:
    """Refuse a sparse tensor whose dims, values or indices do not fit together, located."""
    if any(d < 0 for d in dims):
        raise InvalidMessageError(
            f"dims {list(dims)} has a negative size", where=join_path(where, "dims")
        )
    if len(values.dims) != 1:
        raise InvalidMessageError(
            f"values has dims {list(values.dims)}; sparse values are 1-D [NNZ]",
            where=join_path(where, "values"),
        )
    nnz = values.dims[0]
    if indices.dtype.name != "INT64":
        raise InvalidMessageError(
            f"indices are {indices.dtype.name}; sparse indices are INT64",
            where=join_path(where, "indices"),
        )
    if indices.dims not in ((nnz,), (nnz, len(dims))):
        raise InvalidMessageError(
            f"indices have dims {list(indices.dims)}; expected [{nnz}] (linear) or "
            f"[{nnz}, {len(dims)}] (coordinates)",
            where=join_path(where, "indices"),
        )
    codes = indices.codes.reshape(indices.dims)
    # linear indices address the flattened tensor, coordinates each of its dims
    limits = np.array([math.prod(dims)] if codes.ndim == 1 else dims, dtype=np.float64)
    outside = (codes < 0) | (codes >= limits)
    bad = np.flatnonzero(outside if outside.ndim == 1 else outside.any(axis=1))
    if bad.size:
        raise InvalidMessageError(
            f"indices[{int(bad[0])}] is {codes[bad[0]].tolist()}, outside dims {list(dims)}",
            where=join_path(where, "indices"),
        )

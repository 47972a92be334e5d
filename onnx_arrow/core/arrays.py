"""Sequences, maps, optionals and sparse tensors as Arrow arrays, and back.

The Arrow type of a column of values (inferred from all of them, or given by a
declaration) and the column itself, built from nodes (see
:mod:`onnx_arrow.core.nodes`); then the nodes of a column, read back.  Tensors
are :mod:`onnx_arrow.core.tensor_arrays`' arrays, at any depth.

=====================  ==================================================================
ONNX kind              Arrow type
=====================  ==================================================================
tensor                 a tensor type (:mod:`onnx_arrow.core.tensor_types`)
sequence(x)            ``list<T(x)>``
map(k, x)              ``map<K, T(x)>``; integer keys as Arrow integers, STRING keys as
                       ``binary``; key order and duplicate keys kept
optional(x)            ``T(x)`` with a null where the value is absent; when ``x`` is itself
                       optional, ``struct<value: T(x)>`` so that outer-absent (null struct),
                       inner-absent (null ``value``) and present stay apart
sparse_tensor          ``onnx.sparse_tensor``
=====================  ==================================================================
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.core.dtypes import DType
from onnx_arrow.core.element_types import element_type
from onnx_arrow.core.kinds import (
    MAP,
    OPTIONAL,
    SEQUENCE,
    SPARSE_TENSOR,
    TENSOR,
    Kind,
)
from onnx_arrow.core.nodes import (
    MapValue,
    Node,
    OptionalValue,
    SequenceValue,
    SparseValue,
    check_sparse,
    field_name,
)
from onnx_arrow.core.tensor_arrays import tensor_array, tensor_rows, tensor_type_for
from onnx_arrow.core.tensor_codes import validity
from onnx_arrow.core.tensor_types import SparseTensorType, sparse_tensor_type
from onnx_arrow.core.tensors import Tensor
from onnx_arrow.core.types import arrow_type_of_kind
from onnx_arrow.errors import (
    NotRepresentableError,
    OnnxArrowError,
    UnsupportedTypeError,
    join_path,
)

__all__ = ["build_array", "infer_arrow_type", "value_rows"]


# --- Arrow types -----------------------------------------------------------------------


def _leaves(nodes: Sequence[Node | None]) -> list[Any]:
    """The nodes one level down (elements, map values, optional contents)."""
    out: list[Any] = []
    for n in nodes:
        if n is None:
            continue
        if isinstance(n, SequenceValue):
            out.extend(n.items)
        elif isinstance(n, MapValue):
            out.extend(n.values)
        elif isinstance(n, OptionalValue) and n.value is not None:
            out.append(n.value)
    return out


def _children(node: Node | None, kind: Kind) -> list[tuple[str, Node | None, Kind]]:
    """The nodes one level down in ``node``, each with its field path and kind.

    Paths are the message's own (``tensor_values[2]``, ``values.map_values[0]``,
    ``sequence_value``), so that an error names a field the caller can find.
    """
    elem = kind.elem
    if elem is None:
        return []
    if isinstance(node, SequenceValue):
        name = field_name(elem.name, False)
        return [(f"{name}[{i}]", item, elem) for i, item in enumerate(node.items)]
    if isinstance(node, MapValue):
        name = field_name(elem.name, False)
        return [(f"values.{name}[{i}]", v, elem) for i, v in enumerate(node.values)]
    if isinstance(node, OptionalValue) and node.value is not None:
        return [(field_name(elem.name, True), node.value, elem)]
    return []


def infer_arrow_type(nodes: Sequence[Node | None], kind: Kind | None) -> pa.DataType:
    """The Arrow type for these values, one per row: all of them decide together."""
    try:
        return _infer(nodes, kind)
    except UnsupportedTypeError:
        # only on the error path: walk the rows again to name the one that disagrees
        clash = _dtype_clash(nodes, kind)
        if clash is None:
            raise
        raise clash from None


def _infer(nodes: Sequence[Node | None], kind: Kind | None) -> pa.DataType:
    if kind is None:
        return pa.null()
    if kind.name in (TENSOR, SPARSE_TENSOR):
        return _infer_tensors(nodes, kind)
    leaves = _leaves(nodes)
    if kind.name == MAP and kind.key is None and not leaves:
        return pa.null()  # no value anywhere says what the map holds
    return arrow_type_of_kind(kind, _infer(leaves, kind.elem))


def _infer_tensors(nodes: Sequence[Node | None], kind: Kind) -> pa.DataType:
    tensors = [
        n if isinstance(n, Tensor) else n.values
        for n in nodes
        if isinstance(n, Tensor | SparseValue)
    ]
    if not tensors:
        return pa.null()
    dtype = tensors[0].dtype
    if any(t.dtype is not dtype for t in tensors):
        # these may lie anywhere inside the rows: infer_arrow_type names where
        raise UnsupportedTypeError("tensors of several data types; a column holds one")
    if kind.name == SPARSE_TENSOR:
        return sparse_tensor_type(element_type(dtype))
    return tensor_type_for(dtype, [t.dims for t in tensors])


def _dtype_clash(nodes: Sequence[Node | None], kind: Kind | None) -> UnsupportedTypeError | None:
    """The first tensor whose data type differs from the column's first, by row and path."""
    if kind is None:
        return None
    first: tuple[str, DType] | None = None
    for i, node in enumerate(nodes):
        for where, tensor in _value_tensors(node, kind, f"row {i}"):
            if first is None:
                first = (where, tensor.dtype)
            elif tensor.dtype is not first[1]:
                return UnsupportedTypeError(
                    f"the tensor is {tensor.dtype.name} but {first[0]} is {first[1].name}; "
                    "a column holds one data type",
                    where=where,
                )
    return None


def _value_tensors(node: Node | None, kind: Kind, where: str) -> Iterator[tuple[str, Tensor]]:
    """The tensors that decide the column's data type (not map keys, sparse indices)."""
    if kind.name in (TENSOR, SPARSE_TENSOR):
        if isinstance(node, Tensor):
            yield where, node
        elif isinstance(node, SparseValue):
            yield join_path(where, "values"), node.values
        return
    for name, child, child_kind in _children(node, kind):
        yield from _value_tensors(child, child_kind, join_path(where, name))


# --- Arrow arrays ----------------------------------------------------------------------


def _scatter(dense: pa.Array, valid: list[bool]) -> pa.Array:
    """Spread the rows of ``dense`` over ``valid`` positions, null elsewhere."""
    if all(valid):
        return dense
    indices = np.cumsum(valid) - 1
    mask = ~np.array(valid, dtype=bool)
    return pc.take(dense, pa.array(indices, type=pa.int64(), mask=mask))


def _offsets(counts: Sequence[int]) -> pa.Array:
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if offsets[-1] > np.iinfo(np.int32).max:
        raise NotRepresentableError(
            f"{offsets[-1]} elements overflow list offsets; split the values into smaller arrays"
        )
    return pa.array(offsets.astype(np.int32))


def _mask(valid: list[bool]) -> pa.Array | None:
    return None if all(valid) else pa.array([not v for v in valid], pa.bool_())


def build_array(
    nodes: Sequence[Node | None], kind: Kind | None, arrow_type: pa.DataType
) -> pa.Array:
    """An Arrow array of ``arrow_type`` with one row per node (None: null).

    A value that does not fit is an error naming its row and the field inside it.
    """
    try:
        return _build(nodes, kind, arrow_type)
    except OnnxArrowError:
        # only on the error path: the nested arrays count flattened elements, not rows
        located = _locate(nodes, kind, arrow_type)
        if located is None:
            raise
        raise located from None


def _locate(
    nodes: Sequence[Node | None], kind: Kind | None, arrow_type: pa.DataType
) -> OnnxArrowError | None:
    """The error of the first row that fails on its own, located inside that row.

    Rows build independently, so halving finds it in a time linear in the rows:
    of two halves, the first failing row lies in the left one if that fails.
    """
    lo, hi = 0, len(nodes)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _fails(nodes[lo:mid], kind, arrow_type):
            hi = mid
        else:
            lo = mid
    if lo == hi:
        return None
    return _located(nodes[lo], kind, arrow_type, f"row {lo}")


def _fails(nodes: Sequence[Node | None], kind: Kind | None, arrow_type: pa.DataType) -> bool:
    try:
        _build(nodes, kind, arrow_type)
    except OnnxArrowError:
        return True
    return False


def _located(
    node: Node | None, kind: Kind | None, arrow_type: pa.DataType, where: str
) -> OnnxArrowError | None:
    """The error building ``node`` alone raises, at the deepest part of it that fails."""
    try:
        _build([node], kind, arrow_type)
    except OnnxArrowError as exc:
        for name, child, child_kind, child_type in _parts(node, kind, arrow_type):
            inner = _located(child, child_kind, child_type, join_path(where, name))
            if inner is not None:
                return inner
        # built alone, the node was row 0 of its array: its path replaces that location
        return type(exc)(exc.message, where=where)
    return None


def _parts(
    node: Node | None, kind: Kind | None, arrow_type: pa.DataType
) -> list[tuple[str, Node | None, Kind, pa.DataType]]:
    """What ``node`` is built from one level down: field paths, kinds and Arrow types."""
    if kind is None or pa.types.is_null(arrow_type):
        return []
    if isinstance(node, SparseValue) and isinstance(arrow_type, SparseTensorType):
        storage = arrow_type.storage_type
        return [
            (name, tensor, Kind(TENSOR), storage.field(name).type)
            for name, tensor in (("values", node.values), ("indices", node.indices))
        ]
    if kind.name not in (SEQUENCE, MAP, OPTIONAL):
        return []
    child_type = _child_type(kind, arrow_type)
    return [(name, child, elem, child_type) for name, child, elem in _children(node, kind)]


def _child_type(kind: Kind, arrow_type: pa.DataType) -> pa.DataType:
    """The Arrow type of the values one level inside a sequence, map or optional."""
    if kind.name == SEQUENCE:
        return arrow_type.value_type
    if kind.name == MAP:
        return arrow_type.item_type
    if kind.elem is not None and kind.elem.name == OPTIONAL:
        return arrow_type.field("value").type
    return arrow_type


def _build(nodes: Sequence[Node | None], kind: Kind | None, arrow_type: pa.DataType) -> pa.Array:
    valid = [n is not None for n in nodes]
    if kind is None or pa.types.is_null(arrow_type):
        if any(_has_content(n) for n in nodes):
            raise UnsupportedTypeError(f"values present but the column type is {arrow_type}")
        return _null_like(arrow_type, len(nodes))
    if kind.name == OPTIONAL:
        return _build_optional(nodes, kind, arrow_type)
    if kind.name == TENSOR:
        dense = [n for n in nodes if n is not None]
        for n in dense:
            if not isinstance(n, Tensor):
                raise UnsupportedTypeError(f"expected a tensor, got {type(n).__name__}")
        return _scatter(tensor_array(dense, arrow_type), valid)  # type: ignore[arg-type]
    if kind.name == SPARSE_TENSOR:
        return _build_sparse(nodes, arrow_type, valid)
    if kind.name == SEQUENCE:
        counts = [len(n.items) if isinstance(n, SequenceValue) else 0 for n in nodes]
        child = _build(_leaves(nodes), kind.elem, arrow_type.value_type)
        return pa.ListArray.from_arrays(_offsets(counts), child, type=arrow_type, mask=_mask(valid))
    # MAP
    maps = [n for n in nodes if isinstance(n, MapValue)]
    counts = [len(n.keys) if isinstance(n, MapValue) else 0 for n in nodes]
    key_type = arrow_type.key_type
    keys = [m.keys for m in maps]
    key_array = pa.array(np.concatenate(keys) if keys else [], type=key_type)
    items = _build(_leaves(nodes), kind.elem, arrow_type.item_type)
    return pa.MapArray.from_arrays(
        _offsets(counts), key_array, items, type=arrow_type, mask=_mask(valid)
    )


def _build_optional(nodes: Sequence[Node | None], kind: Kind, arrow_type: pa.DataType) -> pa.Array:
    for n in nodes:
        # anything else here would silently become an absent value
        if n is not None and not isinstance(n, OptionalValue):
            raise UnsupportedTypeError(f"expected an optional, got {type(n).__name__}")
    inner = [n.value if isinstance(n, OptionalValue) else None for n in nodes]
    if kind.elem is not None and kind.elem.name == OPTIONAL:
        # struct<value>: a null struct is outer-absent, a null value inner-absent
        child = _build(inner, kind.elem, arrow_type.field("value").type)
        present = [v is not None for v in inner]
        return pa.StructArray.from_arrays(
            [child], fields=[arrow_type.field("value")], mask=_mask(present)
        )
    return _build(inner, kind.elem, arrow_type)


def _has_content(node: Node | None) -> bool:
    if node is None:
        return False
    if isinstance(node, SequenceValue):
        return bool(node.items)
    if isinstance(node, MapValue):
        return bool(node.values)
    if isinstance(node, OptionalValue):
        return node.value is not None
    return True


def _null_like(arrow_type: pa.DataType, length: int) -> pa.Array:
    if pa.types.is_null(arrow_type):
        return pa.nulls(length)
    raise UnsupportedTypeError(f"no values to build a {arrow_type} column from")


def _build_sparse(
    nodes: Sequence[Node | None], arrow_type: pa.DataType, valid: list[bool]
) -> pa.Array:
    dense = [n for n in nodes if n is not None]
    for n in dense:
        if not isinstance(n, SparseValue):
            raise UnsupportedTypeError(f"expected a sparse tensor, got {type(n).__name__}")
        # what value_rows refuses to read is never written: the same check, located
        # by build_array at its row
        check_sparse(n.dims, n.values, n.indices, "")
    sparse: list[SparseValue] = dense  # type: ignore[assignment]
    storage_type = arrow_type.storage_type
    shapes = pa.ListArray.from_arrays(
        _offsets([len(s.dims) for s in sparse]),
        pa.array([d for s in sparse for d in s.dims], pa.int64()),
    )
    values = tensor_array([s.values for s in sparse], storage_type.field("values").type)
    indices = tensor_array([s.indices for s in sparse], storage_type.field("indices").type)
    storage = pa.StructArray.from_arrays([shapes, values, indices], fields=list(storage_type))
    return _scatter(pa.ExtensionArray.from_storage(arrow_type, storage), valid)


def value_rows(array: pa.Array, kind: Kind | None) -> list[Node | None]:
    """The values of an Arrow array of ``kind`` (None for null rows)."""
    n = len(array)
    if kind is not None and kind.name == OPTIONAL and pa.types.is_null(array.type):
        return [OptionalValue(None) for _ in range(n)]
    if kind is None or pa.types.is_null(array.type):
        return [None] * n
    if kind.name == OPTIONAL:
        if kind.elem is not None and kind.elem.name == OPTIONAL:
            valid = validity(array)
            child = value_rows(array.field("value"), kind.elem)
            return [OptionalValue(child[i] if valid[i] else None) for i in range(n)]
        return [OptionalValue(v) for v in value_rows(array, kind.elem)]
    if kind.name == TENSOR:
        return list(tensor_rows(array))
    if kind.name == SPARSE_TENSOR:
        return _sparse_rows(array)
    valid = validity(array)
    offsets = array.offsets.to_numpy()
    if kind.name == SEQUENCE:
        child = value_rows(array.values.slice(offsets[0], offsets[-1] - offsets[0]), kind.elem)
        base = offsets[0]
        return [
            SequenceValue(child[offsets[i] - base : offsets[i + 1] - base]) if valid[i] else None
            for i in range(n)
        ]
    assert kind.key is not None
    base, stop = int(offsets[0]), int(offsets[-1])
    keys_arr = array.keys.slice(base, stop - base)
    if kind.key.name == "STRING":
        keys = np.empty(len(keys_arr), dtype=object)
        keys[:] = keys_arr.to_pylist()
    else:
        keys = keys_arr.to_numpy(zero_copy_only=False).astype(kind.key.numpy)
    items = value_rows(array.items.slice(base, stop - base), kind.elem)
    return [
        MapValue(
            kind.key,
            keys[offsets[i] - base : offsets[i + 1] - base],
            items[offsets[i] - base : offsets[i + 1] - base],
        )
        if valid[i]
        else None
        for i in range(n)
    ]


def _sparse_rows(array: pa.Array) -> list[Node | None]:
    storage = array.storage
    valid = validity(storage)
    shapes = storage.field("shape").to_pylist()
    values = tensor_rows(storage.field("values"))
    indices = tensor_rows(storage.field("indices"))
    out: list[Node | None] = []
    for i in range(len(array)):
        v, ix = values[i], indices[i]
        if not valid[i] or v is None or ix is None:
            out.append(None)
            continue
        check_sparse(tuple(shapes[i]), v, ix, f"row {i}")
        out.append(SparseValue(tuple(shapes[i]), v, ix))
    return out

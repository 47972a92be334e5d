"""ONNX ``TypeProto`` to the Arrow type of a column of such values, and back.

A model declares each input and output with a ``TypeProto``; the column type of
its values follows from that declaration alone, whatever the rows hold (empty
sequences and absent optionals included):

=====================================  =================================================
declared type                          Arrow type
=====================================  =================================================
tensor, every dim a number, none 0     ``arrow.fixed_shape_tensor``
tensor, a dim symbolic, unknown or 0   variable-shape (``uniform_shape`` keeps the known
                                       sizes)
tensor with no shape                   ``onnx.variable_rank_tensor``
sparse_tensor                          ``onnx.sparse_tensor``
sequence(x)                            ``list<T(x)>``
map(k, x)                              ``map<K, T(x)>`` (STRING keys as ``binary``)
optional(x)                            ``T(x)``, nullable; ``struct<value: T(x)>`` when
                                       ``x`` is itself optional
=====================================  =================================================
"""

from __future__ import annotations

import math

import pyarrow as pa

from onnx_arrow.core.arrow_input import arrow_type_arg
from onnx_arrow.core.dtypes import DType, dtype_of
from onnx_arrow.core.element_types import dtype_of_arrow, element_type
from onnx_arrow.core.extension_metadata import extension_metadata
from onnx_arrow.core.kinds import (
    MAP,
    OPTIONAL,
    SEQUENCE,
    SPARSE_TENSOR,
    TENSOR,
    Kind,
    map_key_dtype,
)
from onnx_arrow.core.protos import TypeProto
from onnx_arrow.core.tensor_types import (
    SparseTensorType,
    fixed_shape_tensor,
    sparse_tensor_type,
    tensor_layout,
    variable_rank_tensor,
    variable_shape_tensor,
)
from onnx_arrow.core.tensors import MAX_ELEMENTS
from onnx_arrow.core.walk import child_arrays
from onnx_arrow.errors import NotRepresentableError, UnsupportedTypeError

__all__ = [
    "arrow_type",
    "arrow_type_of_kind",
    "fit_declared",
    "kind_of_arrow",
    "kind_of_type",
    "onnx_type",
]


def _check(type_proto: object, where: str) -> TypeProto:
    if not isinstance(type_proto, TypeProto):
        raise UnsupportedTypeError(
            f"type must be an onnx.TypeProto, got {type(type_proto).__name__}", where=where
        )
    return type_proto


def _elem_dtype(elem_type: int, where: str) -> DType:
    try:
        return dtype_of(elem_type)
    except UnsupportedTypeError as exc:
        raise exc.at(where) from None


def kind_of_type(type_proto: TypeProto, *, where: str = "type") -> Kind:
    """The value kind a ``TypeProto`` declares (structure only)."""
    tp = _check(type_proto, where)
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        return Kind(TENSOR)
    if which == "sparse_tensor_type":
        return Kind(SPARSE_TENSOR)
    if which == "sequence_type":
        return Kind(
            SEQUENCE, kind_of_type(tp.sequence_type.elem_type, where=f"{where}.sequence_type")
        )
    if which == "optional_type":
        return Kind(
            OPTIONAL, kind_of_type(tp.optional_type.elem_type, where=f"{where}.optional_type")
        )
    if which == "map_type":
        at = f"{where}.map_type"
        key = map_key_dtype(
            tp.map_type.key_type, where=f"{at}.key_type", error=UnsupportedTypeError
        )
        return Kind(MAP, kind_of_type(tp.map_type.value_type, where=f"{at}.value_type"), key)
    raise UnsupportedTypeError(
        f"{which or 'an empty TypeProto'} is not a value type; expected tensor_type, "
        "sparse_tensor_type, sequence_type, map_type or optional_type",
        where=where,
    )


def arrow_type(type_proto: TypeProto, *, where: str = "type") -> pa.DataType:
    """The Arrow type of a column holding values of ``type_proto``.

    Examples
    --------
    >>> from onnx import TensorProto, helper
    >>> arrow_type(helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3]))
    FixedShapeTensorType(extension<arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]>)
    >>> arrow_type(helper.make_tensor_type_proto(TensorProto.INT64, ["N", 3])).extension_name
    'onnx.variable_shape_tensor'
    >>> zipmap = helper.make_sequence_type_proto(
    ...     helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(1, []))
    ... )
    >>> arrow_type(zipmap).value_type
    MapType(map<int64, extension<arrow.fixed_shape_tensor[value_type=float, shape=[]]>>)
    """
    tp = _check(type_proto, where)
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        tensor = tp.tensor_type
        value_type = element_type(_elem_dtype(tensor.elem_type, f"{where}.tensor_type.elem_type"))
        if not tensor.HasField("shape"):
            return variable_rank_tensor(value_type)
        dims: list[int | None] = [
            d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim
        ]
        if all(d is not None and d > 0 for d in dims):
            fixed = tuple(d for d in dims if d is not None)
            if math.prod(fixed) > MAX_ELEMENTS:
                raise NotRepresentableError(
                    f"shape {list(fixed)} declares {math.prod(fixed)} elements, more than the "
                    f"{MAX_ELEMENTS} a tensor may hold; the declaration is wrong",
                    where=f"{where}.tensor_type.shape",
                )
            return fixed_shape_tensor(value_type, fixed)
        known = dims if any(d is not None for d in dims) else None
        return variable_shape_tensor(value_type, len(dims), known)
    if which == "sparse_tensor_type":
        at = f"{where}.sparse_tensor_type.elem_type"
        return sparse_tensor_type(element_type(_elem_dtype(tp.sparse_tensor_type.elem_type, at)))
    kind = kind_of_type(tp, where=where)
    if which == "sequence_type":
        inner = arrow_type(tp.sequence_type.elem_type, where=f"{where}.sequence_type")
    elif which == "optional_type":
        inner = arrow_type(tp.optional_type.elem_type, where=f"{where}.optional_type")
    else:
        inner = arrow_type(tp.map_type.value_type, where=f"{where}.map_type.value_type")
    return arrow_type_of_kind(kind, inner)


def arrow_type_of_kind(kind: Kind, inner: pa.DataType) -> pa.DataType:
    """The Arrow type of ``kind`` whose element (or value) type is ``inner``."""
    if kind.name == SEQUENCE:
        return pa.list_(inner)
    if kind.name == MAP:
        if kind.key is None:
            raise UnsupportedTypeError(f"{kind} has no key type")
        return pa.map_(element_type(kind.key), inner)
    if kind.name == OPTIONAL:
        if kind.elem is not None and kind.elem.name == OPTIONAL:
            return pa.struct([pa.field("value", inner)])
        return inner
    raise UnsupportedTypeError(f"{kind} has no element type")


def kind_of_arrow(arrow_type: pa.DataType, array: pa.Array | None = None) -> Kind:
    """The value kind an Arrow type holds; with ``array``, nulls make a level optional.

    A ``null`` array holds absent optionals whose element kind no value says (what
    ``numpy_helper.from_optional(None)`` writes, and :func:`onnx_arrow.to_arrow` makes
    of them): ``optional(?)``.
    """
    if pa.types.is_null(arrow_type) and array is not None:
        return Kind(OPTIONAL)
    nullable = array is not None and array.null_count > 0
    kind = _kind_of_arrow(arrow_type, array)
    # struct<value> is an optional level already; its nulls are that level's absences
    return Kind(OPTIONAL, kind) if nullable and kind.name != OPTIONAL else kind


def _child_kind(t: pa.DataType, array: pa.Array | None) -> Kind | None:
    """The kind of the elements of a list, map or ``struct<value>`` of child type ``t``,
    ``array`` the child values its rows span."""
    if pa.types.is_null(t) and (array is None or not len(array)):
        # no elements: sequences that are all empty, of an element kind only a declaration knows
        return None
    return kind_of_arrow(t, array)


def _kind_of_arrow(t: pa.DataType, array: pa.Array | None) -> Kind:
    if isinstance(t, SparseTensorType):
        return Kind(SPARSE_TENSOR)
    if tensor_layout(t) is not None:
        return Kind(TENSOR)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        # the elements the rows span (of these rows only: a slice's kind is its own)
        child = None if array is None else child_arrays(array)[0]
        return Kind(SEQUENCE, _child_kind(t.value_type, child))
    if pa.types.is_map(t):
        key = dtype_of_arrow(t.key_type)
        child = None if array is None else child_arrays(array)[1]
        return Kind(MAP, _child_kind(t.item_type, child), key)
    if pa.types.is_struct(t) and [f.name for f in t] == ["value"]:
        child = None if array is None else array.field("value")
        inner = _child_kind(t.field("value").type, child)
        if inner is None or inner.name != OPTIONAL:
            inner = Kind(OPTIONAL, inner)
        return Kind(OPTIONAL, inner)
    hint = ""
    if pa.types.is_fixed_size_list(t) or pa.types.is_struct(t) or not pa.types.is_nested(t):
        hint = (
            "; an engine that keeps storage only (DuckDB, Spark, Dask's numpy cells) drops "
            "the extension types of onnx-arrow's columns: read them with pyarrow, Polars or "
            "pandas' ArrowDtype, which keep them (DataFusion keeps them given "
            "read_parquet(path, skip_metadata=False)), or write them with "
            "onnx_arrow.to_portable, which every engine reads"
        )
    raise UnsupportedTypeError(
        f"{t} is not the Arrow form of an ONNX value; expected a tensor type, "
        f"onnx.sparse_tensor, list, map or struct<value>{hint}"
    )


def onnx_type(arrow_type: pa.DataType, kind: Kind | None = None) -> TypeProto:
    """The ``TypeProto`` of a column of ``arrow_type``, as far as it can be known.

    Optionals are known only from ``kind`` (an ``onnx.message`` array records it)
    or from ``struct<value>``; symbolic dim names are not kept, unknown sizes come
    back as dims without a value.

    >>> from onnx import TensorProto, helper
    >>> t = helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3])
    >>> onnx_type(arrow_type(t)) == t
    True
    """
    arrow_type = arrow_type_arg(arrow_type, function="onnx_type", where="arrow_type")
    kind = kind or _kind_of_arrow(arrow_type, None)
    out = TypeProto()
    if kind.name == OPTIONAL:
        inner_arrow = (
            arrow_type.field("value").type
            if kind.elem is not None and kind.elem.name == OPTIONAL
            else arrow_type
        )
        out.optional_type.elem_type.CopyFrom(onnx_type(inner_arrow, kind.elem))
        return out
    if kind.name == TENSOR:
        _tensor_onnx_type(arrow_type, out)
    elif kind.name == SPARSE_TENSOR:
        out.sparse_tensor_type.elem_type = dtype_of_arrow(arrow_type.value_type).onnx
    elif kind.name == SEQUENCE:
        out.sequence_type.elem_type.CopyFrom(onnx_type(arrow_type.value_type, kind.elem))
    else:
        out.map_type.key_type = dtype_of_arrow(arrow_type.key_type).onnx
        out.map_type.value_type.CopyFrom(onnx_type(arrow_type.item_type, kind.elem))
    return out


def _tensor_onnx_type(t: pa.DataType, out: TypeProto) -> None:
    tensor = out.tensor_type
    layout = tensor_layout(t)
    if layout is None:
        raise UnsupportedTypeError(f"{t} is not a tensor type")
    tensor.elem_type = dtype_of_arrow(layout.value_type).onnx
    if layout.layout == "fixed":
        shape = tensor.shape
        for d in t.shape:
            shape.dim.add().dim_value = d
        if not t.shape:
            tensor.shape.SetInParent()
        return
    if layout.layout == "rank":
        return
    ndim = t.storage_type.field("shape").type.list_size
    uniform = extension_metadata(t).get("uniform_shape") or [None] * ndim
    tensor.shape.SetInParent()
    for d in uniform:
        dim = tensor.shape.dim.add()
        if d is not None:
            dim.dim_value = d


def fit_declared(
    type_proto: TypeProto, arrow_type: pa.DataType, kind: Kind, *, where: str = "declared"
) -> Kind:
    """Check that a column of ``arrow_type`` holding ``kind`` is what ``type_proto``
    declares, and give the kind its rows are read as.

    The declared type decides what the rows are, within what the column holds: a
    column without nulls may be declared optional (every value present), but the
    element types, the tensor ranks and sizes, the kinds of every level must agree.

    Raises
    ------
    UnsupportedTypeError
        Naming the first place where the declaration and the column differ.

    >>> from onnx import TensorProto, helper
    >>> import pyarrow as pa
    >>> declared = helper.make_optional_type_proto(
    ...     helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    >>> column = pa.fixed_shape_tensor(pa.float32(), [2])
    >>> str(fit_declared(declared, column, kind_of_arrow(column)))
    'optional(tensor)'
    >>> int64 = helper.make_tensor_type_proto(TensorProto.INT64, [2])
    >>> fit_declared(int64, column, kind_of_arrow(column))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    onnx_arrow.errors.UnsupportedTypeError: declared.tensor_type.elem_type: declared INT64, ...
    """
    tp = _check(type_proto, where)
    declared = kind_of_type(tp, where=where)
    _fit(tp, arrow_type, kind, where)
    return declared


def _fit(tp: TypeProto, t: pa.DataType, kind: Kind, where: str) -> None:
    if pa.types.is_null(t):
        return  # no value at this level: any declaration fits
    which = tp.WhichOneof("value")
    if kind.name == OPTIONAL:
        if which != "optional_type":
            raise UnsupportedTypeError(
                f"the column holds absent values (nulls) but the declared type is {which}, "
                "not optional_type; declare it optional, or drop the null rows",
                where=where,
            )
        if kind.elem is None:
            return
        inner = t.field("value").type if kind.elem.name == OPTIONAL else t
        _fit(tp.optional_type.elem_type, inner, kind.elem, f"{where}.optional_type")
        return
    if which == "optional_type":
        # every row present: the declared optional level holds nothing the column lacks
        _fit(tp.optional_type.elem_type, t, kind, f"{where}.optional_type")
        return
    expected = {TENSOR: "tensor_type", SPARSE_TENSOR: "sparse_tensor_type"}.get(
        kind.name, f"{kind.name}_type"
    )
    if which != expected:
        raise UnsupportedTypeError(
            f"declared {which or 'an empty TypeProto'}, but the column holds {kind} values",
            where=where,
        )
    if kind.name == TENSOR:
        _fit_tensor(tp.tensor_type, t, f"{where}.tensor_type")
    elif kind.name == SPARSE_TENSOR:
        _fit_dtype(
            tp.sparse_tensor_type.elem_type,
            dtype_of_arrow(t.value_type),
            f"{where}.sparse_tensor_type.elem_type",
        )
    elif kind.name == SEQUENCE and kind.elem is not None:
        _fit(tp.sequence_type.elem_type, t.value_type, kind.elem, f"{where}.sequence_type")
    elif kind.name == MAP:
        at = f"{where}.map_type"
        assert kind.key is not None
        _fit_dtype(tp.map_type.key_type, kind.key, f"{at}.key_type")
        if kind.elem is not None:
            _fit(tp.map_type.value_type, t.item_type, kind.elem, f"{at}.value_type")


def _fit_dtype(declared: int, held: DType, where: str) -> None:
    row = _elem_dtype(declared, where)
    if row is not held:
        raise UnsupportedTypeError(
            f"declared {row.name}, but the column holds {held.name}", where=where
        )


def _fit_tensor(tensor: TypeProto.Tensor, t: pa.DataType, where: str) -> None:
    layout = tensor_layout(t)
    if layout is None:
        raise UnsupportedTypeError(f"{t} is not a tensor type", where=where)
    _fit_dtype(tensor.elem_type, dtype_of_arrow(layout.value_type), f"{where}.elem_type")
    if not tensor.HasField("shape") or layout.layout == "rank":
        # no declared shape fits any column; a column of several ranks is checked per row
        return
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
    if layout.layout == "fixed":
        held: list[int | None] = list(t.shape)
    else:
        ndim = t.storage_type.field("shape").type.list_size
        held = extension_metadata(t).get("uniform_shape") or [None] * ndim
    if len(held) != len(dims) or any(
        d is not None and h is not None and d != h for d, h in zip(dims, held, strict=True)
    ):
        shown = ["?" if h is None else h for h in held]
        raise UnsupportedTypeError(
            f"declared shape {['?' if d is None else d for d in dims]}, but the column "
            f"holds tensors of shape {shown}",
            where=f"{where}.shape",
        )

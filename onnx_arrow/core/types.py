"""ONNX ``TypeProto`` to the Arrow type of a column of such values.

A model declares each input and output with a ``TypeProto``; the column type of its
values follows from that declaration alone, whatever the rows hold:

========================================  ============================================
declared tensor shape                      Arrow type
========================================  ============================================
every dim a number, none 0                 ``arrow.fixed_shape_tensor``
some dim symbolic, unknown, or 0           variable-shape (``uniform_shape`` keeps the
                                           known sizes)
no shape at all                            ``onnx.variable_rank_tensor``
========================================  ============================================
"""

from __future__ import annotations

import pyarrow as pa
from onnx import TypeProto

from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.extension_types import (
    element_type,
    fixed_shape_tensor,
    variable_rank_tensor,
    variable_shape_tensor,
)
from onnx_arrow.errors import UnsupportedTypeError

__all__ = ["arrow_type"]


def arrow_type(type_proto: TypeProto, *, where: str = "type") -> pa.DataType:
    """The Arrow type of a column holding values of ``type_proto``.

    Examples
    --------
    >>> from onnx import TensorProto, helper
    >>> arrow_type(helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3]))
    FixedShapeTensorType(extension<arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]>)
    >>> arrow_type(helper.make_tensor_type_proto(TensorProto.INT64, ["N", 3])).extension_name
    'arrow.variable_shape_tensor'
    """
    if not isinstance(type_proto, TypeProto):
        raise UnsupportedTypeError(
            f"type must be an onnx.TypeProto, got {type(type_proto).__name__}", where=where
        )
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        tensor = type_proto.tensor_type
        try:
            row = dtype_of(tensor.elem_type)
        except UnsupportedTypeError as exc:
            raise exc.at(f"{where}.tensor_type.elem_type") from None
        value_type = element_type(row)
        if not tensor.HasField("shape"):
            return variable_rank_tensor(value_type)
        dims: list[int | None] = [
            d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim
        ]
        if all(d is not None and d > 0 for d in dims):
            return fixed_shape_tensor(value_type, tuple(d for d in dims if d is not None))
        known = dims if any(d is not None for d in dims) else None
        return variable_shape_tensor(value_type, len(dims), known)
    raise UnsupportedTypeError(
        f"{kind or 'an empty TypeProto'} is not mapped yet; onnx-arrow maps tensor_type",
        where=where,
    )

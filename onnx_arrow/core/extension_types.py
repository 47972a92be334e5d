"""The registry of onnx-arrow's Arrow extension types, in one place, and their names.

Importing this module registers every ``onnx.*`` type with pyarrow (``import
onnx_arrow`` does), so that a Parquet file or IPC stream read afterwards comes back
typed; :func:`describe_type` names any of them for people.  The types themselves:

``onnx.<dtype>``
    element types for the dtypes Arrow lacks (:mod:`onnx_arrow.core.element_types`).
``onnx.fixed_shape_tensor``, ``onnx.variable_shape_tensor`` ...
    tensor layouts and ``onnx.sparse_tensor`` (:mod:`onnx_arrow.core.tensor_types`).
``onnx.message``
    a value beside the rest of its message (:mod:`onnx_arrow.core.message_type`).

pyarrow registers ``arrow.variable_shape_tensor`` in C++ without a Python class;
onnx-arrow never registers a Python class under a canonical name and builds such
arrays through the Arrow C data interface instead.
"""

from __future__ import annotations

import pyarrow as pa

from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.element_types import element_readers
from onnx_arrow.core.extension_metadata import extension_metadata
from onnx_arrow.core.message_type import MessageType
from onnx_arrow.core.tensor_types import (
    OnnxFixedShapeTensorType,
    TensorLayout,
    VariableShapeTensorType,
    ragged_storage,
    sparse_tensor_type,
    tensor_layout,
    variable_rank_tensor,
)

__all__ = ["describe_type"]


def describe_type(arrow_type: pa.DataType) -> str:
    """A short name of an Arrow type: pyarrow's notation without Python class names.

    >>> import pyarrow as pa
    >>> describe_type(pa.fixed_shape_tensor(pa.float32(), [2, 3]))
    'arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]'
    """
    name = getattr(arrow_type, "extension_name", None)
    if name is None:
        return str(arrow_type)
    layout = tensor_layout(arrow_type)
    if layout is not None:
        return _describe_tensor(arrow_type, name, layout)
    if isinstance(arrow_type, MessageType):
        return f"{name}[value={describe_type(arrow_type.value_type)}]"
    return str(name)


def _describe_tensor(arrow_type: pa.DataType, name: str, layout: TensorLayout) -> str:
    value = describe_type(layout.value_type)
    if layout.layout == "fixed":
        shape = ",".join(str(d) for d in arrow_type.shape)
        return f"{name}[value_type={value}, shape=[{shape}]]"
    if layout.layout == "rank":
        return f"{name}[value_type={value}]"
    ndim = arrow_type.storage_type.field("shape").type.list_size
    text = f"{name}[value_type={value}, ndim={ndim}"
    uniform = extension_metadata(arrow_type).get("uniform_shape")
    if uniform is not None:
        text += ", uniform_shape=[" + ",".join(_null_text(d) for d in uniform) + "]"
    return text + "]"


def _null_text(d: int | None) -> str:
    return "null" if d is None else str(d)


def _register_all() -> None:
    """Register every onnx-arrow type with pyarrow: this list is the whole registry."""
    types: list[pa.ExtensionType] = [
        *element_readers(),  # onnx.<dtype>, one per row of the dtype table
        OnnxFixedShapeTensorType(dtype_of("BFLOAT16"), (1,)),  # onnx.fixed_shape_tensor
        VariableShapeTensorType(ragged_storage(pa.float32(), 1), {}),  # onnx.variable_shape_tensor
        variable_rank_tensor(pa.float32()),  # onnx.variable_rank_tensor
        sparse_tensor_type(pa.float32()),  # onnx.sparse_tensor
        MessageType(pa.null()),  # onnx.message
    ]
    for ext in types:
        try:
            pa.register_extension_type(ext)
        except pa.ArrowKeyError:
            # Registered already (a module reload): replace with the current class.
            pa.unregister_extension_type(ext.extension_name)
            pa.register_extension_type(ext)


_register_all()

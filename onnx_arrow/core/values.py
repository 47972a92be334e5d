"""The public bridge: ONNX value messages to one Arrow array and back.

:func:`to_arrow` turns a sequence of messages into an ``onnx.message`` array:
``struct<value: T, envelope: binary>``.  ``value`` is the column in its Arrow
form (for tensors an ``arrow.fixed_shape_tensor`` or variable-shape tensor array);
``envelope`` keeps what a value does not hold (names, doc strings, which field
stored the data), so :func:`from_arrow` gives the messages back byte for byte.
:func:`from_arrow` also takes a bare value array, and then stores data as
``onnx.numpy_helper.from_array`` would.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from onnx import TensorProto, TypeProto

from onnx_arrow.core.extension_types import MessageType
from onnx_arrow.core.external_data import read_external_data
from onnx_arrow.core.tensors import (
    Tensor,
    decode_tensor,
    encode_tensor,
    stacked_codes,
    tensor_array,
    tensor_rows,
)
from onnx_arrow.core.types import arrow_type
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError

__all__ = [
    "from_arrow",
    "from_arrow_scalar",
    "to_arrow",
    "to_arrow_scalar",
    "to_numpy",
]

Message = TensorProto


def _resolver(base_dir: str | os.PathLike[str] | None, where: str) -> Callable[..., Any]:
    return lambda entries, length: read_external_data(
        entries, base_dir, expected_length=length, where=where
    )


def _decode_all(
    serialized: Sequence[bytes | memoryview],
    base_dir: str | os.PathLike[str] | None,
    where: str,
) -> list[Tensor]:
    out = []
    for i, data in enumerate(serialized):
        at = f"{where}row {i}"
        out.append(decode_tensor(data, where=at, external=_resolver(base_dir, at)))
    return out


def to_arrow(
    values: Sequence[TensorProto],
    type: TypeProto | None = None,
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> pa.ExtensionArray:
    """Convert ONNX value messages into one Arrow array, one row per message.

    Parameters
    ----------
    values
        ``TensorProto`` messages.  They are never modified.
    type
        What a model declares for the value (an ``onnx.TypeProto``).  Given, it
        decides the column type; absent, all values decide together.
    base_dir
        The folder that external data (``data_location = EXTERNAL``) is relative
        to.  Without it such a tensor is an error; the current directory is never
        assumed.

    Returns
    -------
    pyarrow.ExtensionArray
        An ``onnx.message`` array; ``.value`` is the value column (for tensors an
        ``arrow.fixed_shape_tensor`` array when all rows share a shape).

    Examples
    --------
    >>> import numpy as np
    >>> from onnx import numpy_helper
    >>> x = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "x")
    >>> arr = to_arrow([x])
    >>> arr.value.type
    FixedShapeTensorType(extension<arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]>)
    >>> from_arrow(arr)[0] == x
    True
    """
    serialized = [_serialize(v, i) for i, v in enumerate(values)]
    return _to_arrow_serialized(serialized, type, base_dir=base_dir)


def _serialize(value: object, index: int) -> bytes:
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    raise UnsupportedTypeError(
        f"expected an onnx.TensorProto, got {type(value).__name__}; "
        "convert numpy arrays with onnx.numpy_helper.from_array first",
        where=f"row {index}",
    )


def _to_arrow_serialized(
    serialized: Sequence[bytes | memoryview],
    type_proto: TypeProto | None,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    where: str = "",
) -> pa.ExtensionArray:
    value_type = None if type_proto is None else arrow_type(type_proto)
    tensors = _decode_all(serialized, base_dir, where)
    values = tensor_array(tensors, value_type)
    envelopes = pa.array([t.envelope for t in tensors], pa.binary())
    storage = pa.StructArray.from_arrays([values, envelopes], names=["value", "envelope"])
    return pa.ExtensionArray.from_storage(MessageType(values.type), storage)


def from_arrow(array: pa.Array | pa.ChunkedArray) -> list[TensorProto]:
    """Convert an Arrow array back into ONNX value messages, one per row.

    Takes what :func:`to_arrow` returns (exact: every message comes back byte
    for byte) or a bare tensor array (data stored in ``raw_data``, or
    ``string_data`` for strings, as ``onnx.numpy_helper.from_array`` does).
    """
    return [TensorProto.FromString(b) for b in _from_arrow_serialized(array)]


def _from_arrow_serialized(array: pa.Array | pa.ChunkedArray) -> list[bytes]:
    if isinstance(array, pa.ChunkedArray):
        return [b for chunk in array.chunks for b in _from_arrow_serialized(chunk)]
    if isinstance(array.type, MessageType):
        values = array.storage.field("value")
        envelopes = array.storage.field("envelope").to_pylist()
    else:
        values = array
        envelopes = [None] * len(array)
    out = []
    for i, (tensor, envelope) in enumerate(zip(tensor_rows(values), envelopes, strict=True)):
        if tensor is None:
            raise UnsupportedTypeError(
                "a null tensor row has no message; nullable values are optionals",
                where=f"row {i}",
            )
        try:
            out.append(encode_tensor(_with_envelope(tensor, envelope)))
        except OnnxArrowError as exc:
            raise exc.at(f"row {i}") from None
    return out


def _with_envelope(tensor: Tensor, envelope: bytes | None) -> Tensor:
    return Tensor(tensor.dtype, tensor.dims, tensor.codes, envelope)


def to_arrow_scalar(
    value: TensorProto,
    type: TypeProto | None = None,
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> pa.ExtensionScalar:
    """One message as an Arrow scalar of the type :func:`to_arrow` gives."""
    return to_arrow([value], type, base_dir=base_dir)[0]


def from_arrow_scalar(scalar: pa.Scalar) -> TensorProto:
    """The message of one Arrow scalar (see :func:`to_arrow_scalar`)."""
    return from_arrow(pa.repeat(scalar, 1))[0]


def to_numpy(array: pa.Array | pa.ChunkedArray | pa.Scalar) -> Any:
    """Tensor values as numpy arrays of the ONNX dtype, every dtype included.

    A fixed-shape column gives one stacked ndarray of shape ``(rows, *shape)``
    (zero-copy for the dtypes Arrow has natively); other layouts give a list with
    one ndarray per row (``None`` for a null row); a scalar gives one ndarray.
    BOOL gives ``bool``, STRING an object array of ``bytes``, bfloat16, float8
    and the sub-byte types their ``ml_dtypes`` dtype.

    >>> import numpy as np
    >>> from onnx import numpy_helper
    >>> arr = to_arrow([numpy_helper.from_array(np.array([True, False]))])
    >>> to_numpy(arr)
    array([[ True, False]])
    """
    if isinstance(array, pa.Scalar):
        return to_numpy(pa.repeat(array, 1))[0]
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if isinstance(array.type, MessageType):
        array = array.storage.field("value")
    stacked = stacked_codes(array)
    if stacked is not None:
        return stacked
    return [None if t is None else t.to_numpy() for t in tensor_rows(array)]

"""The public bridge: ONNX value messages to one Arrow array and back.

:func:`to_arrow` turns a sequence of messages (``TensorProto``,
``SparseTensorProto``, ``SequenceProto``, ``MapProto`` or ``OptionalProto``) into
an ``onnx.message`` array: ``struct<value: T, envelope: binary>``.  ``value`` is
the column in its Arrow form (for tensors an ``arrow.fixed_shape_tensor`` or
variable-shape tensor array, for sequences a list array ...); ``envelope`` keeps
what a value does not hold (names, doc strings, ``elem_type``, which field stored
the data), so :func:`from_arrow` gives the messages back byte for byte.
:func:`from_arrow` also takes a bare value array, and then stores data as
``onnx.numpy_helper`` would.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa
from google.protobuf.message import Message
from onnx import TypeProto

from onnx_arrow.core.containers import (
    MESSAGE_CLASS,
    TENSOR,
    Kind,
    Node,
    build_array,
    decode_value,
    encode_value,
    infer_arrow_type,
    kind_of_message,
    python_value,
    unify,
    value_rows,
)
from onnx_arrow.core.extension_types import MessageType
from onnx_arrow.core.external_data import read_external_data
from onnx_arrow.core.tensors import stacked_codes
from onnx_arrow.core.types import arrow_type, kind_of_arrow, kind_of_type
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError

__all__ = [
    "from_arrow",
    "from_arrow_scalar",
    "to_arrow",
    "to_arrow_scalar",
    "to_numpy",
]

PathLike = str | os.PathLike[str]


def _resolver(base_dir: PathLike | None, where: str) -> Callable[..., Any]:
    return lambda entries, length: read_external_data(
        entries, base_dir, expected_length=length, where=where
    )


def to_arrow(
    values: Sequence[Message],
    type: TypeProto | None = None,
    *,
    base_dir: PathLike | None = None,
) -> pa.ExtensionArray:
    """Convert ONNX value messages into one Arrow array, one row per message.

    Parameters
    ----------
    values
        Messages of one kind: ``TensorProto``, ``SparseTensorProto``,
        ``SequenceProto``, ``MapProto`` or ``OptionalProto``.  They are never modified.
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
    >>> seq = numpy_helper.from_list([np.zeros(2, np.int64), np.ones(3, np.int64)], "s")
    >>> to_arrow([seq]).value.type.value_type.extension_name
    'arrow.variable_shape_tensor'
    """
    kinds = [kind_of_message(v, where=f"row {i}") for i, v in enumerate(values)]
    if len(set(kinds)) > 1:
        first = kinds[0]
        i = next(i for i, k in enumerate(kinds) if k != first)
        raise UnsupportedTypeError(
            f"row {i} is a {kinds[i]} message but row 0 is a {first}; a column holds one kind",
            where=f"row {i}",
        )
    # serialized as the decoder reaches each row, not all rows up front
    serialized = (v.SerializeToString() for v in values)
    return to_arrow_serialized(serialized, kinds[0] if kinds else None, type, base_dir=base_dir)


def to_arrow_serialized(
    serialized: Iterable[bytes | memoryview],
    message_kind: str | None,
    type_proto: TypeProto | None,
    *,
    base_dir: PathLike | None = None,
    where: str = "",
    zero_copy: bool = False,
) -> pa.ExtensionArray:
    """:func:`to_arrow` on serialized messages of kind ``message_kind`` (``"tensor"`` ...).

    ``serialized`` is read once, in order, so a generator does.  With ``zero_copy``,
    tensor data is not copied out of ``serialized`` buffers.
    """
    kind: Kind | None = None
    if type_proto is not None:
        kind = kind_of_type(type_proto)
        if message_kind is not None and kind.name != message_kind:
            raise UnsupportedTypeError(
                f"the declared type is {kind} but the values are {message_kind} messages",
                where=f"{where}type",
            )
    elif message_kind is None:
        raise UnsupportedTypeError(
            "no values to decide the Arrow type from; pass type= (an onnx.TypeProto)"
        )
    assert message_kind is not None or kind is not None
    name = message_kind or kind.name  # type: ignore[union-attr]
    nodes: list[Node | None] = []
    envelopes: list[bytes] = []
    for i, data in enumerate(serialized):
        at = f"{where}row {i}"
        node, envelope, found = decode_value(
            data, name, where=at, external=_resolver(base_dir, at), zero_copy=zero_copy
        )
        kind = unify(kind, found, at)
        nodes.append(node)
        envelopes.append(envelope)
    assert kind is not None
    try:
        value_type = (
            arrow_type(type_proto) if type_proto is not None else infer_arrow_type(nodes, kind)
        )
        values = build_array(nodes, kind, value_type)
    except OnnxArrowError as exc:
        raise exc.at(where.rstrip(": ") or "column") from None
    storage = pa.StructArray.from_arrays(
        [values, pa.array(envelopes, pa.binary())], names=["value", "envelope"]
    )
    return pa.ExtensionArray.from_storage(MessageType(values.type, kind.to_json()), storage)


def from_arrow(array: pa.Array | pa.ChunkedArray, type: TypeProto | None = None) -> list[Message]:
    """Convert an Arrow array back into ONNX value messages, one per row.

    Takes what :func:`to_arrow` returns (exact: every message comes back byte
    for byte) or a bare value array (a tensor array, a list of tensors ...); for
    those, ``type`` tells what they hold where the Arrow type cannot (optionals),
    and data is stored as ``onnx.numpy_helper`` would.
    """
    kind, serialized = from_arrow_serialized(array, type)
    cls = MESSAGE_CLASS[kind.name]
    return [cls.FromString(b) for b in serialized]  # type: ignore[attr-defined]


def from_arrow_serialized(
    array: pa.Array | pa.ChunkedArray, type_proto: TypeProto | None = None
) -> tuple[Kind, list[bytes]]:
    """:func:`from_arrow` giving the serialized messages and their kind."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    if isinstance(array.type, MessageType):
        kind = Kind.from_json(array.type.kind, where="onnx.message")
        values = array.storage.field("value")
        envelopes: list[bytes | None] = array.storage.field("envelope").to_pylist()
    else:
        values = array
        kind = (
            kind_of_type(type_proto) if type_proto is not None else kind_of_arrow(array.type, array)
        )
        envelopes = [None] * len(array)
    out = []
    for i, (node, envelope) in enumerate(zip(value_rows(values, kind), envelopes, strict=True)):
        try:
            out.append(encode_value(node, kind, envelope, where=f"row {i}"))
        except OnnxArrowError as exc:
            raise exc if exc.where and exc.where.startswith("row") else exc.at(f"row {i}") from None
    return kind, out


def to_arrow_scalar(
    value: Message,
    type: TypeProto | None = None,
    *,
    base_dir: PathLike | None = None,
) -> pa.ExtensionScalar:
    """One message as an Arrow scalar of the type :func:`to_arrow` gives."""
    return to_arrow([value], type, base_dir=base_dir)[0]


def from_arrow_scalar(scalar: pa.Scalar) -> Message:
    """The message of one Arrow scalar (see :func:`to_arrow_scalar`)."""
    return from_arrow(pa.repeat(scalar, 1))[0]


def to_numpy(array: pa.Array | pa.ChunkedArray | pa.Scalar) -> Any:
    """Values as numpy arrays of the ONNX dtype, every dtype included.

    A fixed-shape tensor column gives one stacked ndarray of shape
    ``(rows, *shape)`` (zero-copy for the dtypes Arrow has natively); any other
    column gives a list with one entry per row: an ndarray for a tensor, a list
    for a sequence, a list of ``(key, value)`` pairs for a map (order and
    duplicate keys kept), None for an absent optional, a dict with ``dims``,
    ``values`` and ``indices`` for a sparse tensor.  A scalar gives its one entry.
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
        kind = Kind.from_json(array.type.kind, where="onnx.message")
        array = array.storage.field("value")
    else:
        kind = kind_of_arrow(array.type, array)
    if kind.name == TENSOR:
        stacked = stacked_codes(array)
        if stacked is not None:
            return stacked
    return [python_value(node) for node in value_rows(array, kind)]

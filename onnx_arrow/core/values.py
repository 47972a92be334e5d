"""The public bridge: ONNX value messages to Arrow arrays and back.

:func:`to_arrow` turns a sequence of messages (``TensorProto``,
``SparseTensorProto``, ``SequenceProto``, ``MapProto`` or ``OptionalProto``) into
one Arrow column of their values, in the canonical Arrow types (for tensors an
``arrow.fixed_shape_tensor`` or variable-shape tensor array, for sequences a list
array ...).  With ``exact=True`` it gives an ``onnx.message`` array instead,
``struct<value: T, envelope: binary>``: ``value`` is that column, ``envelope``
keeps what a value does not hold (names, doc strings, ``elem_type``, which field
stored the data), so :func:`from_arrow` gives the messages back byte for byte.

:func:`from_arrow`, :func:`to_numpy` and :func:`to_pylist` take either form, from
pyarrow or from any object of the Arrow PyCapsule interface.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from google.protobuf.message import Message

from onnx_arrow.core._open import as_path
from onnx_arrow.core.arrays import build_array, infer_arrow_type, value_rows
from onnx_arrow.core.arrow_input import as_array
from onnx_arrow.core.codec import Strings, check_strings, decode_strings
from onnx_arrow.core.containers import decode_value, encode_value
from onnx_arrow.core.declarations import Contradiction, contradiction
from onnx_arrow.core.direct import fixed_tensor_array, fixed_tensor_messages, raw_batch
from onnx_arrow.core.external_data import read_external_data
from onnx_arrow.core.kinds import OPTIONAL, TENSOR, Kind, kind_of_message, message_class, unify
from onnx_arrow.core.message_type import MessageType
from onnx_arrow.core.nodes import Node
from onnx_arrow.core.protos import TypeProto
from onnx_arrow.core.python_values import python_value
from onnx_arrow.core.tensor_arrays import (
    stacked_codes,
    tensor_column,
    tensor_dtype,
    tensor_rows,
    tensor_type_for,
)
from onnx_arrow.core.tensor_codes import null_row_error
from onnx_arrow.core.tensor_column_wire import encode_tensor_rows
from onnx_arrow.core.tensor_types import tensor_layout
from onnx_arrow.core.tensors import Tensor, numpy_shape
from onnx_arrow.core.types import arrow_type, fit_declared, kind_of_arrow, kind_of_type
from onnx_arrow.core.value_digests import check_digests, digests_of
from onnx_arrow.errors import (
    NotRepresentableError,
    OnnxArrowError,
    UnsupportedTypeError,
)

__all__ = [
    "from_arrow",
    "from_arrow_scalar",
    "to_arrow",
    "to_arrow_scalar",
    "to_numpy",
    "to_pylist",
    "unwrap",
]

PathLike = str | os.PathLike[str]


def _resolver(base_dir: PathLike | None, where: str) -> Callable[..., Any]:
    return lambda entries, length: read_external_data(
        entries, base_dir, expected_length=length, where=where
    )


def to_arrow(
    values: Sequence[Message],
    declared: TypeProto | None = None,
    *,
    base_dir: PathLike | None = None,
    exact: bool = False,
    digest: bool = False,
) -> pa.Array:
    """Convert ONNX value messages into one Arrow array, one row per message.

    Parameters
    ----------
    values
        Messages of one kind: ``TensorProto``, ``SparseTensorProto``,
        ``SequenceProto``, ``MapProto`` or ``OptionalProto``.  They are never modified.
    declared
        What a model declares for the value (an ``onnx.TypeProto``, not an Arrow
        type).  Given, it decides the column type; absent, all values decide together.
    base_dir
        The folder that external data (``data_location = EXTERNAL``) is relative
        to.  Without it such a tensor is an error; the current directory is never
        assumed.
    exact
        False (the default): the values themselves, in the canonical Arrow types
        every engine reads.  True: an ``onnx.message`` array, ``struct<value,
        envelope>``, that also keeps what a value does not hold (names, doc strings,
        which field stored the data), so that :func:`from_arrow` gives every message
        back byte for byte.
    digest
        With ``exact=True`` only: the ``onnx.message`` array gets a third field,
        ``digest: fixed_size_binary(16)``, the BLAKE2b-128 of each row's message as
        :func:`from_arrow` gives it back (:mod:`onnx_arrow.core.value_digests`), which
        :func:`from_arrow` checks: values whose bits an engine's Parquet writer changed
        (NaN payloads and signs) are a located error, never other messages.  Off by
        default (it serializes every row once more here, and in :func:`from_arrow`).

    Returns
    -------
    pyarrow.Array
        By default the value column: an ``arrow.fixed_shape_tensor`` array when all
        tensors share a shape, a variable-shape tensor array when they do not, a list
        array for sequences, a map array for maps, the element's column with nulls
        for optionals.  With ``exact=True`` an ``onnx.message`` array whose
        ``.value`` is that column.

    Examples
    --------
    >>> import numpy as np
    >>> from onnx import numpy_helper
    >>> x = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "x")
    >>> arr = to_arrow([x])
    >>> arr.type
    FixedShapeTensorType(extension<arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]>)
    >>> arr.to_numpy_ndarray().shape
    (1, 2, 3)
    >>> from_arrow(arr)[0] == numpy_helper.from_array(numpy_helper.to_array(x))  # no name
    True
    >>> exact = to_arrow([x], exact=True)
    >>> exact.type.extension_name, from_arrow(exact)[0] == x
    ('onnx.message', True)
    >>> seq = numpy_helper.from_list([np.zeros(2, np.int64), np.ones(3, np.int64)], "s")
    >>> to_arrow([seq]).type.value_type.extension_name
    'onnx.variable_shape_tensor'
    """
    if digest and not exact:
        raise UnsupportedTypeError(
            "digest=True needs exact=True: a value column has no place for the digests; "
            "pass exact=True, or keep the column in a table and write "
            "onnx_arrow.to_portable(table, digest=True)",
            where="digest",
        )
    if base_dir is not None:
        base_dir = as_path(base_dir, where="base_dir")
    if digest:
        return _with_digests(to_arrow(values, declared, base_dir=base_dir, exact=True))
    if isinstance(values, Message):
        raise UnsupportedTypeError(
            f"values is one {values.DESCRIPTOR.name}, not a sequence of messages; pass a list "
            "of them, e.g. to_arrow([value])",
            where="values",
        )
    if not isinstance(values, list | tuple):
        try:
            values = list(values)  # read twice when the direct path hands over to the wire path
        except TypeError:
            raise UnsupportedTypeError(
                f"values must be a sequence of messages, got {type(values).__name__}; "
                "pass a list of them, e.g. to_arrow([value])",
                where="values",
            ) from None
    if values:
        direct = _direct_tensors(values, declared, exact)
        if direct is not None:
            return direct
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
    array = to_arrow_serialized(
        serialized, kinds[0] if kinds else None, declared, base_dir=base_dir
    )
    return array if exact else array.storage.field("value")


def _with_digests(array: pa.Array) -> pa.Array:
    """An ``onnx.message`` array with each row's digest in a third field."""
    message_type = array.type
    _, serialized = _serialized(array, None)
    storage = array.storage
    fields = [storage.field("value"), storage.field("envelope"), digests_of(serialized)]
    with_digest = pa.StructArray.from_arrays(fields, names=["value", "envelope", "digest"])
    return pa.ExtensionArray.from_storage(
        MessageType(message_type.value_type, message_type.kind, digest_type=fields[2].type),
        with_digest,
    )


def _direct_tensors(
    values: Sequence[Message], declared: TypeProto | None, exact: bool
) -> pa.Array | None:
    """The column of tensors read from their fields, without serializing them; None when
    a tensor needs the wire path (see :func:`~onnx_arrow.core.direct.raw_batch`).  With
    ``exact``, the ``onnx.message`` column, envelopes built from the fields too."""
    batch = raw_batch(values)
    if batch is None:
        return None
    kind = Kind(TENSOR) if declared is None else kind_of_type(declared)
    if kind.name != TENSOR:
        return None  # the wire path says how the declaration and the messages differ
    row = batch.dtypes[0]
    one_type = layout = None
    if declared is None and all(r is row for r in batch.dtypes):
        one_type = tensor_type_for(row, batch.dims)  # the rule every tensor column follows
        layout = tensor_layout(one_type)
    if one_type is not None and layout is not None and layout.layout == "fixed":
        # one shape: the data of all rows joined once, no tensor built one by one
        column = fixed_tensor_array(one_type, row, b"".join(batch.raws))
    else:
        nodes: list[Node | None] = [
            Tensor(r, d, np.frombuffer(raw, dtype=r.numpy))
            for r, d, raw in zip(batch.dtypes, batch.dims, batch.raws, strict=True)
        ]
        try:
            value_type = (
                arrow_type(declared) if declared is not None else infer_arrow_type(nodes, kind)
            )
            column = build_array(nodes, kind, value_type)
        except OnnxArrowError as exc:
            raise exc.at("column") from None
    if not exact:
        return column
    envelopes = pa.array(batch.envelopes(), pa.binary())
    storage = pa.StructArray.from_arrays([column, envelopes], names=["value", "envelope"])
    return pa.ExtensionArray.from_storage(MessageType(column.type, kind.to_json()), storage)


def to_arrow_serialized(
    serialized: Iterable[bytes | memoryview],
    message_kind: str | None,
    type_proto: TypeProto | None,
    *,
    base_dir: PathLike | None = None,
    where: str = "",
    zero_copy: bool = False,
    contradicting: Callable[[int, Contradiction], None] | None = None,
) -> pa.ExtensionArray:
    """:func:`to_arrow` on serialized messages of kind ``message_kind`` (``"tensor"`` ...).

    ``serialized`` is read once, in order, so a generator does.  With ``zero_copy``,
    tensor data is not copied out of ``serialized`` buffers.  With ``contradicting``,
    a value that contradicts ``type_proto`` (see
    :func:`~onnx_arrow.core.declarations.contradiction`) is handed to it with its row,
    and the column is typed by what the values hold instead of refused.
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
            "no values to decide the Arrow type from; pass declared= (an onnx.TypeProto)"
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
    own = type_proto is None
    if contradicting is not None and type_proto is not None:
        for i, row in enumerate(nodes):
            clash = contradiction(type_proto, row, kind)
            if clash is not None:
                contradicting(i, clash)
                own = True
    try:
        value_type = (
            infer_arrow_type(nodes, kind) if own or type_proto is None else arrow_type(type_proto)
        )
        values = build_array(nodes, kind, value_type)
    except OnnxArrowError as exc:
        raise exc.at(where.rstrip(": ") or "column") from None
    storage = pa.StructArray.from_arrays(
        [values, pa.array(envelopes, pa.binary())], names=["value", "envelope"]
    )
    return pa.ExtensionArray.from_storage(MessageType(values.type, kind.to_json()), storage)


def from_arrow(data: Any, declared: TypeProto | None = None) -> list[Message]:
    """Convert an Arrow array back into ONNX value messages, one per row.

    Parameters
    ----------
    data
        What :func:`to_arrow` gives, or any Arrow data of the same types: a pyarrow
        array, chunked array or one-column table, or an object with
        ``__arrow_c_array__`` / ``__arrow_c_stream__`` (a Polars ``Series``).  The
        views other engines produce (``binary_view``, ``large_list`` ...) are read
        as the layouts they stand for.
    declared
        What the values are declared as (an ``onnx.TypeProto``).  It is checked
        against the column, and tells what the Arrow type cannot: that a column
        without nulls holds optionals.

    Returns
    -------
    list of messages
        From an ``onnx.message`` array (``exact=True``) every message byte for
        byte; from a value column, messages whose data is stored as
        ``onnx.numpy_helper.from_array`` stores it, with empty names.

    Raises
    ------
    UnsupportedTypeError
        If ``data`` is not the Arrow form of ONNX values, or not what ``declared`` says.
    ArrowLayoutError
        If the Arrow data is malformed; nothing of it is read before it is checked.
    """
    array = as_array(data)
    if declared is None and not isinstance(array.type, MessageType):
        # a bare tensor column: its messages built from its data, no bytes in between
        direct = fixed_tensor_messages(array)
        if direct is not None:
            return list(direct)
    kind, serialized = _serialized(array, declared)
    cls = message_class(kind.name)
    return [cls.FromString(b) for b in serialized]


def unwrap(array: pa.Array) -> tuple[Kind, pa.Array, pa.Array | None]:
    """The kind, value column and envelopes (None for a bare value column) of an array
    that :func:`onnx_arrow.core.arrow_input.as_array` gave."""
    if isinstance(array.type, MessageType):
        kind = Kind.from_json(array.type.kind, where="onnx.message")
        return kind, array.storage.field("value"), array.storage.field("envelope")
    return kind_of_arrow(array.type, array), array, None


def from_arrow_serialized(
    data: Any, type_proto: TypeProto | None = None
) -> tuple[Kind, list[bytes]]:
    """:func:`from_arrow` giving the serialized messages and their kind."""
    return _serialized(as_array(data), type_proto)


def _serialized(array: pa.Array, type_proto: TypeProto | None) -> tuple[Kind, list[bytes]]:
    if type_proto is not None and pa.types.is_null(array.type):
        # a column of nulls only: every row absent, of the declared type
        kind, values, envelope_array = kind_of_type(type_proto), array, None
    else:
        kind, values, envelope_array = unwrap(array)
    if type_proto is not None:
        declared = fit_declared(type_proto, values.type, kind)
        if envelope_array is None:
            # a bare column: the declaration says which levels are optional
            kind = declared
    envelopes: list[bytes | None] = (
        [None] * len(values) if envelope_array is None else envelope_array.to_pylist()
    )
    if kind.name == TENSOR and isinstance(values, pa.Array) and not values.null_count:
        # a column of tensors: their data encoded at once, each message joined from it
        column = tensor_column(values)
        out = encode_tensor_rows(column.dtype, column.dims, column.codes, column.offsets, envelopes)
    else:
        out = []
        rows = value_rows(values, kind)
        for i, (node, envelope) in enumerate(zip(rows, envelopes, strict=True)):
            try:
                out.append(encode_value(node, kind, envelope, where=f"row {i}"))
            except OnnxArrowError as exc:
                located = exc.where and exc.where.startswith("row")
                raise exc if located else exc.at(f"row {i}") from None
    if isinstance(array.type, MessageType) and array.type.digest_type is not None:
        check_digests(out, array.storage.field("digest"), where="")
    return kind, out


def to_arrow_scalar(
    value: Message,
    declared: TypeProto | None = None,
    *,
    base_dir: PathLike | None = None,
    exact: bool = False,
) -> pa.Scalar:
    """One message as an Arrow scalar of the type :func:`to_arrow` gives."""
    return to_arrow([value], declared, base_dir=base_dir, exact=exact)[0]


def from_arrow_scalar(scalar: pa.Scalar, declared: TypeProto | None = None) -> Message:
    """The message of one Arrow scalar (see :func:`to_arrow_scalar`).

    Raises
    ------
    UnsupportedTypeError
        If ``scalar`` is no pyarrow ``Scalar`` (a column's row: ``column[i]``).
    """
    if not isinstance(scalar, pa.Scalar):
        raise UnsupportedTypeError(
            "expected a pyarrow Scalar, one row of a column (column[i]); for a whole column "
            f"use onnx_arrow.from_arrow, got {type(scalar).__qualname__}",
            where="scalar",
        )
    return from_arrow(pa.repeat(scalar, 1), declared)[0]


def to_numpy(data: Any, *, strings: Strings = "str") -> np.ndarray[Any, Any]:
    """A tensor column as one ndarray of shape ``(rows, *shape)``, for every dtype.

    The column may be any Arrow data :func:`from_arrow` takes; its rows must all be
    present tensors of one shape (for anything else, :func:`to_pylist`).  The dtype
    is the ONNX dtype's numpy dtype: ``bool`` for BOOL, ``ml_dtypes`` ones for
    bfloat16, the float8s and the sub-byte types, and for STRING an object array
    of ``str`` (decoded from UTF-8, as ``onnx.numpy_helper`` gives it) or, with
    ``strings="bytes"``, of the bytes exactly as stored.  A fixed-shape column of a
    dtype Arrow has natively comes zero-copy.  A scalar gives its one tensor.

    Raises
    ------
    NotRepresentableError
        If the rows are not one stack of tensors: another kind, a null (absent)
        row, or shapes that differ (the error names the first two).

    >>> import numpy as np
    >>> from onnx import numpy_helper
    >>> to_numpy(to_arrow([numpy_helper.from_array(np.array([True, False]))]))
    array([[ True, False]])
    >>> to_numpy(to_arrow([numpy_helper.from_array(np.array(["ab", "c"]))]))
    array([['ab', 'c']], dtype=object)
    """
    strings = check_strings(strings)
    if isinstance(data, pa.Scalar):
        return to_numpy(pa.repeat(data, 1), strings=strings)[0]
    kind, values, _ = unwrap(as_array(data))
    if kind.name == OPTIONAL and kind.elem is not None and kind.elem.name == TENSOR:
        kind = kind.elem  # every row present, or refused below
    if kind.name != TENSOR:
        raise NotRepresentableError(
            f"a column of {kind} values is not one ndarray; onnx_arrow.to_pylist gives "
            "one Python value per row"
        )
    stacked = stacked_codes(values)
    if stacked is None:
        rows = tensor_rows(values)
        absent = next((i for i, t in enumerate(rows) if t is None), None)
        if absent is not None:
            raise null_row_error(absent)
        tensors = [t for t in rows if t is not None]
        shapes = [t.dims for t in tensors]
        other = next((i for i, s in enumerate(shapes) if s != shapes[0]), None)
        if other is not None:
            raise NotRepresentableError(
                f"row 0 has shape {list(shapes[0])} and row {other} {list(shapes[other])}, so "
                "the column is not one ndarray; onnx_arrow.to_pylist gives one array per row"
            )
        row = tensor_dtype(values.type)
        shape = numpy_shape(
            (len(tensors), *(shapes[0] if shapes else ())),
            what="an ndarray of the column's rows",
            where="column",
            dtype=np.dtype(row.numpy),
        )
        stacked = (
            np.concatenate([t.codes for t in tensors]).reshape(shape)
            if tensors
            else np.empty(shape, dtype=row.numpy)
        )
    if stacked.dtype == object and strings == "str":
        stacked = decode_strings(stacked)
    return stacked


def to_pylist(data: Any, *, strings: Strings = "str") -> list[Any]:
    """One Python value per row, for every kind of column.

    An ndarray for a tensor (of the ONNX dtype, as :func:`to_numpy` gives), a list
    for a sequence, a list of ``(key, value)`` pairs for a map (order and duplicate
    keys kept), None for an absent optional, a dict with ``dims``, ``values`` and
    ``indices`` for a sparse tensor.  STRING elements and keys are ``str`` or, with
    ``strings="bytes"``, the bytes exactly as stored.

    >>> import numpy as np
    >>> from onnx import numpy_helper
    >>> opt = [numpy_helper.from_optional(None, "o", dtype=1),
    ...        numpy_helper.from_optional(np.array([1.5, 2.0], np.float32), "o")]
    >>> to_pylist(to_arrow(opt))
    [None, array([1.5, 2. ], dtype=float32)]
    >>> to_pylist(to_arrow([numpy_helper.from_list([np.array(["a", "b"])])]))
    [[array(['a', 'b'], dtype=object)]]
    """
    strings = check_strings(strings)
    kind, values, _ = unwrap(as_array(data))
    out = []
    for i, node in enumerate(value_rows(values, kind)):
        try:
            out.append(python_value(node, strings=strings))
        except OnnxArrowError as exc:
            raise exc.at(f"row {i}") from None
    return out

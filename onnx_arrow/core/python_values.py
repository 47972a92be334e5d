"""Python values and ONNX values, both ways: a node as numpy arrays, lists, pairs, dicts
and None (:func:`python_value`, the form :func:`onnx_arrow.to_pylist` gives one value per
row in), and such a value, of a declared ``onnx.TypeProto``, as its message
(:func:`value_message`, written as onnx's test-data writer writes it).

The declared type decides every kind; nothing is guessed from the value's Python type.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

from onnx_arrow.core.codec import Strings, decode_strings
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of_numpy
from onnx_arrow.core.graph import onnx_type_string
from onnx_arrow.core.nodes import MapValue, Node, OptionalValue, SequenceValue, check_sparse
from onnx_arrow.core.protos import (
    MapProto,
    OptionalProto,
    SequenceProto,
    SparseTensorProto,
    TensorProto,
    TypeProto,
)
from onnx_arrow.core.tensors import Tensor
from onnx_arrow.errors import NotRepresentableError, UnsupportedTypeError

__all__ = [
    "Message",
    "map_keys",
    "map_pairs",
    "python_value",
    "string_bytes",
    "value_message",
]

Message: TypeAlias = TensorProto | SparseTensorProto | SequenceProto | MapProto | OptionalProto
"""A value's message: what :func:`value_message` gives."""


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


# --- a Python value as its message -----------------------------------------------------

# the ``elem_type`` a SequenceProto or OptionalProto holding a value of the declared kind
# says (the two enums agree), and the field of SequenceProto / OptionalProto it goes in
_ELEM_TYPES = {
    "tensor_type": SequenceProto.TENSOR,
    "sparse_tensor_type": SequenceProto.SPARSE_TENSOR,
    "sequence_type": SequenceProto.SEQUENCE,
    "map_type": SequenceProto.MAP,
    "optional_type": SequenceProto.OPTIONAL,
}
_SEQUENCE_FIELDS = {
    "tensor_type": "tensor_values",
    "sparse_tensor_type": "sparse_tensor_values",
    "sequence_type": "sequence_values",
    "map_type": "map_values",
    "optional_type": "optional_values",
}
_OPTIONAL_FIELDS = {
    "tensor_type": "tensor_value",
    "sparse_tensor_type": "sparse_tensor_value",
    "sequence_type": "sequence_value",
    "map_type": "map_value",
    "optional_type": "optional_value",
}
_SCALARS = (bool, int, float, complex, str, bytes, np.generic)


def value_message(value: Any, name: str, declared: TypeProto) -> Message:
    """``value`` as the message of the ``declared`` type, named ``name``, as onnx's
    test-data writer (``numpy_helper.from_array`` / ``from_list`` / ``from_dict`` /
    ``from_optional``) writes it: the inverse of :func:`python_value`.

    A tensor is an ndarray (or a numpy or Python scalar, or a ``TensorProto`` kept as
    it is), a sequence a list or tuple, a map a dict or ``(key, value)`` pairs, an
    optional its value or None, a sparse tensor ``{"dims", "values", "indices"}`` (or a
    ``SparseTensorProto`` kept as it is).  The declared type decides each kind, the
    ``elem_type`` of a sequence or optional and the key type of a map; the elements of a
    tensor keep the array's dtype.  An absent optional says no element type, as onnx's
    writer has it.

    Raises
    ------
    UnsupportedTypeError
        The value is not of the form the declared type takes, located at ``name``
        (``seq[2]``, ``m[b'k']``, ``opt.value``; ``the value`` if unnamed).
    NotRepresentableError
        No type is declared (at any depth), or a map key is not of the declared key
        type (:func:`map_keys`).

    Examples
    --------
    >>> import numpy as np
    >>> from onnx import TensorProto, helper
    >>> seq = helper.make_sequence_type_proto(
    ...     helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    ... )
    >>> msg = value_message([np.zeros(2, np.float32)], "s", seq)
    >>> msg.name, msg.elem_type, len(msg.tensor_values)
    ('s', 1, 1)
    >>> value_message(np.zeros(2), "s", seq)
    Traceback (most recent call last):
    ...
    onnx_arrow.errors.UnsupportedTypeError: s: expected a list for seq(tensor(float)), got ndarray
    """
    return _message(value, name, declared, name or "the value")


def _message(value: Any, name: str, declared: TypeProto, where: str) -> Message:
    which = declared.WhichOneof("value")
    if which == "tensor_type":
        return _tensor(value, name, declared, where)
    if which == "sequence_type":
        return _sequence(value, name, declared, where)
    if which == "map_type":
        return _map(value, name, declared, where)
    if which == "optional_type":
        return _optional(value, name, declared, where)
    if which == "sparse_tensor_type":
        return _sparse(value, name, declared, where)
    raise NotRepresentableError(
        f"no type is declared ({onnx_type_string(declared)}), so the value "
        f"({_what(value)}) has no message kind",
        where=where,
    )


def _tensor(value: Any, name: str, declared: TypeProto, where: str) -> TensorProto:
    if isinstance(value, TensorProto):
        return value
    if not isinstance(value, (np.ndarray, *_SCALARS)):
        raise _unexpected("a numpy array", value, declared, where)
    from onnx import numpy_helper  # onnx's own conversion, imported when a value needs it

    return numpy_helper.from_array(np.asarray(value), name)


def _sequence(value: Any, name: str, declared: TypeProto, where: str) -> SequenceProto:
    if not isinstance(value, list | tuple):
        raise _unexpected("a list", value, declared, where)
    elem = declared.sequence_type.elem_type
    sequence = SequenceProto(elem_type=_elem_type(elem, where))
    if name:  # an empty name is left unset, as onnx's helpers leave it
        sequence.name = name
    field = getattr(sequence, _SEQUENCE_FIELDS[elem.WhichOneof("value") or ""])
    for i, item in enumerate(value):
        field.append(_message(item, "", elem, f"{where}[{i}]"))
    return sequence


def _map(value: Any, name: str, declared: TypeProto, where: str) -> MapProto:
    key_type = declared.map_type.key_type
    key = DTYPES.get(key_type)
    if key is None or not (
        key.arrow_kind is ArrowKind.BINARY or np.issubdtype(key.numpy, np.integer)
    ):
        raise NotRepresentableError(
            f"the declared key type of {onnx_type_string(declared)} is not STRING or an "
            "integer type",
            where=where,
        )
    pairs = map_pairs(value, where)
    keys = map_keys([k for k, _ in pairs], key, where)
    elem = declared.map_type.value_type
    values = SequenceProto(elem_type=_elem_type(elem, where))
    field = getattr(values, _SEQUENCE_FIELDS[elem.WhichOneof("value") or ""])
    for k, v in pairs:  # located by key, as pandas cells are
        field.append(_message(v, "", elem, f"{where}[{k!r}]"))
    message = MapProto(key_type=key_type)
    if name:
        message.name = name
    if key.arrow_kind is ArrowKind.BINARY:
        message.string_keys.extend(keys.tolist())
    else:  # MapProto holds every integer key in int64: UINT64 past 2**63 as its bit pattern
        message.keys.extend(keys.astype(np.int64).tolist())
    message.values.CopyFrom(values)
    return message


def map_pairs(value: Any, where: str) -> list[tuple[Any, Any]]:
    """A map's Python value as ``(key, value)`` pairs, in order: a dict's items, or a list
    or tuple of pairs as :func:`python_value` gives (duplicate keys kept).

    Raises
    ------
    UnsupportedTypeError
        ``value`` is neither, located at ``where``.
    """
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list | tuple) and all(
        isinstance(p, tuple | list) and len(p) == 2 for p in value
    ):
        return [(k, v) for k, v in value]
    raise UnsupportedTypeError(
        f"expected a dict or a list of (key, value) pairs for a map, got {_what(value)}",
        where=where,
    )


def map_keys(keys: Sequence[Any], key: DType, where: str) -> np.ndarray[Any, Any]:
    """Map keys as an array of their declared dtype ``key``: ``bytes`` objects for STRING
    (a ``str`` encoded as UTF-8), the integers in range of the key dtype otherwise (Python
    ints on the way, so UINT64 keys past 2**63 keep their value).

    Raises
    ------
    UnsupportedTypeError
        A STRING key is neither bytes nor str.
    NotRepresentableError
        An integer key is not an integer, or out of the key dtype's range (``where: keys``).
    """
    if key.arrow_kind is ArrowKind.BINARY:
        out = np.empty(len(keys), dtype=object)
        out[:] = [string_bytes(k, f"{where}: keys") for k in keys]
        return out
    info = np.iinfo(key.numpy)  # type: ignore[type-var]
    try:
        ints = [operator.index(k) for k in keys]  # Python ints: no int64 on the way
        if any(not info.min <= k <= info.max for k in ints):
            raise OverflowError
        return np.array(ints, dtype=key.numpy)
    except (OverflowError, TypeError):
        raise NotRepresentableError(
            f"map keys {list(keys)[:5]} are not all {key.name} values", where=f"{where}: keys"
        ) from None


def string_bytes(value: Any, where: str) -> bytes:
    """A STRING element or key as bytes: ``bytes`` as they are, a ``str`` as UTF-8.

    Raises
    ------
    UnsupportedTypeError
        ``value`` is neither, located at ``where``.
    """
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise UnsupportedTypeError(
        f"a STRING element is a {type(value).__name__}; expected bytes or str", where=where
    )


def _optional(value: Any, name: str, declared: TypeProto, where: str) -> OptionalProto:
    optional = OptionalProto()
    if name:
        optional.name = name
    if value is None:  # no element type, as onnx's writer has it
        optional.elem_type = OptionalProto.UNDEFINED
        return optional
    elem = declared.optional_type.elem_type
    optional.elem_type = _elem_type(elem, where)
    field = _OPTIONAL_FIELDS[elem.WhichOneof("value") or ""]
    getattr(optional, field).CopyFrom(_message(value, "", elem, f"{where}.value"))
    return optional


def _sparse(value: Any, name: str, declared: TypeProto, where: str) -> SparseTensorProto:
    if isinstance(value, SparseTensorProto):
        return value
    if not isinstance(value, dict) or set(value) != {"dims", "values", "indices"}:
        raise _unexpected("a dict with dims, values and indices", value, declared, where)
    try:
        dims = [operator.index(d) for d in value["dims"]]
    except TypeError:
        raise UnsupportedTypeError(
            f"the dims of a sparse tensor are {value['dims']!r}, not integers", where=where
        ) from None
    from onnx import numpy_helper  # onnx's own conversion, imported when a value needs it

    parts = {}
    tensors = {}
    for part in ("values", "indices"):
        array = value[part]
        if not isinstance(array, np.ndarray):
            raise _unexpected("a numpy array", array, declared, f"{where}.{part}")
        parts[part] = numpy_helper.from_array(array, name if part == "values" else "")
        tensors[part] = Tensor(dtype_of_numpy(array.dtype), array.shape, array.reshape(-1))
    # the check every reader of a sparse tensor makes: no message it would refuse is written
    check_sparse(tuple(dims), tensors["values"], tensors["indices"], where)
    return SparseTensorProto(values=parts["values"], indices=parts["indices"], dims=dims)


def _elem_type(elem: TypeProto, where: str) -> int:
    which = elem.WhichOneof("value")
    if which not in _ELEM_TYPES:
        raise NotRepresentableError(
            f"the element type is not declared ({onnx_type_string(elem)})", where=where
        )
    return _ELEM_TYPES[which]


def _unexpected(form: str, value: Any, declared: TypeProto, where: str) -> UnsupportedTypeError:
    return UnsupportedTypeError(
        f"expected {form} for {onnx_type_string(declared)}, got {_what(value)}", where=where
    )


def _what(value: Any) -> str:
    return "None" if value is None else type(value).__name__

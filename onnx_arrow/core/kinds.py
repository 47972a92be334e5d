"""Kinds: the structure of an ONNX value, apart from its data.

``tensor``, ``sparse_tensor``, ``sequence(x)``, ``map(K, x)`` and ``optional(x)``, as
:class:`Kind` (JSON-able, for the ``onnx.message`` metadata and the store's
``value_kind`` column), with the message class of each and the codes
``SequenceProto`` and ``OptionalProto`` give them.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Final

from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of
from onnx_arrow.core.proto_fields import ELEM_TYPE_CODES
from onnx_arrow.errors import ArrowLayoutError, OnnxArrowError, UnsupportedTypeError

__all__ = [
    "ELEM_TYPE",
    "KIND_OF_ELEM_TYPE",
    "MAP",
    "MAP_KEY_TYPES",
    "MAP_VALUE_KINDS",
    "MESSAGE_NAMES",
    "OPTIONAL",
    "SEQUENCE",
    "SPARSE_TENSOR",
    "TENSOR",
    "Kind",
    "kind_of_message",
    "map_key_dtype",
    "message_class",
    "unify",
]

TENSOR: Final = "tensor"
SPARSE_TENSOR: Final = "sparse_tensor"
SEQUENCE: Final = "sequence"
MAP: Final = "map"
OPTIONAL: Final = "optional"

#: SequenceProto.DataType / OptionalProto.DataType value of each kind.
ELEM_TYPE: Final = {
    kind: ELEM_TYPE_CODES[kind.upper()] for kind in (TENSOR, SPARSE_TENSOR, SEQUENCE, MAP, OPTIONAL)
}
KIND_OF_ELEM_TYPE: Final = {code: kind for kind, code in ELEM_TYPE.items()}
#: Map key types ONNX allows: the integer types and STRING.
MAP_KEY_TYPES: Final = frozenset(
    {r.name for r in DTYPES.values() if r.arrow_kind is ArrowKind.NATIVE and r.numpy.kind in "iu"}
    | {"STRING"}
)
MAP_VALUE_KINDS: Final = frozenset((TENSOR, SPARSE_TENSOR, SEQUENCE, MAP))


@dataclass(frozen=True)
class Kind:
    """The structure of an ONNX value: ``tensor``, ``sequence(x)``, ``map(K, x)`` ...

    ``elem`` is the element (sequence, optional) or value (map) kind, None where
    no value says it (an empty sequence); ``key`` is the map key dtype.
    """

    name: str
    elem: Kind | None = None
    key: DType | None = None

    def __str__(self) -> str:
        inner = "?" if self.elem is None else str(self.elem)
        if self.name in (TENSOR, SPARSE_TENSOR):
            return self.name
        if self.name == MAP:
            key = "?" if self.key is None else self.key.name
            return f"map({key}, {inner})"
        return f"{self.name}({inner})"

    def to_json(self) -> Any:
        """A JSON-able form: ``["sequence", ["tensor"]]``, ``["map", "INT64", [...]]``."""
        if self.name in (TENSOR, SPARSE_TENSOR):
            return [self.name]
        inner = None if self.elem is None else self.elem.to_json()
        if self.name == MAP:
            return [MAP, None if self.key is None else self.key.name, inner]
        return [self.name, inner]

    @classmethod
    def from_json(cls, data: Any, *, where: str = "kind") -> Kind:
        """Parse :meth:`to_json` output, rejecting anything else with a clear error."""
        try:
            name = data[0]
            if name in (TENSOR, SPARSE_TENSOR) and len(data) == 1:
                return cls(name)
            if name in (SEQUENCE, OPTIONAL) and len(data) == 2:
                elem = None if data[1] is None else cls.from_json(data[1], where=where)
                return cls(name, elem)
            if name == MAP and len(data) == 3:
                key = None if data[1] is None else dtype_of(data[1])
                elem = None if data[2] is None else cls.from_json(data[2], where=where)
                return cls(MAP, elem, key)
        except (TypeError, IndexError, KeyError, OnnxArrowError):
            pass
        raise ArrowLayoutError(
            f"{json.dumps(data)[:80]} is not an ONNX value kind; expected e.g. "
            '["tensor"], ["sequence", ["tensor"]], ["map", "INT64", ["tensor"]]',
            where=where,
        )

    @property
    def depth(self) -> int:
        """Messages nested below the root in a value of this kind (a tensor is 0)."""
        if self.name == SPARSE_TENSOR:
            return 1
        if self.name == TENSOR or self.elem is None:
            return 0
        extra = 2 if self.name == MAP else 1  # a map's values sit in a SequenceProto
        return extra + self.elem.depth


#: The onnx message of each kind, by its name.
MESSAGE_NAMES: Final = {
    TENSOR: "TensorProto",
    SEQUENCE: "SequenceProto",
    MAP: "MapProto",
    OPTIONAL: "OptionalProto",
    SPARSE_TENSOR: "SparseTensorProto",
}


@functools.cache
def _message_classes() -> dict[str, Any]:
    """The message class of each kind (onnx's, from its generated module alone)."""
    from onnx_arrow.core import protos

    return {kind: getattr(protos, name) for kind, name in MESSAGE_NAMES.items()}


@functools.cache
def _message_kinds() -> dict[Any, str]:
    return {cls: kind for kind, cls in _message_classes().items()}


def message_class(kind: str) -> Any:
    """The onnx message class of a kind name (``TensorProto`` for ``tensor`` ...)."""
    return _message_classes()[kind]


def kind_of_message(value: object, *, where: str) -> str:
    """The kind name of a message object, or a clear error."""
    kind = _message_kinds().get(type(value))
    if kind is None:
        raise UnsupportedTypeError(
            f"expected an ONNX value message (TensorProto, SparseTensorProto, SequenceProto, "
            f"MapProto or OptionalProto), got {type(value).__name__}; convert numpy arrays "
            "with onnx.numpy_helper.from_array first",
            where=where,
        )
    return kind


def unify(a: Kind | None, b: Kind | None, where: str) -> Kind | None:
    """The kind both describe, or an error naming where they disagree."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if a.name != b.name or (a.key is not None and b.key is not None and a.key is not b.key):
        raise UnsupportedTypeError(f"holds {b} but the column holds {a}", where=where)
    return Kind(a.name, unify(a.elem, b.elem, where), a.key or b.key)


def map_key_dtype(key_type: int, *, where: str, error: type[OnnxArrowError]) -> DType:
    """The dtype of a map's ``key_type``, or ``error`` at ``where`` unless ONNX allows it.

    A malformed message and a declared type refuse the same keys with their own
    error classes: ``InvalidMessageError`` and ``UnsupportedTypeError``.
    """
    try:
        key: DType | None = dtype_of(key_type)
    except OnnxArrowError:
        key = None
    if key is None or key.name not in MAP_KEY_TYPES:
        known = "" if key is None else f" ({key.name})"
        raise error(
            f"key_type {key_type} is not a map key type{known}; ONNX allows "
            + ", ".join(sorted(MAP_KEY_TYPES)),
            where=where,
        )
    return key

"""Sequences, maps, optionals and sparse tensors as messages: the wire decode and encode.

This module decodes messages into nodes (:mod:`onnx_arrow.core.nodes`) and encodes
them back, and turns a node into its tensors and back (:func:`flatten`,
:func:`assemble`).  Their Arrow form is :mod:`onnx_arrow.core.arrays`, their Python
form :mod:`onnx_arrow.core.python_values`.

As for tensors, every message splits into its value and an envelope: the
message bytes with the bulk data (tensor elements, map keys, sparse dims) cut
out and each nested message replaced by its own envelope.  Names, ``elem_type``
and ``key_type`` (also of an absent optional or an empty sequence) live there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from onnx_arrow.core import _wire
from onnx_arrow.core.direct import decode_tensor_fast
from onnx_arrow.core.dtypes import DType, dtype_of
from onnx_arrow.core.kinds import (
    ELEM_TYPE,
    KIND_OF_ELEM_TYPE,
    MAP,
    MAP_VALUE_KINDS,
    OPTIONAL,
    SEQUENCE,
    SPARSE_TENSOR,
    TENSOR,
    Kind,
    map_key_dtype,
    unify,
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
from onnx_arrow.core.proto_fields import ELEM_TYPE_CODES, FIELDS, by_number
from onnx_arrow.core.tensor_wire import decode_tensor, encode_tensor
from onnx_arrow.core.tensors import Tensor
from onnx_arrow.errors import (
    ArrowLayoutError,
    InvalidMessageError,
    NotRepresentableError,
    OnnxArrowError,
    join_path,
)

__all__ = [
    "MAX_DEPTH",
    "assemble",
    "decode_value",
    "encode_value",
    "flatten",
]

#: Deepest nesting of messages below the root that protobuf parses back (upb's limit).
MAX_DEPTH: Final = 100


def _field_number(message: str, name: str) -> int:
    return FIELDS[message][name].number


#: The field of SequenceProto / OptionalProto that holds elements of each kind (the two
#: messages number them alike: tests/core/test_containers.py checks it).
_ELEM_FIELD: Final = {kind: _field_number("SequenceProto", f"{kind}_values") for kind in ELEM_TYPE}
_KIND_OF_FIELD: Final = {number: kind for kind, number in _ELEM_FIELD.items()}
# name and elem_type / key_type: the same numbers in SequenceProto, OptionalProto, MapProto
_NAME: Final = _field_number("SequenceProto", "name")
_ELEM: Final = _field_number("SequenceProto", "elem_type")
_MAP_KEYS: Final = _field_number("MapProto", "keys")
_MAP_STRING_KEYS: Final = _field_number("MapProto", "string_keys")
_MAP_VALUES: Final = _field_number("MapProto", "values")
_SPARSE_VALUES: Final = _field_number("SparseTensorProto", "values")
_SPARSE_INDICES: Final = _field_number("SparseTensorProto", "indices")
_SPARSE_DIMS: Final = _field_number("SparseTensorProto", "dims")
_TENSOR_SUBMESSAGES: Final = frozenset(
    _field_number("TensorProto", n) for n in ("external_data", "metadata_props")
)


def _check_foreign(f: _wire.Field, message: str, where: str) -> None:
    """Refuse a field that ``message`` (a container message) does not have, or has with
    another wire type: such bytes are another message (a TensorProto's dims and raw_data
    read as a SequenceProto give an empty sequence), never an empty value."""
    descriptor = _CONTAINERS[message].get(f.number)
    if descriptor is not None and descriptor.wire_type in (
        f.wire_type,
        _wire.LEN if descriptor.repeated else -1,
    ):
        return
    what = f"field {f.number}" if descriptor is None else f"{descriptor.name} (field {f.number})"
    raise InvalidMessageError(
        f"{what} with wire type {f.wire_type} is not a field of {message}: these bytes are "
        f"not a {message} (a tensor where the model declares a container?); check the "
        "declared type, or keep the file as bytes",
        where=where,
    )


_CONTAINERS: Final = {m: by_number(m) for m in ("SequenceProto", "OptionalProto", "MapProto")}


Resolver = Callable[..., Any]


#: The kind of every tensor decoded (frozen: one object serves them all).
_TENSOR_KIND: Final = Kind(TENSOR)


@dataclass
class _Decoder:
    """Decodes one message tree; records the kind it discovers."""

    external: Resolver | None
    #: take protobuf's C parser for tensors it can handle (copies their data once)
    fast: bool = True

    def value(
        self, buf: memoryview, start: int, end: int, kind: str, where: str, depth: int
    ) -> tuple[Node, bytes, Kind]:
        if depth > MAX_DEPTH:
            raise NotRepresentableError(
                f"messages nest {depth} levels deep; protobuf parses at most {MAX_DEPTH}, "
                "so the value could never be read back",
                where=where,
            )
        if kind == TENSOR:
            return self.tensor(buf, start, end, where, depth)
        if kind == SEQUENCE:
            return self.sequence(buf, start, end, where, depth)
        if kind == MAP:
            return self.map(buf, start, end, where, depth)
        if kind == OPTIONAL:
            return self.optional(buf, start, end, where, depth)
        return self.sparse(buf, start, end, where, depth)

    def tensor(
        self, buf: memoryview, start: int, end: int, where: str, depth: int
    ) -> tuple[Node, bytes, Kind]:
        data = buf[start:end]
        # protobuf's parser reads any buffer, so the message is not copied before parsing
        fast = decode_tensor_fast(data) if self.fast else None
        tensor = fast or decode_tensor(data, where=where, external=self.external)
        envelope = tensor.envelope or b""
        if depth + 1 > MAX_DEPTH and any(
            f.number in _TENSOR_SUBMESSAGES for f in _wire.iter_fields(memoryview(envelope))
        ):
            raise NotRepresentableError(
                f"messages nest {depth + 1} levels deep; protobuf parses at most {MAX_DEPTH}",
                where=where,
            )
        return Tensor(tensor.dtype, tensor.dims, tensor.codes), envelope, _TENSOR_KIND

    def _children(
        self,
        buf: memoryview,
        start: int,
        end: int,
        where: str,
        depth: int,
        *,
        singular: bool,
    ) -> tuple[list[bytes], int | None, str | None, list[tuple[Node, Kind]]]:
        """Fields of a SequenceProto / OptionalProto: envelope parts, elem_type, children."""
        parts: list[bytes] = []
        elem_type: int | None = None
        child_kind: str | None = None
        children: list[tuple[Node, Kind]] = []
        child_fields: list[_wire.Field] = []
        for f in _wire.iter_fields(buf, start, end, what=where):
            if f.number == _ELEM and f.wire_type == _wire.VARINT:
                elem_type = f.value
                parts.append(bytes(buf[f.start : f.end]))
            elif f.number in _KIND_OF_FIELD and f.wire_type == _wire.LEN:
                kind = _KIND_OF_FIELD[f.number]
                if child_kind is not None and kind != child_kind:
                    raise InvalidMessageError(
                        f"both {field_name(child_kind, singular)} and "
                        f"{field_name(kind, singular)} hold values; a message holds elements "
                        "of one kind",
                        where=where,
                    )
                child_kind = kind
                child_fields.append(f)
            else:
                _check_foreign(f, "OptionalProto" if singular else "SequenceProto", where)
                parts.append(bytes(buf[f.start : f.end]))
        if singular and len(child_fields) > 1:
            # protobuf merges repeated occurrences of a singular message field; so do not we
            raise InvalidMessageError(
                f"{field_name(child_kind or '', singular)} occurs {len(child_fields)} times",
                where=where,
            )
        if elem_type is not None and child_kind is not None:
            declared = KIND_OF_ELEM_TYPE.get(elem_type)
            if declared != child_kind:
                raise InvalidMessageError(
                    f"elem_type is {elem_type} ({declared or 'unknown'}) but "
                    f"{field_name(child_kind, singular)} holds the data; make them agree",
                    where=join_path(where, "elem_type"),
                )
        for i, f in enumerate(child_fields):
            assert child_kind is not None
            name = field_name(child_kind, singular)
            at = join_path(where, name) if singular else join_path(where, f"{name}[{i}]")
            node, envelope, found = self.value(buf, f.value_start, f.end, child_kind, at, depth + 1)
            parts.append(_tagged(f.number, envelope))
            children.append((node, found))
        return parts, elem_type, child_kind, children

    def sequence(
        self, buf: memoryview, start: int, end: int, where: str, depth: int
    ) -> tuple[Node, bytes, Kind]:
        parts, elem_type, child_kind, children = self._children(
            buf, start, end, where, depth, singular=False
        )
        elem = _elem_kind(elem_type, child_kind, children, where)
        return SequenceValue([n for n, _ in children]), b"".join(parts), Kind(SEQUENCE, elem)

    def optional(
        self, buf: memoryview, start: int, end: int, where: str, depth: int
    ) -> tuple[Node, bytes, Kind]:
        parts, elem_type, child_kind, children = self._children(
            buf, start, end, where, depth, singular=True
        )
        elem = _elem_kind(elem_type, child_kind, children, where)
        value = children[0][0] if children else None
        return OptionalValue(value), b"".join(parts), Kind(OPTIONAL, elem)

    def map(
        self, buf: memoryview, start: int, end: int, where: str, depth: int
    ) -> tuple[Node, bytes, Kind]:
        parts: list[bytes] = []
        key_type = 0
        int_keys: list[int] = []
        string_keys: list[bytes] = []
        values_field: _wire.Field | None = None
        for f in _wire.iter_fields(buf, start, end, what=where):
            if f.number == _ELEM and f.wire_type == _wire.VARINT:
                key_type = f.value
                parts.append(bytes(buf[f.start : f.end]))
            elif f.number == _MAP_KEYS:
                if f.wire_type == _wire.LEN:  # packed: not canonical, still valid
                    raw = np.frombuffer(buf[f.value_start : f.end], dtype=np.uint8)
                    int_keys.extend(
                        _wire.decode_varints(raw, what=join_path(where, "keys")).tolist()
                    )
                else:
                    int_keys.append(f.value)
            elif f.number == _MAP_STRING_KEYS and f.wire_type == _wire.LEN:
                string_keys.append(bytes(buf[f.value_start : f.end]))
            elif f.number == _MAP_VALUES and f.wire_type == _wire.LEN:
                if values_field is not None:
                    raise InvalidMessageError(
                        "values occurs twice", where=join_path(where, "values")
                    )
                values_field = f
            else:
                _check_foreign(f, "MapProto", where)
                parts.append(bytes(buf[f.start : f.end]))
        key = map_key_dtype(key_type, where=join_path(where, "key_type"), error=InvalidMessageError)
        keys = _map_keys(key, int_keys, string_keys, where)
        if values_field is None:
            seq_node: Node = SequenceValue([])
            seq_env = b""
            seq_kind = Kind(SEQUENCE)
        else:
            seq_node, seq_env, seq_kind = self.sequence(
                buf,
                values_field.value_start,
                values_field.end,
                join_path(where, "values"),
                depth + 1,
            )
            parts.append(_tagged(_MAP_VALUES, seq_env))
        assert isinstance(seq_node, SequenceValue)
        if len(seq_node.items) != len(keys):
            raise InvalidMessageError(
                f"{len(keys)} keys but {len(seq_node.items)} values; a map needs one value per key",
                where=join_path(where, "values"),
            )
        value_kind = seq_kind.elem
        if value_kind is not None and value_kind.name not in MAP_VALUE_KINDS:
            raise InvalidMessageError(
                f"map values are {value_kind.name}; ONNX maps hold tensor, sparse_tensor, "
                "sequence or map values",
                where=join_path(where, "values.elem_type"),
            )
        return MapValue(key, keys, seq_node.items), b"".join(parts), Kind(MAP, value_kind, key)

    def sparse(
        self, buf: memoryview, start: int, end: int, where: str, depth: int
    ) -> tuple[Node, bytes, Kind]:
        parts: list[bytes] = []
        dims: list[int] = []
        found: dict[int, tuple[Tensor, bytes]] = {}
        for f in _wire.iter_fields(buf, start, end, what=where):
            if f.number in (_SPARSE_VALUES, _SPARSE_INDICES) and f.wire_type == _wire.LEN:
                name = "values" if f.number == _SPARSE_VALUES else "indices"
                if f.number in found:
                    raise InvalidMessageError(f"{name} occurs twice", where=join_path(where, name))
                node, envelope, _ = self.tensor(
                    buf, f.value_start, f.end, join_path(where, name), depth + 1
                )
                assert isinstance(node, Tensor)
                found[f.number] = (node, envelope)
                parts.append(_tagged(f.number, envelope))
            elif f.number == _SPARSE_DIMS:
                if f.wire_type == _wire.LEN:
                    raw = np.frombuffer(buf[f.value_start : f.end], dtype=np.uint8)
                    dims.extend(
                        _wire.decode_varints(raw, what=join_path(where, "dims"))
                        .view(np.int64)
                        .tolist()
                    )
                else:
                    dims.append(f.value - (1 << 64) if f.value >= 1 << 63 else f.value)
            else:
                parts.append(bytes(buf[f.start : f.end]))
        if _SPARSE_VALUES not in found or _SPARSE_INDICES not in found:
            missing = "values" if _SPARSE_VALUES not in found else "indices"
            raise InvalidMessageError(
                f"{missing} is not set; a sparse tensor needs values and indices",
                where=join_path(where, missing),
            )
        values, indices = found[_SPARSE_VALUES][0], found[_SPARSE_INDICES][0]
        check_sparse(tuple(dims), values, indices, where)
        return SparseValue(tuple(dims), values, indices), b"".join(parts), Kind(SPARSE_TENSOR)


def _elem_kind(
    elem_type: int | None,
    child_kind: str | None,
    children: list[tuple[Node, Kind]],
    where: str,
) -> Kind | None:
    elem: Kind | None = None
    for i, (_, kind) in enumerate(children):
        elem = unify(elem, kind, f"{where}[{i}]")
    if elem is None and child_kind is None and elem_type:
        name = KIND_OF_ELEM_TYPE.get(elem_type)
        if name is None:
            raise InvalidMessageError(
                f"elem_type {elem_type} is not a value kind; expected one of "
                + ", ".join(f"{k} ({v})" for k, v in ELEM_TYPE.items()),
                where=join_path(where, "elem_type"),
            )
        elem = Kind(name)
    return elem


def _map_keys(
    key: DType, ints: list[int], strings: list[bytes], where: str
) -> np.ndarray[Any, Any]:
    if key.name == "STRING":
        if ints:
            raise InvalidMessageError(
                "key_type is STRING but keys (the integer keys) is set; use string_keys",
                where=join_path(where, "envelope"),
            )
        out = np.empty(len(strings), dtype=object)
        out[:] = strings
        return out
    if strings:
        raise InvalidMessageError(
            f"key_type is {key.name} but string_keys is set; use keys",
            where=join_path(where, "string_keys"),
        )
    raw = np.array(ints, dtype=np.uint64)
    values = raw.view(np.int64)
    if key.name == "UINT64":
        return raw
    info = np.iinfo(key.numpy)  # type: ignore[type-var]
    bad = np.flatnonzero((values < int(info.min)) | (values > int(info.max)))
    if bad.size:
        raise InvalidMessageError(
            f"keys[{int(bad[0])}] is {int(values[bad[0]])}, outside the {key.name} range "
            f"[{info.min}, {info.max}]",
            where=join_path(where, "keys"),
        )
    return values.astype(key.numpy)


def decode_value(
    data: bytes | memoryview,
    kind: str,
    *,
    where: str,
    external: Resolver | None = None,
    zero_copy: bool = False,
) -> tuple[Node, bytes, Kind]:
    """Split one serialized value message into its value, envelope and discovered kind.

    With ``zero_copy`` tensor data stays a view into ``data`` (for large buffers);
    otherwise protobuf's C parser is used where it can be, copying the data once.
    """
    if kind == TENSOR and not zero_copy:  # the common case, without the walk's steps
        fast = decode_tensor_fast(data)
        if fast is not None:
            return Tensor(fast.dtype, fast.dims, fast.codes), fast.envelope or b"", _TENSOR_KIND
    buf = data if isinstance(data, memoryview) else memoryview(data)
    return _Decoder(external, fast=not zero_copy).value(buf, 0, len(buf), kind, where, 0)


# --- encoding --------------------------------------------------------------------------


def _fields(envelope: bytes | None, where: str) -> list[_wire.Field]:
    if not envelope:
        return []
    return list(_wire.iter_fields(memoryview(envelope), what=f"{where} envelope"))


def _tagged(number: int, payload: bytes) -> bytes:
    return _wire.encode_len(number, len(payload)) + payload


def _varint_field(number: int, value: int) -> bytes:
    return _wire.encode_tag(number, _wire.VARINT) + _wire.encode_varint(value)


def _assemble(parts: list[tuple[int, bytes]], unknown: list[bytes]) -> bytes:
    parts.sort(key=lambda p: p[0])
    return b"".join(p for _, p in parts) + b"".join(unknown)


def encode_value(node: Node | None, kind: Kind, envelope: bytes | None, *, where: str) -> bytes:
    """Join a value and its envelope into a serialized message of ``kind``."""
    # the whole kind is checked here once: every nested kind is shallower
    depth = kind.depth
    if depth > MAX_DEPTH:
        raise NotRepresentableError(
            f"{kind} nests {depth} levels; protobuf parses at most {MAX_DEPTH}", where=where
        )
    return _encode(node, kind, envelope, where, nested=False)


def _encode(
    node: Node | None, kind: Kind, envelope: bytes | None, where: str, *, nested: bool = True
) -> bytes:
    if kind.name == TENSOR:
        if not isinstance(node, Tensor):
            raise ArrowLayoutError(
                "a tensor row is null; only optionals may be absent", where=where
            )
        try:
            return encode_tensor(Tensor(node.dtype, node.dims, node.codes, envelope))
        except OnnxArrowError as exc:
            # inside a value: which of its tensors it was (the caller locates the value)
            raise (exc.at(where) if nested and where else exc) from None
    if kind.name == OPTIONAL:
        if node is None:
            node = OptionalValue(None)
        assert isinstance(node, OptionalValue)
        children = [] if node.value is None else [node.value]
        return _encode_children(children, kind, envelope, where, singular=True)
    if node is None:
        raise ArrowLayoutError(
            f"a {kind.name} row is null; only optionals may be absent", where=where
        )
    if kind.name == SEQUENCE:
        assert isinstance(node, SequenceValue)
        return _encode_children(node.items, kind, envelope, where, singular=False)
    if kind.name == MAP:
        assert isinstance(node, MapValue)
        return _encode_map(node, kind, envelope, where)
    assert isinstance(node, SparseValue)
    return _encode_sparse(node, envelope, where)


def _encode_children(
    items: Sequence[Node | None], kind: Kind, envelope: bytes | None, where: str, *, singular: bool
) -> bytes:
    buf = memoryview(envelope or b"")
    parts: list[tuple[int, bytes]] = []
    unknown: list[bytes] = []
    child_envelopes: list[bytes] = []
    child_number: int | None = None
    elem_type: int | None = None
    for f in _fields(envelope, where):
        if f.number in _KIND_OF_FIELD and f.wire_type == _wire.LEN:
            child_number = f.number
            child_envelopes.append(bytes(buf[f.value_start : f.end]))
        elif f.number in (_NAME, _ELEM):
            if f.number == _ELEM and f.wire_type == _wire.VARINT:
                elem_type = f.value
            parts.append((f.number, bytes(buf[f.start : f.end])))
        else:
            unknown.append(bytes(buf[f.start : f.end]))
    elem = kind.elem
    if items and elem is not None and elem_type is not None:
        # what decoding refuses (elem_type against the elements) is never written
        said = KIND_OF_ELEM_TYPE.get(elem_type)
        if said != elem.name:
            raise ArrowLayoutError(
                f"the envelope's elem_type is {elem_type} ({said or 'unknown'}), but the "
                f"value holds {elem.name} elements",
                where=join_path(where, "envelope"),
            )
    if envelope is None and elem is not None:
        parts.append((_ELEM, _varint_field(_ELEM, ELEM_TYPE[elem.name])))
    elif envelope is None and singular:
        # an optional no value says the kind of: UNDEFINED, as from_optional(None) writes it
        parts.append((_ELEM, _varint_field(_ELEM, ELEM_TYPE_CODES["UNDEFINED"])))
    if items:
        if elem is None:
            raise ArrowLayoutError(f"{kind} has values but no element kind", where=where)
        number = _ELEM_FIELD[elem.name]
        if child_number is not None and child_number != number:
            raise ArrowLayoutError(
                f"the envelope holds {_KIND_OF_FIELD[child_number]} elements, the value "
                f"{elem.name} elements",
                where=where,
            )
        if envelope is not None and len(child_envelopes) != len(items):
            raise ArrowLayoutError(
                f"the envelope describes {len(child_envelopes)} elements, the value holds "
                f"{len(items)}; keep the envelope with its value",
                where=where,
            )
        for i, item in enumerate(items):
            child_env = child_envelopes[i] if envelope is not None else None
            name = field_name(elem.name, singular)
            at = join_path(where, name) if singular else join_path(where, f"{name}[{i}]")
            parts.append((number, _tagged(number, _encode(item, elem, child_env, at))))
    elif child_envelopes:
        raise ArrowLayoutError(
            f"the envelope describes {len(child_envelopes)} elements, the value holds none",
            where=where,
        )
    return _assemble(parts, unknown)


def _encode_map(node: MapValue, kind: Kind, envelope: bytes | None, where: str) -> bytes:
    buf = memoryview(envelope or b"")
    parts: list[tuple[int, bytes]] = []
    unknown: list[bytes] = []
    values_envelope: bytes | None = None if envelope is None else b""
    has_values = False
    key_type: int | None = None
    for f in _fields(envelope, where):
        if f.number == _MAP_VALUES:
            values_envelope = bytes(buf[f.value_start : f.end])
            has_values = True
        elif f.number in (_MAP_KEYS, _MAP_STRING_KEYS):
            # decoding cuts the keys out: the value holds them
            raise ArrowLayoutError(
                "the envelope carries map keys, which the value itself holds; build it with "
                "onnx_arrow.to_arrow(..., exact=True)",
                where=join_path(where, "envelope"),
            )
        elif f.number in (_NAME, _ELEM):
            if f.number == _ELEM:
                key_type = f.value if f.wire_type == _wire.VARINT else -1
            parts.append((f.number, bytes(buf[f.start : f.end])))
        else:
            unknown.append(bytes(buf[f.start : f.end]))
    if key_type is None:  # no message behind the value, or an envelope without key_type
        parts.append((_ELEM, _varint_field(_ELEM, node.key.onnx)))
    elif key_type != node.key.onnx:
        raise ArrowLayoutError(
            f"the envelope's key_type is {key_type}, but the value's keys are "
            f"{node.key.name} ({node.key.onnx})",
            where=join_path(where, "envelope"),
        )
    if node.key.name == "STRING":
        parts.extend((_MAP_STRING_KEYS, _tagged(_MAP_STRING_KEYS, k)) for k in node.keys)
    else:
        keys = node.keys.astype(np.int64) if node.key.name != "UINT64" else node.keys.view(np.int64)
        parts.extend((_MAP_KEYS, _varint_field(_MAP_KEYS, int(k))) for k in keys)
    if has_values or envelope is None:
        values = _encode(
            SequenceValue(node.values),
            Kind(SEQUENCE, kind.elem),
            values_envelope,
            join_path(where, "values"),
        )
        parts.append((_MAP_VALUES, _tagged(_MAP_VALUES, values)))
    elif node.values:
        raise ArrowLayoutError("the envelope has no values but the map holds some", where=where)
    return _assemble(parts, unknown)


def _encode_sparse(node: SparseValue, envelope: bytes | None, where: str) -> bytes:
    buf = memoryview(envelope or b"")
    parts: list[tuple[int, bytes]] = []
    unknown: list[bytes] = []
    envelopes: dict[int, bytes | None] = {_SPARSE_VALUES: None, _SPARSE_INDICES: None}
    for f in _fields(envelope, where):
        if f.number in envelopes:
            envelopes[f.number] = bytes(buf[f.value_start : f.end])
        elif f.number == _SPARSE_DIMS:
            # decoding cuts the dims out: the value holds them
            raise ArrowLayoutError(
                "the envelope carries the sparse tensor's dims, which the value itself holds; "
                "build it with onnx_arrow.to_arrow(..., exact=True)",
                where=join_path(where, "envelope"),
            )
        else:
            unknown.append(bytes(buf[f.start : f.end]))
    for number, tensor, name in (
        (_SPARSE_VALUES, node.values, "values"),
        (_SPARSE_INDICES, node.indices, "indices"),
    ):
        data = _encode(tensor, Kind(TENSOR), envelopes[number], join_path(where, name))
        parts.append((number, _tagged(number, data)))
    parts.extend((_SPARSE_DIMS, _varint_field(_SPARSE_DIMS, d)) for d in node.dims)
    return _assemble(parts, unknown)


# --- leaves: a value as a flat list of tensors, and back ------------------------------------

_INT64: Final = dtype_of("INT64")


def flatten(node: Node | None, kind: Kind, path: str = "") -> list[tuple[str, Tensor]]:
    """The tensors inside a value, depth first, each with its path in the value.

    Map keys and sparse dims count as tensors (``keys``, ``dims``), so a value is
    its envelope plus this list; :func:`assemble` is the inverse.
    """
    if node is None:
        return []
    if isinstance(node, Tensor):
        return [(path, node)]
    if isinstance(node, OptionalValue):
        assert kind.elem is not None or node.value is None
        if node.value is None or kind.elem is None:
            return []
        return flatten(node.value, kind.elem, join_path(path, field_name(kind.elem.name, True)))
    if isinstance(node, SequenceValue):
        if not node.items or kind.elem is None:
            return []
        name = field_name(kind.elem.name, False)
        out: list[tuple[str, Tensor]] = []
        for i, item in enumerate(node.items):
            out.extend(flatten(item, kind.elem, join_path(path, f"{name}[{i}]")))
        return out
    if isinstance(node, MapValue):
        keys = Tensor(node.key, (len(node.keys),), node.keys)
        values = SequenceValue(node.values)
        return [
            (join_path(path, "keys"), keys),
            *flatten(values, Kind(SEQUENCE, kind.elem), join_path(path, "values")),
        ]
    dims = Tensor(_INT64, (len(node.dims),), np.array(node.dims, dtype=np.int64))
    return [
        (join_path(path, "dims"), dims),
        (join_path(path, "values"), node.values),
        (join_path(path, "indices"), node.indices),
    ]


def assemble(kind: Kind, envelope: bytes, leaves: Iterator[Tensor], *, where: str) -> Node:
    """Rebuild a value from its envelope and the tensors :func:`flatten` gave."""
    try:
        return _assemble_node(kind, envelope, leaves, where)
    except StopIteration:
        raise ArrowLayoutError(
            "the envelope describes more tensors than the value holds", where=where
        ) from None


def _assemble_node(kind: Kind, envelope: bytes, leaves: Iterator[Tensor], where: str) -> Node:
    if kind.name == TENSOR:
        return next(leaves)
    buf = memoryview(envelope)
    if kind.name == SPARSE_TENSOR:
        dims = next(leaves)
        return SparseValue(tuple(int(d) for d in dims.codes), next(leaves), next(leaves))
    if kind.name == MAP:
        keys = next(leaves)
        values_env = b""
        for f in _fields(envelope, where):
            if f.number == _MAP_VALUES:
                values_env = bytes(buf[f.value_start : f.end])
        seq = _assemble_node(Kind(SEQUENCE, kind.elem), values_env, leaves, where)
        assert isinstance(seq, SequenceValue)
        assert kind.key is not None
        return MapValue(kind.key, keys.codes, seq.items)
    children = [
        bytes(buf[f.value_start : f.end])
        for f in _fields(envelope, where)
        if f.number in _KIND_OF_FIELD and f.wire_type == _wire.LEN
    ]
    if children and kind.elem is None:
        raise ArrowLayoutError(f"{kind} holds values but no element kind", where=where)
    items: list[Node | None] = [
        _assemble_node(kind.elem, child, leaves, where)  # type: ignore[arg-type]
        for child in children
    ]
    if kind.name == OPTIONAL:
        return OptionalValue(items[0] if items else None)
    return SequenceValue(items)

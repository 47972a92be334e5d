"""A value file against its model's declarations: which input or output it is for, and
whether its value is what the model declares there.

Pairing follows onnxruntime's test runner: a file ``input_K.pb`` / ``output_K.pb`` is
for the graph input or output whose name the file's message carries (``TensorProto.name``,
``SequenceProto.name``, ``MapProto.name``, ``OptionalProto.name``, the name of a
``SparseTensorProto``'s values), read as the message kind the model declares for that
name; the file number K decides only when the name is empty or names nothing the model
declares (:func:`pair_files`).  KInference's ``rf_iris`` holds ``output_0.pb`` named
``output_probability``, the model's output 1; its ``fastgelu`` holds only
``output_1.pb``, named ``Y``, for a model with one output.

A value contradicts its declaration when what it holds (its element types, its
ranks and fixed sizes, its map key type) is not what the model declares
(:func:`contradiction`): :func:`onnx_arrow.read_pb` and the corpus import give the same
verdict in the same words, keep such a value exactly with its own type and warn with a
:class:`~onnx_arrow.errors.DeclarationWarning`.  A file that does not decode as the kind
the model declares is said in terms of that declaration, with the kind it does decode as
(:func:`other_kind`) or the model it holds (:func:`holds_model`).

The conversions of values to Arrow types (:mod:`onnx_arrow.core.arrays`,
:mod:`onnx_arrow.core.types`) and onnx's message classes (:mod:`onnx_arrow.core.protos`)
are imported by the functions that use them: a reader of stores imports this module with
the store's, and an export uses none of them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import pyarrow as pa
from google.protobuf.message import DecodeError

from onnx_arrow.core import _wire
from onnx_arrow.core.containers import decode_value
from onnx_arrow.core.dtypes import DTYPES
from onnx_arrow.core.graph import declared_type_text, graph_values, onnx_type_string
from onnx_arrow.core.kinds import (
    MAP,
    MESSAGE_NAMES,
    OPTIONAL,
    SEQUENCE,
    SPARSE_TENSOR,
    TENSOR,
    Kind,
)
from onnx_arrow.core.nodes import Node
from onnx_arrow.core.proto_fields import FIELDS, by_number
from onnx_arrow.errors import OnnxArrowError

if TYPE_CHECKING:
    from onnx import ModelProto, TypeProto, ValueInfoProto

__all__ = [
    "Contradiction",
    "Pairing",
    "contradiction",
    "contradiction_message",
    "declared_kind",
    "diagnosis",
    "foreign_fields",
    "holds_model",
    "kind_words",
    "lfs_pointer",
    "message_name",
    "other_kind",
    "pair_files",
    "undeclared_tensor_type",
]

#: Longest name read from a file (names in graphs are short).
_MAX_NAME_BYTES: Final = 4096
#: The field number of the name of each kind's message (a sparse tensor's values' name).
_NAME_FIELD: Final = {
    kind: FIELDS[MESSAGE_NAMES[kind]]["name"].number for kind in (TENSOR, SEQUENCE, MAP, OPTIONAL)
}
_SPARSE_VALUES: Final = FIELDS["SparseTensorProto"]["values"].number


def message_name(data: bytes | memoryview, kind: str) -> str | None:
    """The name a serialized value message carries, read as a message of ``kind``
    (``"tensor"``, ``"sequence"``, ``"map"``, ``"optional"``, ``"sparse_tensor"``);
    None when it has none, or the bytes are not such a message.

    Only the fields before the name are walked; no data is decoded.

    >>> from onnx import helper, TensorProto
    >>> t = helper.make_tensor("Y", TensorProto.FLOAT, [1], [1.0]).SerializeToString()
    >>> message_name(t, "tensor"), message_name(t, "sequence")
    ('Y', None)
    """
    buf = data if isinstance(data, memoryview) else memoryview(data)
    start, stop = 0, len(buf)
    number = _NAME_FIELD.get(kind)
    try:
        if kind == SPARSE_TENSOR:
            values = _last_len_field(buf, start, stop, _SPARSE_VALUES)
            if values is None:
                return None
            start, stop = values
            number = _NAME_FIELD[TENSOR]
        if number is None:
            return None
        found = _last_len_field(buf, start, stop, number)
    except OnnxArrowError:  # not a message at all: it names nothing
        return None
    if found is None or found[1] - found[0] > _MAX_NAME_BYTES:
        return None
    try:
        return bytes(buf[found[0] : found[1]]).decode("utf-8") or None
    except UnicodeDecodeError:
        return None


def _last_len_field(buf: memoryview, start: int, stop: int, number: int) -> tuple[int, int] | None:
    """The payload span of the last length-delimited field ``number`` (protobuf keeps the
    last of a repeated singular field); None if there is none, or one of another wire type."""
    found: tuple[int, int] | None = None
    for f in _wire.iter_fields(buf, start, stop, what="value"):
        if f.number == number:
            found = (f.value_start, f.end) if f.wire_type == _wire.LEN else None
    return found


@dataclass(frozen=True)
class Pairing:
    """What a value file is for: ``index`` of the model's inputs (or outputs), None for
    none; ``name`` the declared name it carries when it was paired by it (None when by
    its number); ``reason`` why it is for none."""

    index: int | None
    name: str | None = None
    reason: str | None = None


def pair_files(io: str, model: ModelProto, files: Mapping[int, bytes]) -> dict[int, Pairing]:
    """Pair the value files of one data set with the model's inputs or outputs.

    Parameters
    ----------
    io
        ``"input"`` or ``"output"``.
    model
        The model whose declarations (see :func:`~onnx_arrow.core.graph.graph_values`)
        the files are for.
    files
        The files of the data set, by their number K (``input_K.pb``): their bytes.

    Returns
    -------
    dict
        By file number, its :class:`Pairing`.  A file whose message carries the name of
        a declared input (output) is for it, when it is a message of the kind declared
        there; any other file is for the input (output) its number K is, when the model
        declares one and no file of the data set names it.  Two files naming the same
        input (output): the lower number is for it, the other for none.

    >>> import numpy as np
    >>> from onnx import helper, numpy_helper, TensorProto
    >>> y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1])
    >>> model = helper.make_model(helper.make_graph([], "g", [], [y]))
    >>> named_y = numpy_helper.from_array(np.zeros(1, np.float32), "Y").SerializeToString()
    >>> pair_files("output", model, {1: named_y})
    {1: Pairing(index=0, name='Y', reason=None)}
    """
    declared = graph_values(model, io)
    by_name: dict[str, dict[str, int]] = {}  # kind -> declared name -> index
    for k, info in enumerate(declared):
        kind = _kind_name(info.type.SerializeToString()) if info.HasField("type") else None
        if info.name and kind is not None:
            by_name.setdefault(kind, {}).setdefault(info.name, k)
    out: dict[int, Pairing] = {}
    claimed: dict[int, int] = {}  # declared index -> the file number that names it
    for number in sorted(files):
        for kind, names in by_name.items():
            name = message_name(files[number], kind)
            index = names.get(name) if name is not None else None
            if index is None:
                continue
            if index in claimed:
                out[number] = Pairing(
                    None,
                    reason=f"{io}_{claimed[index]}.pb names {io} {index} {name!r} too, and "
                    "the lower number is paired with it",
                )
            else:
                claimed[index] = number
                out[number] = Pairing(index, name)
            break
    for number in sorted(files):
        if number in out:
            continue
        if number >= len(declared):
            out[number] = Pairing(None, reason=_declares_none(io, number, declared))
        elif number in claimed:
            out[number] = Pairing(
                None,
                reason=f"{io}_{claimed[number]}.pb names {io} {number} "
                f"{declared[number].name!r}, and this file names no {io} of the model",
            )
        else:
            out[number] = Pairing(number)
    return out


def _declares_none(io: str, number: int, declared: list[ValueInfoProto]) -> str:
    names = ", ".join(repr(v.name) for v in declared) or "none"
    return (
        f"the model declares no {io} {number} ({len(declared)} {io}s: {names}) and the "
        f"file's message names none of them"
    )


@functools.lru_cache(maxsize=1024)
def _kind_name(serialized_type: bytes) -> str | None:
    """The kind name a serialized ``TypeProto`` declares; None for one onnx-arrow does not
    take (its files are then paired by number, and said so where they are read)."""
    from onnx_arrow.core.protos import TypeProto
    from onnx_arrow.core.types import kind_of_type

    try:
        return kind_of_type(TypeProto.FromString(serialized_type)).name
    except OnnxArrowError:
        return None


@dataclass(frozen=True)
class Contradiction:
    """How a value contradicts its declaration: ``declared`` (the declared type with its
    dims, ``tensor(float) []``), ``holds`` (the value's own type with its dims),
    ``detail`` (the first place they differ) and ``arrow_type`` (the value's own column
    type, which keeps it exactly)."""

    declared: str
    holds: str
    detail: str
    arrow_type: pa.DataType
    onnx_type: str

    def message(self, where: str) -> str:
        """The warning: the file, the declaration and what the data holds."""
        return contradiction_message(where, self.holds, self.declared)


def contradiction_message(where: str, holds: str, declared: str) -> str:
    """The words of a :class:`~onnx_arrow.errors.DeclarationWarning`, the same from
    :func:`onnx_arrow.read_pb` and from the corpus import."""
    return (
        f"{where}: holds {holds}, which contradicts the declared {declared}; kept exactly "
        "with its own type"
    )


def contradiction(declared: TypeProto, node: Node | None, kind: Kind) -> Contradiction | None:
    """How a decoded value contradicts the type a model declares for it, or None when it
    is what the declaration says (an absent optional, a dim without a size and a tensor
    type without a shape fit anything of their place).

    >>> import numpy as np
    >>> from onnx import helper, TensorProto
    >>> from onnx_arrow.core.dtypes import dtype_of
    >>> from onnx_arrow.core.tensors import Tensor
    >>> t = Tensor(dtype_of("FLOAT"), (2, 3), np.zeros(6, np.float32))
    >>> scalar = helper.make_tensor_type_proto(TensorProto.FLOAT, [])
    >>> contradiction(scalar, t, Kind(TENSOR)).holds
    'tensor(float) [2, 3]'
    >>> contradiction(scalar, t, Kind(TENSOR)).detail
    'declared shape [], but the value holds tensors of shape [2, 3]'
    >>> contradiction(helper.make_tensor_type_proto(TensorProto.FLOAT, [2, "N"]), t, Kind(TENSOR))
    """
    from onnx_arrow.core.arrays import infer_arrow_type
    from onnx_arrow.core.types import fit_declared, onnx_type

    own = infer_arrow_type([node], kind)
    try:
        fit_declared(declared, own, kind)
    except OnnxArrowError as exc:
        detail = exc.message.replace("the column holds", "the value holds")
    else:
        return None
    own_type = onnx_type(own, kind)
    return Contradiction(
        declared_type_text(declared),
        declared_type_text(own_type),
        detail,
        own,
        onnx_type_string(own_type),
    )


def other_kind(data: bytes | memoryview, declared: str) -> tuple[str, str | None] | None:
    """The kind a file that does not decode as ``declared`` decodes as instead, with the
    name its message carries; None if it decodes as no other kind either.  A kind whose
    message names something is preferred to one that only parses."""
    found: list[tuple[str, str | None]] = []
    for kind in (TENSOR, SEQUENCE, MAP, OPTIONAL, SPARSE_TENSOR):
        if kind == declared:
            continue
        try:
            decode_value(data, kind, where="value")
        except OnnxArrowError:
            continue
        found.append((kind, message_name(data, kind)))
    named = [f for f in found if f[1] is not None]
    return (named or found)[0] if found else None


#: The first line of a Git LFS pointer file (and of the pointers of its first releases).
_LFS_VERSIONS: Final = (b"version https://git-lfs.github.com/spec/", b"version https://hawser.")
#: Git LFS pointers are under 1024 bytes (its specification).
_LFS_MAX_BYTES: Final = 1024


def lfs_pointer(data: bytes | memoryview) -> str | None:
    """A Git LFS pointer file in words (what a checkout without Git LFS holds in place of
    a large file), None for any other bytes.

    >>> lfs_pointer(b"version https://git-lfs.github.com/spec/v1\\noid sha256:"
    ...             + b"4d7a" * 16 + b"\\nsize 1048576\\n")
    'it is a Git LFS pointer to a file of 1048576 bytes, not the file: run git lfs pull'
    """
    head = bytes(data[:_LFS_MAX_BYTES])
    if len(data) >= _LFS_MAX_BYTES or not head.startswith(_LFS_VERSIONS):
        return None
    fields = dict(line.partition(b" ")[::2] for line in head.splitlines() if line)
    size = fields.get(b"size", b"")
    of = f" to a file of {int(size)} bytes" if size.isdigit() and len(size) < 20 else ""
    return f"it is a Git LFS pointer{of}, not the file: run git lfs pull"


#: The wire types a field of each protobuf type is written with (packed repeated scalars
#: are length-delimited too).
_DATA_TYPE_FIELD: Final = FIELDS["TensorProto"]["data_type"].number
_WIRE_NAMES: Final = {
    _wire.VARINT: "an integer",
    _wire.I64: "8 fixed bytes",
    _wire.LEN: "length-delimited bytes",
    _wire.I32: "4 fixed bytes",
}


def foreign_fields(data: bytes | memoryview, kind: str) -> str | None:
    """Why bytes that parse as protobuf are no message of ``kind`` at all: a top-level
    field the message does not have, one of another wire type than the message's field
    of that number, a packed field of fixed-width numbers whose length is not a multiple
    of their width, or a tensor without ``data_type`` (a TensorFlow ``GraphDef``,
    another program's protobuf); None when every field fits (the decoder's own error
    then says what is wrong).

    >>> print(foreign_fields(bytes([0x12, 0x01, 0x00]), "tensor"))  # field 2 as bytes
    field 2 holds length-delimited bytes where a TensorProto has data_type, an integer: it is no ONNX value (another program's protobuf, such as a TensorFlow GraphDef?)
    """  # noqa: E501
    fields = by_number(MESSAGE_NAMES[kind])
    seen = set()
    try:
        for found in _wire.iter_fields(memoryview(bytes(data)), what="file"):
            seen.add(found.number)
            field = fields.get(found.number)
            if field is None:
                return _foreign(f"field {found.number} is none of {kind_words(kind)}'s")
            wire = field.wire_type
            width = {_wire.I32: 4, _wire.I64: 8}.get(wire, 1)
            if found.wire_type == _wire.LEN and field.repeated and wire != _wire.LEN:
                if found.value % width == 0:
                    continue
                return _foreign(
                    f"field {found.number} ({field.name}) holds {found.value} bytes, not "
                    f"numbers of {width} bytes each"
                )
            if found.wire_type != wire:
                held = _WIRE_NAMES.get(found.wire_type, f"wire type {found.wire_type}")
                return _foreign(
                    f"field {found.number} holds {held} where {kind_words(kind)} has "
                    f"{field.name}, {_WIRE_NAMES[wire]}"
                )
    except OnnxArrowError:
        return None
    if kind == TENSOR and data and _DATA_TYPE_FIELD not in seen:
        return _foreign(
            f"it has no data_type (field {_DATA_TYPE_FIELD}), which every TensorProto has"
        )
    return None


def _foreign(why: str) -> str:
    return (
        f"{why}: it is no ONNX value (another program's protobuf, such as a TensorFlow GraphDef?)"
    )


def holds_model(data: bytes | memoryview) -> bool:
    """Whether the bytes are an ONNX model (``ModelProto``): a graph, an IR version and an
    opset, which no value message also is."""
    from onnx_arrow.core.protos import ModelProto

    try:
        model = ModelProto.FromString(bytes(data))
    except (DecodeError, ValueError, RuntimeError):
        return False
    graph = model.graph
    return (
        model.HasField("graph")
        and model.ir_version > 0
        and any(o.version > 0 for o in model.opset_import)
        and (len(graph.node) > 0 or len(graph.output) > 0)
        and all(n.op_type for n in graph.node)
    )


def declared_kind(type_proto: TypeProto | None, where: str) -> tuple[Kind, str] | None:
    """The kind and type text (``seq(tensor(float))``) of a declared type, None for none;
    an error at ``where`` for a type no value can have."""
    if type_proto is None:
        return None
    try:
        return _declared_of(type_proto.SerializeToString())
    except OnnxArrowError:  # the same checks again, for an error that names the file
        from onnx_arrow.core.types import kind_of_type

        return kind_of_type(type_proto, where=where), onnx_type_string(type_proto)


@functools.lru_cache(maxsize=4096)  # the same types recur across the cases of a corpus
def _declared_of(serialized: bytes) -> tuple[Kind, str]:
    from onnx_arrow.core.protos import TypeProto
    from onnx_arrow.core.types import kind_of_type

    type_proto = TypeProto.FromString(serialized)
    return kind_of_type(type_proto), onnx_type_string(type_proto)


#: The ``data_type`` codes of the 28 element types.
_ELEMENT_CODES: Final = frozenset(row.onnx for row in DTYPES.values())


def undeclared_tensor_type(data: bytes | memoryview) -> TypeProto | None:
    """The type of a value file whose model declares none for it, read as onnx's backend
    test runner reads such a file: a ``TensorProto`` (its element type, no shape); None
    when the bytes do not parse as a ``TensorProto`` of one of the 28 element types.

    >>> from onnx import TensorProto, helper
    >>> t = helper.make_tensor("y", TensorProto.FLOAT, [2], [1.0, 2.0])
    >>> onnx_type_string(undeclared_tensor_type(t.SerializeToString()))
    'tensor(float)'
    >>> undeclared_tensor_type(b"version https://git-lfs.github.com/spec/v1\\n") is None
    True
    """
    from onnx_arrow.core.protos import TensorProto, TypeProto

    try:
        tensor = TensorProto.FromString(bytes(data))
    except (DecodeError, ValueError, RuntimeError):
        return None
    if tensor.data_type not in _ELEMENT_CODES:
        return None
    found = TypeProto()
    found.tensor_type.elem_type = tensor.data_type
    return found


def kind_words(kind: str) -> str:
    """A kind as its message: ``a SequenceProto``."""
    return f"a {MESSAGE_NAMES.get(kind, kind)}"


def diagnosis(data: bytes | memoryview, declared: str) -> str | None:
    """What a file that does not decode as the kind ``declared`` holds instead, in words
    (an ONNX model, a message of another kind and the name it carries); None when it is
    none of these (its own decoding error then says what is wrong).

    >>> from onnx import helper, TensorProto
    >>> s = helper.make_sequence("probabilities", 1, [helper.make_tensor("", 1, [1], [0.5])])
    >>> diagnosis(s.SerializeToString(), "tensor")
    "it is a SequenceProto named 'probabilities', not a TensorProto"
    """
    pointer = lfs_pointer(data)
    if pointer is not None:
        return pointer
    if holds_model(data):
        return (
            "it holds an ONNX model (a ModelProto), not a value: rename it model.onnx (or "
            "NAME.onnx beside the test_data_set_N folders it types)"
        )
    other = other_kind(data, declared)
    if other is None:
        return foreign_fields(data, declared)
    kind, name = other
    named = f" named {name!r}" if name is not None else ""
    return f"it is {kind_words(kind)}{named}, not {kind_words(declared)}"

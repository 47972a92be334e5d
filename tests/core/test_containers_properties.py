"""Property-based round trips of nested values: sequences, maps, optionals, sparse tensors.

A value *type* is drawn first (a tree of kinds over every dtype of the table and every map key
type ONNX allows, up to five containers deep), then a column of one to four messages of it:
tensors with random dims and bit patterns stored in ``raw_data`` or their typed field, empty
sequences and maps, absent optionals with and without ``elem_type``, duplicate and invalid
UTF-8 map keys, sparse tensors with linear or coordinate indices, names here and there.

The properties: messages come back byte for byte (directly, through Parquet, through the
storage-only form, with and without the declared ``TypeProto``); the declared type decides the
column type; the bare value column keeps the values; ``to_numpy`` gives what onnx's own helpers
read from the messages, bit for bit.
"""

from __future__ import annotations

import functools
import io
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from onnx import (
    MapProto,
    OptionalProto,
    SequenceProto,
    SparseTensorProto,
    TensorProto,
    TypeProto,
    helper,
    numpy_helper,
)
from wire_reference import len_field

import onnx_arrow
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, TypedEncoding, dtype_of
from onnx_arrow.core.kinds import MAP_KEY_TYPES
from onnx_arrow.core.storage_form import storage_type

ROWS = list(DTYPES.values())
KEY_ROWS = sorted((dtype_of(name) for name in MAP_KEY_TYPES), key=lambda row: row.onnx)
INT64 = dtype_of("INT64")
#: Containers nested around the leaves, at most (sequence(map(.., sequence(optional(..)))) is 4).
MAX_LEVELS = 5
MAX_DIM = 3
PROPERTY = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- value types ---------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class TensorT:
    """Tensors of ``row``; ``shape`` per axis a fixed size or None (varies), None: ranks vary."""

    row: DType
    shape: tuple[int | None, ...] | None
    symbolic: bool  # declare the varying dims as dim_param (True) or as unknown dims

    def __repr__(self) -> str:
        return f"tensor({self.row.name}, {self.shape})"


@dataclass(frozen=True, repr=False)
class SparseT:
    row: DType

    def __repr__(self) -> str:
        return f"sparse_tensor({self.row.name})"


@dataclass(frozen=True, repr=False)
class SequenceT:
    elem: ValueT

    def __repr__(self) -> str:
        return f"sequence({self.elem})"


@dataclass(frozen=True, repr=False)
class MapT:
    key: DType
    value: ValueT

    def __repr__(self) -> str:
        return f"map({self.key.name}, {self.value})"


@dataclass(frozen=True, repr=False)
class OptionalT:
    elem: ValueT

    def __repr__(self) -> str:
        return f"optional({self.elem})"


ValueT = TensorT | SparseT | SequenceT | MapT | OptionalT

#: SequenceProto / OptionalProto field and elem_type of each kind of element.
ELEM = {
    TensorT: ("tensor", SequenceProto.TENSOR),
    SparseT: ("sparse_tensor", SequenceProto.SPARSE_TENSOR),
    SequenceT: ("sequence", SequenceProto.SEQUENCE),
    MapT: ("map", SequenceProto.MAP),
    OptionalT: ("optional", SequenceProto.OPTIONAL),
}
KINDS = [kind for kind, _ in ELEM.values()]


def levels(t: ValueT) -> int:
    """Containers around the leaves: 0 for a tensor, 4 for sequence(map(sequence(optional)))."""
    if isinstance(t, TensorT | SparseT):
        return 0
    return 1 + levels(t.value if isinstance(t, MapT) else t.elem)


def declared(t: ValueT) -> TypeProto:
    """The ``TypeProto`` a model would declare for values of ``t``."""
    if isinstance(t, TensorT):
        if t.shape is None:
            return helper.make_tensor_type_proto(t.row.onnx, None)
        dims = [
            d if d is not None else (f"n{k}" if t.symbolic else None) for k, d in enumerate(t.shape)
        ]
        return helper.make_tensor_type_proto(t.row.onnx, dims)
    if isinstance(t, SparseT):
        return helper.make_sparse_tensor_type_proto(t.row.onnx, None)
    if isinstance(t, SequenceT):
        return helper.make_sequence_type_proto(declared(t.elem))
    if isinstance(t, MapT):
        return helper.make_map_type_proto(t.key.onnx, declared(t.value))
    return helper.make_optional_type_proto(declared(t.elem))


sizes = st.integers(0, MAX_DIM)
shape_specs = st.one_of(
    st.lists(sizes, max_size=3).map(tuple),  # one shape
    st.lists(st.one_of(st.none(), sizes), min_size=1, max_size=3).map(tuple),  # one rank
    st.none(),  # ranks vary
)
leaf_types = st.one_of(
    st.builds(TensorT, st.sampled_from(ROWS), shape_specs, st.booleans()),
    st.builds(SparseT, st.sampled_from(ROWS)),
)


@functools.cache
def value_types(
    max_levels: int = MAX_LEVELS, *, min_levels: int = 0, optional_ok: bool = True
) -> st.SearchStrategy[ValueT]:
    """Value types with ``min_levels`` to ``max_levels`` containers, as ONNX allows them.

    Map values are tensors, sparse tensors, sequences or maps; optionals hold anything.
    """
    if max_levels == 0:
        return leaf_types
    inner = value_types(max_levels - 1, min_levels=max(min_levels - 1, 0))
    map_values = value_types(max_levels - 1, min_levels=max(min_levels - 1, 0), optional_ok=False)
    branches = [
        inner.map(SequenceT),
        st.builds(MapT, st.sampled_from(KEY_ROWS), map_values),
    ]
    if optional_ok:
        branches.append(inner.map(OptionalT))
    if min_levels == 0:
        branches.insert(0, leaf_types)
    return st.one_of(branches)


# --- messages --------------------------------------------------------------------------------

names = st.text(max_size=4)
#: Elements of a sequence or map: empty sometimes, mostly not (shrinks to empty).
counts = st.sampled_from([0, 1, 1, 2, 2, 3])


@st.composite
def codes_of(draw: st.DrawFn, row: DType, count: int, typed: bool) -> np.ndarray:
    """``count`` elements of ``row`` as random bit patterns (NaN payloads, -0.0, extremes)."""
    if row.arrow_kind is ArrowKind.BINARY:
        out = np.empty(count, dtype=object)
        out[:] = draw(st.lists(st.binary(max_size=4), min_size=count, max_size=count))
        return out
    if row.is_packed or row.arrow_kind is ArrowKind.BOOL8:  # BOOL: 0 or 1 in either form
        top = 1 if row.arrow_kind is ArrowKind.BOOL8 else (1 << row.bits) - 1
        values = draw(st.lists(st.integers(0, top), min_size=count, max_size=count))
        return np.array(values, dtype=np.uint8).view(row.numpy)
    parts = 2 if row.typed_encoding is TypedEncoding.INTERLEAVED else 1
    width = row.numpy.itemsize // parts
    mask = (1 << 8 * width) - 1
    # all ones, 0x7f..f, 0x7f..e, 0x80..0: NaNs with payloads and -0.0 for floats
    bits = st.one_of(
        st.integers(0, mask), st.sampled_from([mask, mask >> 1, (mask >> 1) ^ 1, (mask >> 1) + 1])
    )
    values = draw(st.lists(bits, min_size=count * parts, max_size=count * parts))
    return np.array(values, dtype=f"<u{width}").view(row.numpy)


def _typed(message: TensorProto, row: DType, codes: np.ndarray) -> None:
    """Store ``codes`` in the typed field, exactly as the ONNX spec encodes each dtype."""
    encoding = row.typed_encoding
    if codes.size == 0:
        return
    if row.typed_field in ("float_data", "double_data"):  # bit patterns, NaN payloads kept
        message.MergeFromString(len_field(row.typed_field, codes.tobytes()))
        return
    if encoding is TypedEncoding.PACKED_BYTES:
        entries = list(helper.make_tensor("", row.onnx, [codes.size], codes, raw=True).raw_data)
    elif encoding is TypedEncoding.ZERO_EXTEND:
        entries = codes.view(f"<u{row.numpy.itemsize}").astype(np.uint64).tolist()
    else:  # NATIVE / SIGN_EXTEND integers, STRINGS
        entries = codes.tolist()
    getattr(message, row.typed_field).extend(entries)


@st.composite
def tensors(
    draw: st.DrawFn, row: DType, dims: tuple[int, ...], codes: np.ndarray | None = None
) -> TensorProto:
    """A TensorProto of ``row`` and ``dims``, built by onnx's helpers or field by field."""
    if codes is None:
        typed = row.arrow_kind is ArrowKind.BINARY or draw(st.booleans())
        codes = draw(codes_of(row, math.prod(dims), typed))
    else:
        typed = draw(st.booleans())
    builders = ["fields"]
    if row.arrow_kind is not ArrowKind.BINARY and not typed:
        builders += ["from_array", "make_tensor"]
    if typed and row.numpy.kind in "iubO":  # onnx's typed conversion is exact for these
        builders.append("make_tensor")
    builder = draw(st.sampled_from(builders))
    shaped = codes.reshape(dims)
    if builder == "from_array":
        message = numpy_helper.from_array(shaped)
    elif builder == "make_tensor":
        message = helper.make_tensor("", row.onnx, dims, shaped, raw=not typed)
    else:
        message = TensorProto(dims=dims, data_type=row.onnx)
        if typed:
            _typed(message, row, codes)
        else:
            message.raw_data = helper.make_tensor("", row.onnx, dims, shaped, raw=True).raw_data
    if draw(st.booleans()):
        message.name = draw(names)
    if draw(st.integers(0, 3)) == 0:
        message.doc_string = draw(names)
    return message


@st.composite
def sparse_tensors(draw: st.DrawFn, row: DType) -> SparseTensorProto:
    """Values ``[NNZ]``; int64 indices linear ``[NNZ]`` or coordinates ``[NNZ, rank]``."""
    dims = tuple(draw(st.lists(sizes, max_size=3)))
    total = math.prod(dims)
    linear = sorted(draw(st.sets(st.integers(0, max(total - 1, 0)), max_size=min(total, 4))))
    nnz = len(linear)
    message = SparseTensorProto(dims=dims)
    if draw(st.booleans()):
        indices = np.array(linear, dtype=np.int64)
    elif nnz and dims:
        indices = np.stack(np.unravel_index(linear, dims), axis=1).astype(np.int64)
    else:
        indices = np.zeros((nnz, len(dims)), dtype=np.int64)
    message.values.CopyFrom(draw(tensors(row, (nnz,))))
    message.indices.CopyFrom(draw(tensors(INT64, indices.shape, indices.reshape(-1))))
    return message


def _set(message: Any, kind: str, child: Any, *, repeated: bool) -> None:
    if repeated:
        getattr(message, f"{kind}_values").add().CopyFrom(child)
    else:
        field = getattr(message, f"{kind}_value")
        field.SetInParent()  # an empty child is still present
        field.MergeFrom(child)


@st.composite
def sequences(draw: st.DrawFn, t: SequenceT) -> SequenceProto:
    kind, elem_type = ELEM[type(t.elem)]
    items = [draw(messages(t.elem)) for _ in range(draw(counts))]
    message = SequenceProto()
    if draw(st.booleans()):
        message.name = draw(names)
    # elem_type: the kind (mostly), unset, or UNDEFINED (only when empty)
    choices = [elem_type, elem_type, None] + ([SequenceProto.UNDEFINED] if not items else [])
    chosen = draw(st.sampled_from(choices))
    if chosen is not None:
        message.elem_type = chosen
    for item in items:
        _set(message, kind, item, repeated=True)
    return message


def map_keys(key: DType) -> st.SearchStrategy[Any]:
    if key.name == "STRING":
        return st.binary(max_size=3)  # invalid UTF-8 included
    info = np.iinfo(key.numpy)
    return st.one_of(
        st.integers(int(info.min), int(info.max)),
        st.sampled_from([int(info.min), int(info.max), 0]),
    )


@st.composite
def maps(draw: st.DrawFn, t: MapT) -> MapProto:
    n = draw(counts)
    keys = draw(st.lists(map_keys(t.key), min_size=n, max_size=n))  # duplicates allowed
    message = MapProto(key_type=t.key.onnx)
    if draw(st.booleans()):
        message.name = draw(names)
    if t.key.name == "STRING":
        message.string_keys.extend(keys)
    else:  # MapProto keys are int64: UINT64 keys above 2**63 as their two's complement
        message.keys.extend(k - 2**64 if k >= 2**63 else k for k in keys)
    kind, elem_type = ELEM[type(t.value)]
    values = [draw(messages(t.value)) for _ in keys]
    form = draw(st.sampled_from(["typed", "typed", "bare", "absent"])) if not keys else "typed"
    if form == "absent":
        return message
    message.values.SetInParent()
    if form == "typed":
        message.values.elem_type = elem_type
    if draw(st.integers(0, 3)) == 0:
        message.values.name = draw(names)
    for value in values:
        _set(message.values, kind, value, repeated=True)
    return message


@st.composite
def optionals(draw: st.DrawFn, t: OptionalT) -> OptionalProto:
    kind, elem_type = ELEM[type(t.elem)]
    message = OptionalProto()
    if draw(st.booleans()):
        message.name = draw(names)
    present = draw(st.integers(0, 2)) > 0
    # elem_type: the kind, unset, or (when absent) UNDEFINED
    choices = [elem_type, elem_type, None] + ([] if present else [OptionalProto.UNDEFINED])
    chosen = draw(st.sampled_from(choices))
    if chosen is not None:
        message.elem_type = chosen
    if present:
        _set(message, kind, draw(messages(t.elem)), repeated=False)
    return message


@st.composite
def messages(draw: st.DrawFn, t: ValueT) -> Any:
    """One message of type ``t``."""
    if isinstance(t, TensorT):
        if t.shape is None:
            dims = tuple(draw(st.lists(sizes, max_size=3)))
        else:
            dims = tuple(draw(sizes) if d is None else d for d in t.shape)
        return draw(tensors(t.row, dims))
    if isinstance(t, SparseT):
        return draw(sparse_tensors(t.row))
    if isinstance(t, SequenceT):
        return draw(sequences(t))
    if isinstance(t, MapT):
        return draw(maps(t))
    return draw(optionals(t))


@st.composite
def columns(draw: st.DrawFn, types: st.SearchStrategy[ValueT]) -> tuple[ValueT, list[Any]]:
    """A value type and one to four messages of it."""
    t = draw(types)
    event(f"containers: {levels(t)}")
    return t, draw(st.lists(messages(t), min_size=1, max_size=4))


any_columns = columns(value_types())
#: At least four containers deep, e.g. sequence(map(STRING, sequence(optional(tensor)))).
deep_columns = columns(value_types(MAX_LEVELS, min_levels=4))


# --- what onnx's own helpers read ------------------------------------------------------------


def _array(t: TensorProto) -> np.ndarray:
    if t.data_type == TensorProto.STRING:  # to_array decodes UTF-8; the bytes are the value
        out = np.empty(len(t.string_data), dtype=object)
        out[:] = list(t.string_data)
        return out.reshape(tuple(t.dims))
    return numpy_helper.to_array(t)


def _held(message: SequenceProto | OptionalProto) -> tuple[str | None, list[Any]]:
    """The kind and the children a sequence or optional holds, whichever field they are in."""
    for kind in KINDS:
        if isinstance(message, SequenceProto):
            children = list(getattr(message, f"{kind}_values"))
            if children:
                return kind, children
        elif message.HasField(f"{kind}_value"):
            return kind, [getattr(message, f"{kind}_value")]
    return None, []


def reference(message: Any) -> Any:
    """The value as onnx's helpers read it (``to_array`` / ``to_list`` / ``to_optional``).

    Maps are lists of ``(key, value)`` pairs (``to_dict`` drops duplicate keys), sparse
    tensors dicts of dims, values and indices, STRING tensors their bytes.
    """
    if isinstance(message, TensorProto):
        return _array(message)
    if isinstance(message, SparseTensorProto):
        return {
            "dims": tuple(message.dims),
            "values": _array(message.values),
            "indices": _array(message.indices),
        }
    if isinstance(message, MapProto):
        if message.key_type == TensorProto.STRING:
            keys = list(message.string_keys)
        elif message.key_type == TensorProto.UINT64:
            keys = [k % 2**64 for k in message.keys]
        else:
            keys = list(message.keys)
        values = reference(message.values)
        return list(zip(keys, values, strict=True))
    kind, children = _held(message)
    plain = all(isinstance(c, TensorProto) and c.data_type != TensorProto.STRING for c in children)
    if isinstance(message, SequenceProto):
        if kind == "tensor" and plain and message.elem_type == SequenceProto.TENSOR:
            return numpy_helper.to_list(message)
        return [reference(c) for c in children]
    if kind == "tensor" and plain and message.elem_type == OptionalProto.TENSOR:
        return numpy_helper.to_optional(message)
    return reference(children[0]) if children else None


def assert_same(got: Any, expected: Any, where: str = "") -> None:
    """Equal structure, equal dtypes and shapes, equal bits."""
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: {type(got)}"
        assert (got.dtype, got.shape) == (expected.dtype, expected.shape), where
        if expected.dtype == object:
            assert got.tolist() == expected.tolist(), where
        else:
            assert np.ascontiguousarray(got).tobytes() == expected.tobytes(), where
    elif isinstance(expected, dict):
        assert isinstance(got, dict), f"{where}: {type(got)}"
        assert got.keys() == expected.keys(), where
        assert tuple(got["dims"]) == expected["dims"], where
        assert_same(got["values"], expected["values"], f"{where}.values")
        assert_same(got["indices"], expected["indices"], f"{where}.indices")
    elif isinstance(expected, tuple):  # (key, value)
        assert isinstance(got, tuple), f"{where}: {type(got)}"
        assert type(got[0]) is type(expected[0]), where
        assert got[0] == expected[0], where
        assert_same(got[1], expected[1], f"{where}[{expected[0]!r}]")
    elif isinstance(expected, list):
        assert isinstance(got, list), f"{where}: {type(got)}"
        assert len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            assert_same(g, e, f"{where}[{i}]")
    else:
        assert expected is None, f"{where}: unexpected {expected!r}"
        assert got is None, f"{where}: {got!r} where the value is absent"


# --- round trips -----------------------------------------------------------------------------


def serialized(messages: list[Any]) -> list[bytes]:
    return [m.SerializeToString() for m in messages]


def through_parquet(array: pa.Array) -> pa.ChunkedArray:
    sink = io.BytesIO()
    pq.write_table(pa.table({"v": array}), sink)
    sink.seek(0)
    # use_threads=False: pyarrow 26 intermittently aborts at exit after a threaded read
    return pq.read_table(sink, use_threads=False).column("v")


def numpy_rows(array: pa.Array) -> list[Any]:
    """``to_pylist``: one value per row, STRING as bytes."""
    return onnx_arrow.to_pylist(array, strings="bytes")


def assert_round_trips(array: pa.Array, expected: list[bytes]) -> None:
    assert serialized(onnx_arrow.from_arrow(array)) == expected
    assert serialized(onnx_arrow.from_arrow(through_parquet(array))) == expected


@PROPERTY
@given(any_columns, st.integers(0, 4))
def test_messages_round_trip_exactly(case: tuple[ValueT, list[Any]], cut: int) -> None:
    _t, messages = case
    expected = serialized(messages)
    array = onnx_arrow.to_arrow(messages, exact=True)
    assert serialized(messages) == expected  # inputs untouched
    assert_round_trips(array, expected)
    # slices (nonzero offsets at every level) and chunks
    cut = min(cut, len(messages))
    assert serialized(onnx_arrow.from_arrow(array[cut:])) == expected[cut:]
    chunked = pa.chunked_array([array[:cut], array[cut:]], type=array.type)
    assert serialized(onnx_arrow.from_arrow(chunked)) == expected


@PROPERTY
@given(any_columns)
def test_declared_type_decides_the_column(case: tuple[ValueT, list[Any]]) -> None:
    t, messages = case
    type_proto = declared(t)
    array = onnx_arrow.to_arrow(messages, type_proto, exact=True)
    assert array.value.type == onnx_arrow.arrow_type(type_proto)
    assert_round_trips(array, serialized(messages))


@PROPERTY
@given(any_columns, st.booleans())
def test_storage_form_round_trips(case: tuple[ValueT, list[Any]], with_type: bool) -> None:
    t, messages = case
    array = onnx_arrow.to_arrow(messages, declared(t) if with_type else None, exact=True)
    storage = onnx_arrow.to_storage(array)
    storage.validate(full=True)
    assert storage_type(storage.type) == storage.type
    back = onnx_arrow.from_storage(storage, array.type)
    assert back.type == array.type
    assert serialized(onnx_arrow.from_arrow(back)) == serialized(messages)


@PROPERTY
@given(any_columns, st.booleans())
def test_bare_value_column_keeps_the_values(
    case: tuple[ValueT, list[Any]], with_type: bool
) -> None:
    t, messages = case
    type_proto = declared(t)
    array = onnx_arrow.to_arrow(messages, type_proto if with_type else None, exact=True)
    back = onnx_arrow.from_arrow(array.value, type_proto)
    assert len(back) == len(messages)
    for i, (got, original) in enumerate(zip(back, messages, strict=True)):
        assert type(got) is type(original)
        assert_same(reference(got), reference(original), f"row {i}")
    # and as onnx_arrow reads them
    exact = onnx_arrow.to_arrow(messages, type_proto, exact=True)
    assert_same(numpy_rows(onnx_arrow.to_arrow(back, type_proto, exact=True)), numpy_rows(exact))


@PROPERTY
@given(any_columns, st.booleans())
def test_to_numpy_reads_what_onnx_reads(case: tuple[ValueT, list[Any]], with_type: bool) -> None:
    t, messages = case
    array = onnx_arrow.to_arrow(messages, declared(t) if with_type else None, exact=True)
    assert_same(numpy_rows(array), [reference(m) for m in messages])


@settings(PROPERTY, max_examples=50)
@given(deep_columns)
def test_deep_values_round_trip(case: tuple[ValueT, list[Any]]) -> None:
    t, messages = case
    assert levels(t) >= 4
    expected = serialized(messages)
    assert_round_trips(onnx_arrow.to_arrow(messages, exact=True), expected)
    type_proto = declared(t)
    array = onnx_arrow.to_arrow(messages, type_proto, exact=True)
    assert array.value.type == onnx_arrow.arrow_type(type_proto)
    assert_round_trips(array, expected)
    assert_same(numpy_rows(array), [reference(m) for m in messages])


# --- regressions: the minimal reproducers of bugs these properties found -----------------------


def _empty_map_of_maps() -> MapProto:
    message = MapProto(key_type=TensorProto.INT64)
    message.values.elem_type = SequenceProto.MAP
    return message


@pytest.mark.parametrize(
    "message",
    [
        SequenceProto(elem_type=SequenceProto.MAP),
        OptionalProto(elem_type=OptionalProto.MAP),
        _empty_map_of_maps(),
    ],
    ids=["empty sequence", "absent optional", "empty map values"],
)
def test_empty_container_of_maps_without_a_declared_type(message: Any) -> None:
    array = onnx_arrow.to_arrow([message], exact=True)
    assert serialized(onnx_arrow.from_arrow(array)) == serialized([message])


def test_optional_of_optional_whose_present_rows_are_all_inner_absent() -> None:
    inner_absent = OptionalProto(elem_type=OptionalProto.OPTIONAL)
    inner_absent.optional_value.elem_type = OptionalProto.TENSOR
    array = onnx_arrow.to_arrow([inner_absent], exact=True)
    assert array.value.type == pa.struct([pa.field("value", pa.null())])
    assert serialized(onnx_arrow.from_arrow(array)) == serialized([inner_absent])


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_tensor_column_with_a_null_row(row: DType) -> None:
    absent = OptionalProto(elem_type=OptionalProto.TENSOR)
    codes = np.ones(2, dtype=row.numpy)
    if row.arrow_kind is ArrowKind.BINARY:
        codes[:] = [b"a", b"\xff"]
    present = OptionalProto(elem_type=OptionalProto.TENSOR)
    present.tensor_value.CopyFrom(
        helper.make_tensor("", row.onnx, [2], codes, raw=row.arrow_kind is not ArrowKind.BINARY)
    )
    messages = [absent, present]
    array = onnx_arrow.to_arrow(messages, exact=True)
    assert serialized(onnx_arrow.from_arrow(array)) == serialized(messages)
    assert_same(
        onnx_arrow.to_pylist(array, strings="bytes"), [None, reference(present.tensor_value)]
    )


def test_storage_form_of_a_column_with_a_null_typed_child() -> None:
    sequence = SequenceProto(elem_type=SequenceProto.OPTIONAL)
    sequence.optional_values.add()  # two absent optionals: the value is list<null>
    sequence.optional_values.add()
    array = onnx_arrow.to_arrow([sequence], exact=True)
    storage = onnx_arrow.to_storage(array)
    storage.validate(full=True)
    back = onnx_arrow.from_storage(storage, array.type)
    assert serialized(onnx_arrow.from_arrow(back)) == serialized([sequence])

"""Tensor messages built independently of onnx-arrow's own wire codec, and hypothesis
strategies generated from the dtype table, for the tests of the tensor modules.

The strategies cover every row, every storage form it has (``raw_data``, its typed
field, ``string_data``), ranks 0 to 6 with zeros in the dims.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from onnx import StringStringEntryProto, TensorProto, TypeProto, helper, numpy_helper
from wire_reference import len_field

import onnx_arrow
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, TypedEncoding
from onnx_arrow.core.tensor_types import tensor_layout

ROWS = list(DTYPES.values())
FLOATISH = [r for r in ROWS if r.arrow_kind in (ArrowKind.BFLOAT16, ArrowKind.MINIFLOAT)]
PACKED = [r for r in ROWS if r.is_packed]
SUBBYTE_INT = [r for r in ROWS if r.arrow_kind is ArrowKind.SUBBYTE_INT]
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def is_fixed(arrow_type: pa.DataType) -> bool:
    """A fixed-shape tensor type: arrow.fixed_shape_tensor, or onnx-arrow's for its own dtypes."""
    layout = tensor_layout(arrow_type)
    assert layout is not None
    return layout.layout == "fixed"


def plain(values: pa.Array) -> pa.Array:
    """Flat tensor elements as stored: onnx-arrow's tensor types hold plain storage, columns
    of earlier versions (a canonical tensor of an onnx-arrow element type) its extension."""
    return values.storage if isinstance(values, pa.ExtensionArray) else values


def ids(rows: list[DType]) -> list[str]:
    return [row.name for row in rows]


# --- building messages (independently of onnx_arrow's own wire codec) -------------------------


def raw_payload(row: DType, codes: np.ndarray) -> bytes:
    """``raw_data`` as onnx's own helper packs it."""
    return helper.make_tensor("", row.onnx, [codes.size], codes, raw=True).raw_data


def typed_field_bytes(row: DType, codes: np.ndarray) -> bytes:
    """The typed field holding ``codes``, exactly as the ONNX spec encodes each dtype.

    Floats go in as their bit patterns (packed bytes) so NaN payloads stay; integers go
    through protobuf itself.
    """
    encoding = row.typed_encoding
    if codes.size == 0:
        return b""
    if row.typed_field in ("float_data", "double_data"):
        return len_field(row.typed_field, np.ascontiguousarray(codes).tobytes())
    if encoding is TypedEncoding.STRINGS:
        return TensorProto(string_data=list(codes)).SerializeToString()
    if encoding is TypedEncoding.PACKED_BYTES:
        entries = list(raw_payload(row, codes))
    elif encoding is TypedEncoding.ZERO_EXTEND:
        entries = codes.view(f"u{row.numpy.itemsize}").astype(np.uint64).tolist()
    else:  # NATIVE or SIGN_EXTEND integers
        entries = codes.astype(row.typed_entry_dtype).tolist()
    fields: dict[str, Any] = {row.typed_field: entries}
    return TensorProto(**fields).SerializeToString()


def make_message(
    row: DType,
    dims: list[int],
    codes: np.ndarray,
    storage: str,
    builder: str = "direct",
    envelope: dict[str, Any] | None = None,
) -> TensorProto:
    """A TensorProto of ``codes``; ``storage`` is "raw" or "typed"."""
    if builder == "from_array":
        message = numpy_helper.from_array(codes.reshape(dims))
    elif builder == "make_tensor":
        message = helper.make_tensor("t", row.onnx, dims, codes, raw=storage == "raw")
    else:
        message = TensorProto(dims=dims, data_type=row.onnx)
        data = raw_payload(row, codes) if storage == "raw" else None
        if data is not None:
            message.raw_data = data
        else:
            message.MergeFromString(typed_field_bytes(row, codes))
    for key, value in (envelope or {}).items():
        if key == "metadata_props":
            message.metadata_props.extend(StringStringEntryProto(key=k, value=v) for k, v in value)
        else:
            setattr(message, key, value)
    return message


def serialized(message: TensorProto) -> bytes:
    data = message.SerializeToString()
    assert TensorProto.FromString(data).SerializeToString() == data  # protobuf is canonical
    return data


def round_trip(messages: list[TensorProto], type_proto: TypeProto | None = None) -> list[bytes]:
    before = [m.SerializeToString() for m in messages]
    array = onnx_arrow.to_arrow(messages, type_proto, exact=True)
    assert [m.SerializeToString() for m in messages] == before  # inputs untouched
    return [m.SerializeToString() for m in onnx_arrow.from_arrow(array)]


def parquet_round_trip(array: pa.Array) -> pa.ChunkedArray:
    sink = io.BytesIO()
    pq.write_table(pa.table({"t": array}), sink)
    sink.seek(0)
    # use_threads=False: pyarrow 26 intermittently aborts at interpreter exit after a threaded
    # Parquet read ("terminate called without an active exception"); unrelated to onnx-arrow.
    return pq.read_table(sink, use_threads=False).column("t")


# --- strategies, from the table -----------------------------------------------------------------

MAX_DIM = {0: 1, 1: 9, 2: 5, 3: 4, 4: 3, 5: 2, 6: 2}

dims_strategy = st.integers(0, 6).flatmap(
    lambda rank: st.lists(st.integers(0, MAX_DIM[rank]), min_size=rank, max_size=rank)
)


@st.composite
def codes_strategy(draw: st.DrawFn, row: DType, count: int, storage: str) -> np.ndarray:
    """``count`` elements of ``row`` valid for ``storage``, any bit pattern the form can hold."""
    if row.arrow_kind is ArrowKind.BINARY:
        strings = draw(
            st.lists(
                st.one_of(st.binary(max_size=6), st.text(max_size=4).map(str.encode)),
                min_size=count,
                max_size=count,
            )
        )
        out = np.empty(count, dtype=object)
        out[:] = strings
        return out
    if row.is_packed or row.arrow_kind is ArrowKind.BOOL8:  # BOOL: 0 or 1 in either form
        limit = 1 if row.arrow_kind is ArrowKind.BOOL8 else (1 << row.bits) - 1
        values = draw(st.lists(st.integers(0, limit), min_size=count, max_size=count))
        return np.array(values, dtype=np.uint8).view(row.numpy)
    nbytes = count * row.numpy.itemsize
    data = draw(st.binary(min_size=nbytes, max_size=nbytes))
    return np.frombuffer(data, dtype=np.uint8).view(row.numpy).copy()


envelope_strategy = st.fixed_dictionaries(
    {},
    optional={
        "name": st.text(max_size=5),
        "doc_string": st.text(max_size=5),
        "metadata_props": st.lists(
            st.tuples(st.text(max_size=3), st.text(max_size=3)), min_size=1, max_size=2
        ),
        "data_location": st.just(TensorProto.DEFAULT),
    },
)


@st.composite
def messages(
    draw: st.DrawFn, row: DType | None = None, dims: list[int] | None = None
) -> TensorProto:
    row = draw(st.sampled_from(ROWS)) if row is None else row
    dims = draw(dims_strategy) if dims is None else dims
    if row.arrow_kind is ArrowKind.BINARY:
        storage, builder = "typed", "direct"
    else:
        storage = draw(st.sampled_from(["raw", "typed"]))
        builders = ["direct", "direct", "make_tensor"]
        if storage == "raw":
            builders.append("from_array")
        builder = draw(st.sampled_from(builders))
    codes = draw(codes_strategy(row, math.prod(dims), storage))
    if builder == "make_tensor" and row.arrow_kind is ArrowKind.BOOL8:
        codes = codes.view(np.uint8).astype(bool)  # onnx's helper normalizes bools
    return make_message(row, dims, codes, storage, builder, draw(envelope_strategy))


@st.composite
def columns(draw: st.DrawFn) -> list[TensorProto]:
    """One to five messages of one dtype, shaped for a fixed, variable or variable-rank column."""
    row = draw(st.sampled_from(ROWS))
    n = draw(st.integers(1, 5))
    layout = draw(st.sampled_from(["fixed", "variable", "rank"]))
    if layout == "fixed":
        shape = draw(dims_strategy)
        shapes = [shape] * n
    elif layout == "variable":
        rank = draw(st.integers(1, 4))
        dim = st.lists(st.integers(0, MAX_DIM[rank]), min_size=rank, max_size=rank)
        shapes = draw(st.lists(dim, min_size=n, max_size=n))
    else:
        shapes = draw(st.lists(dims_strategy, min_size=n, max_size=n))
    return [draw(messages(row, shape)) for shape in shapes]


def expected_layout(shapes: list[tuple[int, ...]]) -> str:
    if len(set(shapes)) == 1 and 0 not in shapes[0]:
        return "fixed_shape_tensor"  # arrow. or, for onnx-arrow's own element types, onnx.
    if len({len(s) for s in shapes}) == 1:
        return "variable_shape_tensor"
    return "onnx.variable_rank_tensor"


def numpy_helper_to_array(message: TensorProto) -> np.ndarray:
    """onnx's own view of the message, STRING as bytes (onnx decodes it as UTF-8)."""
    if message.data_type == TensorProto.STRING:
        # onnx decodes strings as UTF-8 into numpy, which fails on invalid UTF-8 and drops
        # trailing NUL characters (b"\x00" reads back as ""): the bytes are the truth
        strings = list(message.string_data)
        out = np.empty(len(strings), dtype=object)
        out[:] = strings
        return out.reshape(tuple(message.dims))
    return numpy_helper.to_array(message)


def assert_same_elements(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    if got.dtype == object:
        assert got.tolist() == expected.tolist()
    else:
        assert np.array_equal(got.reshape(-1).view(np.uint8), expected.reshape(-1).view(np.uint8))


def sample_codes(row: DType, count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if row.arrow_kind is ArrowKind.BINARY:
        out = np.empty(count, dtype=object)
        out[:] = [f"s{i}é".encode() for i in range(count)]
        return out
    if row.arrow_kind is ArrowKind.BOOL8:
        return rng.integers(0, 2, count).astype(bool)
    if row.is_packed:
        return rng.integers(0, 1 << row.bits, count).astype(np.uint8).view(row.numpy)
    return np.frombuffer(rng.bytes(count * row.numpy.itemsize), np.uint8).view(row.numpy)

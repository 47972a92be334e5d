"""Tests of :mod:`onnx_arrow.core.extension_types`: every registered type's identity,
persistence, refusal of malformed metadata, reloading and description."""

from __future__ import annotations

import json
import pickle
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from arrow_samples import (
    OWN_TYPES,
    _element,
    _tensor,
    ipc_round_trip,
    parquet_round_trip,
    sample_array,
)
from fresh_python import fresh_python

import onnx_arrow
from onnx_arrow.core import extension_metadata as em
from onnx_arrow.core import extension_types as et
from onnx_arrow.core import json_extension as je
from onnx_arrow.core import message_type as mt
from onnx_arrow.core import tensor_types as tt
from onnx_arrow.core.arrow_input import as_array
from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.errors import ArrowLayoutError, OnnxArrowError

# --- identity ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", OWN_TYPES.values(), ids=OWN_TYPES.keys())
def test_own_types_are_values(make: Callable[[], pa.DataType]) -> None:
    a, b = make(), make()
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    assert a.extension_name.startswith("onnx.")
    back = pickle.loads(pickle.dumps(a))
    assert back == a
    assert type(back) is type(a)
    assert hash(back) == hash(a)


@pytest.mark.parametrize("make", OWN_TYPES.values(), ids=OWN_TYPES.keys())
def test_own_types_serialize_as_versioned_json(make: Callable[[], pa.DataType]) -> None:
    t = make()
    meta = json.loads(t.__arrow_ext_serialize__())
    assert meta.pop("version") == je.FORMAT_VERSION
    assert meta == em.extension_metadata(t) == t.params


# --- persistence ------------------------------------------------------------------------------


@pytest.mark.parametrize("make", OWN_TYPES.values(), ids=OWN_TYPES.keys())
@pytest.mark.parametrize("trip", [ipc_round_trip, parquet_round_trip], ids=["ipc", "parquet"])
def test_own_types_survive_files(
    make: Callable[[], pa.DataType], trip: Callable[[pa.Table], pa.Table]
) -> None:
    t = make()
    array = sample_array(t, 2)
    table = pa.table({"x": array})
    back = trip(table).column("x")
    assert back.type == t
    assert type(back.type) is type(t)
    assert back.combine_chunks().storage.equals(array.storage)


@pytest.mark.parametrize(
    "arrow_type",
    [
        tt.canonical_variable_shape_tensor(pa.float32(), 2),
        tt.canonical_variable_shape_tensor(pa.uint16(), 3, [None, 2, None]),
        tt.fixed_shape_tensor(pa.int8(), (2, 2)),
        tt.fixed_shape_tensor(pa.float64(), ()),
        pa.bool8(),
    ],
    ids=["variable_shape", "variable_shape uniform", "fixed_shape", "fixed_shape rank 0", "bool8"],
)
@pytest.mark.parametrize("trip", [ipc_round_trip, parquet_round_trip], ids=["ipc", "parquet"])
def test_canonical_types_survive_files(
    arrow_type: pa.DataType, trip: Callable[[pa.Table], pa.Table]
) -> None:
    array = sample_array(arrow_type, 2)
    back = trip(pa.table({"x": array})).column("x")
    assert back.type == arrow_type
    assert back.type.extension_name == arrow_type.extension_name
    # read back as pyarrow's own C++ type: no Python class is registered under a canonical name
    assert not isinstance(back.type, pa.ExtensionType)
    assert em.extension_metadata(back.type) == em.extension_metadata(arrow_type)


# --- malformed metadata --------------------------------------------------------------------------


def imported_array(name: str, metadata: bytes, storage_type: pa.DataType) -> pa.Array:
    """An extension array deserialized as a reader would: through the C data interface."""
    field = pa.field(
        "x",
        storage_type,
        metadata={"ARROW:extension:name": name, "ARROW:extension:metadata": metadata},
    )
    return pa.array(em.CDataHolder(pa.array([], storage_type), field))


def imported(name: str, metadata: bytes, storage_type: pa.DataType) -> pa.DataType:
    """The type of :func:`imported_array`, checked as every entry point checks it."""
    array = imported_array(name, metadata, storage_type)
    as_array(array)
    return array.type


def meta(**params: Any) -> bytes:
    return json.dumps({"version": 1, **params}).encode()


BF16 = pa.float32()
VS_STORAGE = tt.ragged_storage(pa.binary(), 2)
VR_STORAGE = tt.ragged_storage(pa.binary(), None)
MSG_STORAGE = pa.struct([pa.field("value", pa.int8()), pa.field("envelope", pa.binary())])
TENSOR = {"kind": ["tensor"]}

MALFORMED: dict[str, tuple[str, bytes, pa.DataType, str]] = {
    "not JSON": ("onnx.bfloat16", b"{data_type", BF16, "not JSON"),
    "not UTF-8": ("onnx.bfloat16", b"\xff\xfe", BF16, "not JSON"),
    "empty": ("onnx.bfloat16", b"", BF16, "not JSON"),
    "a list": ("onnx.bfloat16", b"[1]", BF16, "must be a JSON object, got list"),
    "a number": ("onnx.int4", b"1", pa.int8(), "must be a JSON object, got int"),
    "no version": ("onnx.bfloat16", b'{"data_type": "BFLOAT16"}', BF16, "version None"),
    "version 2": ("onnx.bfloat16", b'{"version": 2, "data_type": "BFLOAT16"}', BF16, "version 2"),
    "version string": ("onnx.bfloat16", b'{"version": "1"}', BF16, "version '1'"),
    "unknown key": (
        "onnx.bfloat16",
        meta(data_type="BFLOAT16", pickle="x"),
        BF16,
        "unknown metadata keys ['pickle']",
    ),
    "wrong storage": ("onnx.bfloat16", meta(data_type="BFLOAT16"), pa.float64(), "storage type"),
    "wrong complex storage": (
        "onnx.complex64",
        meta(data_type="COMPLEX64"),
        pa.list_(pa.float32(), 3),
        "storage type",
    ),
    "data_type of another name": (
        "onnx.bfloat16",
        meta(data_type="FLOAT8E5M2"),
        BF16,
        "does not match the extension name",
    ),
    "data_type missing": ("onnx.int4", meta(), pa.int8(), "does not match the extension name"),
    "variable_shape unknown key": (
        "onnx.variable_shape_tensor",
        meta(shape=[1, 2]),
        VS_STORAGE,
        "unknown metadata keys ['shape']",
    ),
    "variable_shape bad uniform": (
        "onnx.variable_shape_tensor",
        meta(uniform_shape=[1]),
        VS_STORAGE,
        "uniform_shape must be a list of 2",
    ),
    "variable_shape negative uniform": (
        "onnx.variable_shape_tensor",
        meta(uniform_shape=[1, -2]),
        VS_STORAGE,
        "uniform_shape",
    ),
    "variable_shape storage": (
        "onnx.variable_shape_tensor",
        meta(),
        VR_STORAGE,
        "storage must be struct<data: list<T>, shape: fixed_size_list<int32>[ndim]>",
    ),
    "variable_shape int64 shape": (
        "onnx.variable_shape_tensor",
        meta(),
        pa.struct(
            [pa.field("data", pa.list_(pa.binary())), pa.field("shape", pa.list_(pa.int64(), 2))]
        ),
        "storage must be",
    ),
    "variable_rank storage": (
        "onnx.variable_rank_tensor",
        meta(),
        VS_STORAGE,
        "storage must be struct<data: list<T>, shape: list<int32>>",
    ),
    "variable_rank not a struct": ("onnx.variable_rank_tensor", meta(), pa.binary(), "storage"),
    "variable_rank unknown key": (
        "onnx.variable_rank_tensor",
        meta(uniform_shape=None),
        VR_STORAGE,
        "unknown metadata keys",
    ),
    "message storage": (
        "onnx.message",
        meta(**TENSOR),
        pa.struct([pa.field("value", pa.int8()), pa.field("envelope", pa.string())]),
        "storage must be struct<value: T, envelope: binary>",
    ),
    "message fields": (
        "onnx.message",
        meta(**TENSOR),
        pa.struct([pa.field("envelope", pa.binary()), pa.field("value", pa.int8())]),
        "storage must be",
    ),
    "message unknown key": (
        "onnx.message",
        meta(**TENSOR, value_type="x"),
        MSG_STORAGE,
        "unknown metadata keys ['value_type']",
    ),
}


@pytest.mark.parametrize(
    ("name", "metadata", "storage", "text"), MALFORMED.values(), ids=MALFORMED.keys()
)
def test_malformed_metadata_is_refused(
    name: str, metadata: bytes, storage: pa.DataType, text: str
) -> None:
    # importing never fails: the type is kept as read, over its own storage ...
    array = imported_array(name, metadata, storage)
    assert array.type.extension_name == name
    assert array.type.storage_type == storage
    # ... and every entry point refuses it, located, before reading a buffer
    for convert in (as_array, onnx_arrow.from_arrow, onnx_arrow.to_pylist):
        with pytest.raises(ArrowLayoutError) as info:
            convert(array)
        err = info.value
        assert isinstance(err, ValueError)
        assert isinstance(err, OnnxArrowError)
        assert str(err).startswith(f"{name}: ")
        assert text in str(err)


@pytest.mark.parametrize(
    ("name", "metadata", "storage", "text"), list(MALFORMED.values())[:3], ids=list(MALFORMED)[:3]
)
def test_malformed_metadata_leaves_the_rest_of_a_file_readable(
    name: str, metadata: bytes, storage: pa.DataType, text: str
) -> None:
    field = pa.field(
        "x",
        storage,
        metadata={"ARROW:extension:name": name, "ARROW:extension:metadata": metadata},
    )
    good = onnx_arrow.to_arrow([_tensor(np.arange(3, dtype=np.float32))], exact=True)
    table = pa.table(
        [pa.array([1.0], storage), good],
        schema=pa.schema([field, pa.field("good", good.type)]),
    )
    for trip in (ipc_round_trip, parquet_round_trip):
        back = trip(table)
        assert onnx_arrow.from_arrow(back.column("good")) == onnx_arrow.from_arrow(good)
        with pytest.raises(ArrowLayoutError, match=text):
            onnx_arrow.from_arrow(back.column("x"))


def test_well_formed_metadata_is_accepted() -> None:
    assert imported("onnx.bfloat16", meta(data_type="BFLOAT16"), BF16) == _element(
        dtype_of("BFLOAT16")
    )
    t = imported("onnx.variable_shape_tensor", meta(uniform_shape=[None, 0]), VS_STORAGE)
    assert t == tt.variable_shape_tensor(pa.binary(), 2, [None, 0])
    # key order and whitespace do not matter
    t = imported("onnx.int4", b' {"data_type":"INT4" , "version":1}', pa.int8())
    assert t == _element(dtype_of("INT4"))


# --- reloading --------------------------------------------------------------------------------


def test_reloading_the_module_does_not_crash() -> None:
    """In a fresh interpreter, so this process keeps its own registrations."""
    code = textwrap.dedent(
        """
        import importlib, io
        import numpy as np
        import pyarrow as pa
        from onnx import numpy_helper
        import onnx_arrow
        from onnx_arrow.core import extension_types as et
        from onnx_arrow.core.dtypes import dtype_of
        from onnx_arrow.core.element_types import element_type

        importlib.reload(et)
        importlib.reload(et)
        import onnx_arrow  # a second import is a no-op
        t = element_type(dtype_of("BFLOAT16"))
        array = pa.ExtensionArray.from_storage(t, pa.array([1.0], pa.float32()))
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, pa.schema([("x", t)])) as writer:
            writer.write_table(pa.table({"x": array}))
        back = pa.ipc.open_stream(sink.getvalue()).read_all().column("x").type
        assert back == t and type(back) is type(t), (back, t)
        x = numpy_helper.from_array(np.arange(3, dtype=np.float32), "x")
        assert onnx_arrow.from_arrow(onnx_arrow.to_arrow([x], exact=True))[0] == x
        print("ok")
        """
    )
    done = fresh_python(code, timeout=60)
    assert done.stdout.strip() == "ok"


DESCRIPTIONS: dict[str, tuple[pa.DataType, str]] = {
    "fixed": (
        tt.fixed_shape_tensor(pa.float32(), (2, 3)),
        "arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]",
    ),
    "canonical variable": (
        tt.canonical_variable_shape_tensor(pa.int64(), 2, [None, 4]),
        "arrow.variable_shape_tensor[value_type=int64, ndim=2, uniform_shape=[null,4]]",
    ),
    "onnx variable": (
        tt.variable_shape_tensor(_element(dtype_of("BFLOAT16")), 1),
        "onnx.variable_shape_tensor[value_type=onnx.bfloat16, ndim=1]",
    ),
    "rank": (
        tt.variable_rank_tensor(pa.binary()),
        "onnx.variable_rank_tensor[value_type=binary]",
    ),
    "message": (
        mt.MessageType(tt.variable_rank_tensor(pa.float32())),
        "onnx.message[value=onnx.variable_rank_tensor[value_type=float]]",
    ),
    "sparse": (tt.sparse_tensor_type(pa.float32()), "onnx.sparse_tensor"),
    "plain": (pa.list_(pa.int8()), "list<item: int8>"),
}


@pytest.mark.parametrize(("arrow_type", "text"), DESCRIPTIONS.values(), ids=DESCRIPTIONS)
def test_describe_type(arrow_type: pa.DataType, text: str) -> None:
    assert et.describe_type(arrow_type) == text


@pytest.mark.parametrize("metadata", [b"{x", b"[1]"])
def test_unreadable_metadata_of_own_types_asks_for_a_version_key(metadata: bytes) -> None:
    with pytest.raises(ArrowLayoutError, match=r"a JSON object with a 'version' key$"):
        imported("onnx.bfloat16", metadata, BF16)

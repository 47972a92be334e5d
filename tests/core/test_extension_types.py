"""Tests of :mod:`onnx_arrow.core.extension_types`: identity, persistence, refusals."""

from __future__ import annotations

import io
import json
import pickle
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import onnx_arrow
from onnx_arrow.core import element_types as el
from onnx_arrow.core import extension_metadata as em
from onnx_arrow.core import extension_types as et
from onnx_arrow.core import json_extension as je
from onnx_arrow.core import message_type as mt
from onnx_arrow.core import tensor_types as tt
from onnx_arrow.core.arrow_input import as_array
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of
from onnx_arrow.core.storage import storage_type
from onnx_arrow.errors import ArrowLayoutError, OnnxArrowError, UnsupportedTypeError

OWN_ROWS = [row for row in DTYPES.values() if row.extension_name is not None]
NATIVE_ROWS = [row for row in DTYPES.values() if row.arrow_kind is ArrowKind.NATIVE]
OTHER_ROWS = [row for row in DTYPES.values() if row.arrow_kind is not ArrowKind.NATIVE]


def ids(rows: list[DType]) -> list[str]:
    return [row.name for row in rows]


def _element(row: DType) -> pa.DataType:
    return el.element_type(row)


#: Every type onnx-arrow defines itself, each built by a fresh call.
OWN_TYPES: dict[str, Callable[[], pa.DataType]] = {
    **{row.extension_name: (lambda row=row: _element(row)) for row in OWN_ROWS},  # type: ignore[misc]
    "onnx.variable_shape_tensor[bool8]": lambda: tt.variable_shape_tensor(pa.bool8(), 2),
    "onnx.variable_shape_tensor[binary, uniform]": lambda: tt.variable_shape_tensor(
        pa.binary(), 3, [None, 2, 0]
    ),
    "onnx.variable_shape_tensor[bfloat16]": lambda: tt.variable_shape_tensor(
        _element(dtype_of("BFLOAT16")), 1
    ),
    "onnx.variable_shape_tensor[complex64]": lambda: tt.variable_shape_tensor(
        _element(dtype_of("COMPLEX64")), 1
    ),
    "onnx.variable_rank_tensor[float]": lambda: tt.variable_rank_tensor(pa.float32()),
    "onnx.variable_rank_tensor[int4]": lambda: tt.variable_rank_tensor(_element(dtype_of("INT4"))),
    "onnx.message[fixed_shape_tensor]": lambda: mt.MessageType(
        tt.fixed_shape_tensor(pa.float32(), (2, 3))
    ),
    "onnx.message[variable_rank_tensor]": lambda: mt.MessageType(
        tt.variable_rank_tensor(_element(dtype_of("FLOAT8E5M2")))
    ),
    "onnx.message[canonical variable_shape_tensor]": lambda: mt.MessageType(
        tt.variable_shape_tensor(pa.int64(), 2, [None, 4])
    ),
}


def sample_storage(storage_type: pa.DataType) -> pa.Array:
    """A small non-empty storage array of ``storage_type`` (two rows, one element or more)."""
    if pa.types.is_struct(storage_type) and storage_type.names == ["data", "shape"]:
        data_type = storage_type.field("data").type
        shape_type = storage_type.field("shape").type
        ndim = shape_type.list_size if pa.types.is_fixed_size_list(shape_type) else 1
        shapes = [[1] * ndim, [1] * ndim]
        data = pa.array([[None], [None]], pa.list_(pa.null()))
        values = sample_values(data_type.value_type, 2)
        data = pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), values, type=data_type)
        return pa.StructArray.from_arrays(
            [data, pa.array(shapes, shape_type)], fields=list(storage_type)
        )
    if pa.types.is_struct(storage_type):  # onnx.message
        value_type = storage_type.field("value").type
        value = sample_array(value_type, 2)
        envelope = pa.array([b"\x42\x01x", b""], pa.binary())
        return pa.StructArray.from_arrays([value, envelope], fields=list(storage_type))
    return sample_values(storage_type, 2)


def sample_values(value_type: pa.DataType, n: int) -> pa.Array:
    if isinstance(value_type, pa.BaseExtensionType):
        return sample_array(value_type, n)
    if pa.types.is_fixed_size_list(value_type):
        flat = sample_values(value_type.value_type, n * value_type.list_size)
        return pa.FixedSizeListArray.from_arrays(flat, type=value_type)
    if pa.types.is_binary(value_type):
        return pa.array([b"\xff\x00"] * n, value_type)
    return pa.array(np.zeros(n, dtype=value_type.to_pandas_dtype()), value_type)


def sample_array(arrow_type: pa.DataType, n: int) -> pa.Array:
    if isinstance(arrow_type, pa.ExtensionType):
        storage = sample_storage(arrow_type.storage_type)
        return pa.ExtensionArray.from_storage(arrow_type, storage.slice(0, n))
    if isinstance(arrow_type, pa.BaseExtensionType):
        name = arrow_type.extension_name
        if name == tt.CANONICAL_FIXED_SHAPE:
            size = int(np.prod(arrow_type.shape))
            flat = sample_values(arrow_type.value_type, n * size)
            return pa.ExtensionArray.from_storage(
                arrow_type, pa.FixedSizeListArray.from_arrays(flat, size)
            )
        if name == "arrow.bool8":
            return pa.ExtensionArray.from_storage(arrow_type, pa.array([0, 1][:n], pa.int8()))
        storage = sample_storage(arrow_type.storage_type)
        return tt.ragged_from_storage(arrow_type, storage.slice(0, n))
    return sample_values(arrow_type, n)


def ipc_round_trip(table: pa.Table) -> pa.Table:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return pa.ipc.open_stream(sink.getvalue()).read_all()


def parquet_round_trip(table: pa.Table) -> pa.Table:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    sink.seek(0)
    # use_threads=False: pyarrow 26 intermittently aborts at interpreter exit after a threaded
    # Parquet read ("terminate called without an active exception"); unrelated to onnx-arrow.
    return pq.read_table(sink, use_threads=False)


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


def test_pickle_never_executes_a_class_path_from_the_data() -> None:
    """Pickles reference onnx-arrow's own rebuild function and type class, nothing else."""
    blob = pickle.dumps(_element(dtype_of("BFLOAT16")))
    assert b"onnx_arrow.core.element_types" in blob  # its rebuild function
    assert b"cloudpickle" not in blob


@pytest.mark.parametrize("row", OWN_ROWS, ids=ids(OWN_ROWS))
def test_element_types_follow_the_table(row: DType) -> None:
    t = el.element_type(row)
    assert isinstance(t, el.OnnxElementType)
    assert t.extension_name == row.extension_name
    assert t.params == {"data_type": row.name}
    assert el.dtype_of_arrow(t) is row
    if row.arrow_kind is ArrowKind.COMPLEX:
        assert t.storage_type == pa.list_(
            pa.field("item", pa.from_numpy_dtype(row.arrow_storage), nullable=False), 2
        )
    else:
        assert t.storage_type == pa.from_numpy_dtype(row.arrow_storage)


def test_element_types_differ_between_dtypes() -> None:
    types = [el.element_type(row) for row in DTYPES.values()]
    assert len(set(types)) == len(types) == 28


def test_dtype_of_arrow_refuses_other_types() -> None:
    with pytest.raises(UnsupportedTypeError, match=r"^col: Arrow element type date32") as info:
        el.dtype_of_arrow(pa.date32(), where="col")
    assert isinstance(info.value, TypeError)


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


# --- canonical first, where it fits ----------------------------------------------------------


@pytest.mark.parametrize("row", NATIVE_ROWS, ids=ids(NATIVE_ROWS))
def test_the_canonical_variable_shape_type_is_read(row: DType) -> None:
    t = tt.canonical_variable_shape_tensor(el.element_type(row), 2)
    assert t.extension_name == "arrow.variable_shape_tensor"
    assert not isinstance(t, pa.ExtensionType)  # C++ type, no Python class registered
    assert em.extension_metadata(t) == {}
    u = tt.canonical_variable_shape_tensor(el.element_type(row), 2, [3, None])
    assert em.extension_metadata(u) == {"uniform_shape": [3, None]}
    assert t == tt.canonical_variable_shape_tensor(el.element_type(row), 2)
    assert t != u
    assert tt.tensor_layout(u) == tt.TensorLayout("variable", el.element_type(row))
    # a column of it (another writer's) gives its tensors
    storage = pa.StructArray.from_arrays(
        [
            pa.array([[0, 1, 2, 3, 4, 5], [6, 7, 8]], pa.list_(el.element_type(row))),
            pa.array([[3, 2], [3, 1]], pa.list_(pa.int32(), 2)),
        ],
        names=["data", "shape"],
    )
    column = tt.ragged_from_storage(u, storage)
    import onnx_arrow

    assert [a.shape for a in onnx_arrow.to_pylist(column)] == [(3, 2), (3, 1)]


def test_onnx_arrow_writes_its_own_variable_shape_type() -> None:
    """The canonical one does not fit: no Python class, no unpickling, no large_list."""
    import onnx_arrow

    messages = [_tensor(np.ones((2, 3), np.float32)), _tensor(np.ones((1, 3), np.float32))]
    column = onnx_arrow.to_arrow(messages)
    assert isinstance(column.type, tt.VariableShapeTensorType)
    table = pa.table({"x": column})
    assert pickle.loads(pickle.dumps(table)).equals(table)  # as Ray and Dask ship tables
    canonical = pa.table(
        {
            "x": tt.ragged_from_storage(
                tt.canonical_variable_shape_tensor(pa.float32(), 2), column.storage
            )
        }
    )
    with pytest.raises(ValueError, match="No type alias"):
        pickle.loads(pickle.dumps(canonical))  # pyarrow 26: should it change, so can this


@pytest.mark.parametrize("row", OTHER_ROWS, ids=ids(OTHER_ROWS))
def test_other_dtypes_use_onnx_variable_shape(row: DType) -> None:
    t = tt.variable_shape_tensor(el.element_type(row), 2, [None, 5])
    assert isinstance(t, tt.VariableShapeTensorType)
    assert t.extension_name == "onnx.variable_shape_tensor"
    assert t.ndim == 2
    assert t.uniform_shape == [None, 5]
    assert t.value_type == el.element_type(row)
    own = row.extension_name is not None
    expected = {"uniform_shape": [None, 5]} | ({"data_type": row.name} if own else {})
    assert em.extension_metadata(t) == expected
    # the same storage layout as the canonical type; onnx-arrow's own element types
    # as their plain storage, the dtype in the metadata
    element = el.element_type(row).storage_type if own else el.element_type(row)
    assert t.storage_type == pa.struct(
        [
            pa.field("data", pa.list_(element)),
            pa.field("shape", pa.list_(pa.int32(), 2)),
        ]
    )


def test_extension_metadata_reads_cpp_types() -> None:
    assert em.extension_metadata(tt.fixed_shape_tensor(pa.int32(), (2, 3))) == {"shape": [2, 3]}
    assert em.extension_metadata(pa.bool8()) == {}
    t = tt.variable_shape_tensor(pa.float32(), 3, [None, 3, 0])
    assert em.extension_metadata(t) == {"uniform_shape": [None, 3, 0]}
    with pytest.raises(UnsupportedTypeError, match="not an extension type"):
        em.extension_metadata(pa.float32())


def test_variable_shape_refuses_a_bad_uniform_shape() -> None:
    with pytest.raises(ArrowLayoutError, match=r"uniform_shape must be a list of 2"):
        tt.variable_shape_tensor(pa.float32(), 2, [1, 2, 3])
    with pytest.raises(ArrowLayoutError, match=r"uniform_shape"):
        tt.variable_shape_tensor(pa.binary(), 1, [-1])


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

        importlib.reload(et)
        importlib.reload(et)
        import onnx_arrow  # a second import is a no-op
        t = et.element_type(dtype_of("BFLOAT16"))
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
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# --- tensor layouts, sparse tensors, descriptions ------------------------------------------------


LAYOUTS: dict[str, tuple[pa.DataType, str, pa.DataType]] = {
    "fixed": (tt.fixed_shape_tensor(pa.float32(), (2, 3)), "fixed", pa.float32()),
    "canonical variable": (
        tt.canonical_variable_shape_tensor(pa.int64(), 2),
        "variable",
        pa.int64(),
    ),
    "onnx variable": (tt.variable_shape_tensor(pa.binary(), 1), "variable", pa.binary()),
    "rank": (tt.variable_rank_tensor(pa.bool8()), "rank", pa.bool8()),
}


@pytest.mark.parametrize(("arrow_type", "layout", "value_type"), LAYOUTS.values(), ids=LAYOUTS)
def test_tensor_layout_names_the_layout_and_element_type(
    arrow_type: pa.DataType, layout: str, value_type: pa.DataType
) -> None:
    assert tt.tensor_layout(arrow_type) == (layout, value_type)


@pytest.mark.parametrize(
    "arrow_type",
    [
        pa.float32(),
        pa.list_(pa.float32()),
        tt.sparse_tensor_type(pa.float32()),
        mt.MessageType(tt.fixed_shape_tensor(pa.float32(), (2,))),
        _element(dtype_of("BFLOAT16")),
    ],
)
def test_tensor_layout_of_other_types_is_none(arrow_type: pa.DataType) -> None:
    assert tt.tensor_layout(arrow_type) is None


def test_sparse_tensor_type_holds_values_and_indices() -> None:
    t = tt.sparse_tensor_type(_element(dtype_of("BFLOAT16")))
    assert isinstance(t, tt.SparseTensorType)
    assert t.value_type == _element(dtype_of("BFLOAT16"))
    indices = t.storage_type.field("indices").type
    assert tt.tensor_layout(indices) == ("rank", pa.int64())
    assert t == tt.sparse_tensor_type(_element(dtype_of("BFLOAT16")))


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


class _OtherWritersType(pa.ExtensionType):  # type: ignore[misc]
    """Another library's extension type, whose metadata onnx-arrow only reads."""

    def __init__(self, metadata: bytes) -> None:
        self._metadata = metadata
        super().__init__(pa.int8(), "other.type")

    def __arrow_ext_serialize__(self) -> bytes:
        return self._metadata

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> Any:
        return cls(serialized)


@pytest.mark.parametrize(
    ("metadata", "text"),
    [
        (b"{x", "other.type: extension metadata is not JSON"),
        (b"\xff", "other.type: extension metadata is not JSON"),
        (b"[1]", "other.type: extension metadata must be a JSON object, got list"),
    ],
)
def test_unreadable_metadata_of_other_types_says_what_it_must_be(
    metadata: bytes, text: str
) -> None:
    with pytest.raises(ArrowLayoutError) as info:
        em.extension_metadata(_OtherWritersType(metadata))
    assert str(info.value).startswith(text)
    assert str(info.value).endswith("a JSON object")
    assert em.extension_metadata(_OtherWritersType(b'{"a": 1}')) == {"a": 1}


@pytest.mark.parametrize("metadata", [b"{x", b"[1]"])
def test_unreadable_metadata_of_own_types_asks_for_a_version_key(metadata: bytes) -> None:
    with pytest.raises(ArrowLayoutError, match=r"a JSON object with a 'version' key$"):
        imported("onnx.bfloat16", metadata, BF16)


# --- Polars hands columns back with large storage -----------------------------------------------


def _tensor(array: np.ndarray, name: str = "t") -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(array, name)


def _polars_values() -> dict[str, list[Any]]:
    import ml_dtypes
    from onnx import OptionalProto, SequenceProto, TensorProto, helper

    strings = helper.make_tensor("s", TensorProto.STRING, [2], [b"a", b"\xff"])
    return {
        "fixed float": [
            _tensor(np.arange(6, dtype=np.float32).reshape(2, 3) + i) for i in range(2)
        ],
        "string": [strings, strings],
        "bool, variable shape": [_tensor(np.ones((2, 3), bool)), _tensor(np.ones((2, 2), bool))],
        "variable rank": [_tensor(np.ones((2, 3), np.float32)), _tensor(np.ones(2, np.float32))],
        "bfloat16": [_tensor(np.ones(3, ml_dtypes.bfloat16)) for _ in range(2)],
        "sequence": [
            helper.make_sequence("s", SequenceProto.TENSOR, [_tensor(np.ones(3, np.float32))]),
            helper.make_sequence("s", SequenceProto.TENSOR, []),
        ],
        "optional": [
            helper.make_optional("o", OptionalProto.TENSOR, _tensor(np.ones(2, np.float32))),
            OptionalProto(name="o", elem_type=OptionalProto.TENSOR),
        ],
        "map": [
            helper.make_map(
                "m",
                TensorProto.INT64,
                [1, 2],
                helper.make_sequence(
                    "v",
                    SequenceProto.TENSOR,
                    [_tensor(np.ones(2, np.float32)), _tensor(np.zeros(2, np.float32))],
                ),
            )
        ],
    }


@pytest.mark.parametrize("name", list(_polars_values()))
def test_message_columns_come_back_from_polars_exactly(name: str) -> None:
    # Polars keeps the extension types and turns binary and list storage into
    # large_binary and large_list, which onnx-arrow's types take
    import onnx_arrow

    pl = pytest.importorskip("polars")
    messages = _polars_values()[name]
    back = pl.from_arrow(pa.table({"c": onnx_arrow.to_arrow(messages, exact=True)})).to_arrow()
    column = back.column("c").combine_chunks()
    assert isinstance(column.type, mt.MessageType)
    again = [m.SerializeToString() for m in onnx_arrow.from_arrow(column)]
    assert again == [m.SerializeToString() for m in messages]


def test_pyarrows_variable_shape_tensor_refuses_large_list_storage() -> None:
    # one reason onnx-arrow writes its own variable-shape type: pyarrow's C++ one takes
    # list storage only, so Polars cannot hand it back; should that change, so can this
    pl = pytest.importorskip("polars")
    storage = pa.StructArray.from_arrays(
        [pa.array([[1.0, 2.0]], pa.list_(pa.float32())), pa.array([[2]], pa.list_(pa.int32(), 1))],
        names=["data", "shape"],
    )
    canonical = tt.ragged_from_storage(tt.canonical_variable_shape_tensor(pa.float32(), 1), storage)
    frame = pl.from_arrow(pa.table({"c": canonical}))
    with pytest.raises(pa.ArrowInvalid, match="Expected List storage type, got large_list"):
        frame.to_arrow()


def test_an_envelope_is_binary_or_large_binary() -> None:
    assert (
        mt.MessageType(pa.int64(), envelope_type=pa.large_binary())
        .storage_type.field("envelope")
        .type
        == pa.large_binary()
    )
    with pytest.raises(ArrowLayoutError, match="binary or large_binary, not string"):
        mt.MessageType(pa.int64(), envelope_type=pa.string())


# --- onnx-arrow's own element types live in the outermost tensor type ---------------------------


@pytest.mark.parametrize("row", OWN_ROWS, ids=ids(OWN_ROWS))
def test_own_dtypes_are_one_outer_type_over_plain_storage(row: DType) -> None:
    element = el.element_type(row)
    fixed = tt.fixed_shape_tensor(element, (2, 3))
    assert isinstance(fixed, tt.OnnxFixedShapeTensorType)
    assert fixed.dtype is row
    assert fixed.shape == [2, 3]
    assert fixed.value_type == element
    assert em.extension_metadata(fixed) == {"data_type": row.name, "shape": [2, 3]}
    assert storage_type(fixed) == fixed.storage_type  # nothing nested inside
    for ragged in (tt.variable_shape_tensor(element, 2), tt.variable_rank_tensor(element)):
        assert em.extension_metadata(ragged)["data_type"] == row.name
        assert ragged.storage_type.field("data").type.value_type == element.storage_type
        assert tt.tensor_layout(ragged).value_type == element


def test_the_outer_type_survives_a_reader_that_does_not_know_it(tmp_path) -> None:
    import ml_dtypes
    from onnx import numpy_helper

    values = np.array([[0.5, -1.25], [2.0, 448.0]], dtype=ml_dtypes.bfloat16)
    arr = onnx_arrow.to_arrow([numpy_helper.from_array(values, "w")])
    path = tmp_path / "bf16.parquet"
    pq.write_table(pa.table({"w": arr}), path)
    code = textwrap.dedent(
        f"""
        import sys
        import pyarrow as pa, pyarrow.parquet as pq
        table = pq.read_table({str(path)!r}, use_threads=False)
        field = table.schema.field("w")
        assert "onnx_arrow" not in sys.modules
        # the storage, the exact numbers, and the type's name and metadata in the field
        t = field.type
        print(t.value_type, t.list_size, table.column("w").combine_chunks().flatten().to_pylist())
        print(field.metadata[b"ARROW:extension:name"].decode())
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "float 4 [0.5, -1.25, 2.0, 448.0]",
        "onnx.fixed_shape_tensor",
    ]


def test_columns_of_the_earlier_layout_are_still_read() -> None:
    """A canonical tensor of an onnx-arrow element type (written by earlier versions)."""
    row = dtype_of("BFLOAT16")
    element = el.element_type(row)
    values = pa.ExtensionArray.from_storage(element, pa.array([0.5, -1.25], pa.float32()))
    storage = pa.FixedSizeListArray.from_arrays(values, 2)
    earlier = pa.ExtensionArray.from_storage(pa.fixed_shape_tensor(element, [2]), storage)
    (message,) = onnx_arrow.from_arrow(earlier)
    assert message.data_type == row.onnx
    assert onnx_arrow.to_numpy(earlier).dtype == row.numpy
    ragged = tt.VariableShapeTensorType(
        pa.struct([("data", pa.list_(element)), ("shape", pa.list_(pa.int32(), 1))]), {}
    )
    assert tt.tensor_layout(ragged).value_type == element


def test_own_tensor_arrays_pickle_and_give_numpy() -> None:
    import ml_dtypes
    from onnx import numpy_helper

    values = np.array([[-8, 7], [0, 1]], dtype=ml_dtypes.int4)
    arr = onnx_arrow.to_arrow([numpy_helper.from_array(values)] * 3)
    back = pickle.loads(pickle.dumps(pa.table({"x": arr})))
    assert back.column("x").type == arr.type
    np.testing.assert_array_equal(arr.to_numpy_ndarray(), np.stack([values] * 3))
    assert arr.to_numpy_ndarray().dtype == ml_dtypes.int4

"""Tests of :mod:`onnx_arrow.core.tensor_types`: canonical types first, onnx-arrow's own
layouts, sparse tensors."""

from __future__ import annotations

import pickle
import textwrap

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from arrow_samples import (
    NATIVE_ROWS,
    OTHER_ROWS,
    OWN_ROWS,
    _element,
    _tensor,
    ids,
)
from fresh_python import fresh_python

import onnx_arrow
from onnx_arrow.core import element_types as el
from onnx_arrow.core import extension_metadata as em
from onnx_arrow.core import message_type as mt
from onnx_arrow.core import tensor_types as tt
from onnx_arrow.core.dtypes import DType, dtype_of
from onnx_arrow.core.storage_form import storage_type
from onnx_arrow.errors import ArrowLayoutError, NotRepresentableError

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


def test_variable_shape_refuses_a_bad_uniform_shape() -> None:
    with pytest.raises(ArrowLayoutError, match=r"uniform_shape must be a list of 2"):
        tt.variable_shape_tensor(pa.float32(), 2, [1, 2, 3])
    with pytest.raises(ArrowLayoutError, match=r"uniform_shape"):
        tt.variable_shape_tensor(pa.binary(), 1, [-1])


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
    done = fresh_python(code)
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


def test_own_tensor_arrays_refuse_null_rows_as_one_ndarray() -> None:
    import ml_dtypes
    from onnx import numpy_helper

    values = np.array([1, 2], dtype=ml_dtypes.bfloat16)
    arr = onnx_arrow.to_arrow([numpy_helper.from_array(values)] * 2)
    assert isinstance(arr, tt.OnnxTensorArray)
    with_null = pa.ExtensionArray.from_storage(
        arr.type,
        pa.FixedSizeListArray.from_arrays(arr.storage.values, 2, mask=pa.array([False, True])),
    )
    with pytest.raises(NotRepresentableError, match=r"^row 1: the row is null"):
        with_null.to_numpy_ndarray()
    with pytest.raises(NotRepresentableError, match=r"^row 1: the row is null"):
        onnx_arrow.to_numpy(with_null)

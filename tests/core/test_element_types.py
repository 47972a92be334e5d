"""Tests of :mod:`onnx_arrow.core.element_types`: one element type per dtype, and their arrays."""

from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa
import pytest
from arrow_samples import (
    OWN_ROWS,
    _element,
    ids,
)

from onnx_arrow.core import element_types as el
from onnx_arrow.core.codec import codes_to_storage
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of
from onnx_arrow.core.tensor_codes import storage_array
from onnx_arrow.errors import ArrowLayoutError, NotRepresentableError, UnsupportedTypeError


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


def _element_array(row: DType) -> pa.ExtensionArray:
    codes = np.array([0, 1, 0, 1], dtype=np.int8).astype(row.numpy)
    return storage_array(codes_to_storage(codes, row), row)


@pytest.mark.parametrize("row", OWN_ROWS, ids=ids(OWN_ROWS))
def test_element_arrays_honour_writable(row: DType) -> None:
    array = _element_array(row)
    default = array.to_numpy()
    assert default.dtype == row.numpy
    writable = array.to_numpy(writable=True)
    assert writable.flags.writeable
    writable[0] = writable[1]  # a copy: the Arrow data stays as it was
    assert array_equal_bits(array.to_numpy(), default)


@pytest.mark.parametrize("row", OWN_ROWS, ids=ids(OWN_ROWS))
def test_element_arrays_honour_zero_copy_only(row: DType) -> None:
    array = _element_array(row)
    if row.arrow_kind is ArrowKind.COMPLEX:
        # (real, imaginary) float pairs are the complex numbers: a view of the Arrow buffer
        view = array.to_numpy(zero_copy_only=True)
        assert not view.flags.owndata
        assert array_equal_bits(view, array.to_numpy())
        return
    with pytest.raises(NotRepresentableError) as info:
        array.to_numpy(zero_copy_only=True)
    assert isinstance(info.value, ValueError)  # as pyarrow's ArrowInvalid is
    assert str(info.value).startswith(f"{row.extension_name}: zero_copy_only=True, but")
    assert "pass zero_copy_only=False" in str(info.value)


def test_element_arrays_refuse_zero_copy_and_writable_together() -> None:
    array = _element_array(dtype_of("BFLOAT16"))
    with pytest.raises(NotRepresentableError, match="cannot return a writable array"):
        array.to_numpy(zero_copy_only=True, writable=True)


def test_element_arrays_refuse_null_elements() -> None:
    row = dtype_of("INT4")
    array = pa.ExtensionArray.from_storage(el.element_type(row), pa.array([1, None], pa.int8()))
    with pytest.raises(ArrowLayoutError, match=r"^onnx.int4: INT4 element 1 is null"):
        array.to_numpy()


def array_equal_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.tobytes() == b.tobytes()


def test_only_dtypes_arrow_lacks_have_an_element_class() -> None:
    with pytest.raises(UnsupportedTypeError, match="FLOAT has an Arrow element type of its own"):
        el.OnnxElementType(dtype_of("FLOAT"))


def test_every_onnx_name_is_read_by_one_reader_into_the_one_class() -> None:
    readers = el.element_readers()
    assert sorted(r.extension_name for r in readers) == sorted(
        row.extension_name for row in OWN_ROWS if row.extension_name is not None
    )
    for reader in readers:
        read = type(reader).__arrow_ext_deserialize__(
            reader.storage_type, reader.__arrow_ext_serialize__()
        )
        assert type(read) is el.OnnxElementType
        assert read == el.element_type(reader.dtype)

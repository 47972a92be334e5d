"""Tests of :mod:`onnx_arrow.core.element_types`: one element type per dtype, and their arrays."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from arrow_samples import (
    OWN_ROWS,
    _element,
    ids,
)

from onnx_arrow.core import element_types as el
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of
from onnx_arrow.errors import UnsupportedTypeError


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

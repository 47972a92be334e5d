"""Tests of :mod:`onnx_arrow.core.nodes`: field names and the checks of a sparse node."""

from __future__ import annotations

import numpy as np
import pytest

from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.nodes import check_sparse, field_name
from onnx_arrow.core.tensors import Tensor
from onnx_arrow.errors import InvalidMessageError

FLOAT = dtype_of("FLOAT")
INT64 = dtype_of("INT64")


def ints(values: list[int], dims: tuple[int, ...]) -> Tensor:
    return Tensor(INT64, dims, np.array(values, np.int64))


VALUES = Tensor(FLOAT, (2,), np.array([1.0, 2.0], np.float32))


def test_field_names_are_the_messages_own() -> None:
    assert field_name("tensor", False) == "tensor_values"
    assert field_name("sparse_tensor", True) == "sparse_tensor_value"


def test_linear_and_coordinate_indices_inside_the_dims_are_accepted() -> None:
    check_sparse((2, 3), VALUES, ints([0, 5], (2,)), "row 0")
    check_sparse((2, 3), VALUES, ints([0, 0, 1, 2], (2, 2)), "row 0")
    check_sparse((0,), Tensor(FLOAT, (0,), np.empty(0, np.float32)), ints([], (0,)), "row 0")


@pytest.mark.parametrize(
    ("dims", "values", "indices", "text"),
    [
        ((-1,), VALUES, ints([0, 1], (2,)), "row 0: dims: dims [-1] has a negative size"),
        ((4,), Tensor(FLOAT, (1, 2), VALUES.codes), ints([0, 1], (2,)), "row 0: values: "),
        ((4,), VALUES, Tensor(dtype_of("INT32"), (2,), np.array([0, 1], np.int32)), "INT32"),
        ((4,), VALUES, ints([0, 1, 2], (3,)), "expected [2] (linear) or [2, 1] (coordinates)"),
        ((2, 3), VALUES, ints([0, 6], (2,)), "row 0: indices: indices[1] is 6, outside dims"),
        ((2, 3), VALUES, ints([0, 0, 2, 0], (2, 2)), "indices[1] is [2, 0], outside dims [2, 3]"),
        ((2, 3), VALUES, ints([-1, 0], (2,)), "indices[0] is -1, outside dims [2, 3]"),
    ],
)
def test_a_sparse_node_that_does_not_fit_is_refused_located(
    dims: tuple[int, ...], values: Tensor, indices: Tensor, text: str
) -> None:
    with pytest.raises(InvalidMessageError) as info:
        check_sparse(dims, values, indices, "row 0")
    assert str(info.value).startswith("row 0: ")
    assert text in str(info.value)

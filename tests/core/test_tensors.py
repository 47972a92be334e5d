"""Tests of :mod:`onnx_arrow.core.tensors`: the tensor value record."""

from __future__ import annotations

import numpy as np
import pytest

from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.tensors import MAX_ELEMENTS, Tensor


def test_to_numpy_shapes_the_codes_by_the_dims_without_a_copy() -> None:
    codes = np.arange(6, dtype=np.int32)
    t = Tensor(dtype_of("INT32"), (2, 3), codes)
    got = t.to_numpy()
    assert got.shape == (2, 3)
    assert np.shares_memory(got, codes)
    assert t.envelope is None  # a value with no message behind it


def test_string_elements_are_bytes_or_decoded_on_request() -> None:
    codes = np.empty(2, dtype=object)
    codes[:] = [b"caf\xc3\xa9", b"x"]
    t = Tensor(dtype_of("STRING"), (1, 2), codes)
    assert t.to_numpy().tolist() == [[b"caf\xc3\xa9", b"x"]]
    assert t.to_numpy("str").tolist() == [["caf\u00e9", "x"]]


def test_a_scalar_has_no_dims_and_one_element() -> None:
    t = Tensor(dtype_of("FLOAT"), (), np.array([1.5], np.float32))
    assert t.to_numpy().shape == ()
    assert float(t.to_numpy()) == 1.5


def test_the_element_limit_is_a_terabyte_of_bytes() -> None:
    assert MAX_ELEMENTS == 1 << 40


def test_a_rank_past_numpy_s_limit_is_a_located_error_not_numpy_s() -> None:
    from onnx_arrow.core.tensors import NUMPY_MAX_RANK, numpy_shape
    from onnx_arrow.errors import NotRepresentableError

    assert numpy_shape((1,) * NUMPY_MAX_RANK) == (1,) * NUMPY_MAX_RANK
    t = Tensor(dtype_of("FLOAT"), (1,) * 100, np.zeros(1, np.float32))
    with pytest.raises(NotRepresentableError, match=rf"rank 100, .* at most {NUMPY_MAX_RANK}"):
        t.to_numpy()

"""The column record in ``attrs``."""

from __future__ import annotations

import pickle
import re

import numpy as np
from onnx import numpy_helper

import onnx_arrow
import onnx_arrow.pandas as oap


def test_the_column_record_prints_short() -> None:
    big = numpy_helper.from_array(np.ones((100, 100), np.float32))
    s = oap.to_pandas(onnx_arrow.to_arrow([big] * 50, exact=True), cells="numpy")
    assert len(repr(s.attrs)) < 300


def test_a_record_pickled_by_the_single_module_adapter_still_loads() -> None:
    arr = onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(2, np.float32), "x")], exact=True)
    s = oap.to_pandas(arr, cells="numpy")
    now = pickle.dumps(s.attrs[oap.ATTRS_KEY][None], protocol=0)
    assert b"onnx_arrow.pandas.record\nrestore_info\n" in now
    # as onnx_arrow/pandas.py pickled it: its module's restore function, two arguments
    before = now.replace(
        b"onnx_arrow.pandas.record\nrestore_info\n", b"onnx_arrow.pandas\n_restore_info\n"
    )
    before = re.sub(rb"I01\ntp(\d+)\n", rb"tp\1\n", before)  # no third argument
    info = pickle.loads(before)
    assert info.kind == s.attrs[oap.ATTRS_KEY][None].kind
    assert info.arrow_type == arr.type
    assert not info.unpickled  # two arguments: the default

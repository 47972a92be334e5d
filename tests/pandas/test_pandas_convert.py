"""to_pandas and from_pandas: tables, PyCapsule objects, case tables, both ways."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from onnx import numpy_helper
from pandas_helpers import (
    _sequences,
    _serialized,
)

import onnx_arrow
import onnx_arrow.pandas as oap
from onnx_arrow.corpus import Store
from onnx_arrow.errors import UnsupportedTypeError


def test_tables_and_pycapsule_objects() -> None:
    x = onnx_arrow.to_arrow(
        [numpy_helper.from_array(np.eye(2, dtype=np.int64), "e")] * 2, exact=True
    )
    field = pa.field("e", x.type, metadata={"io": "input", "index": "0"})
    table = pa.Table.from_arrays(
        [x, onnx_arrow.to_arrow(_sequences(), exact=True)], names=["e", "s"]
    )
    table = table.cast(pa.schema([field, table.schema.field(1)]))

    class Stream:
        def __arrow_c_stream__(self, requested_schema: object = None) -> object:
            return table.__arrow_c_stream__(requested_schema)

    for data in (table, table.to_batches()[0], Stream()):
        for cells in ("numpy", "arrow"):
            frame = oap.to_pandas(data, cells=cells)
            assert list(frame.columns) == ["e", "s"]
            assert frame["e"].onnx.to_numpy().shape == (2, 2, 2)
            back = oap.from_pandas(frame)
            assert back.schema == table.schema
            assert back.schema.field("e").metadata == {b"io": b"input", b"index": b"0"}
            for name in ("e", "s"):
                assert _serialized(onnx_arrow.from_arrow(back.column(name))) == _serialized(
                    onnx_arrow.from_arrow(table.column(name))
                )
    with pytest.raises(UnsupportedTypeError, match="repeats column names"):
        oap.to_pandas(pa.Table.from_arrays([x, x], names=["a", "a"]), cells="numpy")
    with pytest.raises(UnsupportedTypeError, match="not the Arrow form"):
        oap.to_pandas(pa.table({"n": [1, 2]}), cells="numpy")
    with pytest.raises(ValueError, match="cells must be"):
        oap.to_pandas(x, cells="list")  # type: ignore[arg-type]


def test_case_tables_round_trip(node_store: Path) -> None:
    store = Store(node_store)
    for case in (
        "node/test_abs",
        "node/test_cast_FLOAT_to_FLOAT8E4M3FN",
        "node/test_sequence_insert_at_back",
        "node/test_optional_has_element_empty_optional_input",
    ):
        table = store.case_table(case)
        for cells in ("numpy", "arrow"):
            frame = oap.to_pandas(table, cells=cells)
            back = oap.from_pandas(frame)
            assert back.schema.equals(table.schema, check_metadata=True)
            for i in range(table.num_columns):
                assert _serialized(onnx_arrow.from_arrow(back.column(i))) == _serialized(
                    onnx_arrow.from_arrow(table.column(i))
                )
    frame = oap.to_pandas(store.case_table("node/test_cast_FLOAT_to_FLOAT8E4M3FN"), cells="numpy")
    assert frame["output"][0].dtype == ml_dtypes.float8_e4m3fn
    assert frame["output"].onnx.to_float32()[0].dtype == np.float32


@pytest.mark.parametrize("cells", ["numpy", "arrow"])
def test_polars_series_and_frames_are_read_as_from_arrow_reads_them(cells: oap.Cells) -> None:
    tensors = [numpy_helper.from_array(np.full((2, 2), i, np.float32), f"x{i}") for i in range(3)]
    arr = onnx_arrow.to_arrow(tensors, exact=True)
    series = pl.from_arrow(arr)
    assert isinstance(series, pl.Series)
    assert _serialized(onnx_arrow.from_arrow(series)) == _serialized(tensors)
    s = oap.to_pandas(series, cells=cells)
    assert isinstance(s, pd.Series)
    assert s.onnx.to_numpy().shape == (3, 2, 2)
    assert _serialized(onnx_arrow.from_arrow(oap.from_pandas(s))) == _serialized(tensors)
    frame = oap.to_pandas(pl.DataFrame({"x": series, "s": pl.from_arrow(arr)}), cells=cells)
    assert list(frame.columns) == ["x", "s"]
    back = oap.from_pandas(frame)
    assert _serialized(onnx_arrow.from_arrow(back.column("x"))) == _serialized(tensors)

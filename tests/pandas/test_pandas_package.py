"""The package: `import onnx_arrow` never imports pandas; every public function refuses junk."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from fresh_python import fresh_python
from onnx import TensorProto, helper, numpy_helper

import onnx_arrow
import onnx_arrow.pandas as oap
from onnx_arrow.errors import OnnxArrowError


def test_import_onnx_arrow_does_not_import_pandas() -> None:
    code = (
        "import sys, onnx_arrow, onnx_arrow.corpus; "
        "assert 'pandas' not in sys.modules, 'pandas imported'; "
        "import onnx_arrow.pandas, pandas; "
        "assert hasattr(pandas.Series([], dtype=object), 'onnx')"
    )
    fresh_python(code)


# --- every public function: junk in, a located project error out ------------------------------


def _junk() -> dict[str, Any]:
    return {
        "1": 1,
        "None": None,
        "[1]": [1],
        "a bare TensorProto": numpy_helper.from_array(np.zeros(2, np.float32), "t"),
        "a Polars Series of ints": pl.Series("a", [1, 2]),
        "a Polars DataFrame of ints": pl.DataFrame({"a": [1, 2]}),
        "an int64 pyarrow array": pa.array([1, 2], pa.int64()),
        "a TypeProto": helper.make_tensor_type_proto(TensorProto.FLOAT, [2]),
    }


def _calls() -> dict[str, Callable[[Any], object]]:
    """Each public callable of ``onnx_arrow.pandas``, every argument of it in turn."""
    column = onnx_arrow.to_arrow([numpy_helper.from_array(np.zeros(2, np.float32))])
    return {
        "to_pandas(data)": oap.to_pandas,
        "to_pandas(data, cells='numpy')": lambda x: oap.to_pandas(x, cells="numpy"),
        "to_pandas(cells)": lambda x: oap.to_pandas(column, cells=x),
        "from_pandas(data)": oap.from_pandas,
        "catalog(store)": oap.catalog,
        "OnnxSeriesAccessor(series)": oap.OnnxSeriesAccessor,
        "to_arrow(rebuild)": lambda x: oap.to_pandas(column).onnx.to_arrow(rebuild=x),
    }


def test_the_calls_cover_every_public_callable() -> None:
    public = {name for name in oap.__all__ if callable(getattr(oap, name))} - {"Cells"}
    assert public == {"to_pandas", "from_pandas", "catalog", "OnnxSeriesAccessor"}
    assert all(any(call.startswith(name) for call in _calls()) for name in public)


@pytest.mark.parametrize("junk", list(_junk()))
@pytest.mark.parametrize("call", list(_calls()))
def test_junk_is_refused_by_a_located_project_error(call: str, junk: str) -> None:
    with pytest.raises(OnnxArrowError) as caught:
        _calls()[call](_junk()[junk])
    assert caught.value.where, f"{call} of {junk}: {caught.value}"  # located
    assert str(caught.value).startswith(f"{caught.value.where}: ")

"""pandas adapter: onnx-arrow columns as pandas Series and DataFrames, shapes and dtypes kept.

pyarrow's own ``to_pandas()`` flattens every tensor into a flat list of numbers and
turns BOOL into int8.  This package keeps what a value is:

* :func:`to_pandas` keeps the Arrow array as it is behind a ``pd.ArrowDtype`` column
  (the default, ``cells="arrow"``: zero-copy, exact through ``pd.concat``, pickling,
  ``DataFrame({...})`` and renames), or gives a column whose cells are ndarrays of the
  right shape and ONNX numpy dtype (``cells="numpy"``, ml_dtypes for bfloat16, float8,
  int4 ...; lossy, and loud about it); :func:`from_pandas` goes back, and says so when
  numpy cells have lost what only the Arrow column held.
* The ``onnx`` Series accessor, registered when this package is imported, works on
  both kinds of columns: ``.onnx.to_numpy()`` (one stacked array, zero-copy where the
  Arrow buffer allows), ``.onnx.shape``, ``.onnx.dtype``, ``.onnx.stats()``,
  ``.onnx.to_float32()`` and ``.onnx.to_arrow()``.
* :func:`catalog` gives one row per value of a corpus store, ready for one-line
  questions.

Absent values are ``None`` in numpy cells and null in Arrow cells, never NaN; the
catalog's numbers are nullable (``Int64``, ``Float64``).  ``import onnx_arrow`` does
not import pandas: this package is imported on its own, ``import onnx_arrow.pandas``.

The package, one concern a module: ``columns`` (Arrow data in, through the core's
gate), ``cells`` (numpy cells out), ``values`` (numpy cells to ONNX values), ``record``
(the column record in ``attrs``), ``rebuild`` (numpy cells back to Arrow),
``statistics``, ``accessor`` (the ``onnx`` accessor), ``convert`` (:func:`to_pandas`,
:func:`from_pandas`) and ``store_catalog`` (:func:`catalog`).

Examples
--------
>>> import numpy as np
>>> import onnx_arrow
>>> import onnx_arrow.pandas as oap
>>> from onnx import numpy_helper
>>> x = [numpy_helper.from_array(np.full((2, 3), i, np.float32), f"x{i}") for i in range(4)]
>>> s = oap.to_pandas(onnx_arrow.to_arrow(x, exact=True), cells="numpy")
>>> s[1]
array([[1., 1., 1.],
       [1., 1., 1.]], dtype=float32)
>>> s.onnx.to_numpy().shape, s.onnx.dtype
((4, 2, 3), 'FLOAT')
>>> s.onnx.stats()["mean"].tolist()
[0.0, 1.0, 2.0, 3.0]
>>> onnx_arrow.from_arrow(s.onnx.to_arrow()) == x
True
"""

from __future__ import annotations

from onnx_arrow.pandas.accessor import OnnxSeriesAccessor
from onnx_arrow.pandas.convert import Cells, from_pandas, to_pandas
from onnx_arrow.pandas.record import ATTRS_KEY
from onnx_arrow.pandas.record import restore_info as _restore_info  # noqa: F401  (old pickles)
from onnx_arrow.pandas.store_catalog import CATALOG_COLUMNS, catalog

__all__ = [
    "ATTRS_KEY",
    "CATALOG_COLUMNS",
    "Cells",
    "OnnxSeriesAccessor",
    "catalog",
    "from_pandas",
    "to_pandas",
]

"""The ``onnx`` Series accessor, registered when this module is imported.

It reads both kinds of columns :func:`to_pandas` makes (``pd.ArrowDtype`` columns of
onnx-arrow types, and numpy cells with their record) and a Series of ndarrays built
by hand: the values stacked, shapes, dtype, statistics, float32, and the column back
as Arrow.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa
from pandas.arrays import FloatingArray

from onnx_arrow.core.model import (
    NUMPY_MAX_RANK,
    OPTIONAL,
    SPARSE_TENSOR,
    TENSOR,
    Kind,
    dtype_of_numpy,
    tensor_layout,
)
from onnx_arrow.errors import OnnxArrowError, OnnxArrowWarning, UnsupportedTypeError
from onnx_arrow.pandas.cells import is_missing, numpy_cells, object_series
from onnx_arrow.pandas.columns import (
    TENSOR_KIND,
    Column,
    is_tensor_kind,
    leaf_dtype,
    read_column,
    stacked,
)
from onnx_arrow.pandas.rebuild import rebuild_column
from onnx_arrow.pandas.record import ColumnInfo, info_of, record
from onnx_arrow.pandas.statistics import INT_STATS, cell_statistics, float32_cell, leaf_arrays
from onnx_arrow.pandas.values import kind_of_cells

__all__ = ["OnnxSeriesAccessor"]


@pd.api.extensions.register_series_accessor("onnx")
class OnnxSeriesAccessor:
    """``series.onnx``: ONNX values in a pandas column, as :func:`to_pandas` makes them.

    Works on both kinds of columns: numpy cells (object dtype) and ``pd.ArrowDtype``
    columns of onnx-arrow Arrow types.  A Series of ndarrays built by hand works too
    (a tensor column; None cells make it optional).

    Examples
    --------
    >>> import numpy as np, onnx_arrow
    >>> from onnx import numpy_helper
    >>> from onnx_arrow.pandas import to_pandas
    >>> ts = [numpy_helper.from_array(np.array([[1, np.nan, np.inf]], np.float32)),
    ...       numpy_helper.from_array(np.array([[1, 2, 3]], np.float32))]
    >>> s = to_pandas(onnx_arrow.to_arrow(ts), cells="arrow")
    >>> s.onnx.shape.tolist(), s.onnx.dtype
    ([(1, 3), (1, 3)], 'FLOAT')
    >>> s.onnx.stats()
       count  min  max  mean  nan_count  inf_count
    0      3  1.0  inf   inf          1          1
    1      3  1.0  3.0   2.0          0          0
    >>> s.onnx.to_numpy().shape
    (2, 1, 3)
    """

    def __init__(self, series: pd.Series) -> None:
        if not isinstance(series, pd.Series):
            raise UnsupportedTypeError(
                f"expected a pandas Series, got {type(series).__module__}."
                f"{type(series).__qualname__}; use series.onnx",
                where="OnnxSeriesAccessor(series)",
            )
        self._obj = series

    # the column, in one of its forms

    def _arrow(self) -> Column | None:
        """The Arrow column behind a ``pd.ArrowDtype`` Series, else None.

        Built anew on each call (the Series may have changed since the last): each public
        method calls it once and hands it down.
        """
        if not isinstance(self._obj.dtype, pd.ArrowDtype):
            return None
        chunked = self._obj.array.__arrow_array__()
        return read_column(chunked, self._where)

    @property
    def _where(self) -> str:
        return f"column {self._obj.name!r}" if self._obj.name is not None else ""

    def _info(self) -> ColumnInfo | None:
        return info_of(self._obj)

    def _kind_and_cells(self, col: Column | None, *, warn: bool = False) -> tuple[Kind, list[Any]]:
        """The kind and cells of the column; ``col`` is :meth:`_arrow`'s column."""
        if col is not None:
            return col.kind, numpy_cells(col, warn=warn, labels=self._obj.index)
        if self._obj.dtype != object:
            raise UnsupportedTypeError(
                f"a {self._obj.dtype} Series holds no ONNX values; build the column with "
                "onnx_arrow.pandas.to_pandas",
                where=self._where or None,
            )
        cells = list(self._obj.to_numpy(dtype=object))
        info = self._info()
        if info is not None:
            return info.kind, cells
        return kind_of_cells(cells, self._obj.index, self._where), cells

    # public API

    def to_arrow(self, *, rebuild: bool = False) -> pa.Array:
        """The column as an Arrow array, of the type it came from.

        For a ``pd.ArrowDtype`` column, its Arrow array as it is (chunks combined).  For
        numpy cells, rows that :func:`to_pandas` gave and that are unchanged (same label,
        same cell object) come back exactly, ``onnx.message`` envelopes and all; changed
        or new rows are built from their cells, as ``onnx.numpy_helper`` stores data (a
        changed row keeps its name when its old envelope still fits).

        Numpy cells are lossy, and say so (:class:`~onnx_arrow.OnnxArrowWarning`, once
        per column) unless ``rebuild=True`` says building from cells is meant:

        * a numpy column with no record from :func:`to_pandas` (built by hand, or one
          whose ``attrs`` pandas dropped: ``pd.concat`` of differing records,
          ``DataFrame({...})``) is built from its cells alone, without names or doc
          strings;
        * so are the rows of an ``onnx.message`` column whose record is missing: cells
          under labels that no longer find their rows (``pd.concat([s, s],
          ignore_index=True)``, a new index) and every row of a pickled column.

        A column whose changed cells no longer fit its Arrow type gets a type chosen
        from the cells, and that warns whatever ``rebuild`` says.
        """
        if not isinstance(rebuild, bool):
            raise UnsupportedTypeError(
                f"rebuild must be True or False, got a {type(rebuild).__qualname__} object",
                where="to_arrow(rebuild)",
            )
        col = self._arrow()
        if col is not None:
            return col.array
        kind, cells = self._kind_and_cells(None)
        info = self._info()
        if info is None and not rebuild:
            warnings.warn(
                f"{self._where or 'the Series'} has no onnx-arrow record (pandas drops attrs "
                "in pd.concat, pickling and DataFrame({...})): it is built from its cells "
                "alone, without the names and doc strings of its messages; use "
                "to_pandas(cells='arrow') to keep them, or .onnx.to_arrow(rebuild=True) "
                "to build from cells on purpose",
                OnnxArrowWarning,
                stacklevel=2,
            )
        try:
            return rebuild_column(
                cells, self._obj.index, info, kind, where=self._where, rebuild=rebuild
            )
        except OnnxArrowError as exc:
            raise exc.at(self._where) if self._where else exc from None

    def to_numpy(self) -> Any:
        """The values: one stacked array ``(rows, *shape)`` when they can be, else a list.

        Stacked when every row is a tensor (none absent), all share shape and dtype and
        the stack has no more dimensions than numpy holds: zero-copy for a fixed-shape
        column of a dtype Arrow holds natively (a view of the Arrow buffer), for numpy
        cells as well as long as their rows are the :func:`to_pandas` rows in order.
        Otherwise a list of the cells (see :func:`to_pandas`).
        """
        col = self._arrow()
        if col is not None:
            rows = stacked(col.values, col.kind)
            if rows is not None:
                return rows
            cells = numpy_cells(col, stacklevel=3, labels=self._obj.index)
        else:
            fast = self._stacked_source()
            if fast is not None:
                return fast
            _, cells = self._kind_and_cells(None)
        return _stack(cells)

    def _stacked_source(self) -> np.ndarray[Any, Any] | None:
        """Numpy cells that are a run of their source rows: the source's stacked buffer."""
        info = self._info()
        if self._obj.dtype != object or info is None or info.source is None:
            return None
        if not is_tensor_kind(info.kind):
            return None
        positions = info.positions(self._obj.index)
        n = len(positions)
        start = int(positions[0]) if n else 0
        if start < 0 or np.any(np.diff(positions) != 1):
            return None
        cells = self._obj.to_numpy(dtype=object)
        if not all(info.unchanged(int(p), c) for p, c in zip(positions, cells, strict=True)):
            return None
        return stacked(info.source.values.slice(start, n), info.kind)

    @property
    def shape(self) -> pd.Series:
        """The shape of each row as a tuple (None where absent), as an object Series.

        Tensor and sparse tensor columns (the dense shape), optional ones included; a
        column of sequences or maps has no shape per row and raises.
        """
        col = self._arrow()
        info = self._info()
        cells: list[Any] | None = None
        if col is not None:
            kind = col.kind
        elif info is not None:
            kind = info.kind
        else:
            kind, cells = self._kind_and_cells(None)
        base = _shape_base(kind, self._where)
        shapes: list[tuple[int, ...] | None]
        if col is not None and base == TENSOR_KIND and tensor_layout(col.values.type):
            shapes = _arrow_shapes(col.values)
        else:
            if cells is None:
                _, cells = self._kind_and_cells(col)
            shapes = [
                None
                if is_missing(c)
                else tuple(int(d) for d in (c["dims"] if isinstance(c, dict) else c.shape))
                for c in cells
            ]
        return object_series(shapes, self._obj.index, self._obj.name)

    @property
    def dtype(self) -> str | None:
        """The ONNX data type name of the column's tensors (``"FLOAT"``, ``"BFLOAT16"``...).

        For sequences, maps and optionals, the dtype of the tensors inside (a map's
        values, not its keys); None for a column with no tensor anywhere.
        """
        col = self._arrow()
        if col is not None:
            row = leaf_dtype(col.values.type)
            return None if row is None else row.name
        kind, cells = self._kind_and_cells(None)
        for cell in cells:
            arrays = leaf_arrays(cell, kind)
            if arrays:
                return dtype_of_numpy(arrays[0].dtype).name
        info = self._info()
        row = leaf_dtype(info.arrow_type) if info is not None and info.arrow_type else None
        return None if row is None else row.name

    def stats(self) -> pd.DataFrame:
        """Per-row statistics: ``count``, ``min``, ``max``, ``mean``, ``nan_count``, ``inf_count``.

        As the corpus store computes them: min, max and mean ignore NaN (and are NaN
        when every element is NaN, as the HTML view shows them); NaN and Inf counts for
        float dtypes only; STRING and complex rows have a count only.  A sequence or map
        row counts all the tensors in it (map values only).  Absent rows and empty
        tensors have no statistics (null, ``<NA>``); the columns are nullable (``Int64``,
        ``Float64``), so a NaN there is an element's, never a missing number.
        """
        kind, cells = self._kind_and_cells(self._arrow())
        columns = cell_statistics(
            [leaf_arrays(c, kind) for c in cells], self._obj.index, self._where
        )
        data = {
            name: (
                pd.array(values, dtype="Int64")
                if name in INT_STATS
                else FloatingArray(
                    np.array([np.nan if v is None else v for v in values], dtype=np.float64),
                    np.array([v is None for v in values], dtype=bool),
                )
            )
            for name, values in columns.items()
        }
        return pd.DataFrame(data, index=self._obj.index)

    def to_float32(self) -> pd.Series:
        """The column with FLOAT16, BFLOAT16, float8, float6 and float4 tensors as float32.

        Exact: float32 holds every value of those dtypes.  Other dtypes are left as they
        are.  Gives a Series of numpy cells (same index and name); its ``.onnx.to_arrow()``
        is a FLOAT column.
        """
        kind, cells = self._kind_and_cells(self._arrow(), warn=True)
        out = [float32_cell(c) for c in cells]
        series = object_series(out, self._obj.index, self._obj.name)
        info = self._info()
        field = info.field if info is not None else None
        record(series, {self._obj.name: ColumnInfo(kind, None, field)})
        return series


def _shape_base(kind: Kind, where: str) -> Kind | None:
    """The kind whose rows have a shape (an optional's element); an error for others."""
    base = kind.elem if kind.name == OPTIONAL else kind
    if base is not None and base.name not in (TENSOR, SPARSE_TENSOR):
        raise UnsupportedTypeError(
            f"a {kind} column has no shape per row; use .onnx.to_numpy() and the shapes "
            "of its elements",
            where=where or None,
        )
    return base


def _arrow_shapes(values: pa.Array) -> list[tuple[int, ...] | None]:
    """Row shapes of a tensor array, read from its layout without touching the data."""
    valid = (
        [True] * len(values)
        if values.null_count == 0
        else np.asarray(values.is_valid(), dtype=bool).tolist()
    )
    layout = tensor_layout(values.type)
    if layout is not None and layout.layout == "fixed":
        shape = tuple(int(d) for d in values.type.shape)
        return [shape if v else None for v in valid]
    dims = values.storage.field("shape").to_pylist()
    return [
        tuple(int(d) for d in s) if v and s is not None else None
        for v, s in zip(valid, dims, strict=True)
    ]


def _stack(cells: list[Any]) -> Any:
    """The cells as one array when they are ndarrays of one shape and dtype that numpy can
    stack (one dimension more than each), else the list of them."""
    if cells and all(isinstance(c, np.ndarray) for c in cells):
        first = cells[0]
        if first.ndim >= NUMPY_MAX_RANK:
            return cells
        if all(c.shape == first.shape and c.dtype == first.dtype for c in cells):
            return np.stack(cells)
    return cells

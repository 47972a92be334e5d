"""Arrow columns and tables to pandas Series and DataFrames, and back.

:func:`to_pandas` reads any Arrow data through the core's gate and gives Arrow cells
(``pd.ArrowDtype``, exact) or numpy cells (lossy, with a record in ``attrs``);
:func:`from_pandas` gives each column back through ``.onnx.to_arrow()``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Literal

import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa

from onnx_arrow.errors import NotRepresentableError, OnnxArrowError, UnsupportedTypeError
from onnx_arrow.pandas.accessor import OnnxSeriesAccessor
from onnx_arrow.pandas.cells import numpy_cells, object_series
from onnx_arrow.pandas.columns import is_tensor_kind, read_column, read_input
from onnx_arrow.pandas.record import ColumnInfo, info_of, record

__all__ = ["Cells", "from_pandas", "to_pandas"]

#: What the cells of a column from :func:`to_pandas` are.
Cells = Literal["numpy", "arrow"]


def _series(
    data: Any, cells: Cells, name: Hashable, field: pa.Field | None, where: str
) -> tuple[pd.Series, ColumnInfo]:
    col = read_column(data, where)  # checked before pandas holds it
    if cells == "arrow":
        # pandas holds pyarrow data as given (zero-copy), other data as the gate read it
        given = data if isinstance(data, pa.Array | pa.ChunkedArray) else col.array
        chunked = given if isinstance(given, pa.ChunkedArray) else pa.chunked_array([given])
        series = pd.Series(pd.arrays.ArrowExtensionArray(chunked), name=name, copy=False)
        return series, ColumnInfo(col.kind, chunked.type, field)
    values = numpy_cells(col)
    series = object_series(values, None, name)
    info = ColumnInfo.of_cells(col, field, series.index, values, is_tensor_kind(col.kind))
    return series, info


def to_pandas(data: Any, *, cells: Cells = "arrow") -> pd.Series | pd.DataFrame:
    """An onnx-arrow Arrow column as a pandas Series, a table as a DataFrame.

    Parameters
    ----------
    data
        An ``onnx.message`` array (from :func:`onnx_arrow.to_arrow`), a value column
        (a tensor array, a list of tensors ...) or a chunked array of one: a Series.
        A ``pa.Table`` or ``pa.RecordBatch`` of such columns (for example
        :meth:`onnx_arrow.corpus.Store.case_table`): a DataFrame.  Other objects are
        read through the Arrow PyCapsule interface, as :func:`onnx_arrow.from_arrow`
        reads them: ``__arrow_c_array__`` is a column, ``__arrow_c_stream__`` a table
        when its rows are structs (a Polars DataFrame), else a column (a Polars Series).
        Every column is checked in full before pandas holds it.
    cells
        ``"arrow"`` (the default): a ``pd.ArrowDtype`` column over the Arrow array as it
        is (zero-copy, exact): it carries every message through ``pd.concat``, pickling,
        ``DataFrame({...})`` and renames, and the ``onnx`` accessor reads it.
        ``"numpy"``: an object column whose cells are ndarrays of the value's shape and
        ONNX numpy dtype (``bool`` for BOOL, ``bytes`` objects for STRING, invalid UTF-8
        kept, ml_dtypes for bfloat16, float8, int4 ...), lists for sequences, dicts for
        maps, ``{"dims", "values", "indices"}`` for sparse tensors and None where an
        optional is absent.  Fixed-shape tensors are views of one stacked array, itself
        a view of the Arrow buffer where the dtype allows.  Cells are read-only: put a
        new array in a cell to change it.  Numpy cells are lossy: what only the Arrow
        column holds (names, doc strings, how each message stored its data) is kept in
        a record in ``attrs``, which finds each row by its label and cell.  pandas drops
        ``attrs`` in ``pd.concat`` of differing columns and ``DataFrame({...})``,
        pickling keeps the record without its rows, and ``pd.concat([s, s],
        ignore_index=True)`` moves rows away from their labels: going back then warns,
        once per column (see ``.onnx.to_arrow``).

    Returns
    -------
    pandas.Series or pandas.DataFrame
        Columns named as the table's fields, a ``RangeIndex``.  ``attrs`` (under
        :data:`ATTRS_KEY`) records each column's kind and Arrow type, so that
        ``.onnx.to_arrow()`` and :func:`from_pandas` give the same Arrow type back.

    Raises
    ------
    UnsupportedTypeError
        If ``data`` is no Arrow data, or a column is not the Arrow form of ONNX values.
    ArrowLayoutError
        If a column's buffers or extension types are malformed.
    NotRepresentableError
        If ``cells`` is neither ``"arrow"`` nor ``"numpy"``.

    Notes
    -----
    A map is a dict ``{key: value}`` (int keys, ``bytes`` keys for STRING) when every
    map of the column has distinct keys; if any map repeats a key, every map of the
    column is a list of ``(key, value)`` pairs instead, in order, so nothing is dropped
    and a column keeps one form.  A present optional holding an absent optional is None,
    like an absent value (a warning says so; ``cells="arrow"`` keeps them apart).

    Examples
    --------
    >>> import numpy as np, ml_dtypes, onnx_arrow
    >>> from onnx import numpy_helper
    >>> t = numpy_helper.from_array(np.arange(4, dtype=ml_dtypes.bfloat16).reshape(2, 2))
    >>> cell = to_pandas(onnx_arrow.to_arrow([t]), cells="numpy")[0]
    >>> cell.shape, cell.dtype
    ((2, 2), dtype(bfloat16))
    >>> opt = [numpy_helper.from_optional(None, "o", dtype=1),
    ...        numpy_helper.from_optional(np.ones(2, np.float32), "o")]
    >>> to_pandas(onnx_arrow.to_arrow(opt), cells="numpy").tolist()
    [None, array([1., 1.], dtype=float32)]
    >>> to_pandas(onnx_arrow.to_arrow([t])).dtype.pyarrow_dtype.extension_name
    'onnx.fixed_shape_tensor'
    """
    if not isinstance(cells, str) or cells not in ("numpy", "arrow"):
        got = repr(cells) if isinstance(cells, str) else f"a {type(cells).__qualname__} object"
        raise NotRepresentableError(
            f"cells must be 'numpy' or 'arrow', got {got}", where="to_pandas(cells)"
        )
    where = "to_pandas(data)"
    arrow = read_input(data, where)
    if isinstance(arrow, pa.Table):
        names = arrow.column_names
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise UnsupportedTypeError(
                f"the table repeats column names {repeated}; rename them so that each "
                "column keeps its own record",
                where=where,
            )
        columns = [
            _series(arrow.column(i), cells, name, arrow.schema.field(i), f"column {name!r}")
            for i, name in enumerate(names)
        ]
        frame = pd.concat([s for s, _ in columns], axis=1) if columns else pd.DataFrame()
        frame.columns = pd.Index(names, dtype=object)
        frame.attrs = {}
        record(frame, {name: info for name, (_, info) in zip(names, columns, strict=True)})
        return frame
    series, info = _series(arrow, cells, None, None, where)
    record(series, {None: info})
    return series


def from_pandas(data: pd.Series | pd.DataFrame) -> pa.Array | pa.Table:
    """The Arrow array of a Series, the Arrow table of a DataFrame: :func:`to_pandas` undone.

    Each column goes through ``.onnx.to_arrow()``: rows that are as :func:`to_pandas`
    gave them come back exactly (their ``onnx.message`` envelopes, names included);
    changed and new rows are rebuilt from their cells, and numpy cells that lost their
    record warn, once per column.  Field names are the column names; field metadata
    (``io`` and ``index`` of a case table) is kept.

    Raises
    ------
    UnsupportedTypeError
        If ``data`` is neither a pandas Series nor a DataFrame, or a column holds no
        ONNX values.

    Examples
    --------
    >>> import numpy as np, onnx_arrow
    >>> from onnx import numpy_helper
    >>> arr = onnx_arrow.to_arrow([numpy_helper.from_array(np.eye(2, dtype=np.int64), "e")])
    >>> frame = to_pandas(pa.table({"e": arr}))
    >>> from_pandas(frame).column("e").chunk(0).equals(arr)
    True
    """
    if isinstance(data, pd.Series):
        return OnnxSeriesAccessor(data).to_arrow()
    if not isinstance(data, pd.DataFrame):
        raise UnsupportedTypeError(
            f"expected a pandas Series or DataFrame, got "
            f"{type(data).__module__}.{type(data).__qualname__}",
            where="from_pandas(data)",
        )
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    for i, name in enumerate(data.columns):
        series = data.iloc[:, i]
        try:
            array = OnnxSeriesAccessor(series).to_arrow()
        except OnnxArrowError as exc:
            raise exc.at(f"column {name!r}") from None
        info = info_of(series)
        field = (
            info.field if info is not None and info.field is not None else pa.field("", pa.null())
        )
        arrays.append(array)
        fields.append(field.with_name(str(name)).with_type(array.type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))

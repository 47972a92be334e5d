"""The catalog of a corpus store: one row per value, ready for one-line questions.

Reads only the store's descriptive columns (never the data columns) and each case's
model once; container values sum their tensors from the store's element rows.
"""

from __future__ import annotations

import os
from typing import Final

import numpy as np
import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa
import pyarrow.compute as pc
from onnx import ModelProto

from onnx_arrow.core.model import graph_values, op_types
from onnx_arrow.corpus.rows import parse_kind
from onnx_arrow.corpus.sources import CorpusError
from onnx_arrow.corpus.store import Store
from onnx_arrow.errors import UnsupportedTypeError

__all__ = ["CATALOG_COLUMNS", "catalog"]

#: Element rows of the store that are not values of their container: map keys, sparse
#: dims and indices.
_NOT_VALUE_ELEMENT: Final = r"(^|\.)(keys|dims|indices)$"

#: The store columns the catalog reads: never the data columns, envelopes or contents.
_CATALOG_READ: Final = (
    "test_case", "path", "kind", "role", "data_set", "io", "index", "element", "name",
    "onnx_type", "value_kind", "dtype", "shape", "count", "nbytes", "min", "max", "mean",
    "nan_count", "inf_count", "declared",
)  # fmt: skip

#: The catalog's columns, in order.
CATALOG_COLUMNS: Final = (
    "case", "path", "kind", "data_set", "io", "index", "name", "declared_name", "onnx_type",
    "value_kind",
    "dtype", "shape", "tensors", "count", "nbytes", "min", "max", "mean", "nan_count",
    "inf_count", "op_types", "opset", "declared",
)  # fmt: skip

_PANDAS_TYPES: Final = {
    pa.string(): pd.StringDtype("pyarrow"),
    pa.int32(): pd.Int32Dtype(),
    pa.int64(): pd.Int64Dtype(),
    pa.float64(): pd.Float64Dtype(),
}


def _frame(table: pa.Table) -> pd.DataFrame:
    """Store rows as a DataFrame: nullable columns, shapes as tuples."""
    shapes = [None if s is None else tuple(s) for s in table.column("shape").to_pylist()]
    frame = table.drop_columns(["shape"]).to_pandas(types_mapper=_PANDAS_TYPES.get)
    frame["shape"] = pd.Series(shapes, index=frame.index, dtype=object)
    return frame


def _kind_names(values: pd.DataFrame, store: Store) -> pd.Series:
    """Each value row's kind by name (``tensor``, ``sequence`` ...), missing where the
    store has none.

    Each distinct ``value_kind`` is parsed once; one that is not a value kind is an
    error naming the store and the first file that has it, never a row quietly taken
    for something else.
    """
    firsts = values.dropna(subset=["value_kind"]).drop_duplicates("value_kind")
    names = {
        text: parse_kind(text, f"{store.path}: {path}").name
        for text, path in zip(firsts["value_kind"], firsts["path"], strict=True)
    }
    return values["value_kind"].map(names).astype(pd.StringDtype("pyarrow"))


def _container_totals(elements: pd.DataFrame) -> pd.DataFrame:
    """Per value path: the first tensor's dtype and shape, tensors, count, combined stats."""
    has_mean = elements["mean"].notna()
    weight = (elements["count"] - elements["nan_count"].fillna(0)).where(has_mean, 0)
    parts = pd.DataFrame(
        {
            "path": elements["path"],
            "dtype": elements["dtype"],
            "shape": elements["shape"],
            "count": elements["count"],
            "min": elements["min"],
            "max": elements["max"],
            "weight": weight,
            "weighted": (elements["mean"] * weight).where(has_mean, 0.0),
            "nan_count": elements["nan_count"],
            "inf_count": elements["inf_count"],
        }
    )
    groups = parts.groupby("path", sort=False)
    weights = groups["weight"].sum()
    return pd.DataFrame(
        {
            "dtype": groups["dtype"].first(),
            "shape": groups["shape"].first(),
            "tensors": groups.size().astype("Int64"),
            "count": groups["count"].sum(),
            "min": groups["min"].min(),
            "max": groups["max"].max(),
            "mean": (groups["weighted"].sum() / weights.astype("Float64")).where(weights > 0),
            "nan_count": groups["nan_count"].sum(min_count=1),
            "inf_count": groups["inf_count"].sum(min_count=1),
        }
    )


_ModelFacts = tuple[tuple[str, ...], int | None, dict[tuple[str, int], str]]


def _models(store: Store) -> dict[str, _ModelFacts]:
    """Per case, the sorted distinct op types of its graph, its default-domain opset and
    the graph names of the values its data sets feed and expect, by ``(io, index)``."""
    out: dict[str, _ModelFacts] = {}
    for path, rows in store.model_batches():
        cases = rows.column("test_case").to_pylist()
        paths = rows.column("path").to_pylist()
        contents = rows.column("content")
        for i, case in enumerate(cases):
            if case in out:
                continue
            try:
                model = ModelProto.FromString(contents[i].as_py() or b"")
            except Exception as exc:  # protobuf's DecodeError
                raise CorpusError(
                    f"the model does not parse ({exc})", where=f"{path}: {paths[i]}"
                ) from None
            ops = op_types(model)
            opset = next(
                (int(o.version) for o in model.opset_import if o.domain in ("", "ai.onnx")), None
            )
            names = {
                (io, k): info.name
                for io in ("input", "output")
                for k, info in enumerate(graph_values(model, io))
            }
            out[case] = (ops, opset, names)
    return out


def catalog(store: Store | str | os.PathLike[str]) -> pd.DataFrame:
    """One row per value of a corpus store: where it is, what it is, how big, what is in it.

    Reads only the store's descriptive columns (never the data columns) and each case's
    model once.

    Parameters
    ----------
    store
        A :class:`onnx_arrow.corpus.Store` or the path of one.

    Returns
    -------
    pandas.DataFrame
        A row per value, in the store's order (a data set's outputs before its inputs).
        Columns (see :data:`CATALOG_COLUMNS`): ``case``, ``path``, ``kind`` (the kind
        folder), ``data_set``, ``io`` (input or output), ``index``, ``name`` (the name
        in the ``.pb`` message, often missing), ``declared_name`` (the graph input's or
        output's name in the model, as :meth:`Store.case_arrays` keys values),
        ``onnx_type`` (``tensor(float)``, ``seq(tensor(int64))`` ...), ``value_kind``
        (``tensor``, ``sequence``, ``map``, ``optional``, ``sparse_tensor``), ``dtype``,
        ``shape`` (a tuple), ``tensors`` (how many tensors the value holds), ``count``
        (elements), ``nbytes`` (of the file), ``min``, ``max``, ``mean`` (NaN ignored),
        ``nan_count``, ``inf_count``, ``op_types`` (the sorted distinct ``op_type`` of the
        nodes of the model's main graph, a tuple), ``opset`` (of the default domain) and
        ``declared`` (where the value contradicts what its model declares, the declared
        type; ``onnx_type``, ``dtype`` and ``shape`` say what it holds).
        Text columns are ``string`` and numbers nullable (``Int32``, ``Int64``,
        ``Float64``): missing is ``<NA>``, never NaN.

    Notes
    -----
    A container value (sequence, map, optional, sparse tensor) has its tensors on the
    store's element rows.  Its ``dtype`` and ``shape`` are its first tensor's (depth
    first: a sequence's first element, an optional's value, a map's first value, a
    sparse tensor's values; map keys and sparse dims and indices are not counted);
    ``tensors``, ``count``, ``nan_count`` and ``inf_count`` add up over its tensors;
    ``min`` and ``max`` are over all of them and ``mean`` is their element-weighted mean.
    An absent optional or an empty sequence holds no tensor: ``tensors`` and ``count``
    are 0, ``dtype``, ``shape`` and the statistics missing.

    The columns ``index``, ``count``, ``shape``, ``min``, ``max`` and ``mean`` share
    names with DataFrame attributes: write ``cat["count"]``, not ``cat.count``.

    Examples
    --------
    A one-case store: a Cast from float to float8.

    >>> import tempfile, ml_dtypes, numpy as np
    >>> from pathlib import Path
    >>> from onnx import TensorProto, helper, numpy_helper
    >>> from onnx_arrow.corpus import Case, CorpusFile, write_store
    >>> F8 = TensorProto.FLOAT8E4M3FN
    >>> graph = helper.make_graph(
    ...     [helper.make_node("Cast", ["x"], ["y"], to=F8)], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
    ...     [helper.make_tensor_value_info("y", F8, [3])])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    >>> x = np.array([1.0, np.nan, 448.0], np.float32)
    >>> files = [
    ...     CorpusFile("node/test_cast/model.onnx", model.SerializeToString()),
    ...     CorpusFile("node/test_cast/test_data_set_0/input_0.pb",
    ...                numpy_helper.from_array(x, "x").SerializeToString()),
    ...     CorpusFile("node/test_cast/test_data_set_0/output_0.pb",
    ...                numpy_helper.from_array(x.astype(ml_dtypes.float8_e4m3fn), "y")
    ...                .SerializeToString())]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "store.parquet"
    >>> _ = write_store([Case("node/test_cast", "node", files, files[0].path)], path)
    >>> cat = catalog(path)
    >>> cat[["io", "name", "dtype", "shape", "count", "nan_count", "op_types", "opset"]]
           io name         dtype shape  count  nan_count op_types  opset
    0  output    y  FLOAT8E4M3FN  (3,)      3          1  (Cast,)     21
    1   input    x         FLOAT  (3,)      3          1  (Cast,)     21

    Which tests use float8, which expected outputs contain NaN, the largest tensors
    per operator:

    >>> cat[cat.dtype.str.startswith("FLOAT8")].case.unique().tolist()
    ['node/test_cast']
    >>> cat[(cat.io == "output") & (cat.nan_count > 0)].path.tolist()
    ['node/test_cast/test_data_set_0/output_0.pb']
    >>> largest = (cat.explode("op_types").sort_values("count", ascending=False)
    ...            .drop_duplicates("op_types"))
    >>> largest[["op_types", "case", "name", "count"]].to_numpy().tolist()
    [['Cast', 'node/test_cast', 'y', 3]]
    >>> tmp.cleanup()
    """
    store = _store(store)
    rows = store.read_columns(_CATALOG_READ, roles=["value", "element"])
    role = rows.column("role")
    values = _frame(rows.filter(pc.equal(role, "value")))
    value_elements = pc.and_(
        pc.equal(role, "element"),
        pc.invert(pc.match_substring_regex(rows.column("element"), _NOT_VALUE_ELEMENT)),
    )
    totals = _container_totals(_frame(rows.filter(value_elements)))
    totals = totals.reindex(pd.Index(values["path"].to_numpy(dtype=object)))
    totals.index = values.index
    kind_names = _kind_names(values, store)
    tensor = (kind_names == "tensor").fillna(False).to_numpy(dtype=bool)
    container = ~tensor
    out = pd.DataFrame(index=values.index)
    out["case"] = values["test_case"]
    for name in ("path", "kind", "data_set", "io", "index", "name", "onnx_type"):
        out[name] = values[name]
    out["value_kind"] = kind_names
    out["dtype"] = values["dtype"].where(tensor, totals["dtype"].astype(values["dtype"].dtype))
    out["shape"] = pd.Series(
        [
            own if is_tensor else (other if isinstance(other, tuple) else None)
            for own, other, is_tensor in zip(values["shape"], totals["shape"], tensor, strict=True)
        ],
        index=values.index,
        dtype=object,
    )
    out["tensors"] = pd.array(np.where(tensor, 1, 0), dtype="Int64")
    out.loc[container, "tensors"] = totals.loc[container, "tensors"].fillna(0)
    out["count"] = values["count"]
    out.loc[container, "count"] = totals.loc[container, "count"].fillna(0)
    out["nbytes"] = values["nbytes"]
    for name in ("min", "max", "mean", "nan_count", "inf_count"):
        out[name] = values[name].where(tensor, totals[name].astype(values[name].dtype))
    models = _models(store)
    cases = values["test_case"].to_numpy(dtype=object)
    slots = zip(cases, values["io"].to_numpy(dtype=object), values["index"], strict=True)
    declared = [
        models[c][2].get((io, int(k))) if c in models and not pd.isna(k) else None
        for c, io, k in slots
    ]
    out.insert(out.columns.get_loc("name") + 1, "declared_name", pd.array(declared, dtype="string"))
    out["op_types"] = pd.Series(
        [models[c][0] if c in models else None for c in cases], index=values.index, dtype=object
    )
    out["opset"] = pd.array([models[c][1] if c in models else None for c in cases], dtype="Int64")
    out["declared"] = values["declared"]
    return out.reset_index(drop=True)


def _store(store: object) -> Store:
    """``store`` as a :class:`Store`: a store, or the path (or paths) of one."""
    if isinstance(store, Store):
        return store
    paths = store if isinstance(store, list | tuple) else [store]
    if not paths or not all(isinstance(p, str | os.PathLike) for p in paths):
        raise UnsupportedTypeError(
            f"expected an onnx_arrow.corpus.Store or the path of one, got "
            f"{type(store).__module__}.{type(store).__qualname__}",
            where="catalog(store)",
        )
    return Store(store)  # type: ignore[arg-type]

"""Tensors, models and stores summed up for people, as ``info`` and Jupyter show them.

Shared by the command line, the Jupyter views, the pandas adapter and the comparison,
so that all say the same of a value, a model or a store: the facts are computed here,
each caller only lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from onnx import ModelProto

from onnx_arrow.core.model import DECODED_FLOATS, ArrowKind, dtype_of_numpy, tensor_statistics
from onnx_arrow.corpus.store import Store
from onnx_arrow.errors import OnnxArrowError

__all__ = [
    "DECODED_FLOATS",
    "StoreFacts",
    "dtype_name",
    "number",
    "numeric",
    "op_types",
    "opsets",
    "size",
    "statistics",
    "store_facts",
]


def dtype_name(dtype: np.dtype[Any]) -> str:
    """The ONNX name of a numpy dtype (``FLOAT``, ``BFLOAT16`` ...), else numpy's own."""
    try:
        return dtype_of_numpy(dtype).name
    except OnnxArrowError:
        return str(dtype)


def number(x: Any) -> str:
    """An integer as itself, a float in at most 6 significant digits."""
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    value = float(x)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def numeric(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any] | None:
    """The elements as numbers numpy computes with (float32 for bfloat16 and float8 ...);
    None for strings."""
    if array.dtype.kind in "OSU":
        return None
    try:
        row = dtype_of_numpy(array.dtype)
    except OnnxArrowError:
        return array if array.dtype.kind in "biufc" else None
    if row.arrow_kind in DECODED_FLOATS:
        return array.astype(np.float32)
    if row.arrow_kind is ArrowKind.SUBBYTE_INT:
        return array.astype(np.int16)
    return array


def statistics(array: np.ndarray[Any, Any]) -> list[tuple[str, str]]:
    """min, max and mean, NaN and Inf counts, by the rule of the store's columns
    (:mod:`onnx_arrow.core.statistics`); the count of true elements for bools, the mean
    for complex numbers; nothing for strings and empty tensors."""
    if array.size == 0 or array.dtype.kind in "OSU":
        return []
    try:
        row = dtype_of_numpy(array.dtype)
    except OnnxArrowError:  # a numpy dtype ONNX has no name for (float128 ...)
        return []
    if row.arrow_kind is ArrowKind.BOOL8:
        return [("true", str(int(np.count_nonzero(array))))]
    if row.arrow_kind is ArrowKind.COMPLEX:
        return [("mean", str(complex(array.mean(dtype=np.complex128))))]
    stats = tensor_statistics(row, [array])
    if stats["min"].defined[0]:
        out = [
            ("min", number(stats["min"].values[0])),
            ("max", number(stats["max"].values[0])),
            ("mean", f"{stats['mean'].values[0]:.6g}"),
        ]
    else:
        out = [("min", "nan"), ("max", "nan"), ("mean", "nan")]  # every element is NaN
    return out + [
        (name.removesuffix("_count"), str(stats[name].values[0]))
        for name in ("nan_count", "inf_count")
        if stats[name].defined[0]
    ]


def size(nbytes: int) -> str:
    """A size in bytes, or in KiB, MiB or GiB once it is 1024 bytes or more: ``7.3 MiB``."""
    if nbytes < 1024:
        return f"{nbytes} bytes"
    scaled = nbytes / 1024
    for unit in ("KiB", "MiB"):
        if scaled < 1024:
            return f"{scaled:.1f} {unit}"
        scaled /= 1024
    return f"{scaled:.1f} GiB"


# --- models ----------------------------------------------------------------------------


def op_types(model: ModelProto) -> tuple[str, ...]:
    """The sorted distinct ``op_type`` of the nodes of the model's main graph."""
    return tuple(sorted({node.op_type for node in model.graph.node}))


def opsets(model: ModelProto) -> str:
    """The opsets a model imports, ``ai.onnx 21, ai.onnx.ml 3``; ``(none)`` if none."""
    text = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
    return text or "(none)"


# --- stores ----------------------------------------------------------------------------

#: The store columns a summary reads: descriptive ones only, never data or contents.
_STORE_COLUMNS: Final = ("test_case", "kind", "role", "dtype", "count")


@dataclass(frozen=True)
class StoreFacts:
    """What a store holds, counted: the same numbers for ``info`` and for Jupyter.

    ``kinds`` pairs each kind folder (None for cases outside one) with its number of
    cases, in name order, None last.  ``roles`` and ``dtypes`` count rows by role and
    tensors by dtype, most frequent first (ties by name); ``elements`` adds up the
    elements of each dtype's tensors.
    """

    format: str
    created_by: str
    nbytes: int
    row_groups: int
    rows: int
    cases: int
    kinds: list[tuple[str | None, int]]
    roles: dict[str, int]
    dtypes: dict[str, int]
    elements: dict[str, int]

    @property
    def files(self) -> int:
        """Rows that are files: models, values and other files (element rows are parts
        of values)."""
        return sum(n for role, n in self.roles.items() if role != "element")

    @property
    def tensors(self) -> int:
        """Tensors of value and element rows (those with a dtype)."""
        return sum(self.dtypes.values())


def store_facts(store: Store) -> StoreFacts:
    """Count what ``store`` holds, reading its descriptive columns only.

    Raises ``pyarrow.ArrowException`` if the file cannot be read (a damaged page).
    """
    meta = store.metadata
    table = store.read_columns(_STORE_COLUMNS)
    by_kind = table.group_by("kind").aggregate([("test_case", "count_distinct")])
    kinds = sorted(
        zip(by_kind.column("kind").to_pylist(), by_kind.column(1).to_pylist(), strict=True),
        key=lambda kv: (kv[0] is None, kv[0] or ""),
    )
    with_dtype = table.filter(pc.is_valid(table.column("dtype")))
    sums = with_dtype.group_by("dtype").aggregate([("count", "sum")])
    elements = zip(sums.column("dtype").to_pylist(), sums.column(1).to_pylist(), strict=True)
    return StoreFacts(
        format=f"{meta.get('format')}, version {meta.get('format_version')}",
        created_by=f"{meta.get('created_by', '?')} (onnx {meta.get('onnx_version', '?')})",
        nbytes=store.nbytes,
        row_groups=store.num_row_groups,
        rows=table.num_rows,
        cases=pc.count_distinct(table.column("test_case")).as_py(),
        kinds=kinds,
        roles=_value_counts(table.column("role")),
        dtypes=_value_counts(table.column("dtype")),
        elements={name: n or 0 for name, n in elements},
    )


def _value_counts(column: pa.ChunkedArray) -> dict[str, int]:
    """Count of each non-null value, most frequent first (ties by value)."""
    counts = pc.value_counts(column.drop_null())
    pairs = zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True)
    return dict(sorted(pairs, key=lambda kv: (-kv[1], kv[0])))

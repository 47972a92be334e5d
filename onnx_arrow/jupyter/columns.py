"""Sections of Arrow columns and tables of ONNX values: type, kind, dtypes, the first
rows one by one and a picture of one of them, read without combining chunks."""

from __future__ import annotations

import functools
from typing import Any, Final

import numpy as np
import pyarrow as pa

import onnx_arrow
from onnx_arrow.core.model import (
    OPTIONAL,
    Kind,
    MessageType,
    describe_type,
    kind_of_arrow,
    tensor_layout,
)
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError
from onnx_arrow.jupyter.formats import preview_text
from onnx_arrow.jupyter.pictures import picture_of
from onnx_arrow.jupyter.sections import Section
from onnx_arrow.jupyter.values import MAX_ITEMS, is_sparse
from onnx_arrow.text import dtype_name, statistics

__all__ = ["PREVIEW_ROWS", "array_sections", "column_kind", "is_onnx_column", "table_sections"]

#: Rows of a column described one by one.
PREVIEW_ROWS: Final = 5


def is_onnx_column(array: Any) -> bool:
    """Whether ``array`` is an Arrow array of an onnx-arrow type (``onnx.*`` or a tensor)."""
    if not isinstance(array, (pa.Array, pa.ChunkedArray)):
        return False
    name = getattr(array.type, "extension_name", None)
    return name is not None and (name.startswith("onnx.") or tensor_layout(array.type) is not None)


def column_kind(array: pa.Array | pa.ChunkedArray) -> Kind:
    """The value kind of a column, read chunk by chunk: the data is never copied."""
    if isinstance(array.type, MessageType):
        return Kind.from_json(array.type.kind)
    chunks = array.chunks if isinstance(array, pa.ChunkedArray) else [array]
    kinds = [kind_of_arrow(chunk.type, chunk) for chunk in chunks]
    return functools.reduce(_merged_kind, kinds) if kinds else kind_of_arrow(array.type)


def _merged_kind(a: Kind, b: Kind) -> Kind:
    """The kind of two chunks of one column taken together.

    Chunks of one Arrow type differ only where one holds absent values (nulls) and the
    other none: there its kind has an optional level the other lacks, and the column,
    holding both, has it too.
    """
    if a == b:
        return a
    if a.name == OPTIONAL and b.name != OPTIONAL and a.elem is not None:
        return Kind(OPTIONAL, _merged_kind(a.elem, b))
    if b.name == OPTIONAL and a.name != OPTIONAL and b.elem is not None:
        return Kind(OPTIONAL, _merged_kind(a, b.elem))
    elem = a.elem if a.elem is None or b.elem is None else _merged_kind(a.elem, b.elem)
    return Kind(a.name, elem, a.key)


def _column_sections(array: pa.Array | pa.ChunkedArray, title: str = "column") -> list[Section]:
    kind = str(column_kind(array))
    # only the previewed rows are read: a chunked column is never combined whole
    head = array.slice(0, PREVIEW_ROWS)
    cells = onnx_arrow.to_pylist(head, strings="bytes")
    dtypes = sorted({dtype_name(c.dtype) for c in cells if isinstance(c, np.ndarray)})
    fields = [
        ("arrow type", describe_type(array.type)),
        ("onnx kind", kind),
        ("rows", str(len(array))),
        ("nulls", str(array.null_count)),
    ]
    if dtypes:
        fields.insert(2, ("dtype", ", ".join(dtypes)))
    if isinstance(array.type, MessageType):
        fields.insert(1, ("value type", describe_type(array.type.value_type)))
    header = ["row", "shape", "dtype", "min", "max", "mean", "nan", "preview"]
    rows = []
    for i, cell in enumerate(cells):
        if isinstance(cell, np.ndarray):
            stats = dict(statistics(cell))
            rows.append(
                [
                    str(i),
                    str(list(cell.shape)),
                    dtype_name(cell.dtype),
                    stats.get("min", stats.get("true", "")),
                    stats.get("max", ""),
                    stats.get("mean", ""),
                    stats.get("nan", ""),
                    preview_text(cell, 6),
                ]
            )
        else:
            rows.append([str(i), "", "", "", "", "", "", _short(cell)])
    section = Section(title, fields, table=(header, rows))
    if len(array) > PREVIEW_ROWS:
        section.note = f"the first {PREVIEW_ROWS} of {len(array)} rows are shown"
    first = next((i for i, c in enumerate(cells) if isinstance(c, np.ndarray)), None)
    if first is not None:
        picture = picture_of(cells[first])
        if picture is not None:  # one row is drawn, and the caption says which
            picture.caption = f"row {first} of {len(array)}: {picture.caption}"
        section.picture = picture
    return [section]


def _short(value: Any) -> str:
    """One line for a container cell: its kind and size."""
    if value is None:
        return "None"
    if is_sparse(value):
        return f"sparse {list(value['dims'])}, {value['values'].size} stored"
    if isinstance(value, dict):
        return f"map of {len(value)}"
    if isinstance(value, list):
        if value and all(isinstance(p, tuple) and len(p) == 2 for p in value):
            return f"map of {len(value)}"
        shapes = [str(list(v.shape)) if isinstance(v, np.ndarray) else _short(v) for v in value]
        more = ", ..." if len(shapes) > 4 else ""
        return f"sequence of {len(value)}: " + ", ".join(shapes[:4]) + more
    return type(value).__name__


def table_sections(table: pa.Table) -> list[Section]:
    head = Section(
        "table",
        [("rows", str(table.num_rows)), ("columns", ", ".join(table.column_names))],
    )
    out = [head]
    for name in table.column_names[:MAX_ITEMS]:
        column = table.column(name)
        if is_onnx_column(column) or _bare_value_column(column):
            out += [_with_level(s, 1) for s in _column_sections(column, f"column {name!r}")]
        else:
            out.append(Section(f"column {name!r}", [("arrow type", str(column.type))], level=1))
    if table.num_columns > MAX_ITEMS:
        head.note = f"the first {MAX_ITEMS} of {table.num_columns} columns are shown"
    return out


def _bare_value_column(column: pa.ChunkedArray) -> bool:
    try:
        kind_of_arrow(column.type)
    except OnnxArrowError:
        return False
    return True


def _with_level(section: Section, level: int) -> Section:
    section.level = level
    return section


def array_sections(array: pa.Array | pa.ChunkedArray) -> list[Section]:
    if not (is_onnx_column(array) or _bare_value_column(array)):
        raise UnsupportedTypeError(
            f"an Arrow column of type {array.type} holds no ONNX values; expected an "
            "onnx.message array (onnx_arrow.to_arrow) or a tensor column"
        )
    return _column_sections(array)

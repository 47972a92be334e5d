"""Sections of single values: a tensor, sequence, map, optional or sparse tensor as
:func:`onnx_arrow.to_numpy` gives it, an ONNX value message, a stored value, an ndarray."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from google.protobuf.message import Message
from onnx import MapProto, OptionalProto, SequenceProto, SparseTensorProto, TensorProto

import onnx_arrow
from onnx_arrow.corpus.rows import StoredValue
from onnx_arrow.errors import UnsupportedTypeError
from onnx_arrow.jupyter.formats import element_text, preview_text
from onnx_arrow.jupyter.pictures import picture_of
from onnx_arrow.jupyter.sections import Section
from onnx_arrow.text import dtype_name, statistics

__all__ = [
    "MAX_ITEMS",
    "VALUE_MESSAGES",
    "is_sparse",
    "message_sections",
    "ndarray_sections",
    "stored_value_sections",
    "value_sections",
]

#: Items of a sequence or map, data sets of a case, columns of a table described.
MAX_ITEMS: Final = 8
#: The ONNX messages that hold one value each.
VALUE_MESSAGES: Final = (TensorProto, SparseTensorProto, SequenceProto, MapProto, OptionalProto)


def _tensor_fields(array: np.ndarray[Any, Any]) -> list[tuple[str, str]]:
    return [
        ("dtype", dtype_name(array.dtype)),
        ("shape", str(list(array.shape))),
        ("elements", str(array.size)),
        *statistics(array),
        ("preview", preview_text(array)),
    ]


def is_sparse(value: Any) -> bool:
    """Whether ``value`` is a sparse tensor as :func:`onnx_arrow.to_numpy` gives it."""
    return isinstance(value, dict) and set(value) == {"dims", "values", "indices"}


def value_sections(value: Any, title: str, level: int = 0) -> list[Section]:
    """Sections describing a value as :func:`onnx_arrow.to_numpy` gives it."""
    if isinstance(value, np.ndarray):
        return [Section(title, [("kind", "tensor"), *_tensor_fields(value)],
                        picture=picture_of(value), level=level)]  # fmt: skip
    if value is None:
        return [Section(title, [("kind", "optional"), ("value", "absent (None)")], level=level)]
    if is_sparse(value):
        values, indices = value["values"], value["indices"]
        fields = [
            ("kind", "sparse tensor"),
            ("dense shape", str(list(value["dims"]))),
            ("stored values", str(values.size)),
            ("indices shape", str(list(indices.shape))),
        ]
        fields += [(k, v) for k, v in _tensor_fields(values) if k != "shape"]
        return [Section(title, fields, level=level)]
    if isinstance(value, dict):
        pairs = list(value.items())
        return _items_sections(title, "map", pairs, level)
    if isinstance(value, list):
        if value and all(isinstance(p, tuple) and len(p) == 2 for p in value):
            return _items_sections(title, "map", value, level)
        return _items_sections(title, "sequence", list(enumerate(value)), level)
    raise UnsupportedTypeError(
        f"cannot describe a {type(value).__name__}; expected an ndarray, a list, a dict or None"
    )


def _items_sections(
    title: str, kind: str, items: Sequence[tuple[Any, Any]], level: int
) -> list[Section]:
    label = "entries" if kind == "map" else "items"
    head = Section(title, [("kind", kind), (label, str(len(items)))], level=level)
    if kind == "map" and items:
        head.fields.append(("keys", "[" + ", ".join(element_text(k) for k, _ in items[:16]) + "]"))
    out = [head]
    for key, item in items[:MAX_ITEMS]:
        name = f"[{element_text(key)}]" if kind == "map" else f"[{key}]"
        out += value_sections(item, f"{'value' if kind == 'map' else 'item'} {name}", level + 1)
    if len(items) > MAX_ITEMS:
        head.note = f"the first {MAX_ITEMS} of {len(items)} {label} are shown"
    return out


def message_sections(message: Message) -> list[Section]:
    """Sections describing an ONNX value message, titled by its type and name."""
    kind = type(message).__name__
    name = getattr(message, "name", "")
    title = f"{kind} {name!r}" if name else kind
    value = onnx_arrow.to_pylist(onnx_arrow.to_arrow([message], exact=True), strings="bytes")[0]
    return value_sections(value, title)


def stored_value_sections(value: StoredValue) -> list[Section]:
    """Sections describing a stored value, with where the store keeps it."""
    where = [
        ("case", value.case),
        ("path", value.path),
        ("data set", "-" if value.data_set is None else str(value.data_set)),
        ("slot", f"{value.io} {value.index}"),
        ("onnx type", value.onnx_type),
    ]
    title = f"{value.io} {value.name!r}" if value.name else f"{value.io} {value.index}"
    sections = value_sections(value.to_numpy(strings="bytes"), title)
    sections[0].fields[:0] = where
    return sections


def ndarray_sections(array: np.ndarray[Any, Any]) -> list[Section]:
    """Sections describing a numpy array."""
    return value_sections(array, "ndarray")

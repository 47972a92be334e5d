"""The elements of Arrow tensor storage as codes (the ONNX numpy dtype), and back.

Below the tensor types and the conversions alike: a flat Arrow array of a dtype's
element type built over numpy storage, and the codes of the elements a tensor
array's storage holds (nulls only under null rows, read as code 0), each error
naming the row and element at fault.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa

from onnx_arrow.core.codec import codes_to_storage, storage_to_codes
from onnx_arrow.core.dtypes import ArrowKind, DType
from onnx_arrow.core.element_types import element_type
from onnx_arrow.core.extension_metadata import extension_metadata
from onnx_arrow.errors import ArrowLayoutError, NotRepresentableError

__all__ = [
    "check_plain_layout",
    "codes_of_rows",
    "fixed_codes",
    "null_row_error",
    "storage_array",
    "storage_numpy",
    "stored_values",
    "validity",
]


def storage_array(storage: np.ndarray[Any, Any], row: DType) -> pa.Array:
    """A flat Arrow array of ``row``'s element type over the numpy storage."""
    ext = element_type(row)
    if row.arrow_kind is ArrowKind.BINARY:
        return pa.array(storage, type=pa.binary())
    if row.arrow_kind is ArrowKind.COMPLEX:
        parts = pa.array(storage, type=pa.from_numpy_dtype(row.arrow_storage))
        inner = pa.FixedSizeListArray.from_arrays(parts, type=ext.storage_type)
        return pa.ExtensionArray.from_storage(ext, inner)
    base = pa.array(storage, type=pa.from_numpy_dtype(row.arrow_storage))
    if isinstance(ext, pa.BaseExtensionType):
        return pa.ExtensionArray.from_storage(ext, base)
    return base


def storage_numpy(
    values: pa.Array,
    row: DType,
    owned: np.ndarray[Any, Any] | None = None,
    offsets: np.ndarray[Any, Any] | None = None,
) -> np.ndarray[Any, Any]:
    """The numpy storage behind a flat array of ``row``'s element type (zero-copy if possible).

    ``owned`` marks the elements that belong to a valid (non-null) row; nulls are
    allowed only in the others (what ``take`` leaves under a null row) and read as 0.
    ``offsets`` (where each row starts, then the end) let an error name the row.
    """
    if isinstance(values, pa.ExtensionArray):
        values = values.storage
    per_element = 1
    if row.arrow_kind is ArrowKind.COMPLEX:
        if values.null_count:  # a null complex element is allowed under a null row only
            _check_null_elements(values, row, owned, offsets)
        # (real, imaginary) parts, null entries' slots included (flatten() would drop them)
        per_element = 2
        owned = None if owned is None else np.repeat(owned, per_element)
        values = values.values.slice(values.offset * per_element, len(values) * per_element)
    if values.null_count:
        _check_null_elements(values, row, owned, offsets, per_element)
        values = _fill_nulls(values, row)
    # binary gives an object array of bytes, which the codes of STRING are
    out: np.ndarray[Any, Any] = values.to_numpy(zero_copy_only=False)
    if owned is not None and not owned.all():
        # what lies under a null row (take() leaves zeros there) is no element: code 0
        out = out.copy()
        out[~owned] = _code_zero(row)
    return out


def _check_null_elements(
    values: pa.Array,
    row: DType,
    owned: np.ndarray[Any, Any] | None,
    offsets: np.ndarray[Any, Any] | None,
    per_element: int = 1,
) -> None:
    """Refuse a null among ``values`` outside null rows, naming its row and element.

    ``per_element`` entries of ``values`` make one element (2 for complex parts).
    """
    null = ~np.asarray(values.is_valid(), dtype=bool)
    bad = np.flatnonzero(null if owned is None else null & owned)
    if not bad.size:
        return
    element = int(bad[0]) // per_element
    where = None
    if offsets is not None:
        # the last row starting at or before the element: empty rows before it share its start
        index = int(np.searchsorted(offsets, element, side="right")) - 1
        element -= int(offsets[index])
        where = f"row {index}"
    raise ArrowLayoutError(
        f"{row.name} tensor element {element} is null; tensor elements are never null "
        "(an absent value is a null row)",
        where=where,
    )


def _fill_nulls(values: pa.Array, row: DType) -> pa.Array:
    """``values`` with every null read as code 0 (the nulls are checked to be under null rows)."""
    return values.fill_null(pa.scalar(_code_zero(row), values.type))


def _code_zero(row: DType) -> Any:
    """The storage of one element of code 0, which every dtype has (FLOAT8E8M0 has no 0.0)."""
    if row.arrow_kind is ArrowKind.BINARY:
        return b""
    return codes_to_storage(np.zeros(1, dtype=row.numpy), row)[0].item()


def stored_values(values: pa.Array, arrow_type: pa.DataType, layout: str) -> pa.Array:
    """Flat elements as the tensor type stores them: an onnx-arrow element type as its
    plain storage where the tensor type records the dtype itself."""
    storage = arrow_type.storage_type
    inside = storage.value_type if layout == "fixed" else storage.field("data").type.value_type
    if values.type != inside and isinstance(values, pa.ExtensionArray):
        return values.storage
    return values


def fixed_codes(array: pa.Array, row: DType) -> np.ndarray[Any, Any]:
    check_plain_layout(array.type)
    storage = array.storage
    size = math.prod(array.type.shape)
    flat = storage.values.slice(storage.offset * size, len(storage) * size)
    owned = None if storage.null_count == 0 else np.repeat(validity(storage), size)
    offsets = np.arange(len(storage) + 1) * size
    return codes_of_rows(storage_numpy(flat, row, owned, offsets), row, offsets)


def codes_of_rows(
    storage: np.ndarray[Any, Any], row: DType, offsets: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """:func:`storage_to_codes` of the elements of all rows; an error names row and element."""
    try:
        return storage_to_codes(storage, row)
    except NotRepresentableError:
        # on the error path only: convert row by row to say which row holds the value
        for i in range(len(offsets) - 1):
            storage_to_codes(storage[offsets[i] : offsets[i + 1]], row, where=f"row {i}")
        raise


def validity(storage: pa.Array) -> list[bool]:
    if storage.null_count == 0:
        return [True] * len(storage)
    return storage.is_valid().to_pylist()


def check_plain_layout(arrow_type: pa.DataType) -> None:
    meta = extension_metadata(arrow_type)
    permutation = meta.get("permutation")
    if permutation is not None and list(permutation) != sorted(permutation):
        raise NotRepresentableError(
            f"tensor layout has permutation {permutation}; ONNX tensors are row-major, "
            "transpose the data to the identity permutation first",
            where=getattr(arrow_type, "extension_name", None),
        )


def null_row_error(index: int) -> NotRepresentableError:
    """The error of a tensor column asked for as one ndarray whose row ``index`` is null."""
    return NotRepresentableError(
        "the row is null (an absent value), so the column is not one ndarray; "
        "onnx_arrow.to_pylist gives None for it",
        where=f"row {index}",
    )

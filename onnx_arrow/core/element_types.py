"""The Arrow type of one element of each ONNX dtype, and the ONNX dtype of an Arrow type.

Arrow's own types where Arrow has the dtype (``float``, ``arrow.bool8``, ``binary``
for STRING); otherwise ``onnx.<dtype>`` (``onnx.bfloat16``, ``onnx.float8e4m3fn``,
``onnx.int4``, ``onnx.complex64`` ...), one parametrized class,
:class:`OnnxElementType`, over the plain storage the dtype table gives.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import pyarrow as pa

from onnx_arrow.core._json import load_json
from onnx_arrow.core.codec import storage_to_codes
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of
from onnx_arrow.core.json_extension import JsonExtensionType, expect_params, expect_storage
from onnx_arrow.errors import ArrowLayoutError, NotRepresentableError, UnsupportedTypeError

__all__ = [
    "DTYPE_BY_NAME",
    "OWN_NAMES",
    "OnnxElementArray",
    "OnnxElementType",
    "dtype_of_arrow",
    "element_readers",
    "element_storage",
    "element_type",
    "own_dtype",
]


class OnnxElementType(JsonExtensionType):
    """Element type for an ONNX dtype that Arrow lacks, e.g. ``onnx.bfloat16``.

    One class for every such row of the dtype table, parametrized by the row; its
    extension name is the row's (``onnx.<dtype>``).  Get an instance with
    :func:`element_type`.
    """

    #: The ONNX dtype of the elements.
    dtype: DType

    def __init__(self, dtype: DType) -> None:
        name = dtype.extension_name
        if name is None:
            raise UnsupportedTypeError(
                f"{dtype.name} has an Arrow element type of its own ({element_type(dtype)}); "
                f"onnx.<dtype> types exist for {', '.join(OWN_NAMES)} only"
            )
        self.dtype = dtype
        self._params = {"data_type": dtype.name}
        pa.ExtensionType.__init__(self, element_storage(dtype), name)

    @classmethod
    def __arrow_ext_deserialize__(
        cls, storage_type: pa.DataType, serialized: bytes
    ) -> JsonExtensionType:
        if cls is OnnxElementType:
            # pyarrow re-reads a type through its own instance's class too (an IPC stream
            # of a nested storage): that instance was made here, so its metadata names
            # its dtype, and the reader of that dtype's name reads it
            return _READERS[_own_name(serialized)].__arrow_ext_deserialize__(
                storage_type, serialized
            )
        return super().__arrow_ext_deserialize__(storage_type, serialized)

    @classmethod
    def _from_params(cls, storage_type: pa.DataType, params: dict[str, Any]) -> OnnxElementType:
        # called on a reader (see element_readers), which knows the name it was read under
        expect_params(cls._name, params, {"data_type"})
        if params.get("data_type") != cls.dtype.name:
            raise ArrowLayoutError(
                f"metadata data_type {params.get('data_type')!r} does not match the extension "
                f"name; expected {cls.dtype.name!r}",
                where=cls._name,
            )
        expect_storage(cls._name, storage_type, element_storage(cls.dtype))
        return OnnxElementType(cls.dtype)

    def __reduce__(self) -> tuple[Any, ...]:
        schema = pa.schema([pa.field("storage", self.storage_type)]).serialize().to_pybytes()
        return _rebuild_element, (self.extension_name, schema, self.__arrow_ext_serialize__())

    def __arrow_ext_class__(self) -> type[pa.ExtensionArray]:
        return OnnxElementArray


def _rebuild_element(name: str, storage: bytes, blob: bytes) -> pa.DataType:
    storage_type = pa.ipc.read_schema(pa.py_buffer(storage)).field(0).type
    return _READERS[name].__arrow_ext_deserialize__(storage_type, blob)


def _own_name(serialized: bytes) -> str:
    """The extension name of the dtype whose metadata onnx-arrow wrote as ``serialized``."""
    try:
        parsed = load_json(serialized, what="metadata", where=None, error=ValueError)
        row = DTYPE_BY_NAME[parsed["data_type"]]
    except (ValueError, KeyError, TypeError):
        row = None
    if row is None or row.extension_name is None:
        raise ArrowLayoutError(
            f"metadata {serialized[:80]!r} names no onnx-arrow element type",
            where="onnx.<dtype>",
        )
    return row.extension_name


def element_readers() -> list[OnnxElementType]:
    """One instance to register with pyarrow under each ``onnx.<dtype>`` name.

    pyarrow reads a registered type through a class method of the registered instance's
    class, which is not told the extension name it read; so each name is registered
    with a reader, a subclass of :class:`OnnxElementType` that adds nothing but the row
    it reads, and it reads every well-formed type into an :class:`OnnxElementType`.
    """
    return [reader(reader.dtype) for reader in _READERS.values()]


def _reader(row: DType) -> type[OnnxElementType]:
    name = f"{row.name}Reader"
    return type(
        name,
        (OnnxElementType,),
        {"dtype": row, "_name": row.extension_name, "__module__": __name__, "__qualname__": name},
    )


class OnnxElementArray(pa.ExtensionArray):  # type: ignore[misc]
    """Array of an ``onnx.<dtype>`` element type; ``to_numpy`` gives the ONNX numpy dtype."""

    def to_numpy(self, zero_copy_only: bool = False, writable: bool = False) -> np.ndarray:
        """The elements as an array of the ONNX numpy dtype (``ml_dtypes`` ones).

        As pyarrow's ``to_numpy``: with ``zero_copy_only`` the array is a view of the
        Arrow buffer or an error says why it cannot be; with ``writable`` it is a
        writable copy.  The two together are refused, as pyarrow refuses them.
        """
        row = self.type.dtype
        where = self.type.extension_name
        if zero_copy_only and writable:
            raise NotRepresentableError(
                "cannot return a writable array when asking for zero-copy; pass one of "
                "zero_copy_only=True and writable=True",
                where=where,
            )
        flat = self.storage
        parts = 2 if row.arrow_kind is ArrowKind.COMPLEX else 1  # (real, imaginary) pairs
        if parts == 2:
            flat = flat.values.slice(flat.offset * 2, len(flat) * 2)
        if flat.null_count:
            bad = int(flat.is_null().to_numpy(zero_copy_only=False).argmax()) // parts
            raise ArrowLayoutError(
                f"{row.name} element {bad} is null; elements are never null",
                where=where,
            )
        storage = flat.to_numpy(zero_copy_only=False)
        codes = storage_to_codes(storage, row)
        if zero_copy_only and not np.shares_memory(codes, storage):
            raise NotRepresentableError(
                f"zero_copy_only=True, but {row.name} elements are converted from their "
                f"{storage.dtype} storage, which copies them; pass zero_copy_only=False",
                where=where,
            )
        if writable and (not codes.flags.writeable or np.shares_memory(codes, storage)):
            codes = codes.copy()
        return codes


def element_storage(row: DType) -> pa.DataType:
    base = pa.from_numpy_dtype(row.arrow_storage)
    if row.arrow_kind is ArrowKind.COMPLEX:
        return pa.list_(pa.field("item", base, nullable=False), 2)
    return base


_READERS: Final = {
    row.extension_name: _reader(row) for row in DTYPES.values() if row.extension_name is not None
}


def element_type(dtype: DType) -> pa.DataType:
    """The Arrow type of one element of ``dtype``.

    >>> from onnx_arrow.core.dtypes import dtype_of
    >>> element_type(dtype_of("FLOAT"))
    DataType(float)
    >>> element_type(dtype_of("BFLOAT16")).extension_name
    'onnx.bfloat16'
    """
    return _ELEMENT_TYPES[dtype.onnx]


def _build_element_type(row: DType) -> pa.DataType:
    if row.arrow_kind is ArrowKind.NATIVE:
        return pa.from_numpy_dtype(row.numpy)
    if row.arrow_kind is ArrowKind.BOOL8:
        return pa.bool8()
    if row.arrow_kind is ArrowKind.BINARY:
        return pa.binary()
    return OnnxElementType(row)


_ELEMENT_TYPES: Final = {row.onnx: _build_element_type(row) for row in DTYPES.values()}
DTYPE_BY_NAME: Final = {row.name: row for row in DTYPES.values()}
OWN_NAMES: Final = tuple(row.name for row in DTYPES.values() if row.extension_name is not None)
_DTYPE_BY_ARROW: Final = {
    **{t: DTYPES[onnx] for onnx, t in _ELEMENT_TYPES.items()},
    # read, never written: Polars hands binary columns back as large_binary (or as
    # binary_view, which arrow_input reads as binary), and UTF-8 strings are strings
    pa.large_binary(): dtype_of("STRING"),
    pa.string(): dtype_of("STRING"),
    pa.large_string(): dtype_of("STRING"),
}


def dtype_of_arrow(arrow_type: pa.DataType, *, where: str | None = None) -> DType:
    """The ONNX dtype whose elements have Arrow type ``arrow_type``."""
    row = _DTYPE_BY_ARROW.get(arrow_type)
    if row is None:
        raise UnsupportedTypeError(
            f"Arrow element type {arrow_type} has no ONNX data type; expected one of "
            + ", ".join(str(t) for t in _ELEMENT_TYPES.values()),
            where=where,
        )
    return row


def own_dtype(name: str, params: dict[str, Any]) -> DType | None:
    """The onnx-arrow element dtype a tensor type's metadata records, if any."""
    data_type = params.get("data_type")
    if data_type is None:
        return None
    row = DTYPE_BY_NAME.get(data_type) if isinstance(data_type, str) else None
    if row is None or row.extension_name is None:
        raise ArrowLayoutError(
            f"metadata data_type {data_type!r} is not one of the element types onnx-arrow "
            f"keeps over plain storage: {', '.join(OWN_NAMES)}",
            where=name,
        )
    return row

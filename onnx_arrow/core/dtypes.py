"""The dtype table: one row per ``TensorProto.DataType``, everything else derived.

Each :class:`DType` row holds the fixed facts about one ONNX element type:

* how its elements are stored in a ``TensorProto`` (the bit width that ``raw_data``
  packs them with, the typed field and how values map onto that field's entries);
* the numpy dtype users get (``ml_dtypes`` for bfloat16, the float8s, float4,
  float6 and the 2- and 4-bit integers);
* the Arrow element type a tensor of it becomes, and how elements map onto that
  type's storage;
* the storage of its elements in a Parquet file of the corpus store, where that differs;
* how ULP distances between its elements are counted, if it has them.

The encoders and decoders in :mod:`onnx_arrow.core.tensors`, the Arrow extension
types in :mod:`onnx_arrow.core.extension_types`, the ULP distances of
:mod:`onnx_arrow.core.ulp`, the corpus store's data columns and the generated docs page
of the type mapping all read these rows, so the directions cannot drift apart.

Examples
--------
>>> from onnx_arrow.core.dtypes import dtype_of
>>> row = dtype_of("FLOAT8E4M3FN")
>>> row.onnx, row.bits, row.typed_field, row.arrow_kind.value, row.ulp_kind.value
(17, 8, 'int32_data', 'minifloat', 'rank_table')
>>> dtype_of(1).name
'FLOAT'
"""

from __future__ import annotations

import enum
import functools
import importlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

import numpy as np

from onnx_arrow.errors import UnsupportedTypeError

__all__ = [
    "DECODED_FLOATS",
    "DTYPES",
    "ArrowKind",
    "DType",
    "TypedEncoding",
    "UlpKind",
    "dtype_of",
    "dtype_of_numpy",
]


class TypedEncoding(enum.Enum):
    """How tensor elements map onto the entries of the typed ``*_data`` field."""

    #: entries are the elements themselves, same bits (float_data for FLOAT, int64_data for INT64)
    NATIVE = "native"
    #: entries are real and imaginary parts, interleaved (two entries per element)
    INTERLEAVED = "interleaved"
    #: entries are the element's value, sign-extended (INT8, INT16 in int32_data)
    SIGN_EXTEND = "sign_extend"
    #: entries are the element's bit pattern, zero-extended (UINT8, BOOL, FLOAT16, float8 ...)
    ZERO_EXTEND = "zero_extend"
    #: entries are the bytes of the packed sub-byte stream, one byte per entry (INT4, UINT2 ...)
    PACKED_BYTES = "packed_bytes"
    #: entries are byte strings (string_data)
    STRINGS = "strings"


class ArrowKind(enum.Enum):
    """How tensor elements map onto the Arrow element type."""

    #: an Arrow primitive with the same memory layout; zero-copy both ways
    NATIVE = "native"
    #: ``arrow.bool8``: one byte per element over int8 storage; zero-copy
    BOOL8 = "bool8"
    #: ``binary``: the bytes exactly as stored, valid UTF-8 or not
    BINARY = "binary"
    #: ``onnx.complex64/128``: fixed_size_list<float32/64>[2] (real, imaginary); zero-copy
    COMPLEX = "complex"
    #: ``onnx.bfloat16``: float32 storage, the bfloat16 bits in the high half (exact)
    BFLOAT16 = "bfloat16"
    #: ``onnx.float8*`` / ``float6*`` / ``float4*``: float32 storage, one exact value per code
    MINIFLOAT = "minifloat"
    #: ``onnx.int4`` / ``uint4`` / ``int2`` / ``uint2``: int8/uint8 storage holding the value
    SUBBYTE_INT = "subbyte_int"


class UlpKind(enum.Enum):
    """How the ULP distance between two elements is counted (:mod:`onnx_arrow.core.ulp`)."""

    #: no ULP distance: the elements are not floating-point numbers (integers, BOOL, STRING)
    NONE = "none"
    #: IEEE sign-magnitude codes (FLOAT, DOUBLE): the signed magnitude of the code, as
    #: ``uint64`` arithmetic
    IEEE = "ieee"
    #: codes of at most 16 bits: a table of every code's rank among the distinct values
    RANK_TABLE = "rank_table"
    #: complex: the real parts and the imaginary parts, each as the dtype of one part
    #: (:attr:`DType.arrow_storage`); an element's distance is the larger of the two
    COMPLEX_PARTS = "complex_parts"


@dataclass(frozen=True)
class DType:
    """The facts about one ONNX tensor element type.

    Attributes
    ----------
    name
        The ``TensorProto.DataType`` name, e.g. ``"FLOAT8E4M3FN"``.
    onnx
        The enum value, e.g. ``17``.
    numpy
        The numpy dtype of elements (``ml_dtypes`` where numpy has none;
        ``object`` holding ``bytes`` for STRING).  Read from :attr:`numpy_name` on first
        use, so that the table, and ``import onnx_arrow``, need not import ``ml_dtypes``.
    numpy_name
        That dtype by name: a numpy dtype string (``"<f4"``) or an ``ml_dtypes``
        attribute (``"ml_dtypes.bfloat16"``).
    bits
        Bits per element in ``raw_data``; 2, 4 and 6 are packed little-endian,
        low bits first.  0 for STRING, which has no raw form.
    typed_field
        The ``TensorProto`` field that holds elements when ``raw_data`` is not used.
    typed_encoding
        How elements map onto that field's entries.
    arrow_kind
        How elements map onto the Arrow element type.
    arrow_storage
        The numpy dtype of the Arrow storage of one element (after widening);
        for COMPLEX the dtype of one part.
    ulp_kind
        How ULP distances between elements are counted; :attr:`UlpKind.NONE` for the
        dtypes that have none.
    store_storage
        The numpy dtype of one element's numbers in a Parquet file of the corpus store:
        :attr:`arrow_storage`, except where Parquet readers refuse that type and the
        store widens it exactly (FLOAT16 to float32: Spark refuses a whole Parquet file
        holding a FLOAT16 column).
    doc
        One line for the docs page of the type mapping.
    """

    name: str
    onnx: int
    numpy_name: str
    bits: int
    typed_field: str
    typed_encoding: TypedEncoding
    arrow_kind: ArrowKind
    arrow_storage: np.dtype[np.generic]
    ulp_kind: UlpKind
    store_storage: np.dtype[np.generic]
    doc: str = field(default="", compare=False)

    @functools.cached_property
    def numpy(self) -> np.dtype[np.generic]:
        module, _, attr = self.numpy_name.rpartition(".")
        if module:
            return np.dtype(getattr(importlib.import_module(module), attr))
        return np.dtype(self.numpy_name)

    @functools.cached_property
    def code_bits(self) -> np.dtype[np.generic]:
        """The unsigned integers of a code's bits where :attr:`numpy` is an ml_dtypes
        type (uint16 for BFLOAT16, uint8 for the float8, float6, float4 and sub-byte
        integer types), else :attr:`numpy`.  A message is written from its elements'
        bits alone, so a store's files are rebuilt as these, without ml_dtypes."""
        if self.numpy_name.startswith("ml_dtypes."):
            return np.dtype(np.uint16 if self.bits == 16 else np.uint8)
        return self.numpy

    @property
    def extension_name(self) -> str | None:
        """The name of onnx-arrow's own Arrow extension type for this dtype, if it needs one."""
        if self.arrow_kind in _OWN_EXTENSION_KINDS:
            return f"onnx.{self.name.lower()}"
        return None

    @property
    def is_floating(self) -> bool:
        """True for the types whose elements are floating-point numbers, or pairs of them:
        FLOAT, DOUBLE, FLOAT16, BFLOAT16, the float8, float6 and float4 types, and
        COMPLEX64 and COMPLEX128 (real and imaginary part).  Exactly the types that have
        NaN, and ULP distances (:attr:`ulp_kind`)."""
        return self.ulp_kind is not UlpKind.NONE

    @property
    def store_widens(self) -> bool:
        """True where the corpus store keeps elements wider than their Arrow storage
        (:attr:`store_storage`), exactly."""
        return self.store_storage != self.arrow_storage

    @property
    def is_packed(self) -> bool:
        """True for the sub-byte types whose ``raw_data`` packs several elements per byte."""
        return 0 < self.bits < 8

    @property
    def typed_entry_dtype(self) -> np.dtype[np.generic]:
        """The numpy dtype of one entry of :attr:`typed_field`."""
        return _FIELD_ENTRY_DTYPES[self.typed_field]

    def raw_nbytes(self, count: int) -> int:
        """The exact ``raw_data`` length that ``count`` elements take."""
        return -(-count * self.bits // 8)

    def __repr__(self) -> str:
        return f"<onnx_arrow dtype {self.name} ({self.onnx})>"


#: The float kinds numpy cannot compute with, read as float32 (which holds every value of
#: bfloat16, float8, float6 and float4 exactly).
DECODED_FLOATS: Final = frozenset({ArrowKind.BFLOAT16, ArrowKind.MINIFLOAT})
_OWN_EXTENSION_KINDS: Final = frozenset(
    {ArrowKind.COMPLEX, ArrowKind.BFLOAT16, ArrowKind.MINIFLOAT, ArrowKind.SUBBYTE_INT}
)

_FIELD_ENTRY_DTYPES: Final[dict[str, np.dtype[np.generic]]] = {
    "float_data": np.dtype("<f4"),
    "double_data": np.dtype("<f8"),
    "int32_data": np.dtype("<i4"),
    "int64_data": np.dtype("<i8"),
    "uint64_data": np.dtype("<u8"),
    "string_data": np.dtype(object),
}

_E = TypedEncoding
_K = ArrowKind
_U = UlpKind
_f32 = np.dtype("<f4")


def _row(
    name: str,
    onnx: int,
    numpy_name: str,
    bits: int,
    typed_field: str,
    encoding: TypedEncoding,
    kind: ArrowKind,
    storage: object,
    doc: str,
    *,
    ulp: UlpKind = UlpKind.NONE,
    store: object = None,
) -> DType:
    return DType(
        name=name,
        onnx=onnx,
        numpy_name=numpy_name,
        bits=bits,
        typed_field=typed_field,
        typed_encoding=encoding,
        arrow_kind=kind,
        arrow_storage=np.dtype(storage),  # type: ignore[call-overload]
        ulp_kind=ulp,
        store_storage=np.dtype(storage if store is None else store),  # type: ignore[call-overload]
        doc=doc,
    )


# fmt: off
_ROWS: Final[tuple[DType, ...]] = (
    _row("FLOAT", 1,   "<f4", 32, "float_data",  _E.NATIVE,      _K.NATIVE, "<f4", "float32",
         ulp=_U.IEEE),
    _row("UINT8", 2,   "u1",   8, "int32_data",  _E.ZERO_EXTEND, _K.NATIVE, "u1",  "uint8"),
    _row("INT8", 3,    "i1",   8, "int32_data",  _E.SIGN_EXTEND, _K.NATIVE, "i1",  "int8"),
    _row("UINT16", 4,  "<u2", 16, "int32_data",  _E.ZERO_EXTEND, _K.NATIVE, "<u2", "uint16"),
    _row("INT16", 5,   "<i2", 16, "int32_data",  _E.SIGN_EXTEND, _K.NATIVE, "<i2", "int16"),
    _row("INT32", 6,   "<i4", 32, "int32_data",  _E.NATIVE,      _K.NATIVE, "<i4", "int32"),
    _row("INT64", 7,   "<i8", 64, "int64_data",  _E.NATIVE,      _K.NATIVE, "<i8", "int64"),
    _row("STRING", 8,  "O",    0, "string_data", _E.STRINGS,     _K.BINARY, "O",
         "binary: the bytes exactly as stored, so invalid UTF-8 survives"),
    _row("BOOL", 9,    "?",    8, "int32_data",  _E.ZERO_EXTEND, _K.BOOL8,  "i1",
         "arrow.bool8 (canonical): one byte per element, 0 or 1 (a non-zero byte read as 1)"),
    _row("FLOAT16", 10, "<f2", 16, "int32_data",  _E.ZERO_EXTEND, _K.NATIVE, "<f2", "float16",
         ulp=_U.RANK_TABLE, store="<f4"),
    _row("DOUBLE", 11,  "<f8", 64, "double_data", _E.NATIVE,      _K.NATIVE, "<f8", "float64",
         ulp=_U.IEEE),
    _row("UINT32", 12,  "<u4", 32, "uint64_data", _E.ZERO_EXTEND, _K.NATIVE, "<u4", "uint32"),
    _row("UINT64", 13,  "<u8", 64, "uint64_data", _E.NATIVE,      _K.NATIVE, "<u8", "uint64"),
    _row("COMPLEX64", 14,  "<c8",  64, "float_data",  _E.INTERLEAVED, _K.COMPLEX, "<f4",
         "onnx.complex64 over fixed_size_list<float32>[2] (real, imaginary)",
         ulp=_U.COMPLEX_PARTS),
    _row("COMPLEX128", 15, "<c16", 128, "double_data", _E.INTERLEAVED, _K.COMPLEX, "<f8",
         "onnx.complex128 over fixed_size_list<float64>[2] (real, imaginary)",
         ulp=_U.COMPLEX_PARTS),
    _row("BFLOAT16", 16, "ml_dtypes.bfloat16", 16, "int32_data", _E.ZERO_EXTEND, _K.BFLOAT16, _f32,
         "onnx.bfloat16 over float32: the value widened exactly, NaN payloads kept",
         ulp=_U.RANK_TABLE),
    _row("FLOAT8E4M3FN", 17,   "ml_dtypes.float8_e4m3fn",   8, "int32_data", _E.ZERO_EXTEND,
         _K.MINIFLOAT, _f32, "onnx.float8e4m3fn over float32: every code an exact float32",
         ulp=_U.RANK_TABLE),
    _row("FLOAT8E4M3FNUZ", 18, "ml_dtypes.float8_e4m3fnuz", 8, "int32_data", _E.ZERO_EXTEND,
         _K.MINIFLOAT, _f32, "onnx.float8e4m3fnuz over float32: every code an exact float32",
         ulp=_U.RANK_TABLE),
    _row("FLOAT8E5M2", 19,     "ml_dtypes.float8_e5m2",     8, "int32_data", _E.ZERO_EXTEND,
         _K.MINIFLOAT, _f32, "onnx.float8e5m2 over float32: every code an exact float32",
         ulp=_U.RANK_TABLE),
    _row("FLOAT8E5M2FNUZ", 20, "ml_dtypes.float8_e5m2fnuz", 8, "int32_data", _E.ZERO_EXTEND,
         _K.MINIFLOAT, _f32, "onnx.float8e5m2fnuz over float32: every code an exact float32",
         ulp=_U.RANK_TABLE),
    _row("UINT4", 21, "ml_dtypes.uint4", 4, "int32_data", _E.PACKED_BYTES, _K.SUBBYTE_INT, "u1",
         "onnx.uint4 over uint8: the value, one byte per element"),
    _row("INT4", 22,  "ml_dtypes.int4",  4, "int32_data", _E.PACKED_BYTES, _K.SUBBYTE_INT, "i1",
         "onnx.int4 over int8: the value, one byte per element"),
    _row("FLOAT4E2M1", 23, "ml_dtypes.float4_e2m1fn", 4, "int32_data", _E.PACKED_BYTES,
         _K.MINIFLOAT, _f32, "onnx.float4e2m1 over float32: every code an exact float32",
         ulp=_U.RANK_TABLE),
    _row("FLOAT8E8M0", 24, "ml_dtypes.float8_e8m0fnu", 8, "int32_data", _E.ZERO_EXTEND,
         _K.MINIFLOAT, _f32, "onnx.float8e8m0 over float32: every code an exact float32",
         ulp=_U.RANK_TABLE),
    _row("UINT2", 25, "ml_dtypes.uint2", 2, "int32_data", _E.PACKED_BYTES, _K.SUBBYTE_INT, "u1",
         "onnx.uint2 over uint8: the value, one byte per element"),
    _row("INT2", 26,  "ml_dtypes.int2",  2, "int32_data", _E.PACKED_BYTES, _K.SUBBYTE_INT, "i1",
         "onnx.int2 over int8: the value, one byte per element"),
    _row("FLOAT6E2M3", 27, "ml_dtypes.float6_e2m3fn", 6, "int32_data", _E.ZERO_EXTEND,
         _K.MINIFLOAT, _f32, "onnx.float6e2m3 over float32: every code an exact float32",
         ulp=_U.RANK_TABLE),
    _row("FLOAT6E3M2", 28, "ml_dtypes.float6_e3m2fn", 6, "int32_data", _E.ZERO_EXTEND,
         _K.MINIFLOAT, _f32, "onnx.float6e3m2 over float32: every code an exact float32",
         ulp=_U.RANK_TABLE),
)
# fmt: on

#: Every row, keyed by ``TensorProto.DataType`` value.
DTYPES: Final = MappingProxyType({row.onnx: row for row in _ROWS})
_BY_NAME: Final = MappingProxyType({row.name: row for row in _ROWS})
#: The one row of byte strings: what numpy's object, bytes and str dtypes look up.
(_STRINGS,) = (row for row in _ROWS if row.arrow_kind is ArrowKind.BINARY)


@functools.cache
def _by_numpy() -> MappingProxyType[np.dtype[np.generic], DType]:
    return MappingProxyType(
        {row.numpy: row for row in _ROWS if row.arrow_kind is not ArrowKind.BINARY}
    )


def _accepted() -> str:
    return ", ".join(f"{row.name} ({row.onnx})" for row in _ROWS)


def dtype_of(key: int | str | DType) -> DType:
    """Look up the row of an ONNX data type by enum value or name.

    Raises
    ------
    UnsupportedTypeError
        For UNDEFINED (0) or any value that is not a ``TensorProto.DataType``.
    """
    if isinstance(key, DType):
        return key
    if isinstance(key, str):
        row = _BY_NAME.get(key.upper())
    else:
        try:
            row = DTYPES.get(int(key))
        except (TypeError, ValueError):
            raise UnsupportedTypeError(
                f"key: expected an ONNX data type's enum value (int), name (str) or DType "
                f"row, got {type(key).__name__}; one of {_accepted()}"
            ) from None
    if row is not None:
        return row
    if key in (0, "UNDEFINED"):
        raise UnsupportedTypeError(
            "data_type is UNDEFINED (0): a tensor must declare its element type; "
            f"set data_type to one of {_accepted()}"
        )
    raise UnsupportedTypeError(f"unknown ONNX data_type {key!r}; expected one of {_accepted()}")


def dtype_of_numpy(dtype: object) -> DType:
    """Look up the row whose numpy dtype is ``dtype`` (``object``, ``str_``, ``bytes_``: STRING)."""
    np_dtype = np.dtype(dtype)  # type: ignore[call-overload]
    if np_dtype.kind in "OSU":
        return _STRINGS
    by_numpy = _by_numpy()
    row = by_numpy.get(np_dtype.newbyteorder("<") if np_dtype.byteorder == ">" else np_dtype)
    if row is None:
        row = by_numpy.get(np_dtype.newbyteorder("="))
    if row is None:
        raise UnsupportedTypeError(
            f"numpy dtype {np_dtype} has no ONNX data type; expected one of "
            + ", ".join(str(r.numpy) for r in _ROWS)
        )
    return row

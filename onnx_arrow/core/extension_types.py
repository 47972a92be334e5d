"""Arrow types of ONNX values: element types, tensor layouts and the message wrapper.

Canonical Arrow types come first: ``arrow.fixed_shape_tensor`` for tensors whose
rows share a shape, ``arrow.variable_shape_tensor`` for rows that differ, and
``arrow.bool8`` for BOOL.  Where Arrow has nothing that fits, onnx-arrow defines
its own extension types, all named ``onnx.*`` and all carrying JSON metadata with
a ``version`` key (never pickle):

``onnx.<dtype>``
    element types for the dtypes Arrow lacks (``onnx.bfloat16``, ``onnx.float8e4m3fn``,
    ``onnx.int4``, ``onnx.complex64`` ...), one per row of the dtype table.  A tensor
    column never nests one inside a canonical type (a reader without onnx-arrow would
    drop it without a trace): its tensor type holds the plain storage and records the
    ``data_type`` itself.
``onnx.fixed_shape_tensor``
    the layout of ``arrow.fixed_shape_tensor`` for those element types.
``onnx.variable_shape_tensor``
    the layout of ``arrow.variable_shape_tensor`` for element types pyarrow's
    canonical type refuses (it accepts fixed-width primitives only).
``onnx.variable_rank_tensor``
    rows whose ranks differ: ``struct<data: list<T>, shape: list<int32>>``.
``onnx.message``
    ``struct<value: T, envelope: binary>``: a value and the rest of its protobuf
    message, so that :func:`onnx_arrow.from_arrow` rebuilds it byte for byte.

pyarrow registers ``arrow.variable_shape_tensor`` in C++ without a Python class;
onnx-arrow never registers a Python class under that name and builds such arrays
through the Arrow C data interface instead.
"""

from __future__ import annotations

import ctypes
import functools
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final, Literal, NamedTuple

import numpy as np
import pyarrow as pa

from onnx_arrow.core._json import load_json
from onnx_arrow.core.codec import storage_to_codes
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType, dtype_of
from onnx_arrow.errors import ArrowLayoutError, UnsupportedTypeError

__all__ = [
    "FORMAT_VERSION",
    "MessageType",
    "OnnxElementType",
    "OnnxFixedShapeTensorType",
    "SparseTensorType",
    "TensorLayout",
    "VariableRankTensorType",
    "VariableShapeTensorType",
    "canonical_variable_shape_tensor",
    "check_readable",
    "describe_type",
    "dtype_of_arrow",
    "element_type",
    "extension_metadata",
    "fixed_shape_tensor",
    "sparse_tensor_type",
    "stored",
    "tensor_layout",
    "variable_rank_tensor",
    "variable_shape_tensor",
    "with_storage",
    "without_views",
]

#: Version of the JSON metadata of onnx-arrow's extension types.
FORMAT_VERSION: Final = 1

CANONICAL_VARIABLE_SHAPE: Final = "arrow.variable_shape_tensor"
CANONICAL_FIXED_SHAPE: Final = "arrow.fixed_shape_tensor"


def without_views(
    arrow_type: pa.DataType,
    extension: Callable[[pa.DataType, pa.DataType], pa.DataType] | None = None,
) -> pa.DataType:
    """``arrow_type`` with the view layouts other engines produce replaced, at any depth.

    ``binary_view`` becomes ``binary``, ``string_view`` ``string`` and list views lists:
    the same values in the layouts onnx-arrow converts.  An extension type is kept as
    it is, or, given ``extension``, replaced by ``extension(type, new_storage)`` when
    its storage changes.

    >>> import pyarrow as pa
    >>> without_views(pa.struct([("value", pa.int64()), ("envelope", pa.binary_view())]))
    StructType(struct<value: int64, envelope: binary>)
    """
    t = arrow_type
    if isinstance(t, pa.BaseExtensionType):
        if extension is None:
            return t
        storage = without_views(t.storage_type, extension)
        return t if storage == t.storage_type else extension(t, storage)
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_list_view(t) or pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(without_views(t.value_type, extension)))
    if pa.types.is_large_list_view(t) or pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(without_views(t.value_type, extension)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(
            t.value_field.with_type(without_views(t.value_type, extension)), t.list_size
        )
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(without_views(t.key_type, extension)),
            t.item_field.with_type(without_views(t.item_type, extension)),
            t.keys_sorted,
        )
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(without_views(f.type, extension)) for f in t])
    return t


class _JsonExtensionType(pa.ExtensionType):  # type: ignore[misc]
    """An extension type whose parameters are a JSON object with a format version."""

    _name: ClassVar[str]

    #: Why the type as read cannot be converted (None: it can); see :meth:`_as_read`.
    unreadable: ArrowLayoutError | None = None
    #: The metadata exactly as read, for a type kept :meth:`_as_read`.
    _serialized: bytes | None = None

    def __init__(self, storage_type: pa.DataType, params: dict[str, Any] | None = None) -> None:
        self._params = dict(params or {})
        super().__init__(storage_type, self._name)

    @property
    def params(self) -> dict[str, Any]:
        """The type's parameters, as stored in its metadata (``version`` excluded)."""
        return dict(self._params)

    def __arrow_ext_serialize__(self) -> bytes:
        if self._serialized is not None:
            return self._serialized
        return json.dumps({"version": FORMAT_VERSION, **self._params}, sort_keys=True).encode()

    @classmethod
    def __arrow_ext_deserialize__(
        cls, storage_type: pa.DataType, serialized: bytes
    ) -> _JsonExtensionType:
        # Never raise here: pyarrow calls this while it imports a whole schema (a Parquet
        # footer, an IPC stream, a Polars frame), and an error would make every column of
        # it unreadable.  A layout that is wrong is kept as read and refused, located, when
        # the column is converted (onnx_arrow.core.arrow_input checks every entry point).
        try:
            params = _parse_metadata(cls._name, serialized)
        except ArrowLayoutError as exc:
            return cls._as_read(storage_type, serialized, {}, exc)
        error = _layout_error(cls, storage_type, params)
        if error is None:
            return cls._from_params(storage_type, params)
        unviewed = without_views(storage_type)
        if unviewed != storage_type and _layout_error(cls, unviewed, params) is None:
            # a storage variant another engine made (binary_view for binary ...): the
            # same meaning, converted when the column is read
            return cls._as_read(storage_type, serialized, params, None)
        return cls._as_read(storage_type, serialized, params, error)

    @classmethod
    def _as_read(
        cls,
        storage_type: pa.DataType,
        serialized: bytes,
        params: dict[str, Any],
        error: ArrowLayoutError | None,
    ) -> _JsonExtensionType:
        """The type over ``storage_type`` exactly as read, convertible or not (``error``)."""
        obj = cls.__new__(cls)
        obj._params = dict(params)
        obj._serialized = bytes(serialized)
        obj.unreadable = error
        pa.ExtensionType.__init__(obj, storage_type, cls._name)
        return obj

    @classmethod
    def _from_params(cls, storage_type: pa.DataType, params: dict[str, Any]) -> _JsonExtensionType:
        raise NotImplementedError  # pragma: no cover - every subclass overrides it

    def __hash__(self) -> int:
        return hash((self.extension_name, str(self.storage_type), self.__arrow_ext_serialize__()))

    def __reduce__(self) -> tuple[Any, ...]:
        # The storage type travels as an IPC schema: pyarrow's own pickle of it drops the
        # item field of a fixed_size_list (nullability) and refuses C++-only extension types.
        schema = pa.schema([pa.field("storage", self.storage_type)]).serialize().to_pybytes()
        return _rebuild, (type(self), schema, self.__arrow_ext_serialize__())


def _layout_error(
    cls: type[_JsonExtensionType], storage_type: pa.DataType, params: dict[str, Any]
) -> ArrowLayoutError | None:
    """Why ``cls`` cannot take ``storage_type`` and ``params``, or None."""
    try:
        cls._from_params(storage_type, params)
    except ArrowLayoutError as exc:
        return exc
    except Exception as exc:
        return ArrowLayoutError(f"{storage_type} does not fit: {exc}", where=cls._name)
    return None


def _rebuild(cls: type[_JsonExtensionType], storage: bytes, blob: bytes) -> pa.DataType:
    storage_type = pa.ipc.read_schema(pa.py_buffer(storage)).field(0).type
    return cls.__arrow_ext_deserialize__(storage_type, blob)


#: What to do about unreadable metadata of onnx-arrow's types, and of other writers' types.
_ONNX_METADATA_HINT: Final = "write it as onnx-arrow does: a JSON object with a 'version' key"
_OTHER_METADATA_HINT: Final = "write it as the extension type's specification says: a JSON object"


def _json_object(raw: bytes, *, hint: str, where: str) -> dict[str, Any]:
    """Extension metadata parsed as a JSON object; an error says what is wrong and ``hint``."""
    try:
        parsed = load_json(raw, what="extension metadata", where=where, error=ArrowLayoutError)
    except ArrowLayoutError as exc:
        raise ArrowLayoutError(f"{exc.message}: {raw[:80]!r}; {hint}", where=where) from None
    if not isinstance(parsed, dict):
        raise ArrowLayoutError(
            f"extension metadata must be a JSON object, got {type(parsed).__name__}; {hint}",
            where=where,
        )
    return parsed


def _parse_metadata(name: str, serialized: bytes) -> dict[str, Any]:
    params = _json_object(serialized, hint=_ONNX_METADATA_HINT, where=name)
    version = params.pop("version", None)
    if version != FORMAT_VERSION:
        raise ArrowLayoutError(
            f"extension metadata version {version!r} is not supported (this onnx-arrow reads "
            f"version {FORMAT_VERSION}); upgrade onnx-arrow or rewrite the data",
            where=name,
        )
    return params


def _expect_params(name: str, params: dict[str, Any], allowed: set[str]) -> None:
    unknown = set(params) - allowed
    if unknown:
        raise ArrowLayoutError(
            f"unknown metadata keys {sorted(unknown)}; accepted: {sorted(allowed) or 'none'}",
            where=name,
        )


def _expect_storage(name: str, got: pa.DataType, expected: pa.DataType) -> None:
    if got != expected:
        raise ArrowLayoutError(f"storage type must be {expected}, got {got}", where=name)


# --- element types -----------------------------------------------------------------


class OnnxElementType(_JsonExtensionType):
    """Element type for an ONNX dtype that Arrow lacks, e.g. ``onnx.bfloat16``.

    One subclass per such row of the dtype table is generated at import; get an
    instance with :func:`element_type`.
    """

    dtype: ClassVar[DType]

    def __init__(self) -> None:
        super().__init__(_element_storage(self.dtype), {"data_type": self.dtype.name})

    @classmethod
    def _from_params(cls, storage_type: pa.DataType, params: dict[str, Any]) -> OnnxElementType:
        _expect_params(cls._name, params, {"data_type"})
        if params.get("data_type") != cls.dtype.name:
            raise ArrowLayoutError(
                f"metadata data_type {params.get('data_type')!r} does not match the extension "
                f"name; expected {cls.dtype.name!r}",
                where=cls._name,
            )
        _expect_storage(cls._name, storage_type, _element_storage(cls.dtype))
        return cls()

    def __arrow_ext_class__(self) -> type[pa.ExtensionArray]:
        return OnnxElementArray


class OnnxElementArray(pa.ExtensionArray):  # type: ignore[misc]
    """Array of an ``onnx.<dtype>`` element type; ``to_numpy`` gives the ONNX numpy dtype."""

    def to_numpy(self, zero_copy_only: bool = False, writable: bool = False) -> np.ndarray:
        row = self.type.dtype
        flat = self.storage
        parts = 2 if row.arrow_kind is ArrowKind.COMPLEX else 1  # (real, imaginary) pairs
        if parts == 2:
            flat = flat.values.slice(flat.offset * 2, len(flat) * 2)
        if flat.null_count:
            bad = int(flat.is_null().to_numpy(zero_copy_only=False).argmax()) // parts
            raise ArrowLayoutError(
                f"{row.name} element {bad} is null; elements are never null",
                where=self.type.extension_name,
            )
        return storage_to_codes(flat.to_numpy(zero_copy_only=False), row)


def _element_storage(row: DType) -> pa.DataType:
    base = pa.from_numpy_dtype(row.arrow_storage)
    if row.arrow_kind is ArrowKind.COMPLEX:
        return pa.list_(pa.field("item", base, nullable=False), 2)
    return base


def _make_element_class(row: DType) -> type[OnnxElementType]:
    name = f"{row.name}Type"
    return type(
        name,
        (OnnxElementType,),
        {"dtype": row, "_name": row.extension_name, "__module__": __name__, "__qualname__": name},
    )


_ELEMENT_CLASSES: Final[dict[int, type[OnnxElementType]]] = {}
for _row in DTYPES.values():
    if _row.extension_name is not None:
        _cls = _make_element_class(_row)
        globals()[_cls.__name__] = _cls
        _ELEMENT_CLASSES[_row.onnx] = _cls


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
    return _ELEMENT_CLASSES[row.onnx]()


_ELEMENT_TYPES: Final = {row.onnx: _build_element_type(row) for row in DTYPES.values()}
_DTYPE_BY_NAME: Final = {row.name: row for row in DTYPES.values()}
_OWN_NAMES: Final = tuple(row.name for row in DTYPES.values() if row.extension_name is not None)
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


# --- tensor layouts -------------------------------------------------------------


def fixed_shape_tensor(value_type: pa.DataType, shape: tuple[int, ...]) -> pa.DataType:
    """The fixed-shape tensor type of ``value_type`` and ``shape`` (row-major).

    ``arrow.fixed_shape_tensor`` for the element types Arrow has (BOOL as
    ``arrow.bool8``, STRING as ``binary``), ``onnx.fixed_shape_tensor`` over plain
    storage for onnx-arrow's own (bfloat16, the float8s ...).

    >>> import pyarrow as pa
    >>> from onnx_arrow.core.dtypes import dtype_of
    >>> fixed_shape_tensor(pa.float32(), (2, 3)).extension_name
    'arrow.fixed_shape_tensor'
    >>> bf16 = fixed_shape_tensor(element_type(dtype_of("BFLOAT16")), (2, 3))
    >>> bf16.extension_name, bf16.storage_type
    ('onnx.fixed_shape_tensor', FixedSizeListType(fixed_size_list<item: float>[6]))
    """
    if isinstance(value_type, OnnxElementType):
        return OnnxFixedShapeTensorType(value_type.dtype, shape)
    return pa.fixed_shape_tensor(value_type, list(shape))


def _own_dtype(name: str, params: dict[str, Any]) -> DType | None:
    """The onnx-arrow element dtype a tensor type's metadata records, if any."""
    data_type = params.get("data_type")
    if data_type is None:
        return None
    row = _DTYPE_BY_NAME.get(data_type) if isinstance(data_type, str) else None
    if row is None or row.extension_name is None:
        raise ArrowLayoutError(
            f"metadata data_type {data_type!r} is not one of the element types onnx-arrow "
            f"keeps over plain storage: {', '.join(_OWN_NAMES)}",
            where=name,
        )
    return row


class OnnxFixedShapeTensorType(_JsonExtensionType):
    """``onnx.fixed_shape_tensor``: rows of one shape, of an element type Arrow lacks.

    The layout of ``arrow.fixed_shape_tensor`` (``fixed_size_list<T>[size]``,
    row-major) over the plain storage of the element (float32 for bfloat16 and the
    float8s, int8 / uint8 for the sub-byte integers, ``fixed_size_list<float>[2]`` for
    complex), with the ONNX ``data_type`` and the ``shape`` in its own metadata.  The
    whole meaning is in this one type: a reader that does not know it keeps its
    storage, the exact numbers, and (pyarrow) its name and metadata in the field, and
    never half of it.
    """

    _name = "onnx.fixed_shape_tensor"

    def __init__(self, dtype: DType, shape: Sequence[int]) -> None:
        storage = pa.list_(pa.field("item", _element_storage(dtype)), math.prod(shape))
        super().__init__(storage, {"data_type": dtype.name, "shape": list(shape)})

    @property
    def dtype(self) -> DType:
        """The ONNX dtype of the elements."""
        return _DTYPE_BY_NAME[self._params["data_type"]]

    @property
    def shape(self) -> list[int]:
        """The shape every row has."""
        return list(self._params["shape"])

    @property
    def value_type(self) -> pa.DataType:
        """The Arrow type of one element (the storage holds its plain storage)."""
        return element_type(self.dtype)

    @classmethod
    def _from_params(
        cls, storage_type: pa.DataType, params: dict[str, Any]
    ) -> OnnxFixedShapeTensorType:
        _expect_params(cls._name, params, {"data_type", "shape"})
        row = _own_dtype(cls._name, params)
        shape = params.get("shape")
        if row is None or not (
            isinstance(shape, list) and all(type(d) is int and d > 0 for d in shape)
        ):
            raise ArrowLayoutError(
                f"metadata must hold data_type and shape, a list of positive ints; got {params!r}",
                where=cls._name,
            )
        made = cls(row, shape)
        _expect_storage(cls._name, storage_type, made.storage_type)
        return made

    def __arrow_ext_class__(self) -> type[pa.ExtensionArray]:
        return OnnxTensorArray


class OnnxTensorArray(pa.ExtensionArray):  # type: ignore[misc]
    """An ``onnx.fixed_shape_tensor`` array."""

    def to_numpy_ndarray(self) -> np.ndarray:
        """The rows as one ndarray ``(rows, *shape)`` of the ONNX dtype (``ml_dtypes``)."""
        from onnx_arrow.core.values import to_numpy

        return to_numpy(self)


class _RaggedTensorType(_JsonExtensionType):
    """Storage ``struct<data: list<T>, shape: ...<int32>>``, one row per tensor.

    For an element type of onnx-arrow's own, ``data`` holds its plain storage and
    the metadata its ``data_type``, as :class:`OnnxFixedShapeTensorType` does.
    """

    @property
    def value_type(self) -> pa.DataType:
        """The Arrow type of one element."""
        row = _own_dtype(self._name, self._params)
        if row is not None:
            return element_type(row)
        return self.storage_type.field("data").type.value_type

    @classmethod
    def _check_data_type(cls, storage_type: pa.DataType, params: dict[str, Any]) -> None:
        row = _own_dtype(cls._name, params)
        if row is not None:
            _expect_storage(
                cls._name, storage_type.field("data").type.value_type, _element_storage(row)
            )


class VariableShapeTensorType(_RaggedTensorType):
    """The ``arrow.variable_shape_tensor`` layout for element types pyarrow's C++ refuses.

    Same storage and metadata keys as the canonical type (``uniform_shape``); used
    for BOOL, STRING, COMPLEX and onnx-arrow's own element types.
    """

    _name = "onnx.variable_shape_tensor"

    @property
    def ndim(self) -> int:
        """The rank every row shares."""
        return int(self.storage_type.field("shape").type.list_size)

    @property
    def uniform_shape(self) -> list[int | None] | None:
        """Sizes that every row shares (``None`` where rows differ), if recorded."""
        shape = self._params.get("uniform_shape")
        return None if shape is None else list(shape)

    @classmethod
    def _from_params(
        cls, storage_type: pa.DataType, params: dict[str, Any]
    ) -> VariableShapeTensorType:
        _expect_params(cls._name, params, {"uniform_shape", "data_type"})
        ndim = _ragged_storage_ndim(cls._name, storage_type, fixed_rank=True)
        uniform = params.get("uniform_shape")
        _check_uniform_shape(cls._name, uniform, ndim)
        cls._check_data_type(storage_type, params)
        return cls(storage_type, params)


class VariableRankTensorType(_RaggedTensorType):
    """Tensors whose ranks differ from row to row: ``shape`` is ``list<int32>``."""

    _name = "onnx.variable_rank_tensor"

    @classmethod
    def _from_params(
        cls, storage_type: pa.DataType, params: dict[str, Any]
    ) -> VariableRankTensorType:
        _expect_params(cls._name, params, {"data_type"})
        _ragged_storage_ndim(cls._name, storage_type, fixed_rank=False)
        cls._check_data_type(storage_type, params)
        return cls(storage_type, params)


def _ragged_storage_ndim(name: str, storage: pa.DataType, *, fixed_rank: bool) -> int:
    shape_kind = "fixed_size_list<int32>[ndim]" if fixed_rank else "list<int32>"
    expected = f"struct<data: list<T>, shape: {shape_kind}>"
    if not pa.types.is_struct(storage) or [f.name for f in storage] != ["data", "shape"]:
        raise ArrowLayoutError(f"storage must be {expected}, got {storage}", where=name)
    data, shape = storage.field("data").type, storage.field("shape").type
    if not (pa.types.is_list(data) or pa.types.is_large_list(data)):
        raise ArrowLayoutError(f"storage must be {expected}, got {storage}", where=name)
    shape_ok = (
        pa.types.is_fixed_size_list(shape)
        if fixed_rank
        else pa.types.is_list(shape) or pa.types.is_large_list(shape)
    ) and shape.value_type == pa.int32()
    if not shape_ok:
        raise ArrowLayoutError(f"storage must be {expected}, got {storage}", where=name)
    return int(shape.list_size) if fixed_rank else -1


def _check_uniform_shape(name: str, uniform: object, ndim: int) -> None:
    if uniform is None:
        return
    if (
        not isinstance(uniform, list)
        or len(uniform) != ndim
        or not all(d is None or (type(d) is int and d >= 0) for d in uniform)
    ):
        raise ArrowLayoutError(
            f"uniform_shape must be a list of {ndim} non-negative ints or nulls, got {uniform!r}",
            where=name,
        )


def _ragged_storage(value_type: pa.DataType, ndim: int | None) -> pa.DataType:
    shape = pa.list_(pa.int32(), ndim) if ndim is not None else pa.list_(pa.int32())
    return pa.struct([pa.field("data", pa.list_(stored(value_type))), pa.field("shape", shape)])


def stored(value_type: pa.DataType) -> pa.DataType:
    """The type a tensor type stores elements of ``value_type`` as: onnx-arrow's own
    element types as their plain storage (the tensor type records the dtype), any
    other as itself."""
    return value_type.storage_type if isinstance(value_type, OnnxElementType) else value_type


def _ragged_params(value_type: pa.DataType, params: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value_type, OnnxElementType):
        return {**params, "data_type": value_type.dtype.name}
    return params


def _canonical_accepts(value_type: pa.DataType) -> bool:
    return not isinstance(value_type, pa.BaseExtensionType) and (
        pa.types.is_integer(value_type) or pa.types.is_floating(value_type)
    )


class _CDataHolder:
    """Hands an array and a schema with extension metadata to ``pa.array``."""

    def __init__(self, storage: pa.Array, field: pa.Field) -> None:
        self._storage = storage
        self._field = field

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        return self._field.__arrow_c_schema__(), self._storage.__arrow_c_array__()[1]


def _canonical_field(storage_type: pa.DataType, uniform: list[int | None] | None) -> pa.Field:
    params: dict[str, Any] = {} if uniform is None else {"uniform_shape": uniform}
    metadata = {
        "ARROW:extension:name": CANONICAL_VARIABLE_SHAPE,
        "ARROW:extension:metadata": json.dumps(params),
    }
    return pa.field("", storage_type, metadata=metadata)


@functools.lru_cache(maxsize=256)
def _canonical_variable_shape(
    value_type: pa.DataType, ndim: int, uniform: tuple[int | None, ...] | None
) -> pa.DataType:
    storage_type = _ragged_storage(value_type, ndim)
    empty = pa.nulls(0, storage_type)
    field = _canonical_field(storage_type, None if uniform is None else list(uniform))
    return pa.array(_CDataHolder(empty, field)).type


def variable_shape_tensor(
    value_type: pa.DataType, ndim: int, uniform_shape: list[int | None] | None = None
) -> pa.DataType:
    """The variable-shape tensor type onnx-arrow writes: ``onnx.variable_shape_tensor``.

    The storage and metadata of the canonical ``arrow.variable_shape_tensor``
    (``uniform_shape``), under onnx-arrow's own name and Python class, for every
    element type.  pyarrow registers the canonical type in C++ only, and measured with
    pyarrow 26 that type does not fit: it takes integers and floats only, refuses the
    ``large_list`` storage Polars hands back, and pickles but does not unpickle (so a
    table holding it cannot go to a Ray or Dask worker).  Columns of the canonical
    type are still read (:func:`tensor_layout`; :func:`canonical_variable_shape_tensor`
    makes one).

    >>> import pyarrow as pa
    >>> variable_shape_tensor(pa.float32(), 2).extension_name
    'onnx.variable_shape_tensor'
    """
    if uniform_shape is not None:
        _check_uniform_shape("variable_shape_tensor", uniform_shape, ndim)
    params = {} if uniform_shape is None else {"uniform_shape": list(uniform_shape)}
    return VariableShapeTensorType(
        _ragged_storage(value_type, ndim), _ragged_params(value_type, params)
    )


def canonical_variable_shape_tensor(
    value_type: pa.DataType, ndim: int, uniform_shape: list[int | None] | None = None
) -> pa.DataType:
    """pyarrow's C++ ``arrow.variable_shape_tensor`` (integers and floats), as other
    writers make it; onnx-arrow reads it and writes :func:`variable_shape_tensor`.

    >>> import pyarrow as pa
    >>> canonical_variable_shape_tensor(pa.float32(), 2).extension_name
    'arrow.variable_shape_tensor'
    """
    if not _canonical_accepts(value_type):
        raise UnsupportedTypeError(
            f"arrow.variable_shape_tensor takes integer and float elements only, not {value_type}"
        )
    uniform = None if uniform_shape is None else tuple(uniform_shape)
    return _canonical_variable_shape(value_type, ndim, uniform)


def variable_rank_tensor(value_type: pa.DataType) -> VariableRankTensorType:
    """The type for tensors whose ranks differ between rows."""
    return VariableRankTensorType(_ragged_storage(value_type, None), _ragged_params(value_type, {}))


class TensorLayout(NamedTuple):
    """How a tensor type stores its rows, and the Arrow type of one element.

    ``layout`` is ``fixed`` (``arrow.fixed_shape_tensor``), ``variable`` (a
    variable-shape tensor, canonical or onnx-arrow's) or ``rank``
    (``onnx.variable_rank_tensor``).
    """

    layout: Literal["fixed", "variable", "rank"]
    value_type: pa.DataType


def tensor_layout(arrow_type: pa.DataType) -> TensorLayout | None:
    """The layout and element type of a tensor type; None for any other type.

    >>> import pyarrow as pa
    >>> tensor_layout(variable_rank_tensor(pa.int64()))
    TensorLayout(layout='rank', value_type=DataType(int64))
    >>> tensor_layout(pa.list_(pa.int64())) is None
    True
    """
    name = getattr(arrow_type, "extension_name", None)
    if name == CANONICAL_FIXED_SHAPE or isinstance(arrow_type, OnnxFixedShapeTensorType):
        return TensorLayout("fixed", arrow_type.value_type)
    if isinstance(arrow_type, VariableShapeTensorType):
        return TensorLayout("variable", arrow_type.value_type)
    # the canonical variable-shape type has no Python class: recognised by its name only
    if name == CANONICAL_VARIABLE_SHAPE:
        return TensorLayout("variable", arrow_type.storage_type.field("data").type.value_type)
    if isinstance(arrow_type, VariableRankTensorType):
        return TensorLayout("rank", arrow_type.value_type)
    return None


def ragged_from_storage(arrow_type: pa.DataType, storage: pa.Array) -> pa.Array:
    """Wrap a ``struct<data, shape>`` storage array into ``arrow_type``."""
    if isinstance(arrow_type, _JsonExtensionType):
        return pa.ExtensionArray.from_storage(arrow_type, storage)
    field = pa.field("", storage.type, metadata=_c_schema_metadata(arrow_type))
    return pa.array(_CDataHolder(storage, field))


# --- sparse tensors ----------------------------------------------------------------------


class SparseTensorType(_JsonExtensionType):
    """``onnx.sparse_tensor``: ``struct<shape: list<int64>, values, indices>``.

    ``values`` is a rank-1 variable-shape tensor (``[NNZ]``), ``indices`` an int64
    variable-rank tensor holding ``[NNZ]`` linear or ``[NNZ, rank]`` coordinates,
    exactly as the ``SparseTensorProto`` stored them.
    """

    _name = "onnx.sparse_tensor"

    def __init__(self, storage_type: pa.DataType) -> None:
        super().__init__(storage_type, {})

    @property
    def value_type(self) -> pa.DataType:
        """The Arrow type of one element of ``values``."""
        layout = tensor_layout(self.storage_type.field("values").type)
        assert layout is not None
        return layout.value_type

    @classmethod
    def _from_params(cls, storage_type: pa.DataType, params: dict[str, Any]) -> SparseTensorType:
        _expect_params(cls._name, params, set())
        names = [f.name for f in storage_type] if pa.types.is_struct(storage_type) else []
        if names != ["shape", "values", "indices"]:
            raise ArrowLayoutError(
                "storage must be struct<shape: list<int64>, values: tensor, indices: tensor>, "
                f"got {storage_type}",
                where=cls._name,
            )
        return cls(storage_type)


def sparse_tensor_type(value_type: pa.DataType) -> SparseTensorType:
    """``onnx.sparse_tensor`` whose values have elements of Arrow type ``value_type``."""
    return SparseTensorType(
        pa.struct(
            [
                pa.field("shape", pa.list_(pa.int64())),
                pa.field("values", variable_shape_tensor(value_type, 1)),
                pa.field("indices", variable_rank_tensor(pa.int64())),
            ]
        )
    )


# --- the message wrapper ----------------------------------------------------------


#: The envelope's types: ``binary``, and ``large_binary``, which Polars turns it into.
_ENVELOPE_TYPES: Final = (pa.binary(), pa.large_binary())


class MessageType(_JsonExtensionType):
    """``onnx.message``: ``struct<value: T, envelope: binary>``.

    ``value`` holds the ONNX value in its Arrow form; ``envelope`` holds the rest of
    the protobuf message (names, doc strings, which field stored the data), which
    is itself a valid message of the same kind with its bulk data left out.  The
    envelope may also be ``large_binary``: Polars hands columns back that way.
    """

    _name = "onnx.message"

    def __init__(
        self,
        value_type: pa.DataType,
        kind: Any = ("tensor",),
        *,
        envelope_type: pa.DataType = _ENVELOPE_TYPES[0],
    ) -> None:
        if envelope_type not in _ENVELOPE_TYPES:
            raise ArrowLayoutError(
                f"the envelope is binary or large_binary, not {envelope_type}", where=self._name
            )
        super().__init__(
            pa.struct(
                [
                    pa.field("value", value_type, nullable=True),
                    pa.field("envelope", envelope_type, nullable=True),
                ]
            ),
            {"kind": list(kind) if isinstance(kind, tuple) else kind},
        )

    @property
    def value_type(self) -> pa.DataType:
        """The Arrow type of the values."""
        return self.storage_type.field("value").type

    @property
    def kind(self) -> Any:
        """The ONNX value kind as JSON: ``["tensor"]``, ``["sequence", ["tensor"]]`` ..."""
        return self._params["kind"]

    @classmethod
    def _from_params(cls, storage_type: pa.DataType, params: dict[str, Any]) -> MessageType:
        _expect_params(cls._name, params, {"kind"})
        if "kind" not in params:
            raise ArrowLayoutError("metadata has no 'kind'", where=cls._name)
        if (
            not pa.types.is_struct(storage_type)
            or [f.name for f in storage_type] != ["value", "envelope"]
            or storage_type.field("envelope").type not in _ENVELOPE_TYPES
        ):
            raise ArrowLayoutError(
                "storage must be struct<value: T, envelope: binary> (or a large_binary "
                f"envelope), got {storage_type}",
                where=cls._name,
            )
        return cls(
            storage_type.field("value").type,
            params["kind"],
            envelope_type=storage_type.field("envelope").type,
        )

    def __arrow_ext_class__(self) -> type[pa.ExtensionArray]:
        return MessageArray


class MessageArray(pa.ExtensionArray):  # type: ignore[misc]
    """An ``onnx.message`` array; ``.value`` is the value column, ``.envelope`` the rest."""

    @property
    def value(self) -> pa.Array:
        """The values, in their Arrow form (e.g. a fixed-shape tensor array)."""
        return self.storage.field("value")

    @property
    def envelope(self) -> pa.Array:
        """The protobuf envelopes (binary), one per row."""
        return self.storage.field("envelope")


# --- metadata of C++-only extension types --------------------------------------------


class _ArrowSchema(ctypes.Structure):
    _fields_ = (
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_void_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    )


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = (ctypes.py_object, ctypes.c_char_p)


def _c_schema_metadata(arrow_type: pa.DataType) -> dict[bytes, bytes]:
    capsule = arrow_type.__arrow_c_schema__()
    schema = _ArrowSchema.from_address(_capsule_pointer(capsule, b"arrow_schema"))
    out: dict[bytes, bytes] = {}
    if not schema.metadata:
        return out
    pos = schema.metadata
    count = ctypes.c_int32.from_address(pos).value
    pos += 4
    for _ in range(count):
        size = ctypes.c_int32.from_address(pos).value
        key = ctypes.string_at(pos + 4, size)
        pos += 4 + size
        size = ctypes.c_int32.from_address(pos).value
        value = ctypes.string_at(pos + 4, size)
        pos += 4 + size
        out[key] = value
    return out


def extension_metadata(arrow_type: pa.DataType) -> dict[str, Any]:
    """The parsed JSON metadata of any extension type, C++-only ones included.

    >>> import pyarrow as pa
    >>> extension_metadata(variable_shape_tensor(pa.float32(), 2, [None, 3]))
    {'uniform_shape': [None, 3]}
    """
    if isinstance(arrow_type, _JsonExtensionType):
        return arrow_type.params
    if isinstance(arrow_type, pa.ExtensionType):
        raw = arrow_type.__arrow_ext_serialize__()
    elif isinstance(arrow_type, pa.BaseExtensionType):
        raw = _c_schema_metadata(arrow_type).get(b"ARROW:extension:metadata", b"")
    else:
        raise UnsupportedTypeError(f"{arrow_type} is not an extension type")
    if not raw:
        return {}
    # other writers' types carry no onnx-arrow version key: a JSON object is all they owe
    where = str(getattr(arrow_type, "extension_name", arrow_type))
    return _json_object(raw, hint=_OTHER_METADATA_HINT, where=where)


def check_readable(arrow_type: pa.DataType, *, where: str = "") -> None:
    """Raise the located error of any onnx-arrow type in ``arrow_type`` whose layout was
    wrong when it was read (see ``__arrow_ext_deserialize__``)."""
    t = arrow_type
    if isinstance(t, _JsonExtensionType):
        if t.unreadable is not None:
            raise t.unreadable.at(where) if where else t.unreadable
        check_readable(t.storage_type, where=where)
    elif isinstance(t, pa.BaseExtensionType):
        check_readable(t.storage_type, where=where)
    elif pa.types.is_map(t):
        check_readable(t.key_type, where=where)
        check_readable(t.item_type, where=where)
    elif pa.types.is_struct(t):
        for f in t:
            check_readable(f.type, where=where)
    elif hasattr(t, "value_type") and not pa.types.is_dictionary(t):
        check_readable(t.value_type, where=where)


def with_storage(arrow_type: pa.DataType, storage: pa.DataType) -> pa.DataType:
    """The extension type ``arrow_type`` (any registered one) over another storage type."""
    if isinstance(arrow_type, pa.ExtensionType):
        serialized = arrow_type.__arrow_ext_serialize__()
    else:
        serialized = _c_schema_metadata(arrow_type).get(b"ARROW:extension:metadata", b"")
    field = pa.field(
        "",
        storage,
        metadata={
            b"ARROW:extension:name": arrow_type.extension_name.encode(),
            b"ARROW:extension:metadata": serialized,
        },
    )
    return pa.array(_CDataHolder(pa.nulls(0, storage), field)).type


def describe_type(arrow_type: pa.DataType) -> str:
    """A short name of an Arrow type: pyarrow's notation without Python class names.

    >>> import pyarrow as pa
    >>> describe_type(pa.fixed_shape_tensor(pa.float32(), [2, 3]))
    'arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]'
    """
    name = getattr(arrow_type, "extension_name", None)
    if name is None:
        return str(arrow_type)
    layout = tensor_layout(arrow_type)
    if layout is not None:
        return _describe_tensor(arrow_type, name, layout)
    if isinstance(arrow_type, MessageType):
        return f"{name}[value={describe_type(arrow_type.value_type)}]"
    return str(name)


def _describe_tensor(arrow_type: pa.DataType, name: str, layout: TensorLayout) -> str:
    value = describe_type(layout.value_type)
    if layout.layout == "fixed":
        shape = ",".join(str(d) for d in arrow_type.shape)
        return f"{name}[value_type={value}, shape=[{shape}]]"
    if layout.layout == "rank":
        return f"{name}[value_type={value}]"
    ndim = arrow_type.storage_type.field("shape").type.list_size
    text = f"{name}[value_type={value}, ndim={ndim}"
    uniform = extension_metadata(arrow_type).get("uniform_shape")
    if uniform is not None:
        text += ", uniform_shape=[" + ",".join(_null_text(d) for d in uniform) + "]"
    return text + "]"


def _null_text(d: int | None) -> str:
    return "null" if d is None else str(d)


def _register_all() -> None:
    types: list[pa.ExtensionType] = [cls() for cls in _ELEMENT_CLASSES.values()]
    types += [
        OnnxFixedShapeTensorType(dtype_of("BFLOAT16"), (1,)),
        VariableShapeTensorType(_ragged_storage(pa.float32(), 1), {}),
        variable_rank_tensor(pa.float32()),
        sparse_tensor_type(pa.float32()),
        MessageType(pa.null()),
    ]
    for ext in types:
        try:
            pa.register_extension_type(ext)
        except pa.ArrowKeyError:
            # Registered already (a module reload): replace with the current class.
            pa.unregister_extension_type(ext.extension_name)
            pa.register_extension_type(ext)


_register_all()

"""The base of onnx-arrow's extension types: parameters as versioned JSON metadata.

Every ``onnx.*`` type keeps its parameters in a JSON object with a ``version`` key
(never pickle).  Reading a type never raises: a layout that is wrong is kept as read,
its error recorded, and :func:`check_readable` raises it, located, when a column of
it is converted.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Final

import pyarrow as pa

from onnx_arrow.core._json import load_json
from onnx_arrow.core.views import without_views
from onnx_arrow.core.walk import walk
from onnx_arrow.errors import ArrowLayoutError

__all__ = [
    "FORMAT_VERSION",
    "OTHER_METADATA_HINT",
    "JsonExtensionType",
    "check_readable",
    "expect_params",
    "expect_storage",
    "json_object",
]

#: Version of the JSON metadata of onnx-arrow's extension types.
FORMAT_VERSION: Final = 1


class JsonExtensionType(pa.ExtensionType):  # type: ignore[misc]
    """An extension type whose parameters are a JSON object with a format version."""

    _name: ClassVar[str]

    #: Why the type as read cannot be converted (None: it can); see :meth:`_as_read`.
    unreadable: ArrowLayoutError | None = None
    #: The metadata exactly as read, for a type kept :meth:`_as_read`.
    _serialized: bytes | None = None
    #: The storage the type declares, for a type read over a storage that differs from it
    #: only in the nullability of its fields (an engine dropped a not-null flag): the
    #: column is cast to it where it is read, its values checked to hold no null there.
    declared_storage: pa.DataType | None = None

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
    ) -> JsonExtensionType:
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
        declared = getattr(error, "expected", None)
        if declared is not None and _nullability_aside(declared) == _nullability_aside(
            storage_type
        ):
            # a not-null flag an engine dropped (Polars, Lance): cast back where it is read
            obj = cls._as_read(storage_type, serialized, params, None)
            obj.declared_storage = declared
            return obj
        return cls._as_read(storage_type, serialized, params, error)

    @classmethod
    def _as_read(
        cls,
        storage_type: pa.DataType,
        serialized: bytes,
        params: dict[str, Any],
        error: ArrowLayoutError | None,
    ) -> JsonExtensionType:
        """The type over ``storage_type`` exactly as read, convertible or not (``error``)."""
        obj = cls.__new__(cls)
        obj._params = dict(params)
        obj._serialized = bytes(serialized)
        obj.unreadable = error
        pa.ExtensionType.__init__(obj, storage_type, cls._name)
        return obj

    @classmethod
    def _from_params(cls, storage_type: pa.DataType, params: dict[str, Any]) -> JsonExtensionType:
        raise NotImplementedError  # pragma: no cover - every subclass overrides it

    def __hash__(self) -> int:
        return hash((self.extension_name, str(self.storage_type), self.__arrow_ext_serialize__()))

    def __reduce__(self) -> tuple[Any, ...]:
        # The storage type travels as an IPC schema: pyarrow's own pickle of it drops the
        # item field of a fixed_size_list (nullability) and refuses C++-only extension types.
        schema = pa.schema([pa.field("storage", self.storage_type)]).serialize().to_pybytes()
        return _rebuild, (type(self), schema, self.__arrow_ext_serialize__())


def _layout_error(
    cls: type[JsonExtensionType], storage_type: pa.DataType, params: dict[str, Any]
) -> ArrowLayoutError | None:
    """Why ``cls`` cannot take ``storage_type`` and ``params``, or None."""
    try:
        cls._from_params(storage_type, params)
    except ArrowLayoutError as exc:
        return exc
    except Exception as exc:
        return ArrowLayoutError(f"{storage_type} does not fit: {exc}", where=cls._name)
    return None


def _rebuild(cls: type[JsonExtensionType], storage: bytes, blob: bytes) -> pa.DataType:
    storage_type = pa.ipc.read_schema(pa.py_buffer(storage)).field(0).type
    return cls.__arrow_ext_deserialize__(storage_type, blob)


#: What to do about unreadable metadata of onnx-arrow's types, and of other writers' types.
_ONNX_METADATA_HINT: Final = "write it as onnx-arrow does: a JSON object with a 'version' key"
OTHER_METADATA_HINT: Final = "write it as the extension type's specification says: a JSON object"


def json_object(raw: bytes, *, hint: str, where: str) -> dict[str, Any]:
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
    params = json_object(serialized, hint=_ONNX_METADATA_HINT, where=name)
    version = params.pop("version", None)
    if version != FORMAT_VERSION:
        raise ArrowLayoutError(
            f"extension metadata version {version!r} is not supported (this onnx-arrow reads "
            f"version {FORMAT_VERSION}); upgrade onnx-arrow or rewrite the data",
            where=name,
        )
    return params


def expect_params(name: str, params: dict[str, Any], allowed: set[str]) -> None:
    unknown = set(params) - allowed
    if unknown:
        raise ArrowLayoutError(
            f"unknown metadata keys {sorted(unknown)}; accepted: {sorted(allowed) or 'none'}",
            where=name,
        )


class _StorageMismatch(ArrowLayoutError):
    """A storage type that is not the one the type declares (``expected``)."""

    def __init__(self, message: str, *, where: str, expected: pa.DataType) -> None:
        super().__init__(message, where=where)
        self.expected = expected


def expect_storage(name: str, got: pa.DataType, expected: pa.DataType) -> None:
    if got != expected:
        raise _StorageMismatch(
            f"storage type must be {expected}, got {got}", where=name, expected=expected
        )


def _nullability_aside(t: pa.DataType) -> str:
    """``t`` in words, the nullability of its fields left out."""
    return str(t).replace(" not null", "")


def check_readable(arrow_type: pa.DataType, *, where: str = "") -> None:
    """Raise the located error of any onnx-arrow type in ``arrow_type`` whose layout was
    wrong when it was read (see ``__arrow_ext_deserialize__``), the first in pre-order."""
    for t in walk(arrow_type):
        if isinstance(t, JsonExtensionType) and t.unreadable is not None:
            raise t.unreadable.at(where) if where else t.unreadable

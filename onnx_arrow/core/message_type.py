"""``onnx.message``: an ONNX value in its Arrow form beside the rest of its message.

``struct<value: T, envelope: binary>``: the envelope holds what the value does not
(names, doc strings, which field stored the data), so that
:func:`onnx_arrow.from_arrow` rebuilds each message byte for byte.  Asked for
(``to_arrow(values, exact=True, digest=True)``), a third field ``digest:
fixed_size_binary(16)`` holds each row's digest (:mod:`onnx_arrow.core.value_digests`),
which :func:`onnx_arrow.from_arrow` checks.
"""

from __future__ import annotations

from typing import Any, Final

import pyarrow as pa

from onnx_arrow.core.json_extension import JsonExtensionType, expect_params
from onnx_arrow.core.value_digests import DIGEST_TYPES
from onnx_arrow.errors import ArrowLayoutError

__all__ = ["ENVELOPE_TYPES", "MessageArray", "MessageType"]


#: The envelope's types: ``binary``, and ``large_binary``, which Polars turns it into.
ENVELOPE_TYPES: Final = (pa.binary(), pa.large_binary())


class MessageType(JsonExtensionType):
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
        envelope_type: pa.DataType = ENVELOPE_TYPES[0],
        digest_type: pa.DataType | None = None,
    ) -> None:
        if envelope_type not in ENVELOPE_TYPES:
            raise ArrowLayoutError(
                f"the envelope is binary or large_binary, not {envelope_type}", where=self._name
            )
        if digest_type is not None and digest_type not in DIGEST_TYPES:
            raise ArrowLayoutError(
                f"the digest is fixed_size_binary(16) or binary, not {digest_type}",
                where=self._name,
            )
        fields = [
            pa.field("value", value_type, nullable=True),
            pa.field("envelope", envelope_type, nullable=True),
        ]
        if digest_type is not None:
            fields.append(pa.field("digest", digest_type, nullable=True))
        super().__init__(
            pa.struct(fields), {"kind": list(kind) if isinstance(kind, tuple) else kind}
        )

    @property
    def value_type(self) -> pa.DataType:
        """The Arrow type of the values."""
        return self.storage_type.field("value").type

    @property
    def digest_type(self) -> pa.DataType | None:
        """The type of the digests, or None where the rows carry none."""
        t = self.storage_type
        return t.field("digest").type if t.get_field_index("digest") >= 0 else None

    @property
    def kind(self) -> Any:
        """The ONNX value kind as JSON: ``["tensor"]``, ``["sequence", ["tensor"]]`` ..."""
        return self._params["kind"]

    @classmethod
    def _from_params(cls, storage_type: pa.DataType, params: dict[str, Any]) -> MessageType:
        expect_params(cls._name, params, {"kind"})
        if "kind" not in params:
            raise ArrowLayoutError("metadata has no 'kind'", where=cls._name)
        names = [f.name for f in storage_type] if pa.types.is_struct(storage_type) else []
        if (
            names not in (["value", "envelope"], ["value", "envelope", "digest"])
            or storage_type.field("envelope").type not in ENVELOPE_TYPES
            or ("digest" in names and storage_type.field("digest").type not in DIGEST_TYPES)
        ):
            raise ArrowLayoutError(
                "storage must be struct<value: T, envelope: binary> (or a large_binary "
                "envelope), with a digest: fixed_size_binary(16) (or binary) after it "
                f"where the rows carry digests, got {storage_type}",
                where=cls._name,
            )
        return cls(
            storage_type.field("value").type,
            params["kind"],
            envelope_type=storage_type.field("envelope").type,
            digest_type=storage_type.field("digest").type if "digest" in names else None,
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

    @property
    def digest(self) -> pa.Array | None:
        """The digests of the rows' values, or None where the rows carry none."""
        return self.storage.field("digest") if self.type.digest_type is not None else None

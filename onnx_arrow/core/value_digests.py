"""Per-row digests of values' exact bytes: a check of the bits that travels with the data.

An engine's own Parquet writer may rewrite the bits of a float without a word: Spark's
``write.parquet`` and DuckDB's ``COPY ... TO`` (once it dictionary-encodes a column) turn
every NaN, whatever its payload and sign, into ``0x7fc00000``.  The values still read,
the types still check, and the messages come back other than they were.  A digest of each
value's exact bytes, written beside the value, makes that change an error: the row's
value, turned back into its message, no longer has the digest recorded for it.

The digest is the corpus store's (BLAKE2b-128) over the bytes of the row's value as one
serialized ONNX message (what :func:`onnx_arrow.from_arrow` gives for the row, serialized),
so it speaks of the values, not of the Arrow layout an engine chose for them.

>>> value_digest(b"").hex()
'cae66941d9efbd404e4d88758ea67670'
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final

import pyarrow as pa

from onnx_arrow.errors import ArrowLayoutError

__all__ = [
    "DIGEST_COLUMN_SUFFIX",
    "DIGEST_TYPE",
    "DIGEST_TYPES",
    "check_digests",
    "digests_of",
    "value_digest",
]

#: The name of the column that holds a column's per-row digests, after the column's own
#: name: ``x`` has ``x__onnx_arrow_digest``.
DIGEST_COLUMN_SUFFIX: Final = "__onnx_arrow_digest"

#: The Arrow type of a digest column as written.
DIGEST_TYPE: Final = pa.binary(16)

#: The types digests are read in: as written, and as engines give them back.
DIGEST_TYPES: Final = (DIGEST_TYPE, pa.binary(), pa.large_binary(), pa.binary_view())

#: The trap a changed digest most likely comes from, and the routes that keep the bits.
ENGINE_WRITER_TRAP: Final = (
    "an engine's Parquet writer that rewrites NaN payloads and signs (Spark's write.parquet; "
    "DuckDB's COPY ... TO once it dictionary-encodes the column) is the likely cause: write "
    "the table with pyarrow (pyarrow.parquet.write_table) or Polars (write_parquet), which "
    "keep every bit, or carry the float values as their integer bit patterns"
)


def value_digest(data: bytes) -> bytes:
    """The digest of a value's exact bytes: BLAKE2b-128, the digest the corpus store
    records of each file."""
    return hashlib.blake2b(data, digest_size=16).digest()


def digests_of(serialized: Sequence[bytes]) -> pa.Array:
    """The digest of each serialized value, as a ``fixed_size_binary(16)`` array."""
    return pa.array([value_digest(b) for b in serialized], DIGEST_TYPE)


def check_digests(serialized: Sequence[bytes], recorded: Any, *, where: str) -> None:
    """Check each row's value, serialized, against the digest ``recorded`` for it when it
    was written (an array or chunked array of one of :data:`DIGEST_TYPES`); ``where``
    locates the column (empty: a column on its own).

    Raises
    ------
    ArrowLayoutError
        At the first row whose value's bytes are not those the digest was taken of (or
        that records none), naming the column, the row, how many rows differ and the
        engine-writer trap with the routes that keep the bits; or if ``recorded`` is no
        binary.
    """
    if isinstance(recorded, pa.ChunkedArray):
        chunks = recorded.chunks
        recorded = pa.concat_arrays(chunks) if chunks else pa.array([], recorded.type)
    if recorded.type not in DIGEST_TYPES:
        raise ArrowLayoutError(
            f"the digests are {recorded.type}, not binary; write the values with onnx_arrow",
            where=where,
        )
    got = [value_digest(b) for b in serialized]
    wanted = recorded.to_pylist()
    bad = [i for i, (g, w) in enumerate(zip(got, wanted, strict=True)) if g != w]
    if not bad:
        return
    i = bad[0]
    if wanted[i] is None:
        differs = "the row records no digest (null)"
    else:
        differs = (
            f"the row's value is not the one its digest was taken of: its exact bytes "
            f"differ (BLAKE2b-128 {got[i].hex()}, recorded {bytes(wanted[i]).hex()})"
        )
    raise ArrowLayoutError(
        f"{differs} ({len(bad)} of the {len(got)} rows differ): the values changed after "
        f"they were written; {ENGINE_WRITER_TRAP}",
        where=f"{where}, row {i}" if where else f"row {i}",
    )

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
from typing import Any, Final

import pyarrow as pa

from onnx_arrow.core.values import from_arrow_serialized
from onnx_arrow.errors import ArrowLayoutError, OnnxArrowError

__all__ = [
    "DIGEST_COLUMN_SUFFIX",
    "DIGEST_TYPE",
    "check_row_digests",
    "row_digests",
    "value_digest",
]

#: The name of the column that holds a column's per-row digests, after the column's own
#: name: ``x`` has ``x__onnx_arrow_digest``.
DIGEST_COLUMN_SUFFIX: Final = "__onnx_arrow_digest"

#: The Arrow type of a digest column as written (engines may read it back as ``binary``).
DIGEST_TYPE: Final = pa.binary(16)

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


def row_digests(column: Any, *, where: str = "") -> pa.Array:
    """The digest of each row's value of ``column`` (an onnx-arrow value column, in either
    form), as a ``fixed_size_binary(16)`` array.

    Raises
    ------
    UnsupportedTypeError
        If ``column`` is not the Arrow form of ONNX values.
    OnnxArrowError
        If a row's value cannot be given as a message (located at the row).
    """
    try:
        _, serialized = from_arrow_serialized(column)
    except OnnxArrowError as exc:
        raise (exc.at(where) if where else exc) from None
    return pa.array([value_digest(b) for b in serialized], DIGEST_TYPE)


def check_row_digests(column: Any, recorded: Any, *, name: str) -> None:
    """Check each row's value of ``column`` (column ``name`` of a table) against the digest
    ``recorded`` for it when the table was written (``binary`` of any layout).

    Raises
    ------
    ArrowLayoutError
        At the first row whose value's bytes are not those the digest was taken of (or
        that records none), naming the column, the row, how many rows differ and the
        engine-writer trap with the routes that keep the bits.
    """
    where = f"column {name!r}"
    got = row_digests(column, where=where).to_pylist()
    if isinstance(recorded, pa.ChunkedArray):
        recorded = pa.concat_arrays(recorded.chunks) if recorded.num_chunks else pa.array([])
    if not (
        pa.types.is_binary(recorded.type)
        or pa.types.is_large_binary(recorded.type)
        or pa.types.is_binary_view(recorded.type)
        or pa.types.is_fixed_size_binary(recorded.type)
    ):
        raise ArrowLayoutError(
            f"the digest column {name + DIGEST_COLUMN_SUFFIX!r} is {recorded.type}, not "
            "binary; write the table with onnx_arrow.to_portable",
            where=where,
        )
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
        f"{differs}, and so do {len(bad)} of the {len(got)} rows: the values changed after "
        f"the table was written; {ENGINE_WRITER_TRAP}",
        where=f"{where}, row {i}",
    )

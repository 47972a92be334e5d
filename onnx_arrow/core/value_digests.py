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

That full digest turns every row into its message, on writing and on reading.  The check
portable tables carry by default is cheaper: the *float digest* of a row is the
BLAKE2b-128 of the place and bits of each float in it that equality cannot tell from
another (a NaN, whatever its payload and sign, and a negative zero), and a row with none
records nothing (null).  Those are the bits engines rewrite (a NaN hashed, compared or
dictionary-encoded by value; a zero whose sign is dropped), and finding them is one
vectorized pass over each float buffer: no message is built.  A row where the engine
changed such a float, or made one, no longer has the float digest recorded for it.

>>> value_digest(b"").hex()
'cae66941d9efbd404e4d88758ea67670'
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.core.walk import child_arrays, walk
from onnx_arrow.errors import ArrowLayoutError, UnsupportedTypeError

__all__ = [
    "DIGEST_COLUMN_SUFFIX",
    "DIGEST_TYPE",
    "DIGEST_TYPES",
    "FLOAT_DIGEST_COLUMN_SUFFIX",
    "check_digests",
    "check_float_digests",
    "digests_of",
    "float_digests",
    "float_digests_of",
    "value_digest",
]

#: The name of the column that holds a column's per-row digests, after the column's own
#: name: ``x`` has ``x__onnx_arrow_digest``.
DIGEST_COLUMN_SUFFIX: Final = "__onnx_arrow_digest"

#: The name of the column that holds a column's per-row float digests, after the column's
#: own name: ``x`` has ``x__onnx_arrow_float_digest`` (written where a row of ``x`` holds a
#: NaN or a negative zero).
FLOAT_DIGEST_COLUMN_SUFFIX: Final = "__onnx_arrow_float_digest"

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
    _refuse(differs, len(bad), len(got), where=f"{where}, row {i}" if where else f"row {i}")


def _refuse(differs: str, bad: int, rows: int, *, where: str) -> None:
    raise ArrowLayoutError(
        f"{differs} ({bad} of the {rows} rows differ): the values changed after "
        f"they were written; {ENGINE_WRITER_TRAP}",
        where=where,
    )


# --- float digests ---------------------------------------------------------------------------

#: Per float width: the unsigned view of its bits, the sign bit, and the bits of infinity
#: (a NaN's magnitude is above them).
_FLOATS: Final = {
    2: (np.uint16, 0x8000, 0x7C00),
    4: (np.uint32, 0x8000_0000, 0x7F80_0000),
    8: (np.uint64, 0x8000_0000_0000_0000, 0x7FF0_0000_0000_0000),
}

#: The floats equality cannot tell found under one float leaf of a column: their rows
#: (in the array searched), their places on the way down (one column per list level) and
#: their bits.
_Found = tuple[np.ndarray, np.ndarray, np.ndarray]


def float_digests(column: pa.Array | pa.ChunkedArray) -> dict[int, bytes]:
    """The float digest of each row of ``column`` (any Arrow column, its storage searched)
    that holds a NaN or a negative zero, by row: the BLAKE2b-128 of each such float's leaf
    (in the order of the type's walk), its place in every list on the way down, and its
    bits.  Rows without one are left out; so are floats under a null.

    >>> import numpy as np, pyarrow as pa
    >>> column = pa.array([[1.0, -0.0], [2.0], None, [float("nan")]], pa.list_(pa.float32()))
    >>> sorted(float_digests(column))
    [0, 3]

    Raises
    ------
    UnsupportedTypeError
        For a union type holding floats (no ONNX value is stored as one).
    """
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    found: list[tuple[np.ndarray, np.ndarray]] = []  # rows, records
    start = 0
    for chunk in chunks:
        for leaf, (rows, places, bits) in enumerate(_found(chunk)):
            if len(rows):
                records = np.zeros((len(rows), places.shape[1] + 2), np.uint64)
                records[:, 0] = leaf
                records[:, 1:-1] = places
                records[:, -1] = bits
                found.append((rows + start, records))
        start += len(chunk)
    if not found:
        return {}
    width = max(r.shape[1] for _, r in found)
    rows = np.concatenate([r for r, _ in found])
    records = np.concatenate([np.pad(r, ((0, 0), (0, width - r.shape[1]))) for _, r in found])
    order = np.argsort(rows, kind="stable")  # each row's floats: leaf by leaf, in order
    rows, records = rows[order], records[order]
    firsts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    ends = np.r_[firsts[1:], len(rows)]
    return {
        int(rows[a]): value_digest(records[a:b].astype("<u8").tobytes())
        for a, b in zip(firsts, ends, strict=True)
    }


def _found(array: pa.Array) -> list[_Found]:
    """The floats equality cannot tell under ``array``, leaf by leaf, by row of ``array``."""
    t = array.type
    if isinstance(t, pa.BaseExtensionType):
        return _found(array.storage)
    if pa.types.is_floating(t):
        return [_leaf(array)]
    if pa.types.is_union(t):
        if any(pa.types.is_floating(x) for x in walk(t)):
            raise UnsupportedTypeError(
                f"the column is {t}: floats inside a union have no float digest; write the "
                "table with to_portable(table, digest=True)"
            )
        return []
    if pa.types.is_run_end_encoded(t):
        return _found(pc.run_end_decode(array))
    if pa.types.is_dictionary(t):
        return _found(array.dictionary_decode())
    out: list[_Found] = []
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        offsets = np.asarray(array.offsets)
        offsets = offsets - offsets[0] if len(offsets) else offsets
    elif pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        # its child is the elements of its rows in row order (pyarrow 26 casts a list view
        # with a null row to a list that is invalid, so the view is read as it is)
        sizes = np.asarray(pc.list_value_length(array).fill_null(0), np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
    if (
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_map(t)
        or (pa.types.is_list_view(t) or pa.types.is_large_list_view(t))
    ):
        for kid in child_arrays(array):
            for idx, places, bits in _found(kid):
                rows = np.searchsorted(offsets, idx, side="right") - 1
                where = np.column_stack([idx - offsets[rows], places])
                out.append(_valid(array, rows, where, bits))
        return out
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        for idx, places, bits in _found(child_arrays(array)[0]):
            out.append(_valid(array, idx // size, np.column_stack([idx % size, places]), bits))
        return out
    if not pa.types.is_struct(t):
        return []  # no children (walk refuses a nested type it does not know)
    for kid in child_arrays(array):  # a struct's fields: one element per row
        out.extend(_valid(array, idx, places, bits) for idx, places, bits in _found(kid))
    return out


def _leaf(array: pa.Array) -> _Found:
    view, sign, infinity = _FLOATS[array.type.byte_width]
    if len(array) == 0:
        empty = np.zeros(0, np.int64)
        return empty, np.zeros((0, 0), np.int64), empty.astype(np.uint64)
    bits = np.frombuffer(array.buffers()[1], view)[array.offset : array.offset + len(array)]
    risky = ((bits & view(sign - 1)) > infinity) | (bits == sign)  # NaN, or -0
    if array.null_count:
        risky &= np.asarray(array.is_valid())
    idx = np.flatnonzero(risky)
    return idx, np.zeros((len(idx), 0), np.int64), bits[idx].astype(np.uint64)


def _valid(array: pa.Array, rows: np.ndarray, places: np.ndarray, bits: np.ndarray) -> _Found:
    """The floats found, at ``rows`` of ``array``, less those under its null rows."""
    if array.null_count and len(rows):
        keep = np.asarray(array.is_valid())[rows]
        return rows[keep], places[keep], bits[keep]
    return rows, places, bits


def float_digests_of(column: pa.Array | pa.ChunkedArray) -> pa.Array | None:
    """The float digests of ``column`` as a ``fixed_size_binary(16)`` array, null on the
    rows without a NaN or negative zero; None where no row holds one."""
    found = float_digests(column)
    if not found:
        return None
    out: list[bytes | None] = [None] * len(column)
    for row, digest in found.items():
        out[row] = digest
    return pa.array(out, DIGEST_TYPE)


def check_float_digests(column: pa.Array | pa.ChunkedArray, recorded: Any, *, where: str) -> None:
    """Check each row of ``column`` against the float digest ``recorded`` for it when it
    was written (null on rows that held no NaN and no negative zero).

    Raises
    ------
    ArrowLayoutError
        At the first row whose NaNs or negative zeros are not those the float digest was
        taken of (or that holds one where none was recorded), naming the column, the row,
        how many rows differ and the engine-writer trap with the routes that keep the
        bits; or if ``recorded`` is no binary.
    """
    if isinstance(recorded, pa.ChunkedArray):
        chunks = recorded.chunks
        recorded = pa.concat_arrays(chunks) if chunks else pa.array([], recorded.type)
    if recorded.type not in DIGEST_TYPES:
        raise ArrowLayoutError(
            f"the float digests are {recorded.type}, not binary; write the values with "
            "onnx_arrow.to_portable",
            where=where,
        )
    if recorded.type not in (DIGEST_TYPE, pa.binary()):  # take has no kernel for views
        recorded = recorded.cast(pa.binary())
    got = float_digests(column)
    at = np.flatnonzero(np.asarray(recorded.is_valid()))
    wanted = dict(zip(at.tolist(), recorded.take(pa.array(at)).to_pylist(), strict=True))
    bad = sorted(
        row for row in got.keys() | wanted.keys() if got.get(row) != _bytes(wanted.get(row))
    )
    if not bad:
        return
    i = bad[0]
    found, kept = got.get(i), _bytes(wanted.get(i))
    if kept is None:
        differs = (
            f"the row holds a NaN or a negative zero (float digest {found.hex() if found else ''}) "
            "where it held none when written"
        )
    elif found is None:
        differs = (
            f"the row held a NaN or a negative zero when written (float digest {kept.hex()}) "
            "and holds none now"
        )
    else:
        differs = (
            "the row's NaNs and negative zeros are not those its float digest was taken of: "
            f"their bits or places differ (float digest {found.hex()}, recorded {kept.hex()})"
        )
    _refuse(differs, len(bad), len(column), where=f"{where}, row {i}")


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)

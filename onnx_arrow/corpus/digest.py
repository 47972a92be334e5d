"""The digest of a store's files: how it is computed, and the check of a file rebuilt
from its rows against the digest recorded at import.

Every reader that rebuilds a file from rows (:class:`~onnx_arrow.corpus.Store` reads of
values and files, export, :func:`~onnx_arrow.corpus.cases_from_rows`) checks it here, so
that rows changed after the store was written (NaN bits an engine's Parquet writer
rewrote, say) are refused with the case and path, never read as other values.

>>> file_digest(b"").hex()
'cae66941d9efbd404e4d88758ea67670'
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Final, Protocol

import numpy as np

from onnx_arrow.core.model import value_digest
from onnx_arrow.corpus.sources import CorpusError
from onnx_arrow.errors import OnnxArrowError

__all__ = [
    "BESIDE_BYTES",
    "Decoded",
    "Digest",
    "check_digest",
    "damaged",
    "digest_beside",
    "digest_of",
    "file_digest",
]


class Decoded(Protocol):
    """A value decoded from rows (a :class:`~onnx_arrow.corpus.StoredValue`)."""

    def to_numpy(self) -> Any: ...


#: The ``digest`` of a file's bytes, as the store's writer records it: the one digest of
#: exact bytes the core gives values too (BLAKE2b-128).
file_digest = value_digest

#: Files of at least this many bytes are digested on a thread of their own
#: (:func:`digest_beside`); a smaller one costs less than handing it over.
BESIDE_BYTES: Final = 1 << 16

#: A file's digest, or the digest being computed beside (:func:`digest_beside`).
Digest = bytes | Future[bytes]

_digesters: dict[int, ThreadPoolExecutor] = {}  # by process: a forked worker makes its own
_digesters_lock = threading.Lock()


def digest_beside(data: bytes) -> Digest:
    """:func:`file_digest` of ``data``, for a large file computed on a thread of this
    process's own while the caller goes on (BLAKE2b releases the GIL: with a core free,
    an import's digests, about 0.6 s of CPU on 500 MB of tensors, cost it no time);
    :func:`digest_of` gives it.  The bytes stay referenced until it is computed."""
    if len(data) < BESIDE_BYTES:
        return file_digest(data)
    pid = os.getpid()
    with _digesters_lock:
        digester = _digesters.get(pid)
        if digester is None:
            digester = _digesters[pid] = ThreadPoolExecutor(1, "onnx-arrow-digest")
    return digester.submit(file_digest, data)


def digest_of(digest: Digest | None) -> bytes | None:
    """The digest :func:`digest_beside` gave, once computed (None stays None)."""
    return digest.result() if isinstance(digest, Future) else digest


def damaged(message: str, *, where: str) -> CorpusError:
    """An error in a store's rows: it was damaged or changed after it was written."""
    return CorpusError(
        f"{message}; the store is damaged or was changed after it was written: "
        "import the corpus again",
        where=where,
    )


def check_digest(
    data: bytes, recorded: bytes | None, *, where: str, value: Decoded | None = None
) -> None:
    """Check the bytes of a file rebuilt from its rows against the ``digest`` recorded
    at import (BLAKE2b-128, as the store's writer computes it); ``value``, the value
    the bytes were rebuilt from, lets the error say whether it holds NaN.

    Raises
    ------
    CorpusError
        If they differ (or the row records no digest), naming the file (``where``),
        both digests and the likely cause.
    """
    got = file_digest(data)
    if recorded == got:
        return
    if recorded is None:
        differs = "its row records no digest (null) where the store's rows record one"
    else:
        differs = (
            f"the bytes rebuilt from the rows differ from the digest recorded at import "
            f"(BLAKE2b-128 {got.hex()}, recorded {bytes(recorded).hex()})"
        )
    message = (
        f"the file rebuilt from the rows is not the file imported (its digest differs: {differs})"
    )
    if value is not None and _holds_nan(value):
        raise CorpusError(
            f"{message}; the value holds NaN: an engine's Parquet writer that rewrites NaN "
            "bits (Spark's writer, DuckDB's COPY ... (FORMAT parquet) with dictionary "
            "encoding) is the likely cause: import the corpus again, or read the store "
            "onnx-arrow wrote",
            where=where,
        )
    raise damaged(message, where=where)


def _holds_nan(value: Decoded) -> bool:
    """Whether a decoded value holds a NaN (in any tensor of it)."""
    try:
        top = value.to_numpy()
    except OnnxArrowError:
        return False
    stack: list[Any] = [top]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, np.ndarray | np.generic) and item.dtype.kind in "fcV":
            try:
                numbers = item if item.dtype.kind == "c" else item.astype(np.float64)
                if np.isnan(numbers).any():
                    return True
            except (TypeError, ValueError):
                continue
    return False

"""How a store is written: :class:`WriteOptions`, the sizes it starts from, and the checks
of the numbers and callbacks the writers take.

Apart from the rest of the corpus store so that the command line can show the
defaults in its help without importing pyarrow, onnx or the store itself.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from onnx_arrow.errors import CorpusError, UnsupportedTypeError

__all__ = [
    "FLOAT_ENCODINGS",
    "LARGE_CASE_SHARE",
    "ROW_GROUP_BYTES",
    "WriteOptions",
    "check_callback",
    "check_count",
    "check_provenance",
]

#: Source bytes gathered into one row group (whole cases only): large enough for zstd to
#: find repeated tensors, small enough that reading one case reads little else.
ROW_GROUP_BYTES: Final = 4 << 20
#: A case of at least this share of a row group's bytes is a row group of its own, so
#: that reading it reads no other case, and reading a smaller one reads under 1.5 times
#: ``row_group_bytes`` of cases.  Half, not less: each row group costs its writer a fixed
#: amount, about 1.3 ms (a zstd context for each of its column chunks, most of them
#: null, a footer entry).  A corpus of 1.2 MB cases (the 501 MB one of
#: ``benchmarks/bench_throughput.py --import-only --row-group-cases 1``) takes 1.1x-1.3x
#: the CPU time to import in row groups of one case as of four, while one of its cases
#: reads about 3x faster (``benchmarks/bench_case_read.py --row-group-cases 1``).
LARGE_CASE_SHARE: Final = 2
#: The encodings of a store's float data columns: ``auto`` chooses per store file.
FLOAT_ENCODINGS: Final = ("auto", "BYTE_STREAM_SPLIT", "PLAIN")
#: The compressions Parquet writers know (pyarrow's names, in any case).
_COMPRESSIONS: Final = ("zstd", "snappy", "gzip", "brotli", "lz4", "lz4_raw", "none")


def _kind(value: object) -> str:
    kind = type(value)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def check_count(value: object, *, where: str, low: int = 1, optional: bool = False) -> Any:
    """``value`` as an ``int`` if it is a whole number of ``low`` or more (or None, when
    ``optional``); else an :class:`~onnx_arrow.errors.UnsupportedTypeError` (not a whole
    number) or a :class:`~onnx_arrow.errors.CorpusError` (too small) at ``where`` (the
    argument, as ``write_store(jobs)``).

    >>> check_count(2, where="write_store(jobs)")
    2
    >>> check_count(0, where="write_store(jobs)")
    Traceback (most recent call last):
    ...
    onnx_arrow.errors.CorpusError: write_store(jobs): 0 is less than 1
    """
    if value is None and optional:
        return None
    try:
        number = None if isinstance(value, bool) else operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        number = None
    if number is None:
        also = " or None" if optional else ""
        raise UnsupportedTypeError(
            f"expected a whole number (int) of {low} or more{also}, got {_kind(value)}",
            where=where,
        )
    if number < low:
        raise CorpusError(f"{number} is less than {low}", where=where)
    return number


def check_callback(value: object, *, where: str) -> Any:
    """``value`` if it is None or callable (a ``progress`` callback), else an error at
    ``where``."""
    if value is None or callable(value):
        return value
    raise UnsupportedTypeError(
        f"expected a function of one argument, or None, got {_kind(value)}", where=where
    )


def check_provenance(value: object, *, where: str) -> Mapping[str, Any]:
    """``value`` if it is a mapping of JSON values with a string ``onnx`` version, else an
    :class:`~onnx_arrow.errors.UnsupportedTypeError` at ``where``."""
    if not isinstance(value, Mapping) or not isinstance(value.get("onnx"), str):
        raise UnsupportedTypeError(
            f"expected a mapping with the onnx version as 'onnx' (str), got {_kind(value)}",
            where=where,
        )
    try:
        json.dumps(dict(value), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise UnsupportedTypeError(f"not JSON values ({exc})", where=where) from None
    return value


@dataclass(frozen=True)
class WriteOptions:
    """How a store is written: compression, the size of a row group, and what to do with a
    value file that cannot be decoded (an error, or kept as bytes with a warning).

    Each field is checked when the options are made: a value of the wrong type is an
    :class:`~onnx_arrow.errors.UnsupportedTypeError`, a size under 1 a
    :class:`~onnx_arrow.errors.CorpusError`, each naming the field."""

    compression: str = "zstd"
    #: Level 3: on the node suite 2% larger than level 6, with less compression work for the
    #: writer thread (benchmarks/bench_corpus.py prints both).
    compression_level: int = 3
    #: The level of the float data columns written byte stream split (None:
    #: ``compression_level``).  Their low bytes are close to random and a deeper search
    #: finds little: level 1 writes a corpus of large float tensors about a third faster
    #: than level 3, and no larger (benchmarks/bench_throughput.py).
    float_compression_level: int | None = 1
    #: The encoding of each float data column: ``auto`` (byte stream split or plain,
    #: whichever compresses the store file's first row groups smaller: see
    #: ``onnx_arrow.corpus.parquet.float_encodings``), ``BYTE_STREAM_SPLIT`` or ``PLAIN``.
    #: Plain columns are written at ``compression_level``.
    float_encoding: str = "auto"
    row_group_bytes: int = ROW_GROUP_BYTES
    keep_undecodable: bool = False
    #: Close a row group at this many cases too (None: by bytes only): row groups are what
    #: engines hand to their workers.
    row_group_cases: int | None = None
    #: Where the corpus came from, recorded as the store's ``provenance`` metadata (JSON
    #: values; its ``onnx`` is the store's onnx version): see ``onnx_arrow.corpus.releases``.
    provenance: Mapping[str, Any] | None = field(default=None, hash=False)
    #: Write a page index (each column chunk's offset index and column index), which
    #: engines such as DataFusion prune pages with; a few bytes a column chunk.
    page_index: bool = False
    #: Store a file whose bytes repeat an earlier file's of the same store file once: the
    #: rows of the repeat name it in ``copy_of`` and hold no payload (see the store format's
    #: Repeated files).  False stores every file in full.
    dedup: bool = True

    def __post_init__(self) -> None:
        where = "WriteOptions({})".format
        if not isinstance(self.compression, str) or self.compression.lower() not in _COMPRESSIONS:
            raise UnsupportedTypeError(
                f"expected one of {', '.join(_COMPRESSIONS)}, got {self.compression!r}",
                where=where("compression"),
            )
        for name, optional in (("compression_level", False), ("float_compression_level", True)):
            value = getattr(self, name)
            if not (value is None and optional) and (
                isinstance(value, bool) or not isinstance(value, int)
            ):
                raise UnsupportedTypeError(
                    f"expected a compression level (int){' or None' if optional else ''}, "
                    f"got {_kind(value)}",
                    where=where(name),
                )
        if self.float_encoding not in FLOAT_ENCODINGS:
            raise UnsupportedTypeError(
                f"expected one of {', '.join(FLOAT_ENCODINGS)}, got {self.float_encoding!r}",
                where=where("float_encoding"),
            )
        check_count(self.row_group_bytes, where=where("row_group_bytes"))
        check_count(self.row_group_cases, where=where("row_group_cases"), optional=True)
        if self.provenance is not None:
            check_provenance(self.provenance, where=where("provenance"))
        for name in ("keep_undecodable", "page_index", "dedup"):
            if not isinstance(getattr(self, name), bool):
                raise UnsupportedTypeError(
                    f"expected True or False, got {_kind(getattr(self, name))}",
                    where=where(name),
                )

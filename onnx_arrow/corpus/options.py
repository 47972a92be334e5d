"""How a store is written: :class:`WriteOptions` and the sizes it starts from.

Apart from the rest of the corpus store so that the command line can show the
defaults in its help without importing pyarrow, onnx or the store itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["LARGE_CASE_SHARE", "ROW_GROUP_BYTES", "WriteOptions"]

#: Source bytes gathered into one row group (whole cases only): large enough for zstd to
#: find repeated tensors, small enough that reading one case reads little else.
ROW_GROUP_BYTES: Final = 4 << 20
#: A case of at least this share of a row group's bytes is a row group of its own: of
#: large tensors, zstd has nothing to gain across cases, and reading one case reads it
#: alone (benchmarks/bench_throughput.py measures reading one case).
LARGE_CASE_SHARE: Final = 4


@dataclass(frozen=True)
class WriteOptions:
    """How a store is written: compression, the size of a row group, and what to do with a
    value file that cannot be decoded (an error, or kept as bytes with a warning)."""

    compression: str = "zstd"
    #: Level 3: on the node suite 2% larger than level 6, with less compression work for the
    #: writer thread (benchmarks/bench_corpus.py prints both).
    compression_level: int = 3
    #: The level of the float data columns (None: ``compression_level``).  Written byte
    #: stream split, their low bytes are close to random and a deeper search finds little:
    #: level 1 writes a corpus of large float tensors about a third faster than level 3,
    #: and no larger; the node suite's store is 1% larger (benchmarks/bench_throughput.py).
    float_compression_level: int | None = 1
    row_group_bytes: int = ROW_GROUP_BYTES
    keep_undecodable: bool = False
    #: Close a row group at this many cases too (None: by bytes only): row groups of a few
    #: cases each are the unit engines hand to their workers.
    row_group_cases: int | None = None

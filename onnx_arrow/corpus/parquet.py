"""The Parquet writer of a store file: its schema and metadata, the encoding, dictionaries
and compression level of each column, its pages, statistics and page index.

A store file is written by one :class:`pyarrow.parquet.ParquetWriter`, a row group at a
time (:meth:`StoreFile.append`, in order).  Each float data column takes one encoding for
the whole file, byte stream split or plain, whichever compresses its first row groups
smaller (:func:`float_encodings`): they are held until they hold :data:`JUDGED_BYTES` of
float data (or :data:`HELD_BYTES` in all, or the file ends), then judged and written.

An earlier writer encoded each row group on its own (on threads of their own) into a
Parquet file in memory and appended it with its footer's offsets moved, so that each
float column chunk took the encoding of its own data.  Measured side by side
(``benchmarks/bench_store_writer.py``), it imported no faster on two cores and its store
was 0.98x this one's on the node suite and the same on the other corpora; its footer
rewrite had to move every offset the format has (the page index's too), and did not.
"""

from __future__ import annotations

import contextlib
from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import onnx_arrow
from onnx_arrow.core.model import child_fields, onnx_version
from onnx_arrow.corpus import columns
from onnx_arrow.corpus.copies import Copies
from onnx_arrow.corpus.format import (
    CASES_KEY,
    DATA_COLUMNS,
    SCHEMA,
    build_case_index,
    build_metadata,
    case_runs,
)
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.errors import CorpusError, UnsupportedTypeError

__all__ = [
    "DATA_PAGE_SIZE",
    "HELD_BYTES",
    "JUDGED_BYTES",
    "StoreFile",
    "float_encodings",
    "float_level",
    "store_schema",
]

#: The largest data page a store file's writer makes: a column chunk is one page unless
#: larger (dictionaries of tensor data defeat zstd: repeated tensors compress to nothing
#: only while their bytes stay in one long page).
DATA_PAGE_SIZE: Final = 64 << 20
#: The float data columns: each written byte stream split (each byte of the floats in a
#: stream of its own, which zstd compresses better and faster than the floats as they
#: are: noise, smooth values) or plain (which zstd's fast levels compress better where
#: values repeat at one distance: an activation after its input), as its data says.
_FLOAT_COLUMNS: Final = tuple(
    name for name in DATA_COLUMNS if pa.types.is_floating(SCHEMA.field(name).type.value_type)
)
#: Float data a store file's encodings are chosen on, at least (all of it in a smaller
#: file): its row groups are held until they hold this much.  Each chunk is judged whole
#: (a larger one on :data:`_JUDGED_RUNS` runs of consecutive values spread over it, this
#: much in all), compressed as its page is: a sample of 64 KiB misjudged a chunk of a
#: mixed corpus by 63%.  Judging 8 MiB took 0.11 to 0.16 s of an import of 60 ReLU cases
#: (72 MB of floats) in 1.0 to 1.4 s, 32 MiB 0.29 to 0.51 s; on the benchmark's corpora
#: 8 MiB chooses the better of the two encodings (``benchmarks/bench_store_writer.py``).
JUDGED_BYTES: Final = 8 << 20
#: Bytes of row groups held at most, whatever their float data (a corpus of models holds
#: none): past this the encodings are chosen on what is held.
HELD_BYTES: Final = 4 * JUDGED_BYTES
_JUDGED_RUNS: Final = 8


def _leaf_paths(name: str, type_: pa.DataType) -> list[str]:
    """The Parquet column paths of an Arrow field: ``data_float.list.element`` ... (Parquet's
    compliant nesting, which pyarrow writes, names every list item ``element``)."""
    fields = child_fields(type_)
    if not fields:
        return [name]
    if pa.types.is_struct(type_):
        return [p for f in fields for p in _leaf_paths(f"{name}.{f.name}", f.type)]
    if pa.types.is_list(type_) or pa.types.is_fixed_size_list(type_):
        return [p for f in fields for p in _leaf_paths(f"{name}.list.element", f.type)]
    raise UnsupportedTypeError(
        f"the store's Parquet writer has no column paths for {type_}", where=name
    )


#: Every Parquet column of the store, in schema order.
_LEAVES: Final = tuple(p for f in SCHEMA for p in _leaf_paths(f.name, f.type))


def _compressed_size(data: np.ndarray, options: WriteOptions, level: int) -> int:
    name = options.compression.lower()
    if name == "none":
        return data.nbytes
    codec = pa.Codec(name, level if pa.Codec.supports_compression_level(name) else None)
    return int(codec.compress(data, asbytes=False).size)


def _byte_stream_split(values: np.ndarray) -> np.ndarray:
    width = values.itemsize
    return np.ascontiguousarray(values.view(np.uint8).reshape(-1, width).T)


def _judged(values: np.ndarray) -> list[np.ndarray]:
    """The pieces of a chunk's values its encoding is judged on: all of them up to
    :data:`JUDGED_BYTES`, else :data:`_JUDGED_RUNS` runs of consecutive values spread over
    them, as many bytes in all (runs of megabytes: zstd's window at the levels used is
    smaller, so what it finds in the whole chunk it finds within them)."""
    budget = JUDGED_BYTES // values.itemsize
    if values.size <= budget:
        return [values]
    run = budget // _JUDGED_RUNS
    starts = np.linspace(0, values.size - run, _JUDGED_RUNS).astype(np.int64)
    return [values[int(s) : int(s) + run] for s in starts]


def float_encodings(tables: list[pa.Table], options: WriteOptions) -> dict[str, str]:
    """The encoding of each float data column of a store file, by column name:
    ``options.float_encoding`` where it names one, else (``"auto"``) whichever of byte
    stream split (at ``float_compression_level``) and plain (at ``compression_level``)
    compresses the column's chunks in ``tables`` (the file's first row groups) smaller,
    each chunk on its own as its page is (:func:`_judged`); byte stream split on a tie, or
    where they hold nothing.

    On the benchmarks' corpora a store of ReLU cases is 0.74x as large plain as byte stream
    split, the node suite's 0.93x, the large mixed corpus's (noise, smooth waves, ReLU
    activations) 1.32x (plain costs about twice the CPU: zstd level 3 against 1)."""
    out = {}
    for name in _FLOAT_COLUMNS:
        if options.float_encoding != "auto":
            out[name] = options.float_encoding
            continue
        split = plain = 0
        for table in tables:
            column = table.column(name)
            if not _holds_values(column):
                continue
            chunk = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
            for piece in _judged(columns.values_of(chunk.flatten())):
                split += _compressed_size(
                    _byte_stream_split(piece), options, float_level(options, "BYTE_STREAM_SPLIT")
                )
                plain += _compressed_size(piece, options, float_level(options, "PLAIN"))
        out[name] = "PLAIN" if plain < split else "BYTE_STREAM_SPLIT"
    return out


def float_level(options: WriteOptions, encoding: str) -> int:
    """The zstd level of a float column chunk of ``encoding``: ``float_compression_level``
    for byte stream split (whose low bytes are close to random: a deeper search finds
    little), else the level of every other column."""
    if encoding == "BYTE_STREAM_SPLIT" and options.float_compression_level is not None:
        return options.float_compression_level
    return options.compression_level


def store_schema(options: WriteOptions) -> pa.Schema:
    """The store's schema with its metadata: format, writer, onnx version, provenance."""

    prov = options.provenance
    return SCHEMA.with_metadata(
        {
            "onnx_arrow": build_metadata(
                created_by=f"onnx-arrow {onnx_arrow.__version__}",
                onnx_version=onnx_version() if prov is None else prov["onnx"],
                **({} if prov is None else {"provenance": dict(prov)}),
            )
        }
    )


def _holds_values(column: pa.ChunkedArray) -> bool:
    """Whether a column chunk stores a value: one that is not null (nor, in a list
    column, an empty list)."""
    if column.null_count == len(column):
        return False
    if not pa.types.is_list(column.type):
        return True
    return any(len(chunk) and chunk.offsets[-1] != chunk.offsets[0] for chunk in column.chunks)


def _float_bytes(table: pa.Table) -> int:
    """The bytes of a row group's float data columns."""
    return sum(table.column(name).nbytes for name in _FLOAT_COLUMNS)


class StoreFile:
    """A store file being written: row groups appended in order, by one thread at a time;
    :meth:`close` writes the footer.  Use it as a context manager; leaving the block by an
    error closes the file (the caller removes it).

    The first row groups are held until their float data reaches :data:`JUDGED_BYTES`,
    they reach :data:`HELD_BYTES` in all, or the file is closed, and the file's float
    encodings are chosen on them; with a ``float_encoding`` other than ``auto``, none is
    held."""

    def __init__(self, path: str, options: WriteOptions) -> None:
        self._options, self._path = options, path
        self._schema = store_schema(options)
        self._writer: pq.ParquetWriter | None = None
        self._held: list[pa.Table] = []
        self._held_floats = self._held_bytes = 0
        self._groups = 0
        #: Each row group's cases and their rows: the footer's index of cases.
        self._runs: list[list[tuple[str | None, int]]] = []
        #: The files written so far, to store a repeated one as a copy (None: every file whole).
        self.copies = Copies() if options.dedup else None

    def append(self, table: pa.Table) -> None:
        """Append ``table`` (the store's columns, in its schema) as one row group.  A table
        of another schema is refused (:class:`~onnx_arrow.errors.CorpusError`, located at
        the file and the row group it would have been), and nothing of it is written."""
        if not table.schema.remove_metadata().equals(SCHEMA):
            raise CorpusError(
                "a table of another schema than the store's; append only tables of "
                "onnx_arrow.corpus.format.SCHEMA",
                where=f"{self._path}: row group {self._groups}",
            )
        if self.copies is not None:
            table = self.copies.mark(table)
        self._groups += 1
        self._runs.append(case_runs(table.column("test_case").to_pylist()))
        if self._writer is not None:
            self._write(self._writer, table)
            return
        self._held.append(table)
        self._held_floats += _float_bytes(table)
        self._held_bytes += table.nbytes
        if (
            self._held_floats >= JUDGED_BYTES
            or self._held_bytes >= HELD_BYTES
            or self._options.float_encoding != "auto"
        ):
            self._writer = self._open()

    @staticmethod
    def _write(writer: pq.ParquetWriter, table: pa.Table) -> None:
        writer.write_table(table, row_group_size=max(table.num_rows, 1))

    def _open(self) -> pq.ParquetWriter:
        """The file's writer, its encodings chosen on the row groups held, which it writes."""
        options = self._options
        floats = {
            f"{name}.list.element": e for name, e in float_encodings(self._held, options).items()
        }
        writer = pq.ParquetWriter(
            self._path,
            self._schema,
            compression=options.compression,
            # snappy, lz4 and none take no level, and pyarrow refuses one given them
            compression_level={
                p: float_level(options, floats[p]) if p in floats else options.compression_level
                for p in _LEAVES
            }
            if options.compression.lower() != "none"
            and pa.Codec.supports_compression_level(options.compression)
            else None,
            use_dictionary=[name for name in SCHEMA.names if name not in DATA_COLUMNS],
            column_encoding=floats,
            data_page_size=DATA_PAGE_SIZE,
            write_statistics=["test_case", "kind", "path", "role", "dtype", "io"],
            write_page_index=options.page_index,
        )
        held, self._held = self._held, []
        for table in held:
            self._write(writer, table)
        return writer

    def close(self) -> None:
        """Write the row groups held and the footer, with its index of cases (under
        :data:`~onnx_arrow.corpus.format.CASES_KEY`), and close the file."""
        if self._writer is None:
            self._writer = self._open()
        if all(name is not None for runs in self._runs for name, _ in runs):
            self._writer.add_key_value_metadata({CASES_KEY: build_case_index(self._runs)})
        self._writer.close()

    def __enter__(self) -> StoreFile:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            self.close()
        elif self._writer is not None:
            # the file is removed by the caller: only its handle matters, and the error
            # leaving the block is the one to report
            with contextlib.suppress(Exception):
                self._writer.close()

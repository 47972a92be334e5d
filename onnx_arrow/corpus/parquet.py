"""The Parquet writer of a store file: its schema and metadata, the encoding, dictionaries
and compression level of each column chunk, its pages and statistics.

A store file is written a row group at a time, each row group encoded on its own
(:func:`encode_row_group`, by any thread: several encode at once) into a one-row-group
Parquet file in memory, and appended to the store (:meth:`StoreFile.append`, in order):
its column chunks are copied as they are and its footer's offsets moved to where they
land; the store's footer, written at :meth:`StoreFile.close`, lists every row group.  So
each float column chunk has the encoding and level of its own data, which one Parquet
writer, one encoding per column for the whole file, cannot give.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import onnx
import pyarrow as pa
import pyarrow.parquet as pq

import onnx_arrow
from onnx_arrow.core.model import child_fields
from onnx_arrow.corpus._thrift import (
    STRUCT,
    Edits,
    ThriftError,
    fields,
    list_head,
    read_int,
    rewritten_items,
    write_int,
)
from onnx_arrow.corpus.format import DATA_COLUMNS, SCHEMA, build_metadata
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.errors import UnsupportedTypeError

__all__ = ["StoreFile", "encode_row_group", "float_encodings", "store_schema"]

#: The float data columns: each chunk of them written byte stream split (each byte of the
#: floats in a stream of its own, which zstd compresses better and faster than the floats
#: as they are: noise, smooth values) or plain (which zstd's fast levels compress better
#: where values repeat at one distance: an activation after its input), as its data says.
_FLOAT_COLUMNS: Final = tuple(
    name for name in DATA_COLUMNS if pa.types.is_floating(SCHEMA.field(name).type.value_type)
)
#: Bytes of a float column chunk its encoding is chosen on, at most (but see WHOLE_BYTES).
SAMPLE_BYTES: Final = 64 << 10
#: The sample is this many runs of consecutive rows, spread over the chunk: a data set's
#: output and input stay side by side in it, as the writer meets them.
_SAMPLE_RUNS: Final = 8
#: Elements of a row in the sample, at most (its first ones).
_ROW_ELEMENTS: Final = 2048
#: A chunk of many small tensors (this many rows at least) is tried whole up to this many
#: bytes: consecutive rows of a few elements each show too little of how zstd finds one
#: tensor in another.
WHOLE_BYTES: Final = 8 << 20
WHOLE_ROWS: Final = 64


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


def _sample(column: pa.ChunkedArray) -> np.ndarray | None:
    """A sample of a float data column chunk: the whole chunk if it is no larger than
    :data:`SAMPLE_BYTES`, or if it holds :data:`WHOLE_ROWS` tensors or more in at most
    :data:`WHOLE_BYTES`; else :data:`_SAMPLE_RUNS` runs of consecutive rows spread over
    it, each row's first :data:`_ROW_ELEMENTS` elements at most, :data:`SAMPLE_BYTES` in
    all.  None where the chunk holds no elements."""
    if not _holds_values(column):  # the data column of another dtype, or empty tensors
        return None
    chunk = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    values = chunk.flatten().to_numpy()
    if values.size == 0:
        return None
    budget = SAMPLE_BYTES // values.itemsize
    lengths = chunk.value_lengths().fill_null(0).to_numpy()
    if values.size <= budget or (
        values.nbytes <= WHOLE_BYTES and np.count_nonzero(lengths) >= WHOLE_ROWS
    ):
        return values
    starts = np.cumsum(lengths) - lengths
    taken = np.minimum(lengths, _ROW_ELEMENTS)
    rows, run_budget = len(lengths), budget // _SAMPLE_RUNS
    pieces, row = [], 0
    for spread in np.linspace(0, rows, _SAMPLE_RUNS, endpoint=False).astype(np.int64):
        first = max(int(spread), row)  # runs never overlap
        if first >= rows:
            break
        held = np.cumsum(taken[first:])
        row = first + max(int(np.searchsorted(held, run_budget, side="right")), 1)
        counts = taken[first:row]
        offsets = np.cumsum(counts) - counts
        index = np.repeat(starts[first:row] - offsets, counts) + np.arange(int(counts.sum()))
        pieces.append(values[index])
    return np.concatenate(pieces)[:budget]


def _compressed_size(data: np.ndarray, options: WriteOptions, level: int) -> int:
    name = options.compression.lower()
    if name == "none":
        return data.nbytes
    codec = pa.Codec(name, level if pa.Codec.supports_compression_level(name) else None)
    return int(codec.compress(data, asbytes=False).size)


def _byte_stream_split(values: np.ndarray) -> np.ndarray:
    width = values.itemsize
    return np.ascontiguousarray(values.view(np.uint8).reshape(-1, width).T)


def float_encodings(table: pa.Table, options: WriteOptions) -> dict[str, str]:
    """The encoding of each float data column chunk of ``table`` (one row group), by column
    name: ``options.float_encoding`` where it names one, else (``"auto"``) whichever of
    byte stream split (at ``float_compression_level``) and plain (at
    ``compression_level``) compresses a sample of the chunk (:func:`_sample`) smaller;
    byte stream split on a tie, or where the chunk holds nothing.

    On the benchmarks' corpora a ReLU's chunks take 0.73x the bytes plain, chunks of noise
    and smooth values 1.6x to 2.5x, the node suite's 0.89x to 1.08x (plain costs about
    twice the CPU: zstd level 3 against 1)."""
    out = {}
    for name in _FLOAT_COLUMNS:
        if options.float_encoding != "auto":
            out[name] = options.float_encoding
            continue
        sample = _sample(table.column(name))
        if sample is None:
            out[name] = "BYTE_STREAM_SPLIT"
            continue
        split = _compressed_size(
            _byte_stream_split(sample), options, _float_level(options, "BYTE_STREAM_SPLIT")
        )
        plain = _compressed_size(sample, options, _float_level(options, "PLAIN"))
        out[name] = "PLAIN" if plain < split else "BYTE_STREAM_SPLIT"
    return out


def _float_level(options: WriteOptions, encoding: str) -> int:
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
                onnx_version=onnx.__version__ if prov is None else prov["onnx"],
                **({} if prov is None else {"provenance": dict(prov)}),
            )
        }
    )


def _holds_values(column: pa.ChunkedArray) -> bool:
    """Whether a column chunk stores a value: one that is not null (nor, in a list
    column, an empty list).  A chunk of none stores its levels alone, a few bytes that a
    codec only makes longer (and costs a compression context to do so)."""
    if column.null_count == len(column):
        return False
    if not pa.types.is_list(column.type):
        return True
    return any(len(chunk) and chunk.offsets[-1] != chunk.offsets[0] for chunk in column.chunks)


def _encode(
    table: pa.Table | None,
    schema: pa.Schema,
    options: WriteOptions,
    encodings: Mapping[str, str] | None = None,
) -> pa.Buffer:
    """``table`` as a Parquet file of one row group (of none, for None), in memory, its
    float data column chunks in ``encodings`` (by column name; :func:`float_encodings`
    chooses where None); the Arrow schema is stored in its footer where ``schema`` has
    metadata (the store's footer), not in a part's (whose footer only its row group is
    taken from).  A column chunk without values is not compressed."""
    if encodings is None:
        encodings = float_encodings(table, options) if table is not None else {}
    floats = {f"{name}.list.element": e for name, e in encodings.items()}
    filled = {name for name in SCHEMA.names if table is None or _holds_values(table[name])}
    compressed = {p for p in _LEAVES if p.split(".", 1)[0] in filled}
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(
        sink,
        schema,
        compression={p: options.compression if p in compressed else "none" for p in _LEAVES},
        compression_level={
            p: _float_level(options, floats[p]) if p in floats else options.compression_level
            for p in _LEAVES
            if p in compressed
        },
        # dictionaries of tensor data defeat zstd: repeated tensors compress to nothing
        # only while their bytes stay in one long page
        use_dictionary=[name for name in SCHEMA.names if name not in DATA_COLUMNS],
        column_encoding=floats or None,
        data_page_size=64 << 20,
        write_statistics=["test_case", "kind", "path", "role", "dtype", "io"],
        store_schema=bool(schema.metadata),
    ) as writer:
        if table is not None:
            writer.write_table(table, row_group_size=max(table.num_rows, 1))
    return sink.getvalue()


_MAGIC: Final = b"PAR1"
#: What a refused part's error says to do.
_ONLY_PARTS: Final = "; append only what encode_row_group returns for this store's options"
# field ids of parquet.thrift: FileMetaData, RowGroup, ColumnChunk, ColumnMetaData
_FILE_NUM_ROWS, _FILE_ROW_GROUPS = 3, 4
_GROUP_COLUMNS, _GROUP_FILE_OFFSET, _GROUP_ORDINAL = 1, 5, 7
_CHUNK_FILE_OFFSET, _CHUNK_META, _CHUNK_OFFSET_INDEX, _CHUNK_COLUMN_INDEX = 2, 3, 4, 6
#: The offsets into the file a column chunk's metadata holds (data, index and dictionary
#: pages, bloom filter).
_META_OFFSETS: Final = (9, 10, 11, 14)


def _footer_bytes(part: memoryview) -> tuple[bytes, int]:
    """The footer (``FileMetaData``) of a Parquet file in memory, and where it starts."""
    if len(part) < 12 or bytes(part[:4]) != _MAGIC or bytes(part[-4:]) != _MAGIC:
        raise ThriftError("not a Parquet file")
    (length,) = struct.unpack("<i", part[-8:-4])
    start = len(part) - 8 - length
    if length <= 0 or start < 4:
        raise ThriftError(f"a footer of {length} bytes in a file of {len(part)}")
    return bytes(part[start:-8]), start


@dataclass(frozen=True)
class _Layout:
    """Where the fields a store's writer changes lie in the footers of its parts: every
    part's footer has the same bytes before ``num_rows`` (version, schema) and after
    ``row_groups`` (metadata, writer, column orders), as one writer of one schema wrote
    them all; the first part's are the store's."""

    head: bytes  # up to the value of num_rows
    between: bytes  # from after num_rows to the value of row_groups
    tail: bytes  # after row_groups


def _layout(footer: bytes) -> _Layout:
    spans = {fid: (kind, start, end) for fid, kind, start, end in fields(footer, 0)}
    rows, groups = spans.get(_FILE_NUM_ROWS), spans.get(_FILE_ROW_GROUPS)
    if rows is None or groups is None or rows[2] > groups[1]:
        raise ThriftError("a footer without num_rows before row_groups")
    return _Layout(footer[: rows[1]], footer[rows[2] : groups[1]], footer[groups[2] :])


def _shift_by(shift: int) -> Callable[[int], int]:
    # an offset under 4 is none: a Parquet file starts with its magic bytes
    return lambda offset: offset + shift if offset >= 4 else offset


def _group_edits(shift: int, ordinal: int) -> Edits:
    """The edits of a ``RowGroup`` moved ``shift`` bytes further into the file, the
    ``ordinal``-th row group of the file."""
    move = _shift_by(shift)
    chunk: dict[int, Any] = {
        _CHUNK_FILE_OFFSET: move,
        _CHUNK_OFFSET_INDEX: move,
        _CHUNK_COLUMN_INDEX: move,
        _CHUNK_META: dict.fromkeys(_META_OFFSETS, move),
    }
    return {_GROUP_COLUMNS: chunk, _GROUP_FILE_OFFSET: move, _GROUP_ORDINAL: lambda _: ordinal}


def encode_row_group(
    table: pa.Table, options: WriteOptions, encodings: Mapping[str, str] | None = None
) -> pa.Buffer:
    """``table`` (one row group's rows) as a part of a store file, for
    :meth:`StoreFile.append`: a Parquet file in memory, each float column chunk in the
    encoding of ``encodings`` (:func:`float_encodings` of the table, chosen here where
    None); safe to call from several threads at once."""
    return _encode(table, SCHEMA, options, encodings)


class StoreFile:
    """A store file being written: row groups encoded (by any thread) and appended in order;
    :meth:`close` writes the footer.  Use it as a context manager; leaving the block by an
    error closes the file without a footer (the caller removes it)."""

    def __init__(self, path: str, options: WriteOptions) -> None:
        self._options = options
        # the store's footer: the schema with the store's metadata, from a file of no rows
        self._footer = _layout(
            _footer_bytes(memoryview(_encode(None, store_schema(options), options)))[0]
        )
        self._part: _Layout | None = None  # the footer of the first part, those of all parts
        self._groups: list[bytes] = []  # each row group's RowGroup struct, offsets moved
        self._rows = 0
        self._path = path
        self._file = open(path, "wb")  # noqa: SIM115 - closed by close() or __exit__
        self._file.write(_MAGIC)
        self._written = len(_MAGIC)

    def append(self, part: pa.Buffer | bytes) -> None:
        """Append the row groups of ``part`` (from :func:`encode_row_group`) to the file.
        A part that is not one is refused (:class:`ThriftError`, located at the file and
        the row group it would have been), and nothing of it is written."""
        first = len(self._groups)
        try:
            footer, end = _footer_bytes(memoryview(part))
            layout = self._part or _layout(footer)
            if (layout.head, layout.between) != (self._footer.head, self._footer.between):
                raise ThriftError(f"a part of another schema than the store's{_ONLY_PARTS}")
            if not footer.startswith(layout.head):
                raise ThriftError(f"a part of another schema or writer{_ONLY_PARTS}")
            rows, pos = read_int(footer, len(layout.head))
            if footer[pos : pos + len(layout.between)] != layout.between:
                raise ThriftError(f"a part of another schema or writer{_ONLY_PARTS}")
            shift = self._written - len(_MAGIC)
            groups, pos = rewritten_items(
                footer, pos + len(layout.between), lambda i: _group_edits(shift, first + i)
            )
            if footer[pos:] != layout.tail:
                raise ThriftError(f"a part of another schema or writer{_ONLY_PARTS}")
        except ThriftError as exc:
            raise exc.at(f"{self._path}: row group {first}") from None
        self._part = layout
        self._groups += groups
        self._rows += rows
        self._file.write(memoryview(part)[len(_MAGIC) : end])
        self._written += end - len(_MAGIC)

    def close(self) -> None:
        """Write the footer (listing every row group appended) and close the file."""
        try:
            layout = self._footer
            footer = b"".join(
                (
                    layout.head, write_int(self._rows), layout.between,
                    list_head(STRUCT, len(self._groups)), *self._groups, layout.tail,
                )
            )  # fmt: skip
            self._file.write(footer + struct.pack("<i", len(footer)) + _MAGIC)
        finally:
            self._file.close()

    def __enter__(self) -> StoreFile:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            self.close()
        else:
            self._file.close()


#: Float data a store file's encodings are chosen on: its row groups are held until they
#: hold this much (or the file ends), then judged whole, each chunk (a larger one on
#: :data:`_JUDGED_RUNS` runs of its bytes spread over it, this much in all) compressed both
#: ways as its page would be.
JUDGED_BYTES: Final = 32 << 20
_JUDGED_RUNS: Final = 8


def _judged(values: np.ndarray) -> list[np.ndarray]:
    """The pieces of a chunk's values its encoding is judged on: all of them up to
    :data:`JUDGED_BYTES`, else :data:`_JUDGED_RUNS` runs of consecutive values spread over
    them, as many bytes in all (runs of megabytes: what zstd finds within them, it finds
    in the whole chunk)."""
    budget = JUDGED_BYTES // values.itemsize
    if values.size <= budget:
        return [values]
    run = budget // _JUDGED_RUNS
    starts = np.linspace(0, values.size - run, _JUDGED_RUNS).astype(np.int64)
    return [values[int(s) : int(s) + run] for s in starts]


def judged_encodings(tables: list[pa.Table], options: WriteOptions) -> dict[str, str]:
    """The encoding of each float data column of a store file, by column name:
    ``options.float_encoding`` where it names one, else (``"auto"``) whichever of byte
    stream split (at ``float_compression_level``) and plain (at ``compression_level``)
    compresses the column's chunks in ``tables`` (its first row groups) smaller, each chunk
    compressed on its own as its page is (see :func:`_judged`); byte stream split on a
    tie, or where they hold nothing."""
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
            for piece in _judged(chunk.flatten().to_numpy()):
                split += _compressed_size(
                    _byte_stream_split(piece), options, _float_level(options, "BYTE_STREAM_SPLIT")
                )
                plain += _compressed_size(piece, options, _float_level(options, "PLAIN"))
        out[name] = "PLAIN" if plain < split else "BYTE_STREAM_SPLIT"
    return out


def _float_bytes(table: pa.Table) -> int:
    """The bytes of a row group's float data."""
    return sum(table.column(name).nbytes for name in _FLOAT_COLUMNS)


class SingleWriterStoreFile:
    """A store file written by one :class:`pyarrow.parquet.ParquetWriter`: each float data
    column in one encoding for the whole file, chosen on its first row groups (their
    first :data:`JUDGED_BYTES` of float data, held until then); every column compressed."""

    def __init__(self, path: str, options: WriteOptions) -> None:
        self._options, self._path = options, path
        self._writer: pq.ParquetWriter | None = None
        self._held: list[pa.Table] = []
        self._held_bytes = 0

    def _open(self) -> pq.ParquetWriter:
        options = self._options
        encodings = judged_encodings(self._held, options)
        floats = {f"{name}.list.element": e for name, e in encodings.items()}
        writer = pq.ParquetWriter(
            self._path,
            store_schema(options),
            compression=options.compression,
            compression_level={
                p: _float_level(options, floats[p]) if p in floats else options.compression_level
                for p in _LEAVES
            },
            use_dictionary=[name for name in SCHEMA.names if name not in DATA_COLUMNS],
            column_encoding=floats,
            data_page_size=64 << 20,
            write_statistics=["test_case", "kind", "path", "role", "dtype", "io"],
        )
        held, self._held = self._held, []
        for table in held:
            writer.write_table(table, row_group_size=max(table.num_rows, 1))
        return writer

    def append(self, table: pa.Table) -> None:
        if self._writer is not None:
            self._writer.write_table(table, row_group_size=max(table.num_rows, 1))
            return
        self._held.append(table)
        self._held_bytes += _float_bytes(table)
        if self._held_bytes >= JUDGED_BYTES or self._options.float_encoding != "auto":
            self._writer = self._open()

    def close(self) -> None:
        if self._writer is None:
            self._writer = self._open()
        self._writer.close()

    def __enter__(self) -> SingleWriterStoreFile:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            self.close()
        elif self._writer is not None:
            self._writer.close()

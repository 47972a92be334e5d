"""The Parquet writer of a store file: its schema and metadata, the encoding, dictionaries
and compression level of each column, its pages and statistics."""

from __future__ import annotations

from typing import Final

import onnx
import pyarrow as pa
import pyarrow.parquet as pq

import onnx_arrow
from onnx_arrow.core.model import child_fields
from onnx_arrow.corpus.format import DATA_COLUMNS, SCHEMA, build_metadata
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.errors import UnsupportedTypeError

__all__ = ["open_writer"]

#: Float data columns are written byte stream split: each byte of the floats in a stream of
#: its own, which zstd compresses better, and faster, than the floats as they are.
_FLOAT_ENCODING: Final = {
    f"{name}.list.element": "BYTE_STREAM_SPLIT"
    for name in DATA_COLUMNS
    if pa.types.is_floating(SCHEMA.field(name).type.value_type)
}


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


def _levels(options: WriteOptions) -> int | dict[str, int]:
    """The zstd level of each Parquet column (a level for all when they are the same)."""
    floats = options.float_compression_level
    if floats is None or floats == options.compression_level:
        return options.compression_level
    return {p: floats if p in _FLOAT_ENCODING else options.compression_level for p in _LEAVES}


def open_writer(path: str, options: WriteOptions) -> pq.ParquetWriter:
    """A Parquet writer of a store file at ``path``: the store's schema and metadata, and
    the compression ``options`` say."""
    prov = options.provenance
    schema = SCHEMA.with_metadata(
        {
            "onnx_arrow": build_metadata(
                created_by=f"onnx-arrow {onnx_arrow.__version__}",
                onnx_version=onnx.__version__ if prov is None else prov["onnx"],
                **({} if prov is None else {"provenance": dict(prov)}),
            )
        }
    )
    return pq.ParquetWriter(
        path,
        schema,
        compression=options.compression,
        compression_level=_levels(options),
        # dictionaries of tensor data defeat zstd: repeated tensors compress to nothing
        # only while their bytes stay in one long page
        use_dictionary=[name for name in SCHEMA.names if name not in DATA_COLUMNS],
        column_encoding=_FLOAT_ENCODING,
        data_page_size=64 << 20,
        write_statistics=["test_case", "kind", "path", "role", "dtype", "io"],
        store_schema=True,
    )

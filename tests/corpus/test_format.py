"""The store format: its schema, the data column of every dtype, and the metadata check."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from onnx import TensorProto

from onnx_arrow.core.dtypes import DTYPES, dtype_of
from onnx_arrow.corpus.format import (
    COLUMNS,
    DATA_COLUMNS,
    FORMAT,
    FORMAT_VERSION,
    METADATA_KEY,
    OLDEST_VERSION,
    ORDINAL_COLUMNS,
    ROLES,
    SCHEMA,
    TOLERANCE_COLUMNS,
    Column,
    build_metadata,
    data_column,
    data_storage_dtype,
    parse_metadata,
)
from onnx_arrow.corpus.sources import CorpusError


def test_every_onnx_data_type_has_a_data_column_after_the_plain_columns() -> None:
    defined = {v for n, v in TensorProto.DataType.items() if n != "UNDEFINED"}
    assert {r.onnx for r in DATA_COLUMNS.values()} == defined == set(DTYPES)
    names = SCHEMA.names
    assert len(set(names)) == len(names)
    assert names[: len(COLUMNS)] == list(COLUMNS)
    assert names[len(COLUMNS) :] == [data_column(r) for r in DTYPES.values()]
    assert data_column(dtype_of("FLOAT")) == "data_float"
    assert data_column(dtype_of("BFLOAT16")) == "data_bfloat16"
    assert data_column(dtype_of("FLOAT8E4M3FN")) == "data_float8e4m3fn"
    for name, row in DATA_COLUMNS.items():
        assert data_column(row) == name
        assert SCHEMA.field(name).type == pa.list_(data_storage_dtype(row))


def _plain(t: pa.DataType) -> bool:
    """A type every engine reads: no extension type, no float16, at any depth."""
    if isinstance(t, pa.ExtensionType) or t == pa.float16():
        return False
    return all(_plain(t.field(i).type) for i in range(t.num_fields))


def test_the_store_columns_are_plain_arrow_types_every_engine_reads() -> None:
    """Spark refuses whole Parquet files holding a FLOAT16 column, and engines see
    extension types as their storage at best: a store holds neither."""
    for f in SCHEMA:
        assert _plain(f.type), f


def test_string_tensors_store_bytes_not_text() -> None:
    """STRING elements are bytes in ONNX: a column of text could not hold every one."""
    assert pa.types.is_binary(data_storage_dtype(dtype_of("STRING")))


def test_the_plain_columns_are_described_and_typed() -> None:
    assert all(isinstance(c, Column) and c.doc for c in COLUMNS.values())
    assert {n: COLUMNS[n].type for n in ("test_case", "path", "role")} == {
        "test_case": pa.string(),
        "path": pa.string(),
        "role": pa.string(),
    }
    assert set(ORDINAL_COLUMNS) | set(TOLERANCE_COLUMNS) <= set(COLUMNS)
    assert all(COLUMNS[n].type == pa.float64() for n in TOLERANCE_COLUMNS)
    assert set(ROLES) == {"model", "value", "element", "file"}
    # the role column's doc names every role
    assert all(role in COLUMNS["role"].doc for role in ROLES)


def _meta(doc: Any) -> dict[bytes, bytes]:
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return {METADATA_KEY.encode(): raw}


def test_the_metadata_written_is_the_metadata_read() -> None:
    raw = build_metadata(created_by="onnx-arrow test", cases=3)
    doc = parse_metadata({METADATA_KEY.encode(): raw, b"other": b"kept"}, where="s.parquet")
    assert doc["format"] == FORMAT
    assert doc["format_version"] == FORMAT_VERSION
    assert doc["created_by"] == "onnx-arrow test"
    assert doc["cases"] == 3
    assert doc["roles"] == ROLES
    assert doc["columns"] == {n: c.doc for n, c in COLUMNS.items()}
    assert set(doc["data_columns"]) == {r.name for r in DTYPES.values()}
    for name, entry in doc["data_columns"].items():
        row = dtype_of(name)
        assert entry == {"column": data_column(row), "element": str(data_storage_dtype(row))}


@pytest.mark.parametrize(
    ("metadata", "said"),
    [
        (None, "no 'onnx_arrow' metadata: this Parquet file is not an onnx-arrow store"),
        ({b"pandas": b"{}"}, "no 'onnx_arrow' metadata: this Parquet file is not an onnx-arrow"),
        (_meta(b"{not json"), "store metadata is not JSON"),
        (_meta([FORMAT]), f"store metadata does not name the format {FORMAT!r}"),
        (_meta({"format": "parquet"}), f"store metadata does not name the format {FORMAT!r}"),
        (
            _meta({"format": FORMAT, "format_version": 99}),
            f"store format version 99; this onnx-arrow reads versions {OLDEST_VERSION} to "
            f"{FORMAT_VERSION}: the store was written by a newer onnx-arrow, upgrade "
            "onnx-arrow to read it (pip install --upgrade onnx-arrow)",
        ),
        (
            _meta({"format": FORMAT, "format_version": 1, "created_by": "onnx-arrow 0.0.1"}),
            f"store format version 1; this onnx-arrow reads versions {OLDEST_VERSION} to "
            f"{FORMAT_VERSION}: the store was written by an older onnx-arrow (onnx-arrow "
            "0.0.1), export it to a folder with that version (onnx-arrow export STORE "
            "FOLDER) and import the folder with this one",
        ),
        (_meta({"format": FORMAT}), "store format version None; this onnx-arrow reads"),
        (
            _meta({"format": FORMAT, "format_version": float(FORMAT_VERSION)}),
            f"store format version {float(FORMAT_VERSION)!r}; this onnx-arrow reads",
        ),
        (
            _meta({"format": FORMAT, "format_version": str(FORMAT_VERSION)}),
            f"store format version '{FORMAT_VERSION}'; this onnx-arrow reads",
        ),
        (
            _meta({"format": FORMAT, "format_version": True}),
            "store format version True; this onnx-arrow reads",
        ),
    ],
    ids=[
        "none",
        "other key",
        "not JSON",
        "a list",
        "another format",
        "a later version",
        "an older version not read",
        "no version",
        "a float version",
        "a text version",
        "a boolean version",
    ],
)
def test_metadata_that_is_not_this_format_is_refused_naming_the_file(
    metadata: dict[bytes, bytes] | None, said: str
) -> None:
    with pytest.raises(CorpusError) as info:
        parse_metadata(metadata, where="parts/part-00003.parquet")
    assert str(info.value).startswith(f"parts/part-00003.parquet: {said}")
    assert isinstance(info.value, ValueError)

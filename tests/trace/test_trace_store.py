"""The trace store: every ONNX element type through its typed data column and back, bit
for bit; containers without data; the metadata, and files that are not trace stores."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tensor_samples import ROWS, ids, sample_codes

from onnx_arrow.corpus.format import data_column, data_storage_dtype
from onnx_arrow.errors import CompareError
from onnx_arrow.trace import TRACE_SCHEMA, read_trace, read_trace_metadata, read_value
from onnx_arrow.trace.store import TracedValue, TraceWriter


def written(path: Path, values: dict[str, object]) -> None:
    writer = TraceWriter(path)
    rows = []
    for name, value in values.items():
        for side in ("backend", "against"):
            rows.append(TracedValue({"value": name, "side": side, "kind": "tensor"}, value))
    writer.write(rows)
    writer.close({"case": "c"})


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_every_element_type_round_trips_bit_for_bit(row, tmp_path: Path) -> None:
    codes = sample_codes(row, 12).reshape(3, 4)
    path = tmp_path / "t.parquet"
    written(path, {"v": codes, "scalar": codes.reshape(-1)[:1].reshape(())})
    back = read_value(path, "v", "against")
    assert back.dtype == codes.dtype
    assert back.shape == (3, 4)
    if codes.dtype == object:
        assert back.tolist() == codes.tolist()
    else:
        assert back.tobytes() == codes.tobytes()
    assert read_value(path, "scalar", "backend").shape == ()
    table = pq.read_table(path, columns=[data_column(row)])
    assert table.schema.field(0).type == pa.list_(data_storage_dtype(row))


def test_strings_as_str_are_kept_as_utf8(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    written(path, {"s": np.array(["a", "é"], dtype=object)})
    assert read_value(path, "s", "backend").tolist() == [b"a", "é".encode()]


def test_a_container_has_no_data(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    writer = TraceWriter(path)
    seq = [np.zeros(2, np.float32)]
    writer.write([TracedValue({"value": "q", "side": "backend", "kind": "sequence"}, seq)])
    writer.close({})
    rows, meta = read_trace(path)
    assert rows.schema == TRACE_SCHEMA
    assert rows.column("kind").to_pylist() == ["sequence"]
    assert all(
        rows.column(f.name).null_count == 1 for f in TRACE_SCHEMA if f.name.startswith("data_")
    )
    assert meta["format"] == "onnx-arrow trace"
    with pytest.raises(CompareError, match="'q' is a sequence, which has no data column"):
        read_value(path, "q", "backend")
    with pytest.raises(CompareError, match="no value 'nothing'"):
        read_value(path, "nothing", "backend")


def test_the_metadata_is_json_under_its_key(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    written(path, {"v": np.ones(2, np.float64)})
    raw = pq.read_metadata(path).metadata[b"onnx_arrow_trace"]
    doc = json.loads(raw)
    assert doc == read_trace_metadata(path)
    assert (doc["format_version"], doc["case"]) == (1, "c")


def test_a_file_that_is_not_a_trace_store_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), other)
    with pytest.raises(CompareError, match="is not a trace store"):
        read_trace(other)
    text = tmp_path / "text.parquet"
    text.write_text("no")
    with pytest.raises(CompareError, match="cannot read"):
        read_trace_metadata(text)
    newer = tmp_path / "newer.parquet"
    meta = {b"onnx_arrow_trace": json.dumps({"format": "onnx-arrow trace", "format_version": 99})}
    pq.write_table(pa.table({"x": [1]}).replace_schema_metadata(meta), newer)
    with pytest.raises(CompareError, match="version 99"):
        read_trace_metadata(newer)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"{", "trace metadata is not JSON"),
        (b"[1]", "metadata is JSON of list, not an object"),
        (b'{"format": "onnx-arrow trace", "format": "x"}', "key 'format' appears twice"),
        (b"[" * 100_000, "nests 100000 levels deep"),
    ],
    ids=["not JSON", "a list", "a key twice", "deep"],
)
def test_trace_metadata_that_is_not_a_json_object_is_a_located_error(
    tmp_path: Path, raw: bytes, says: str
) -> None:
    path = tmp_path / "forged.parquet"
    pq.write_table(pa.table({"x": [1]}).replace_schema_metadata({b"onnx_arrow_trace": raw}), path)
    with pytest.raises(CompareError, match=re.escape(says)) as info:
        read_trace_metadata(path)
    assert str(info.value).startswith(f"{path}: ")


def test_an_aborted_trace_leaves_no_file_and_the_old_one_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    writer = TraceWriter(path)
    writer.write([TracedValue({"value": "v", "side": "backend"}, np.ones(2, np.float32))])
    assert not path.exists()  # written beside it until closed
    writer.abort()
    assert list(tmp_path.iterdir()) == []
    path.write_bytes(b"an older file")
    TraceWriter(path).abort()
    assert path.read_bytes() == b"an older file"


@pytest.mark.parametrize("shape", [[-1, 6], [4, 4], [2**40, 2**40], [0, 2**62, 2**62], None])
def test_a_recorded_shape_that_does_not_hold_the_value_is_a_located_error(
    tmp_path: Path, shape: list[int] | None
) -> None:
    """A trace store changed after it was written: ``[-1, 6]`` is never reshaped as numpy
    would (to ``(1, 6)``), and no other shape is numpy's ValueError."""
    path = tmp_path / "t.parquet"
    written(path, {"v": np.arange(6, dtype=np.float32).reshape(2, 3), "s": np.array(["a"])})
    table = pq.read_table(path)
    i = table.schema.get_field_index("shape")
    field = table.schema.field(i)
    forged = table.set_column(i, field, pa.array([shape] * len(table), field.type))
    metadata = pq.read_metadata(path).metadata
    pq.write_table(forged.replace_schema_metadata(metadata), tmp_path / "f.parquet")
    for value in ("v", "s"):
        with pytest.raises(CompareError, match=r"is not dims of 0 or more holding its") as err:
            read_value(tmp_path / "f.parquet", value, "backend")
        assert str(err.value).startswith(f"{tmp_path / 'f.parquet'}: {value} (backend): its shape")

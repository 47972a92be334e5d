"""The storage-only form: zero-copy both ways, readable by DuckDB, Polars and plain Parquet."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import SequenceProto, TensorProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow.core.storage import storage_type
from onnx_arrow.errors import ArrowLayoutError


def _has_extension(t: pa.DataType) -> bool:
    if isinstance(t, pa.BaseExtensionType):
        return True
    return any(_has_extension(t.field(i).type) for i in range(t.num_fields))


def nested_column():
    bf = helper.make_tensor("w", TensorProto.BFLOAT16, [2], [1.5, -2.0])
    seq = SequenceProto(name="s", elem_type=SequenceProto.TENSOR)
    seq.tensor_values.extend([bf, bf])
    return onnx_arrow.to_arrow([seq, seq], exact=True)


def test_storage_form_has_no_extension_and_round_trips():
    array = nested_column()
    storage = onnx_arrow.to_storage(array)
    assert not _has_extension(storage.type)
    back = onnx_arrow.from_storage(storage, array.type)
    assert back.type == array.type
    assert [m.SerializeToString() for m in onnx_arrow.from_arrow(back)] == [
        m.SerializeToString() for m in onnx_arrow.from_arrow(array)
    ]


def test_storage_view_is_zero_copy():
    t = numpy_helper.from_array(np.arange(1000, dtype=np.float32), "x")
    array = onnx_arrow.to_arrow([t], exact=True).value
    storage = onnx_arrow.to_storage(array)
    assert storage.values.buffers()[1].address == array.storage.values.buffers()[1].address


def test_tables_and_chunked_arrays():
    array = nested_column()
    table = pa.table({"v": pa.chunked_array([array, array])}, metadata={b"k": b"v"})
    plain = onnx_arrow.to_storage(table)
    assert plain.schema.metadata == {b"k": b"v"}
    assert not _has_extension(plain.schema.field("v").type)
    buf = io.BytesIO()
    pq.write_table(plain, buf)
    read = pq.read_table(io.BytesIO(buf.getvalue())).column("v")
    restored = onnx_arrow.from_storage(read, array.type)
    assert len(onnx_arrow.from_arrow(restored)) == 4


def test_engines_read_exotic_dtypes_as_numbers():
    duckdb = pytest.importorskip("duckdb")
    polars = pytest.importorskip("polars")
    plain = onnx_arrow.to_storage(pa.table({"v": nested_column()}))
    rows = duckdb.sql("select v.value[1] as first from plain").fetchall()
    assert list(rows[0][0]) == [1.5, -2.0]
    frame = polars.from_arrow(plain)
    assert frame["v"].struct.field("value").to_list()[0][1] == [1.5, -2.0]


def test_from_storage_rejects_a_different_layout():
    array = nested_column()
    with pytest.raises(ArrowLayoutError, match="storage of"):
        onnx_arrow.from_storage(pa.array([1, 2]), array.type)
    assert storage_type(pa.int8()) == pa.int8()

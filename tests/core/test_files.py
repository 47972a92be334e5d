"""Tests of :mod:`onnx_arrow.core.files`: reading ``.pb`` files, alignment, and every refusal.

Timing is measured by ``benchmarks/bench_large_tensor.py``, never here.
"""

from __future__ import annotations

import os
import re
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from onnx import TensorProto, numpy_helper

from onnx_arrow import from_arrow, to_numpy
from onnx_arrow.core import files
from onnx_arrow.core.files import _first_payload_offset, read_pb
from onnx_arrow.errors import InvalidMessageError


def write(path: Path, tensor: TensorProto) -> bytes:
    data: bytes = tensor.SerializeToString()
    path.write_bytes(data)
    return data


def values_address(arr: pa.ExtensionArray) -> int:
    """The address of the flat element buffer behind the ``value`` column."""
    flat = arr.storage.field("value").storage.values
    return int(flat.buffers()[1].address)


def with_raw_data_at(value: np.ndarray[Any, Any], residue: int) -> bytes:
    """``value`` serialized with a name chosen so that raw_data starts at ``residue`` mod 64."""
    for length in range(1, 200):
        data: bytes = numpy_helper.from_array(value, "n" * length).SerializeToString()
        if (len(data) - value.nbytes) % 64 == residue:  # raw_data is the last field
            return data
    raise AssertionError(f"no name puts raw_data at {residue} mod 64")


# --- reading ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        np.arange(24, dtype=np.float32).reshape(2, 3, 4),
        np.array([[1.5, -np.inf], [np.nan, 0.0]]),
        np.arange(-5, 5, dtype=np.int8),
        np.array([True, False, True]),
        np.array([b"a", b"", b"\xff"], dtype=object),
    ],
    ids=["float32", "float64", "int8", "bool", "string"],
)
def test_round_trip_is_exact(tmp_path: Path, value: np.ndarray[Any, Any]) -> None:
    path = tmp_path / "input_0.pb"
    tensor = numpy_helper.from_array(value, "x")
    tensor.doc_string = "kept"
    data = write(path, tensor)
    arr = read_pb(path, exact=True)
    assert len(arr) == 1
    assert from_arrow(arr)[0].SerializeToString() == data
    np.testing.assert_array_equal(to_numpy(arr, strings="bytes")[0], value)


@pytest.mark.parametrize("count", [1000, 300_000], ids=["small", "larger-than-the-head"])
@pytest.mark.parametrize("residue", [1, 2, 9, 18, 33, 63])
def test_raw_data_at_an_odd_offset_is_64_byte_aligned(
    tmp_path: Path, residue: int, count: int
) -> None:
    value = np.arange(count, dtype=np.float32)
    path = tmp_path / "x.pb"
    path.write_bytes(with_raw_data_at(value, residue))
    arr = read_pb(path, exact=True)
    assert values_address(arr) % 64 == 0
    out = to_numpy(arr)
    assert out.ctypes.data == values_address(arr)  # zero-copy all the way to numpy
    assert out.flags.aligned
    np.testing.assert_array_equal(out[0], value)


def test_packed_float_data_is_aligned_too(tmp_path: Path) -> None:
    value = np.linspace(0, 1, 100, dtype=np.float32)
    tensor = TensorProto(name="odd", dims=[100], data_type=TensorProto.FLOAT)
    tensor.float_data.extend(value.tolist())
    path = tmp_path / "x.pb"
    data = write(path, tensor)
    arr = read_pb(path, exact=True)
    assert values_address(arr) % 64 == 0
    assert from_arrow(arr)[0].SerializeToString() == data


def test_payload_beyond_the_head_is_read_correctly(tmp_path: Path) -> None:
    # a name longer than the part read first: raw_data starts past it
    value = np.arange(10, dtype=np.float32)
    path = tmp_path / "x.pb"
    data = write(path, numpy_helper.from_array(value, "n" * 70_001))
    arr = read_pb(path, exact=True)
    assert from_arrow(arr)[0].SerializeToString() == data


def test_the_aligned_fields_are_raw_data_and_the_float_fields() -> None:
    numbers = {f.name: f.number for f in TensorProto.DESCRIPTOR.fields}
    expected = {numbers[n] for n in ("raw_data", "float_data", "double_data")}
    assert expected == files._ALIGNED_FIELDS


def tensor_bytes(**fields: Any) -> bytes:
    data: bytes = TensorProto(**fields).SerializeToString()
    return data


FLOATS = np.arange(4, dtype=np.float32)
DOUBLES = np.array([1.5, -2.0])


@pytest.mark.parametrize(
    ("fields", "payload"),
    [
        ({"dims": [4], "data_type": 1, "name": "n", "raw_data": FLOATS.tobytes()}, FLOATS),
        ({"dims": [4], "name": "n", "float_data": FLOATS.tolist()}, FLOATS),
        ({"name": "n", "int64_data": [1, 300], "double_data": DOUBLES.tolist()}, DOUBLES),
    ],
    ids=["raw_data", "float_data", "double_data-after-int64_data"],
)
def test_first_payload_offset_finds_the_fixed_width_payload(
    fields: dict[str, Any], payload: np.ndarray[Any, Any]
) -> None:
    data = tensor_bytes(**fields)
    offset = _first_payload_offset(bytearray(data))
    assert data[offset : offset + payload.nbytes] == payload.tobytes()
    # only its tag and length need be in the head
    assert _first_payload_offset(bytearray(data[:offset])) == offset


@pytest.mark.parametrize(
    "head",
    [
        b"",
        tensor_bytes(dims=[2, 3], data_type=7, name="only varints and a string"),
        tensor_bytes(int64_data=[1, 2], name="n"),
        tensor_bytes(name="a name cut by the end of the head")[:10],
        b"\x08",  # a varint field cut after its tag
        b"\x4a",  # raw_data cut before its length
        b"\x4a\x80",  # raw_data cut inside its length
        b"\x0d\x00\x00",  # a fixed32 field cut short
        b"\x0b\x4a\x00",  # a group, which ONNX messages never hold
        b"\x80" * 11,  # a tag longer than any varint
    ],
    ids=["empty", "no-payload", "int64_data", "cut-string", "cut-varint", "no-length",
         "cut-length", "cut-fixed32", "group", "long-tag"],
)  # fmt: skip
def test_first_payload_offset_is_0_without_a_payload(head: bytes) -> None:
    assert _first_payload_offset(bytearray(head)) == 0


# --- refusals --------------------------------------------------------------------------------


def test_fifo_is_refused_without_hanging(tmp_path: Path, deadline) -> None:
    fifo = tmp_path / "input_0.pb"
    os.mkfifo(fifo)
    with deadline(), pytest.raises(InvalidMessageError, match=r"a FIFO \(named pipe\), not a"):
        read_pb(fifo)


def test_directory_is_refused(tmp_path: Path, deadline) -> None:
    with deadline(), pytest.raises(InvalidMessageError, match="a directory, not a regular file"):
        read_pb(tmp_path)


def test_device_behind_a_symlink_is_refused(tmp_path: Path, deadline) -> None:
    link = tmp_path / "input_0.pb"
    link.symlink_to("/dev/zero")
    with deadline(), pytest.raises(InvalidMessageError, match="a character device, not a"):
        read_pb(link)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "missing.pb"
    with pytest.raises(InvalidMessageError, match=f"^{re.escape(str(path))}: cannot open"):
        read_pb(path)


def test_file_over_max_bytes_is_refused_before_reading(tmp_path: Path) -> None:
    value = np.zeros(1 << 21, dtype=np.float32)  # 8 MiB
    path = tmp_path / "big.pb"
    write(path, numpy_helper.from_array(value, "x"))
    tracemalloc.start()
    try:
        with pytest.raises(InvalidMessageError, match="exceed the limit of 4194304"):
            read_pb(path, max_bytes=4 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # no buffer for the file was ever allocated


def test_truncated_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "input_0.pb"
    data = numpy_helper.from_array(np.arange(10, dtype=np.float32), "x").SerializeToString()
    path.write_bytes(data[:-3])
    with pytest.raises(InvalidMessageError, match="truncated") as info:
        read_pb(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("junk", [1, None, [1], TensorProto()])
def test_a_path_argument_that_is_no_path_is_refused_naming_it(tmp_path: Path, junk: Any) -> None:
    from onnx_arrow.errors import UnsupportedTypeError

    pb = tmp_path / "input_0.pb"
    pb.write_bytes(numpy_helper.from_array(np.arange(3, dtype=np.int64)).SerializeToString())
    with pytest.raises(UnsupportedTypeError, match=r"^path: expected a path \(a str or os"):
        read_pb(junk)
    if junk is not None:
        with pytest.raises(UnsupportedTypeError, match=r"^base_dir: expected a path"):
            read_pb(pb, base_dir=junk)
    # bytes and os.PathLike are paths, as os.fspath takes them
    assert read_pb(os.fsencode(pb)).equals(read_pb(str(pb)))


def test_read_pb_says_what_a_file_of_another_kind_holds(tmp_path: Path) -> None:
    """A model saved as .pb, and a sequence read as the tensor a model declares: said to be
    so, not quoted as the numbers their bytes would make as dims."""
    from layout_corpora import IRIS_X, iris_model, zipmap
    from onnx import helper

    model = tmp_path / "model.pb"
    model.write_bytes(iris_model().SerializeToString())
    with pytest.raises(InvalidMessageError) as info:
        read_pb(model)
    assert str(info.value) == (
        f"{model}: does not decode as a TensorProto: it holds an ONNX model (a ModelProto), "
        "not a value: rename it model.onnx (or NAME.onnx beside the test_data_set_N folders "
        "it types)"
    )
    seq = tmp_path / "output_0.pb"
    seq.write_bytes(zipmap(IRIS_X, "output_probability").SerializeToString())
    with pytest.raises(InvalidMessageError) as info:
        read_pb(seq, helper.make_tensor_type_proto(TensorProto.INT64, [None]))
    assert str(info.value) == (
        f"{seq}: does not decode as tensor(int64) [?]: it is a SequenceProto named "
        "'output_probability', not a TensorProto"
    )

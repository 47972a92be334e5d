"""Tests of :mod:`onnx_arrow.core.json_extension`: versioned JSON metadata, types kept as read
when their layout is wrong, and that error raised, located, only when a column is read."""

from __future__ import annotations

import json
import pickle

import pyarrow as pa
import pytest

from onnx_arrow.core.json_extension import (
    FORMAT_VERSION,
    check_readable,
    expect_params,
    expect_storage,
    json_object,
)
from onnx_arrow.core.message_type import MessageType
from onnx_arrow.errors import ArrowLayoutError


def test_metadata_is_a_sorted_json_object_with_the_format_version() -> None:
    t = MessageType(pa.int8(), ("tensor",))
    assert t.__arrow_ext_serialize__() == b'{"kind": ["tensor"], "version": 1}'
    assert json.loads(t.__arrow_ext_serialize__())["version"] == FORMAT_VERSION
    assert t.params == {"kind": ["tensor"]}


def test_a_wrong_layout_is_kept_as_read_and_raised_only_when_checked() -> None:
    storage = pa.struct([pa.field("value", pa.int8())])  # no envelope
    read = MessageType.__arrow_ext_deserialize__(storage, b'{"kind": ["tensor"], "version": 1}')
    assert read.extension_name == "onnx.message"
    assert read.storage_type == storage
    assert isinstance(read.unreadable, ArrowLayoutError)
    with pytest.raises(ArrowLayoutError, match=r"^onnx.message: storage must be struct"):
        check_readable(read)
    with pytest.raises(ArrowLayoutError, match=r"^column x: onnx.message: storage must be"):
        check_readable(pa.list_(read), where="column x")  # found at any depth
    # kept byte for byte: written back, it reads the same
    back = pickle.loads(pickle.dumps(read))
    assert back.__arrow_ext_serialize__() == read.__arrow_ext_serialize__()
    assert isinstance(back.unreadable, ArrowLayoutError)


def test_a_readable_type_passes_at_any_depth() -> None:
    good = MessageType(pa.int8())
    check_readable(pa.map_(pa.int64(), pa.struct([pa.field("a", pa.list_(good))])))


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"{x", "x: extension metadata is not JSON"),
        (b"[1]", "x: extension metadata must be a JSON object, got list; hint"),
    ],
)
def test_json_object_says_what_is_wrong_and_what_to_do(raw: bytes, text: str) -> None:
    with pytest.raises(ArrowLayoutError) as info:
        json_object(raw, hint="hint", where="x")
    assert str(info.value).startswith(text)
    assert str(info.value).endswith("hint")
    assert json_object(b'{"a": 1}', hint="hint", where="x") == {"a": 1}


def test_parameters_and_storage_are_checked_by_name() -> None:
    expect_params("t", {"a": 1}, {"a", "b"})
    with pytest.raises(ArrowLayoutError, match=r"^t: unknown metadata keys \['c'\]; accepted:"):
        expect_params("t", {"a": 1, "c": 2}, {"a"})
    with pytest.raises(ArrowLayoutError, match=r"^t: unknown metadata keys .'c'.; accepted: none"):
        expect_params("t", {"c": 2}, set())
    expect_storage("t", pa.int8(), pa.int8())
    with pytest.raises(ArrowLayoutError, match=r"^t: storage type must be int8, got int16$"):
        expect_storage("t", pa.int16(), pa.int8())

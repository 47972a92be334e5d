"""Tests of :mod:`onnx_arrow.core.views`: the view layouts other engines produce, replaced."""

from __future__ import annotations

import pyarrow as pa
import pytest

from onnx_arrow.core.tensor_types import variable_rank_tensor
from onnx_arrow.core.views import without_views

VIEWS: dict[str, tuple[pa.DataType, pa.DataType]] = {
    "binary_view": (pa.binary_view(), pa.binary()),
    "string_view": (pa.string_view(), pa.string()),
    "list_view": (pa.list_view(pa.binary_view()), pa.list_(pa.binary())),
    "large_list_view": (pa.large_list_view(pa.int8()), pa.large_list(pa.int8())),
    "fixed_size_list": (pa.list_(pa.string_view(), 2), pa.list_(pa.string(), 2)),
    "map": (
        pa.map_(pa.binary_view(), pa.list_view(pa.int64())),
        pa.map_(pa.binary(), pa.list_(pa.int64())),
    ),
    "struct": (
        pa.struct([("value", pa.list_view(pa.int8())), ("envelope", pa.binary_view())]),
        pa.struct([("value", pa.list_(pa.int8())), ("envelope", pa.binary())]),
    ),
    "plain": (pa.struct([("a", pa.int64())]), pa.struct([("a", pa.int64())])),
}


@pytest.mark.parametrize(("view", "plain"), VIEWS.values(), ids=VIEWS)
def test_views_become_the_layouts_onnx_arrow_converts(
    view: pa.DataType, plain: pa.DataType
) -> None:
    assert without_views(view) == plain
    assert without_views(plain) == plain


def test_nullability_and_field_names_are_kept() -> None:
    view = pa.list_view(pa.field("element", pa.int8(), nullable=False))
    assert without_views(view) == pa.list_(pa.field("element", pa.int8(), nullable=False))


def test_an_extension_type_is_kept_or_rebuilt_over_its_new_storage() -> None:
    t = variable_rank_tensor(pa.float32())
    inside = pa.list_view(t)
    assert without_views(inside) == pa.list_(t)  # no extension hook: kept as it is
    seen: list[pa.DataType] = []

    def rebuild(ext: pa.DataType, storage: pa.DataType) -> pa.DataType:
        seen.append(storage)
        return storage

    assert without_views(t, rebuild) is t  # its storage has no view: nothing to rebuild
    assert seen == []


def test_an_extension_type_over_a_view_storage_is_rebuilt_by_the_hook() -> None:
    from onnx_arrow.core.extension_metadata import with_storage
    from onnx_arrow.core.message_type import MessageType

    viewed_storage = pa.struct([("value", pa.int8()), ("envelope", pa.binary_view())])
    viewed = with_storage(MessageType(pa.int8()), viewed_storage)
    assert viewed.storage_type == viewed_storage
    assert without_views(viewed) is viewed
    assert without_views(viewed, with_storage) == MessageType(pa.int8())


def _lists(values: list, t: pa.DataType) -> None:
    from onnx_arrow.core.views import lists_of_views

    array = pa.array(values, t)
    for part in (array, array.slice(1)):
        got = lists_of_views(part)
        got.validate(full=True)
        assert got.to_pylist() == part.to_pylist()
        assert got.type == without_views(part.type)
        assert "list_view" not in str(got.type)


@pytest.mark.parametrize(
    ("values", "t"),
    [
        ([[1], None, [2, 3]], pa.list_view(pa.int64())),
        ([[1], None, [2, 3]], pa.large_list_view(pa.int64())),
        ([[[1]], [[2, 3]], None], pa.list_(pa.list_view(pa.int64()))),
        ([[[1]], [[2, 3], None], None], pa.large_list(pa.large_list_view(pa.int8()))),
        ([[[1], [2]], None, [[3], None]], pa.list_(pa.list_view(pa.int64()), 2)),
        ([[("k", [1])], None, [("j", [2, 3])]], pa.map_(pa.string(), pa.list_view(pa.int64()))),
        ([{"a": [1]}, None, {"a": [2, 3]}], pa.struct([("a", pa.list_view(pa.int64()))])),
    ],
)
def test_list_views_of_arrays_become_lists_at_any_depth(values: list, t: pa.DataType) -> None:
    _lists(values, t)


def test_an_array_without_list_views_is_kept() -> None:
    from onnx_arrow.core.views import lists_of_views

    array = pa.array([[b"a"]], pa.list_(pa.binary_view()))
    assert lists_of_views(array) is array

"""Tests of :mod:`onnx_arrow.core.walk`: children, walk and map_type over every nested
type constructor pyarrow has."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pytest

from onnx_arrow.core import walk as walk_module
from onnx_arrow.core.walk import child_arrays, child_fields, children, map_type, walk
from onnx_arrow.errors import UnsupportedTypeError

LEAF = pa.int8()
META = {b"note": b"kept"}


def _field(t: pa.DataType, name: str = "x") -> pa.Field:
    return pa.field(name, t, nullable=False, metadata=META)


#: Every nested type constructor, over a child type: (name, build, children it gives).
CONSTRUCTORS: dict[str, Callable[[pa.DataType], pa.DataType]] = {
    "list": lambda t: pa.list_(_field(t)),
    "large_list": lambda t: pa.large_list(_field(t)),
    "list_view": lambda t: pa.list_view(_field(t)),
    "large_list_view": lambda t: pa.large_list_view(_field(t)),
    "fixed_size_list": lambda t: pa.list_(_field(t), 3),
    "map": lambda t: pa.map_(pa.field("k", pa.string(), False), _field(t, "v"), True),
    "struct": lambda t: pa.struct([_field(t, "a"), pa.field("b", pa.string())]),
    "sparse_union": lambda t: pa.sparse_union([_field(t, "a"), pa.field("b", pa.string())]),
    "dense_union": lambda t: pa.dense_union([_field(t, "a"), pa.field("b", pa.string())], [7, 3]),
    "dictionary": lambda t: pa.dictionary(pa.int16(), t, ordered=True),
    "run_end_encoded": lambda t: pa.run_end_encoded(pa.int32(), t),
    "extension": lambda t: pa.fixed_shape_tensor(t, [2, 2]),
}

#: The child types each constructor gives, given the child ``t``.
EXPECTED_CHILDREN: dict[str, Callable[[pa.DataType], tuple[pa.DataType, ...]]] = {
    "list": lambda t: (t,),
    "large_list": lambda t: (t,),
    "list_view": lambda t: (t,),
    "large_list_view": lambda t: (t,),
    "fixed_size_list": lambda t: (t,),
    "map": lambda t: (pa.string(), t),
    "struct": lambda t: (t, pa.string()),
    "sparse_union": lambda t: (t, pa.string()),
    "dense_union": lambda t: (t, pa.string()),
    "dictionary": lambda t: (t,),
    "run_end_encoded": lambda t: (pa.int32(), t),
    "extension": lambda t: (pa.list_(t, 4),),
}

NAMES = list(CONSTRUCTORS)


def test_every_nested_constructor_is_covered() -> None:
    assert set(NAMES) == set(EXPECTED_CHILDREN)
    for build in CONSTRUCTORS.values():
        t = build(LEAF)
        assert pa.types.is_nested(t) or t.num_fields == 0  # dictionary, extension: no fields


@pytest.mark.parametrize("name", NAMES)
def test_children(name: str) -> None:
    t = CONSTRUCTORS[name](LEAF)
    assert children(t) == EXPECTED_CHILDREN[name](LEAF)


@pytest.mark.parametrize("name", NAMES)
def test_child_fields_keep_names_nullability_and_metadata(name: str) -> None:
    fields = child_fields(CONSTRUCTORS[name](LEAF))
    kept = [f for f in fields if f.metadata == META]
    if name in ("dictionary", "run_end_encoded"):
        assert kept == []  # their children are types, not fields
    elif name == "extension":
        assert [f.name for f in fields] == ["storage"]
    else:
        assert len(kept) == 1
        assert not kept[0].nullable
        assert kept[0].type == LEAF


@pytest.mark.parametrize("t", [pa.int8(), pa.string(), pa.binary_view(), pa.null()])
def test_a_type_that_is_not_nested_has_no_children(t: pa.DataType) -> None:
    assert children(t) == ()
    assert list(walk(t)) == [t]


@pytest.mark.parametrize("name", NAMES)
def test_walk_is_pre_order(name: str) -> None:
    t = CONSTRUCTORS[name](LEAF)
    got = list(walk(t))
    assert got[0] == t
    expected: list[pa.DataType] = [t]
    for child in EXPECTED_CHILDREN[name](LEAF):
        expected.extend(walk(child))
    assert got == expected
    assert LEAF in got


@pytest.mark.parametrize("name", NAMES)
def test_map_type_identity_is_the_type(name: str) -> None:
    t = CONSTRUCTORS[name](LEAF)
    back = map_type(t, lambda x: x)
    assert back.equals(t, check_metadata=True)
    back = map_type(t, lambda x: x, extension=lambda ext, storage: storage)
    assert back.equals(t, check_metadata=True)


def _widen(x: pa.DataType) -> pa.DataType:
    return pa.int64() if x == LEAF else x


@pytest.mark.parametrize("name", [n for n in NAMES if n != "extension"])
def test_map_type_rebuilds_keeping_fields_and_parameters(name: str) -> None:
    t = CONSTRUCTORS[name](LEAF)
    got = map_type(t, _widen)
    assert got.equals(CONSTRUCTORS[name](pa.int64()), check_metadata=True)
    assert type(got) is type(t)


def test_map_type_keeps_what_constructors_cannot_spell() -> None:
    """A type nothing in which changes is the type itself, not a rebuilt one: whatever a
    constructor might not spell (a map's entries, named by another engine) is kept."""
    entries = pa.struct([pa.field("key", pa.string(), False), pa.field("value", LEAF)])
    other = pa.list_(pa.field("key_value", entries, False))
    t = pa.struct([pa.field("m", pa.map_(pa.string(), LEAF)), pa.field("o", other)])
    assert map_type(t, lambda x: x) is t


def test_map_type_applies_fn_bottom_up() -> None:
    seen: list[str] = []

    def note(x: pa.DataType) -> pa.DataType:
        seen.append(str(x))
        return x

    map_type(pa.list_(pa.struct([("a", LEAF), ("b", pa.string())])), note)
    assert seen == [
        "int8",
        "string",
        "struct<a: int8, b: string>",
        "list<item: struct<a: int8, b: string>>",
    ]


def test_extension_storage_is_mapped_only_given_extension() -> None:
    t = pa.list_(pa.fixed_shape_tensor(LEAF, [2]))
    # without it: the extension type is a leaf of the map, fn alone sees it
    assert map_type(t, _widen) == t
    # with it: the storage is mapped and the extension callback decides
    calls: list[tuple[pa.DataType, pa.DataType]] = []

    def rebuilt(ext: pa.DataType, storage: pa.DataType) -> pa.DataType:
        calls.append((ext, storage))
        return pa.fixed_shape_tensor(storage.value_type, ext.shape)

    got = map_type(t, _widen, extension=rebuilt)
    assert got == pa.list_(pa.fixed_shape_tensor(pa.int64(), [2]))
    assert calls == [(pa.fixed_shape_tensor(LEAF, [2]), pa.list_(pa.int64(), 2))]


def test_storage_of_extensions_at_any_depth() -> None:
    """The storage type of a type: extensions dropped, at any depth (nested ones too)."""

    def strip(x: pa.DataType) -> pa.DataType:
        return x.storage_type if isinstance(x, pa.BaseExtensionType) else x

    t = pa.struct(
        [pa.field("a", pa.map_(pa.string(), pa.fixed_shape_tensor(pa.bool8(), [2])), False)]
    )
    got = map_type(t, strip, extension=lambda ext, storage: storage)
    assert got == pa.struct([pa.field("a", pa.map_(pa.string(), pa.list_(pa.int8(), 2)), False)])
    assert not any(isinstance(x, pa.BaseExtensionType) for x in walk(got))


def _deep(depth: int) -> pa.DataType:
    t: pa.DataType = LEAF
    for k in range(depth):
        t = CONSTRUCTORS[NAMES[k % len(NAMES)]](t)
    return t


def test_deep_nesting() -> None:
    depth = 5 * len(NAMES)
    t = _deep(depth)
    assert sum(1 for x in walk(t) if x == LEAF) == 1  # one path of the chain ends at LEAF
    assert map_type(t, lambda x: x).equals(t, check_metadata=True)
    widened = map_type(
        t, _widen, extension=lambda ext, s: pa.fixed_shape_tensor(s.value_type, ext.shape)
    )
    assert pa.int64() in list(walk(widened))
    assert LEAF not in list(walk(widened))
    assert len(list(walk(widened))) == len(list(walk(t)))


def test_an_unknown_nested_type_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A type with children that the table does not know raises, naming it and the known."""
    table = tuple(e for e in walk_module._NESTED if e.name != "struct")
    monkeypatch.setattr(walk_module, "_NESTED", table)
    t = pa.list_(pa.struct([("a", LEAF)]))
    for call in (
        lambda x: children(x.value_type),
        lambda x: list(walk(x)),
        lambda x: map_type(x, lambda y: y),
    ):
        with pytest.raises(UnsupportedTypeError, match=r"struct<a: int8> has 1 child field"):
            call(t)
    with pytest.raises(UnsupportedTypeError, match="it knows list, large_list, list_view"):
        children(pa.struct([("a", LEAF)]))


def test_a_change_under_an_extension_inside_a_dictionary_is_seen() -> None:
    """Arrow finds these two types equal; map_type must still rebuild."""
    t = pa.dictionary(pa.int16(), pa.list_(pa.fixed_shape_tensor(LEAF, [2])))
    got = map_type(
        t, _widen, extension=lambda ext, s: pa.fixed_shape_tensor(s.value_type, ext.shape)
    )
    assert str(got) == str(
        pa.dictionary(pa.int16(), pa.list_(pa.fixed_shape_tensor(pa.int64(), [2])))
    )


def _array_of(name: str) -> pa.Array:
    """A three-row array of each constructor over int8 leaves 0, 1, 2 ... (one row each)."""
    t = CONSTRUCTORS[name](LEAF)
    leaves = pa.array([0, 1, 2], LEAF)
    if name in ("list", "large_list", "list_view", "large_list_view"):
        return pa.array([[0], [1], [2]], t)
    if name == "fixed_size_list":
        return pa.array([[0, 0, 0], [1, 1, 1], [2, 2, 2]], t)
    if name == "map":
        return pa.array([[("k", 0)], [("k", 1)], [("k", 2)]], t)
    if name == "struct":
        return pa.StructArray.from_arrays([leaves, pa.array(["a", "b", "c"])], fields=list(t))
    if name == "sparse_union":
        return pa.UnionArray.from_sparse(
            pa.array([0, 0, 0], pa.int8()), [leaves, pa.array(["a", "b", "c"])], ["a", "b"]
        )
    if name == "dense_union":
        return pa.UnionArray.from_dense(
            pa.array([7, 7, 7], pa.int8()),
            pa.array([2, 0, 1], pa.int32()),
            [pa.array([1, 2, 0], LEAF), pa.array([], pa.string())],
            ["a", "b"],
            [7, 3],
        )
    if name == "dictionary":
        return pa.DictionaryArray.from_arrays(pa.array([0, 1, 2], pa.int16()), leaves)
    if name == "run_end_encoded":
        return pa.RunEndEncodedArray.from_arrays(pa.array([1, 2, 3], pa.int32()), leaves)
    assert name == "extension"
    storage = pa.array([[k] * 4 for k in range(3)], pa.list_(LEAF, 4))
    return pa.ExtensionArray.from_storage(t, storage)


def _leaf_values(array: pa.Array) -> list[int]:
    """The int8 leaves under ``array``, reached through child_arrays alone."""
    if array.type == LEAF:
        return [v for v in array.to_pylist() if v is not None]
    return [v for child in child_arrays(array) for v in _leaf_values(child)]


@pytest.mark.parametrize("name", NAMES)
def test_child_arrays_match_child_fields(name: str) -> None:
    array = _array_of(name)
    got = child_arrays(array)
    assert tuple(a.type for a in got) == children(array.type)


@pytest.mark.parametrize("name", NAMES)
def test_child_arrays_hold_the_values_the_rows_span(name: str) -> None:
    """A slice's child arrays hold the values of its rows only (so a check of values
    can be located to a row by slicing)."""
    array = _array_of(name)
    assert sorted(set(_leaf_values(array))) == [0, 1, 2]
    assert set(_leaf_values(array.slice(1, 1))) == {1}
    assert set(_leaf_values(array.slice(2))) == {2}


@pytest.mark.parametrize("t", [pa.int8(), pa.string(), pa.binary_view(), pa.null()])
def test_an_array_that_is_not_nested_has_no_child_arrays(t: pa.DataType) -> None:
    assert child_arrays(pa.nulls(2, t)) == ()

"""One walker over nested Arrow types: their children, a pre-order walk, a bottom-up map,
and the child arrays of an array.

Every nested type pyarrow can build is covered, from one table: ``list``,
``large_list``, ``list_view``, ``large_list_view``, ``fixed_size_list``, ``map``,
``struct``, ``sparse_union``, ``dense_union``, ``dictionary`` (its value type; the index
type is a parameter, like a list's size), ``run_end_encoded`` (run ends and values) and
extension types (their storage).  A type with child fields that is none of these is
refused, naming it, rather than walked past: a check built on this module cannot miss
what a new nested type holds.

>>> import pyarrow as pa
>>> t = pa.struct([("a", pa.list_(pa.int8())), ("b", pa.bool8())])
>>> [str(x) for x in walk(t)]
['struct<a: list<item: int8>, b: extension<arrow.bool8>>', 'list<item: int8>', 'int8', \
'extension<arrow.bool8>', 'int8']
>>> map_type(t, lambda x: pa.int16() if x == pa.int8() else x)
StructType(struct<a: list<item: int16>, b: extension<arrow.bool8>>)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa

from onnx_arrow.errors import UnsupportedTypeError

__all__ = ["child_arrays", "child_fields", "children", "map_type", "walk"]

#: A function of a type to a type, applied by :func:`map_type`.
TypeFunction = Callable[[pa.DataType], pa.DataType]
#: The extension type and its mapped storage to the type that replaces it.
ExtensionFunction = Callable[[pa.DataType, pa.DataType], pa.DataType]


@dataclass(frozen=True)
class _Nested:
    """One nested type constructor: how to tell it, its child fields, how to rebuild it
    over new child fields (everything else taken from the type itself), and the child
    arrays of an array of it (one per child field, holding the values its rows span)."""

    name: str
    test: Callable[[pa.DataType], bool]
    fields: Callable[[Any], tuple[pa.Field, ...]]
    rebuild: Callable[[Any, tuple[pa.Field, ...]], pa.DataType]
    arrays: Callable[[Any], tuple[pa.Array, ...]]


def _struct_fields(t: Any) -> tuple[pa.Field, ...]:
    return tuple(t.field(i) for i in range(t.num_fields))


def _list_values(array: Any) -> pa.Array:
    """The elements the rows of a list or map array span (null rows' too)."""
    offsets = array.offsets
    if len(offsets) == 0:
        return array.values.slice(0, 0)
    start, stop = offsets[0].as_py(), offsets[-1].as_py()
    return array.values.slice(start, stop - start)


def _fixed_size_values(array: Any) -> tuple[pa.Array]:
    size = array.type.list_size
    return (array.values.slice(array.offset * size, len(array) * size),)


def _map_arrays(array: Any) -> tuple[pa.Array, pa.Array]:
    entries = _list_values(array)
    return entries.field(0), entries.field(1)


def _union_arrays(array: Any) -> tuple[pa.Array, ...]:
    """A sparse union's children over its rows; a dense union's, the rows of each child
    that its rows point to."""
    n = array.type.num_fields
    if array.type.mode == "sparse":
        return tuple(array.field(i) for i in range(n))
    # read from the buffers: pyarrow's type_codes and offsets leave out the array's offset
    start, stop = array.offset, array.offset + len(array)
    codes = np.frombuffer(array.buffers()[1], np.int8)[start:stop]
    offsets = np.frombuffer(array.buffers()[2], np.int32)[start:stop]
    return tuple(
        array.field(i).take(pa.array(offsets[codes == code]))
        for i, code in enumerate(array.type.type_codes)
    )


def _run_end_arrays(array: Any) -> tuple[pa.Array, pa.Array]:
    start, length = array.find_physical_offset(), array.find_physical_length()
    return array.run_ends.slice(start, length), array.values.slice(start, length)


_NESTED: Final[tuple[_Nested, ...]] = (
    _Nested(
        "list",
        pa.types.is_list,
        lambda t: (t.value_field,),
        lambda t, f: pa.list_(f[0]),
        lambda a: (_list_values(a),),
    ),
    _Nested(
        "large_list",
        pa.types.is_large_list,
        lambda t: (t.value_field,),
        lambda t, f: pa.large_list(f[0]),
        lambda a: (_list_values(a),),
    ),
    _Nested(
        "list_view",
        pa.types.is_list_view,
        lambda t: (t.value_field,),
        lambda t, f: pa.list_view(f[0]),
        lambda a: (a.flatten(),),
    ),
    _Nested(
        "large_list_view",
        pa.types.is_large_list_view,
        lambda t: (t.value_field,),
        lambda t, f: pa.large_list_view(f[0]),
        lambda a: (a.flatten(),),
    ),
    _Nested(
        "fixed_size_list",
        pa.types.is_fixed_size_list,
        lambda t: (t.value_field,),
        lambda t, f: pa.list_(f[0], t.list_size),
        _fixed_size_values,
    ),
    _Nested(
        "map",
        pa.types.is_map,
        lambda t: (t.key_field, t.item_field),
        lambda t, f: pa.map_(f[0], f[1], t.keys_sorted),
        _map_arrays,
    ),
    _Nested(
        "struct",
        pa.types.is_struct,
        _struct_fields,
        lambda t, f: pa.struct(f),
        lambda a: tuple(a.flatten()),
    ),
    _Nested(
        "union",
        pa.types.is_union,
        _struct_fields,
        lambda t, f: pa.union(f, t.mode, t.type_codes),
        _union_arrays,
    ),
    _Nested(
        "dictionary",
        pa.types.is_dictionary,
        lambda t: (pa.field("dictionary", t.value_type),),
        lambda t, f: pa.dictionary(t.index_type, f[0].type, t.ordered),
        lambda a: (a.dictionary.take(a.indices),),
    ),
    _Nested(
        "run_end_encoded",
        pa.types.is_run_end_encoded,
        lambda t: (pa.field("run_ends", t.run_end_type, False), pa.field("values", t.value_type)),
        lambda t, f: pa.run_end_encoded(f[0].type, f[1].type),
        _run_end_arrays,
    ),
)


def _is_extension(t: pa.DataType) -> bool:
    return isinstance(t, pa.BaseExtensionType)


def _nested(t: pa.DataType) -> _Nested | None:
    """The table entry of ``t``; None for a type without children; raises for a nested
    type the table does not know."""
    for entry in _NESTED:
        if entry.test(t):
            return entry
    if t.num_fields:
        raise UnsupportedTypeError(
            f"Arrow type {t} has {t.num_fields} child field(s), but is no nested type "
            "onnx-arrow knows how to walk; it knows "
            + ", ".join([e.name for e in _NESTED] + ["extension types"])
        )
    return None


def child_fields(arrow_type: pa.DataType) -> tuple[pa.Field, ...]:
    """The child fields of ``arrow_type``: names, nullability and metadata with the types.

    An extension type has one, ``storage``; a dictionary one, ``dictionary``; a type
    that is not nested none.

    Raises
    ------
    UnsupportedTypeError
        For a type with children that is none of the nested types this module knows.
    """
    if _is_extension(arrow_type):
        return (pa.field("storage", arrow_type.storage_type),)
    entry = _nested(arrow_type)
    return () if entry is None else entry.fields(arrow_type)


def children(arrow_type: pa.DataType) -> tuple[pa.DataType, ...]:
    """The child types of ``arrow_type``, in order (see :func:`child_fields`).

    >>> import pyarrow as pa
    >>> children(pa.map_(pa.string(), pa.float32()))
    (DataType(string), DataType(float))
    """
    return tuple(f.type for f in child_fields(arrow_type))


def child_arrays(array: pa.Array) -> tuple[pa.Array, ...]:
    """The child arrays of ``array``, one per child field (see :func:`child_fields`),
    each holding the values the rows of ``array`` span, in order.

    A list's are the elements its rows span (null rows' too), a list view's the
    elements of its rows in row order, a struct's its fields with the struct's nulls
    merged in, a map's its keys and items, a union's the values its rows select, a
    dictionary's its values row by row, a run-end encoded array's the runs its rows
    cover, an extension array's its storage.  Checks of values recurse through them.

    >>> import pyarrow as pa
    >>> [a.to_pylist() for a in child_arrays(pa.array([[1, 2], [3]]).slice(1))]
    [[3]]

    Raises
    ------
    UnsupportedTypeError
        For a type with children that is none of the nested types this module knows.
    """
    if _is_extension(array.type):
        return (array.storage,)
    entry = _nested(array.type)
    return () if entry is None else entry.arrays(array)


def walk(arrow_type: pa.DataType) -> Iterator[pa.DataType]:
    """``arrow_type`` and every type nested in it, in pre-order (a type before its
    children, children in order), extension storage included."""
    stack = [arrow_type]
    while stack:
        t = stack.pop()
        yield t
        stack.extend(reversed(children(t)))


def map_type(
    arrow_type: pa.DataType, fn: TypeFunction, *, extension: ExtensionFunction | None = None
) -> pa.DataType:
    """``arrow_type`` rebuilt bottom-up, ``fn`` applied to every type in it.

    Children are mapped first; a type is rebuilt over its mapped children, with the names,
    nullability and metadata of its fields and its own parameters (list size, key order,
    union mode and codes, dictionary index and order), and ``fn`` is applied to the
    result.  A type none of whose children changed is kept as it is (so
    ``map_type(t, lambda x: x) == t``, also for what the constructors cannot spell, such
    as the name of a map's entries).

    An extension type's storage is mapped only given ``extension``: where the mapped
    storage differs, ``extension(the_type, mapped_storage)`` replaces the type (return
    the storage itself to drop the extension).  Without it the extension type is mapped
    as a whole, by ``fn`` alone.

    Raises
    ------
    UnsupportedTypeError
        For a type with children that is none of the nested types this module knows.
    """
    return _map(arrow_type, fn, extension)[0]


def _map(
    t: pa.DataType, fn: TypeFunction, extension: ExtensionFunction | None
) -> tuple[pa.DataType, bool]:
    """:func:`map_type`, and whether anything changed.  Changes are told by identity, not
    by equality: Arrow compares a dictionary or run-end encoded type by a fingerprint that
    leaves out the storage of extension types inside (pyarrow 26 finds
    ``dictionary<int16, fixed_shape_tensor<int8>>`` equal to the int64 one)."""
    changed = False
    if _is_extension(t):
        if extension is not None:
            storage, changed = _map(t.storage_type, fn, extension)
            if changed:
                t = extension(t, storage)
    else:
        entry = _nested(t)
        if entry is not None:
            fields = entry.fields(t)
            mapped = [_map(f.type, fn, extension) for f in fields]
            if any(child_changed for _, child_changed in mapped):
                changed = True
                t = entry.rebuild(
                    t, tuple(f.with_type(m) for f, (m, _) in zip(fields, mapped, strict=True))
                )
    result = fn(t)
    return result, changed or result is not t

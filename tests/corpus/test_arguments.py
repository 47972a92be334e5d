"""The checks of the corpus's entry points' arguments (corpus/arguments.py): what each
takes, what it refuses at once, and where its error says the problem is."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper

from onnx_arrow.corpus.arguments import check_model, check_path, checked_items, type_name
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError


class _BytesPath:
    """A path-like object whose path is bytes: not a path a corpus takes."""

    def __fspath__(self) -> bytes:
        return b"corpus"


def test_a_path_is_a_str_or_a_path_like_giving_one(tmp_path: Path) -> None:
    assert check_path("a/b", where="f(x)") == "a/b"
    assert check_path(tmp_path, where="f(x)") is tmp_path
    for junk in (1, None, b"a/b", [tmp_path], _BytesPath()):
        with pytest.raises(UnsupportedTypeError, match=r"^f\(x\): expected a path") as info:
            check_path(junk, where="f(x)")
        assert isinstance(info.value, TypeError)
        assert isinstance(info.value, OnnxArrowError)
        assert info.value.where == "f(x)"


def test_a_model_is_a_model_proto() -> None:
    model = helper.make_model(helper.make_graph([], "g", [], []))
    assert check_model(model, where="f(model)") is model
    junks = (None, ModelProto, numpy_helper.from_array(np.zeros(1)), model.graph, b"")
    for junk in junks:
        with pytest.raises(UnsupportedTypeError, match=r"^f\(model\): expected an onnx\.Model"):
            check_model(junk, where="f(model)")


def test_a_list_or_tuple_is_checked_whole_at_once() -> None:
    items = [1, 2]
    assert checked_items(items, int, what="ints", where="f(xs)") is items
    assert checked_items((), int, what="ints", where="f(xs)") == ()
    with pytest.raises(UnsupportedTypeError, match=r"^f\(xs\)\[2\]: expected ints, got str$"):
        checked_items((1, 2, "3"), int, what="ints", where="f(xs)")


def test_a_lazy_iterable_is_checked_as_it_is_consumed() -> None:
    read: list[object] = []

    def lazy() -> Iterator[object]:
        for item in (1, True, "x", 4):
            read.append(item)
            yield item

    checked = iter(checked_items(lazy(), int, what="ints", where="f(xs)"))
    assert read == []  # nothing read before it is consumed
    assert [next(checked), next(checked)] == [1, True]
    with pytest.raises(UnsupportedTypeError, match=r"^f\(xs\)\[2\]: expected ints, got str$"):
        next(checked)
    assert read == [1, True, "x"]


@pytest.mark.parametrize(
    "junk",
    [1, None, "ab", b"ab", Path("ab"), TensorProto(), pa.array([1]), pa.table({"a": [1]})],
    ids=type_name,
)
def test_what_is_not_an_iterable_of_records_is_refused_at_once(junk: object) -> None:
    with pytest.raises(UnsupportedTypeError, match=r"^f\(xs\): expected an iterable of ints"):
        checked_items(junk, int, what="ints", where="f(xs)")


def test_polars_data_is_refused_at_once() -> None:
    pl = pytest.importorskip("polars")
    for junk in (pl.Series("a", [1, 2]), pl.DataFrame({"a": [1, 2]})):
        with pytest.raises(UnsupportedTypeError, match=r"got polars\."):
            checked_items(junk, int, what="ints", where="f(xs)")


def test_type_names_are_short_for_builtins_and_qualified_otherwise() -> None:
    assert type_name(1) == "int"
    assert type_name(None) == "NoneType"
    assert type_name(pa.array([1])) == "pyarrow.lib.Int64Array"
    assert type_name(os.environ) == "os._Environ"

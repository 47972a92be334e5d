"""JSON metadata from anyone: size, encoding and depth checked before parsing."""

from __future__ import annotations

import pytest

from onnx_arrow.core._json import MAX_JSON_DEPTH, json_depth, load_json
from onnx_arrow.errors import CorpusError


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nests 100000 levels deep"),
        (b'{"a": "\xff"}', "is not JSON (not UTF-8 text: byte 7 is b'\\xff')"),
        (b"[" + b"9" * 5000 + b"]", "is not JSON (Exceeds the limit (4300 digits)"),
        (b"{", "is not JSON (Expecting property name"),
        (b" " * (17 << 20), "bytes, more than the 16777216 onnx-arrow reads"),
        ("\ud800", "holds text that is not valid Unicode"),
    ],
    ids=["deep", "not UTF-8", "huge integer", "not JSON", "too large", "lone surrogate"],
)
def test_hostile_json_is_a_located_project_error(raw: bytes | str, message: str) -> None:
    with pytest.raises(CorpusError) as info:
        load_json(raw, what="store metadata", where="s.parquet", error=CorpusError)
    assert str(info.value).startswith("s.parquet: store metadata ")
    assert message in str(info.value)


def test_depth_skips_brackets_inside_strings() -> None:
    assert json_depth(b'["[[[", {"k": "\\"]]]"}, [[]]]') == 3
    deep = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    assert load_json(deep, what="m", where=None, error=ValueError) is not None
    with pytest.raises(ValueError, match=r"^m nests 65 levels deep"):
        load_json(b"[" + deep + b"]", what="m", where=None, error=ValueError)


def test_brackets_inside_strings_or_a_scalar_are_no_depth() -> None:
    """The depth is that of the value parsed: brackets in its strings count for nothing."""
    text = b'"' + b"[{" * 100 + b'"'
    assert load_json(text, what="m", where=None, error=ValueError) == "[{" * 100
    nested = b'{"k": ["' + b"[" * 100 + b'", [[1]]]}'
    assert load_json(nested, what="m", where=None, error=ValueError) == {"k": ["[" * 100, [[1]]]}
    deep_dict = b'{"a": ' * (MAX_JSON_DEPTH + 1) + b"1" + b"}" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(ValueError, match=rf"^m nests {MAX_JSON_DEPTH + 1} levels deep"):
        load_json(deep_dict, what="m", where=None, error=ValueError)

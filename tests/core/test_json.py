"""JSON metadata from anyone: size, encoding and depth checked before parsing."""

from __future__ import annotations

import pytest

from onnx_arrow.core._json import MAX_JSON_DEPTH, json_depth, key_line, load_json
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


def test_a_key_twice_in_one_object_is_refused_at_its_line() -> None:
    """``json.loads`` keeps the last of two values of one key silently; the gate refuses
    the text, at the line of the second key where keys start their lines."""
    text = '{\n  "a": {"x": 1},\n  "b": {\n    "x": 1,\n    "y": 2,\n    "x": 3\n  }\n}'
    with pytest.raises(CorpusError) as info:
        load_json(text, what="index", where="i.json", error=CorpusError)
    assert str(info.value) == (
        "i.json: index: line 6: key 'x' appears twice in one object; JSON keys must be distinct"
    )
    with pytest.raises(ValueError, match=r"^index: key 'x' appears twice"):
        load_json(b'{"x": 1, "x": 2}', what="index", where=None, error=ValueError)
    assert key_line('{"x": 1, "x": 2}', "x") == ""  # not at the start of lines
    assert key_line('{\n "x": {\n  "x": 1\n }\n}', "x") == ""  # two objects
    assert load_json('{"x": {"x": 1}}', what="m", where=None, error=ValueError) == {"x": {"x": 1}}

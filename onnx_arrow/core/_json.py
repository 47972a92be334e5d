"""JSON written by anyone (store, schema and extension metadata, cache indexes, manifests,
expectation files, package index pages): parsed within limits, each key once per object.

``json.loads`` on its own lets such text raise ``RecursionError`` (arrays nested
thousands deep), ``UnicodeDecodeError`` (bytes that are not UTF-8) or a bare
``ValueError`` (an integer of 5,000 digits), and parses text of any size.
:func:`load_json` checks the size and the encoding, parses, and turns every failure into
the caller's error class, located.  The depth is guarded once, on what was parsed: text
nested deeper than the parser recurses is its ``RecursionError``; a value parsed is
refused if it nests deeper than :data:`MAX_JSON_DEPTH`, which a walk of its arrays and
objects (scalars skipped) finds only where the text holds more brackets than that.  An
object that gives a key twice is refused (``json.loads`` keeps the last one silently), at
its line where keys start their lines (:func:`key_line`).

>>> load_json(b'{"a": [1, 2]}', what="metadata", where="x.parquet", error=ValueError)
{'a': [1, 2]}
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import numpy as np

from onnx_arrow.errors import OnnxArrowError

__all__ = ["MAX_JSON_BYTES", "MAX_JSON_DEPTH", "key_line", "load_json"]

#: Largest JSON text read from metadata (16 MiB; what onnx-arrow writes is a few KiB).
MAX_JSON_BYTES: Final = 16 << 20
#: Deepest nesting of arrays and objects accepted (what onnx-arrow writes nests < 20).
MAX_JSON_DEPTH: Final = 64
_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_KEY: Final = re.compile(r'\s*("(?:[^"\\]|\\.)*")\s*:')
_TEXT_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_OPEN: Final = np.frombuffer(b"[{", dtype=np.uint8)
_CLOSE: Final = np.frombuffer(b"]}", dtype=np.uint8)


def json_depth(data: bytes) -> int:
    """How deep arrays and objects nest in the JSON text ``data`` (strings skipped): what
    an error says of text too deep to parse."""
    codes = np.frombuffer(_STRING.sub(b'""', data), dtype=np.uint8)
    steps = np.isin(codes, _OPEN).astype(np.int64) - np.isin(codes, _CLOSE)
    return int(np.cumsum(steps).max(initial=0))


def _depth(value: Any) -> int:
    """How deep arrays and objects nest in a parsed value (its containers walked one level
    at a time)."""
    depth = 0
    level = [value] if isinstance(value, (list, dict)) else []
    while level:
        depth += 1
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (list, dict))
        ]
    return depth


class _RepeatedKey(Exception):
    """A key given twice in one object: raised by the parser's hook, caught by the gate."""

    def __init__(self, key: str) -> None:
        self.key = key


def _distinct_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return found


def key_line(text: str, key: str) -> str:
    """``line N: ``, N the line that gives ``key`` a second time in one object (when keys
    start their lines, ``//`` comments skipped), else nothing."""
    objects, made, seen = [0], 0, set()
    for number, raw in enumerate(text.splitlines(), 1):
        code = raw.partition("//")[0]
        found = _KEY.match(code)
        if found is not None and json.loads(found[1]) == key:
            if objects[-1] in seen:
                return f"line {number}: "
            seen.add(objects[-1])
        for c in _TEXT_STRING.sub('""', code):
            if c == "{":
                made += 1
                objects.append(made)
            elif c == "}" and len(objects) > 1:
                objects.pop()
    return ""


def load_json(raw: bytes | str, *, what: str, where: str | None, error: type[Exception]) -> Any:
    """``raw`` parsed as JSON, or ``error`` saying what is wrong with it, at ``where``.

    ``error`` is a project error class (given ``where=``) or a built-in one (given
    the location in the message).
    """

    def fail(message: str) -> Exception:
        if issubclass(error, OnnxArrowError):
            return error(message, where=where)
        return error(f"{where}: {message}" if where else message)

    try:
        data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    except UnicodeEncodeError as exc:
        raise fail(f"{what} holds text that is not valid Unicode ({exc.reason})") from None
    if len(data) > MAX_JSON_BYTES:
        raise fail(
            f"{what} is {len(data)} bytes, more than the {MAX_JSON_BYTES} onnx-arrow reads; "
            "it was not written by onnx-arrow, or is damaged"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(
            f"{what} is not JSON (not UTF-8 text: byte {exc.start} is "
            f"{data[exc.start : exc.start + 1]!r})"
        ) from None
    try:
        value = json.loads(text, object_pairs_hook=_distinct_pairs)
    except _RepeatedKey as repeated:
        raise fail(
            f"{what}: {key_line(text, repeated.key)}key {repeated.key!r} appears twice in "
            "one object; JSON keys must be distinct"
        ) from None
    except RecursionError:  # deeper than the parser recurses: the depth, to say so
        depth = json_depth(data)
        if depth > MAX_JSON_DEPTH:
            raise fail(_too_deep(what, depth)) from None
        raise fail(  # a caller already near the interpreter's recursion limit
            f"{what} nests {depth} levels deep, too deep to parse this near the "
            "interpreter's recursion limit"
        ) from None
    except ValueError as exc:  # JSONDecodeError, and integers of thousands of digits
        raise fail(f"{what} is not JSON ({getattr(exc, 'msg', exc)})") from None
    if data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH:  # else it cannot nest deeper
        depth = _depth(value)
        if depth > MAX_JSON_DEPTH:
            raise fail(_too_deep(what, depth))
    return value


def _too_deep(what: str, depth: int) -> str:
    return (
        f"{what} nests {depth} levels deep, more than the {MAX_JSON_DEPTH} onnx-arrow "
        "reads; it was not written by onnx-arrow, or is damaged"
    )

r"""Expectation files edited as text, line by line, so that everything an edit does not
touch (comments, order, layout, line endings) stays byte for byte: lines removed,
lines added, one value replaced.

JSON lists (onnx-arrow's JSON, onnxruntime's filters file, IREE's config): an entry on
a line of its own is removed with its line; new entries go in at their sorted place
when the list is sorted, else at its end, indented as its entries are; the commas of
an edited list are set again (JSON has none after the last).  A list written on one
line is written again over several.

TOML tables (burn-onnx's ``expectations.toml``): a key's lines are found by reading
growing runs of lines with tomllib, so strings and arrays over several lines are
removed whole; a table's comments above it go with it; an inline table ``name = {...}``
is written again on its line.  Every edit is read back before it is kept.

>>> edit_json_lists('{\n  "x": [\n    "a",\n    "c"\n  ]\n}\n', {4}, {"x": [("b", None)]})
'{\n  "x": [\n    "a",\n    "b"\n  ]\n}\n'
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import tomllib

from onnx_arrow.compare.expectation_formats import toml_headers
from onnx_arrow.errors import CompareError

__all__ = [
    "MAX_VALUE_LINES",
    "TomlTable",
    "code_and_comment",
    "edit_json_lists",
    "edit_toml_tables",
    "json_string",
    "toml_string",
]

#: Most lines of one TOML value onnx-arrow edits (a key's lines are found by reading
#: growing runs of lines: the cost grows with the square of this).
MAX_VALUE_LINES: Final = 200

_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_KEY: Final = re.compile(r'(\s*)("(?:[^"\\]|\\.)*")\s*:\s*(.*)')


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def code_and_comment(line: str) -> tuple[str, str]:
    """A JSONC line split where its ``//`` comment starts (outside strings)."""
    at = 0
    while True:
        slash = line.find("//", at)
        if slash < 0:
            return line, ""
        string = _STRING.search(line, at)
        if string is None or string.start() > slash:
            return line[:slash], line[slash:]
        at = string.end()


def json_string(value: Any) -> str:
    """A JSON value as onnx-arrow writes it into a file: non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False)


def _lists(lines: Sequence[str]) -> dict[str, tuple[int, int]]:
    """The lists of a JSON object's keys: name to (the key's line, the closing line),
    both from 0; the same line for a list written on one line."""
    found: dict[str, tuple[int, int]] = {}
    open_: tuple[str, int] | None = None
    for number, raw in enumerate(lines):
        code = code_and_comment(raw)[0]
        if open_ is not None:
            if code.strip().startswith("]"):
                found[open_[0]] = (open_[1], number)
                open_ = None
            continue
        key = _KEY.match(code)
        if key is None or not key[3].startswith("["):
            continue
        name = json.loads(key[2])
        if "]" in _STRING.sub('""', key[3]):
            found[name] = (number, number)
        else:
            open_ = (name, number)
    return found


def _single_value(code: str) -> Any:
    """The one JSON value on a line of a list (its comma aside), else raise ValueError."""
    return json.loads(code.strip().removesuffix(",").strip())


def _sort_key(value: Any) -> str:
    return value[-1] if isinstance(value, list) and value else str(value)


def edit_json_lists(
    text: str,
    remove: set[int],
    add: Mapping[str, Sequence[tuple[Any, str | None]]],
    *,
    comments: bool = False,
) -> str:
    """``text`` with the entries on the lines ``remove`` (from 1) taken out and the
    entries of ``add`` (list name to ``(value, comment)``) put into those lists; the
    comments as ``// comment`` when ``comments`` (JSONC), else left out.

    Raises
    ------
    CompareError
        If a line to remove holds more than one entry, or a list to add to is not in
        the file.
    """
    nl = _newline(text)
    lines = text.splitlines(keepends=True)
    lists = _lists(lines)
    for number in sorted(remove):
        code = code_and_comment(lines[number - 1])[0]
        try:
            _single_value(code)
        except ValueError:
            raise CompareError(
                f"line {number}: holds more than one entry; put each on a line of its own "
                "to let onnx-arrow remove one"
            ) from None
    for name in add:
        if name not in lists:
            raise CompareError(f'there is no list "{name}" to add entries to; add "{name}": []')
    out = list(lines)  # edited in place: a list's lines replaced, none moved
    for name, (first, last) in sorted(lists.items(), key=lambda kv: -kv[1][0]):
        added = add.get(name, ())
        if not added and not any(first < n - 1 < last for n in remove):
            continue
        key_indent = re.match(r"\s*", lines[first])[0]  # type: ignore[index]
        step = key_indent or "  "
        items: list[list[Any]] = []  # [line without its end, an entry's value or _NOT]
        key = None
        if first == last:  # on one line: its values, written again over lines
            key = _KEY.match(code_and_comment(lines[first])[0])
            assert key is not None
            inline, rest = _inline_list(key[3])
            items = [[f"{key_indent}{step}{json_string(v)}", v] for v in inline]
            indent = f"{key_indent}{step}"
        else:
            for k in range(first + 1, last):
                if k + 1 in remove:
                    continue
                code = code_and_comment(lines[k])[0]
                value = _single_value(code) if code.strip() else None
                items.append([lines[k].rstrip("\r\n"), value if code.strip() else _NOT])
            shown = [row[0] for row in items if row[1] is not _NOT]
            indent = re.match(r"\s*", shown[0])[0] if shown else key_indent + step  # type: ignore[index]
        for value, comment in added:
            at_entries = [i for i, row in enumerate(items) if row[1] is not _NOT]
            keys = [_sort_key(items[i][1]) for i in at_entries]
            line = f"{indent}{json_string(value)}"
            if comments and comment:
                line += f"  // {comment}"
            if keys == sorted(keys):
                p = bisect.bisect(keys, _sort_key(value))
                at = (
                    at_entries[p] if p < len(keys) else (at_entries[-1] + 1 if keys else len(items))
                )
            else:
                at = at_entries[-1] + 1
            items.insert(at, [line, value])
        entries = [i for i, row in enumerate(items) if row[1] is not _NOT]
        body = [
            (_with_comma(row[0], i != entries[-1]) if row[1] is not _NOT else row[0]) + nl
            for i, row in enumerate(items)
        ]
        if first == last and key is not None:
            out[first : first + 1] = [
                f"{key_indent}{key[2]}: [{nl}",
                *body,
                f"{key_indent}]{rest}{nl}",
            ]
        else:
            out[first + 1 : last] = body
    return "".join(out)


#: An item of a list that is not an entry (a comment, a blank line).
_NOT: Final = object()


def _inline_list(code: str) -> tuple[list[Any], str]:
    """The values of a list written on one line, and what follows its ``]``."""
    close = code.rfind("]")
    try:
        values = json.loads(code[: close + 1])
    except ValueError:
        raise CompareError(f"cannot read the list {code.strip()!r}") from None
    return values, code[close + 1 :].rstrip()


def _with_comma(line: str, comma: bool) -> str:
    """``line`` (an entry) with a comma after its value, or none."""
    code, comment = code_and_comment(line)
    stripped = code.rstrip()
    gap = code[len(stripped) :]
    has = stripped.endswith(",")
    if has == comma:
        return line
    stripped = stripped + "," if comma else stripped[:-1].rstrip()
    return f"{stripped}{gap}{comment}"


def toml_string(value: str) -> str:
    """A TOML basic string of ``value``: JSON's escapes, which TOML shares, and DEL escaped."""
    return json_string(value).replace("\x7f", "\\u007f")


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else toml_string(name)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, int | float):
        return repr(value)
    raise CompareError(f"cannot write the TOML value {value!r} on one line")


class TomlTable:
    """What to make of a table: ``set`` keys to values (in order, after those kept),
    ``drop`` keys, or ``remove`` the table."""

    def __init__(
        self,
        *,
        set_: Mapping[str, Any] | None = None,
        drop: Sequence[str] = (),
        remove: bool = False,
    ) -> None:
        self.set = dict(set_ or {})
        self.drop = tuple(drop)
        self.remove = remove


def _keys(lines: Sequence[str], start: int, end: int) -> list[tuple[str, int, int]]:
    """The keys of a table's body (lines ``start`` to ``end``, from 0): name, first line,
    line after the last."""
    found = []
    k = start
    while k < end:
        line = lines[k].strip()
        if not line or line.startswith("#"):
            k += 1
            continue
        for j in range(k + 1, min(end, k + MAX_VALUE_LINES) + 1):
            try:
                doc = tomllib.loads("".join(lines[k:j]))
            except tomllib.TOMLDecodeError:
                continue
            found.append((next(iter(doc)), k, j))
            k = j
            break
        else:
            raise CompareError(
                f"line {k + 1}: cannot tell where this key's value ends within "
                f"{MAX_VALUE_LINES} lines; onnx-arrow edits values of at most that many"
            )
    return found


def _attached(lines: Sequence[str], at: int) -> int:
    """The first line of the comment block right above line ``at`` (no blank between)."""
    while at > 0 and lines[at - 1].strip().startswith("#"):
        at -= 1
    return at


def edit_toml_tables(
    text: str, edits: Mapping[str, TomlTable], new: Sequence[tuple[str, Mapping[str, Any]]]
) -> str:
    """``text`` with the tables of ``edits`` changed and the tables of ``new`` (name, keys)
    added: at their sorted place when the tables are in order, else at the end.

    Raises
    ------
    CompareError
        If a table to edit is neither a ``[name]`` table nor an inline table on one line,
        or the result does not read back as TOML.
    """
    nl = _newline(text)
    lines = text.splitlines(keepends=True)
    headers = toml_headers(text)
    for number, key in headers:
        if not isinstance(key, str):
            raise CompareError(
                f"line {number + 1}: a dotted table or an array of tables; onnx-arrow edits "
                "files of one [name] table per test"
            )
    doc = tomllib.loads(text)
    starts = {key: n for n, key in headers}
    ends = {
        key: (headers[i + 1][0] if i + 1 < len(headers) else len(lines))
        for i, (_, key) in enumerate(headers)
    }
    root_end = headers[0][0] if headers else len(lines)
    inline = {name: (k, j) for name, k, j in _keys(lines, 0, root_end)}
    replace: dict[int, list[str]] = {}  # first line -> new lines, for [k, j)
    spans: dict[int, int] = {}
    for name, edit in edits.items():
        if name in starts:
            h, end = starts[name], ends[name]
            body = _keys(lines, h + 1, end)
            if edit.remove:
                last = body[-1][2] if body else h + 1
                first = _attached(lines, h)
                while (
                    last < len(lines)
                    and not lines[last].strip()
                    and (first == 0 or not lines[first - 1].strip())
                ):
                    last += 1
                replace[first], spans[first] = [], last
                continue
            present = {key for key, _, _ in body}
            for key, k, j in body:
                if key in edit.drop:
                    replace[k], spans[k] = [], j
                elif key in edit.set:
                    replace[k], spans[k] = (
                        [f"{_toml_key(key)} = {_toml_value(edit.set[key])}{nl}"],
                        j,
                    )
            extra = [
                f"{_toml_key(k)} = {_toml_value(v)}{nl}"
                for k, v in edit.set.items()
                if k not in present
            ]
            if extra:
                at = body[-1][2] if body else h + 1
                replace.setdefault(at, [])
                spans.setdefault(at, at)
                replace[at] = replace[at] + extra
        elif name in inline:
            k, j = inline[name]
            if edit.remove:
                replace[k], spans[k] = [], j
                continue
            table = {key: v for key, v in doc[name].items() if key not in edit.drop}
            table.update(edit.set)
            pairs = ", ".join(f"{_toml_key(key)} = {_toml_value(v)}" for key, v in table.items())
            replace[k], spans[k] = [f"{_toml_key(name)} = {{ {pairs} }}{nl}"], j
        else:
            raise CompareError(
                f"{name!r} is neither a [{name}] table nor an inline table on one line; "
                "onnx-arrow edits those"
            )
    names = [key for _, key in headers]
    ordered = names == sorted(names)
    for name, keys in new:
        block = [f"[{_toml_key(name)}]{nl}"] + [
            f"{_toml_key(k)} = {_toml_value(v)}{nl}" for k, v in keys.items()
        ]
        later = [key for key in names if key > name] if ordered else []
        if later:
            at = _attached(lines, starts[min(later)])
            block.append(nl)
        else:
            at = len(lines)
            if lines and not lines[-1].endswith("\n"):
                block.insert(0, nl)
            if lines and lines[-1].strip():
                block.insert(0, nl)
        replace.setdefault(at, [])
        spans.setdefault(at, at)
        replace[at] = replace[at] + block
    out: list[str] = []
    k = 0
    while k <= len(lines):
        if k in replace:
            out += replace[k]
            if spans[k] > k:
                k = spans[k]
                continue
        if k < len(lines):
            out.append(lines[k])
        k += 1
    result = "".join(out)
    try:
        tomllib.loads(result)
    except tomllib.TOMLDecodeError as exc:  # never so, unless a case escapes the rules above
        raise CompareError(f"the edited file would not be TOML ({exc}); left as it was") from None
    return result

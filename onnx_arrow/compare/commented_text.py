r"""Where the entries of commented expectation files are, and what their comments say,
read in one pass: lines with ``#`` comments (onnx-arrow's patterns) and JSONC with ``//``
comments (onnxruntime's filters and overrides files).

A comment block reaches down the run of entries below it (a run ends at a blank line, a
comment, a key or a bracket), as onnxruntime's files use it: each entry's reason is its
own comment, else its run's block, else its list's.

>>> text = '{\n "a": [\n  // why\n  "x",\n  "y" // its own\n ]\n}'
>>> [(s.value, s.line, s.reason) for s in scan_jsonc(text)["a"]]
[('x', 4, 'why'), ('y', 5, 'its own')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "Scanned",
    "commented_lines",
    "scan_jsonc",
]


def commented_lines(text: str, mark: str) -> Iterator[tuple[int, str, str | None]]:
    """The lines of ``text`` that hold something, with the comment block above the run
    of lines they belong to (a run ends at a blank line or a comment)."""
    heading: list[str] = []
    joined: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            heading, joined = [], None
        elif line.startswith(mark):
            if joined is not None:  # the first comment after a run of lines
                heading, joined = [], None
            heading.append(line.lstrip(mark).strip())
        else:
            if joined is None:  # joined once per block, not once per line
                joined = " ".join(heading)
            yield number, line, joined or None


@dataclass(frozen=True)
class Scanned:
    value: Any
    line: int | None
    reason: str | None
    group: str | None = None


_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_KEY: Final = re.compile(r'\s*("(?:[^"\\]|\\.)*")\s*:\s*(.*)')


def scan_jsonc(text: str, *, keys: bool = False) -> dict[str, list[Scanned]]:
    """Where each entry of a JSONC file's lists is (its line) and its comment (the one
    on its line, else the block above its run, else the list's): by list name, in order.
    With ``keys``, the keys of objects instead, all under ``""`` with their object's name
    as ``group``."""
    out: dict[str, list[Scanned]] = {"": []}
    group: str | None = None
    group_reason: str | None = None
    above = Above()
    for number, raw in enumerate(text.splitlines(), 1):
        code, slashes, comment = raw.partition("//")
        code = code.strip()
        if not code:
            above.comment(comment.strip() if raw.strip() else None)
            continue
        trailing = comment.strip() if slashes and comment.strip() else None
        key = _KEY.match(code)
        why = above.code(ends_run=key is not None or code.startswith(("]", "}", "{")))
        if key is not None:
            name = json.loads(key[1])
            if key[2].startswith(("[", "{")):
                group, group_reason = name, why
                out.setdefault(name, [])
            elif keys:
                out[""].append(Scanned(name, number, trailing or why, group))
            continue
        if code.startswith(("]", "}")):
            group = None
            continue
        if keys or group is None:
            continue
        values = [json.loads(s) for s in _STRING.findall(code)]
        if values:
            value = values if code.startswith("[") else values[0]
            out[group].append(Scanned(value, number, trailing or why or group_reason, group))
    return out


class Above:
    """The comment block above the run of entries a line belongs to (a run ends at a
    blank line, a comment, a key or a bracket), kept line by line in one pass."""

    def __init__(self) -> None:
        self.block: list[str] = []  # the comment lines right above
        self.run: str | None = None  # the block above the run of entries going on

    def comment(self, text: str | None) -> None:
        """A line of no code: a comment (``text``) or a blank line (None)."""
        if text is None:
            self.block, self.run = [], None
        else:
            self.block.append(text)

    def code(self, *, ends_run: bool) -> str | None:
        """A line of code: the block above it (its run's); ``ends_run`` if it is not an
        entry (a key or a bracket), so that the next line starts a run."""
        if self.block:
            self.run = " ".join(self.block) or None
            self.block = []
        why = self.run
        if ends_run:
            self.run = None
        return why

"""Where entries of commented files are and what their comments say, in one pass: the
same answers as walking back from each line, on the real files and on layouts made to
tell them apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from onnx_arrow.compare.commented_text import commented_lines, scan_jsonc

DATA = Path(__file__).parents[1] / "data"
JSONC = [
    DATA / "onnxruntime" / "onnx_backend_test_series_filters.jsonc",
    DATA / "onnxruntime" / "onnx_backend_test_series_overrides.jsonc",
]
#: Layouts where a run, a block or a list's comment ends or does not.
MADE = [
    '{\n  // a\n  // b\n  "l": [\n    "x",\n    // c\n\n    "y", // own\n    "z"\n  ],\n'
    '  // d\n  "m": [\n    // e\n    //\n    "w",\n    ["o", "v"]\n  ]\n}\n',
    '{\n  "k": {\n    // f\n    "t": 1,\n    "u": 2, // g\n\n    // h\n    "v": 3\n  },\n'
    '  // i\n  "rtol_default": 1\n}\n',
]


_KEY = re.compile(r'\s*("(?:[^"\\]|\\.)*")\s*:\s*(.*)')


def _above(lines: list[str], number: int) -> str | None:
    """The comment block above line ``number``'s run, found by walking back from it."""
    block: list[str] = []
    for raw in reversed(lines[: number - 1]):
        code, _, comment = raw.partition("//")
        code = code.strip()
        if code:
            if block or _KEY.match(code) or code.startswith(("]", "}", "{")):
                break
            continue  # an entry of the same run
        if not raw.strip():
            break
        block.append(comment.strip())
    return " ".join(reversed(block)) or None


@pytest.mark.parametrize("text", [p.read_text() for p in JSONC] + MADE)
def test_each_entry_has_the_comment_above_its_run(text: str) -> None:
    lines = text.splitlines()
    for keys in (False, True):
        for entries in scan_jsonc(text, keys=keys).values():
            for entry in entries:
                assert entry.line is not None
                _, slashes, own = lines[entry.line - 1].partition("//")
                if slashes and own.strip():
                    assert entry.reason == own.strip()
                elif _above(lines, entry.line) is not None:
                    assert entry.reason == _above(lines, entry.line)


def test_the_made_layouts() -> None:
    lists = scan_jsonc(MADE[0])
    assert [(e.value, e.line, e.reason) for e in lists["l"]] == [
        ("x", 5, "a b"),  # the list's
        ("y", 8, "own"),
        ("z", 9, "a b"),  # the blank line ended the block above y
    ]
    assert [(e.value, e.reason) for e in lists["m"]] == [("w", "e "), (["o", "v"], "e ")]
    keys = scan_jsonc(MADE[1], keys=True)[""]
    assert [(e.value, e.group, e.reason) for e in keys] == [
        ("t", "k", "f"),
        ("u", "k", "g"),
        ("v", "k", "h"),
        ("rtol_default", None, "i"),
    ]


def test_lines_take_the_block_above_their_run() -> None:
    text = "# a\n# b\nskip x\nskip y\n\nskip z\n# c\nskip w\n#\n#\nskip v\n"
    assert list(commented_lines(text, "#")) == [
        (3, "skip x", "a b"),
        (4, "skip y", "a b"),
        (6, "skip z", None),
        (8, "skip w", "c"),
        (11, "skip v", " "),
    ]
    real = (DATA / "reference_backend_patterns.txt").read_text()
    found = list(commented_lines(real, "#"))
    assert found[0][2] is not None
    assert found[0][2].startswith("The cases onnx leaves out")
    assert found[-1][2] is not None
    assert found[-1][2].startswith("Not in that file")

"""The Python blocks of README.md and the docs pages: run, with what they print compared.

The convention the blocks follow: a comment at the end of a ``print(...)`` call (on its
last line, after the closing parenthesis) is what that call prints; a comment that says
something else goes on a line of its own.  The printed text and the comment are compared
after normalising whitespace (each run of spaces and line breaks is one space), and
``...`` in the comment stands for any text, as doctest's ELLIPSIS does.  A call that
prints more than once (in a loop) is compared on its first output, a call with ``file=``
not at all.  A block whose output depends on the machine opts out with a comment line
``# output not compared: REASON``.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import sys
import tokenize
from typing import Any, Final

#: The line by which a block opts out of the comparison, with its reason.
OPT_OUT: Final = re.compile(r"^\s*# output not compared: (\S.*)$", re.MULTILINE)


def _normal(text: str) -> str:
    return " ".join(text.split())


def said_outputs(source: str) -> dict[int, str]:
    """``{line: comment}``: each ``print(...)`` call of ``source`` to standard output with a
    comment at its end, by the line the call starts on, the comment without its ``#``."""
    comments = {
        token.start[0]: token.string[1:].strip()
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }
    said = {}
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "print"
            and not any(keyword.arg == "file" for keyword in node.keywords)
            and node.end_lineno in comments
        ):
            said[node.lineno] = comments[node.end_lineno]
    return said


def matches(printed: str, said: str) -> bool:
    """Whether ``printed`` is what ``said`` says, whitespace normalised, ``...`` any text."""
    pattern = ".*".join(re.escape(part) for part in _normal(said).split("..."))
    return re.fullmatch(pattern, _normal(printed), re.DOTALL) is not None


def run_block(source: str, name: str, namespace: dict[str, Any]) -> list[str]:
    """Run ``source`` (called ``name`` in tracebacks) in ``namespace``; the printed lines
    that contradict their comments, each with its line, what it said and what it printed.
    What the block prints still goes to standard output."""
    said = {} if OPT_OUT.search(source) else said_outputs(source)
    first: dict[int, str] = {}

    def print_(*args: Any, **kwargs: Any) -> None:
        builtins.print(*args, **kwargs)
        caller = sys._getframe(1)
        if caller.f_code.co_filename == name and caller.f_lineno in said:
            text = io.StringIO()
            builtins.print(*args, **{**kwargs, "file": text})
            first.setdefault(caller.f_lineno, text.getvalue())

    namespace["print"] = print_
    exec(compile(source, name, "exec"), namespace)
    wrong = [
        f"{name}, line {line}: the comment says {comment!r}, it printed {first[line]!r}"
        for line, comment in sorted(said.items())
        if line in first and not matches(first[line], comment)
    ]
    wrong += [
        f"{name}, line {line}: the comment says {comment!r}, it printed nothing"
        for line, comment in sorted(said.items())
        if line not in first
    ]
    return wrong

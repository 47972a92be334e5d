"""What failed and why, in words: the cause of an error (the last exception line of a
runner's stderr, not the first line of its traceback), the cause a scoreboard and
``compare`` group errors on, and a line per failing output of a report.

A backend's error is ``"TypeName: message"``; a runner's is its own (``RunnerError: the
command exited with status 1; its stderr ends:``) followed by the last lines of the
command's stderr, where a traceback ends with the exception that stopped the runtime
(``NotImplementedError: ... 'Gradient'``).  :func:`cause_line` finds that line;
:func:`error_cause` makes of it a cause errors are grouped on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

import pandas as pd  # no pandas-stubs: pandas is Any

from onnx_arrow.compare.statuses import PASSING
from onnx_arrow.reports import Report, as_frame
from onnx_arrow.text import printable

__all__ = ["cause_line", "error_cause", "failing", "failure_line"]

#: Words of an error's message a cause keeps (besides the ``…`` of specific ones).
_CAUSE_WORDS: Final = 10
_ORT_PREFIX: Final = re.compile(r"^\[ONNXRuntimeError\]\s*:\s*\d+\s*:\s*\w+\s*:\s*")
#: A word of a message too specific for its cause: a number, a name in quotes, a path, a
#: call or version in brackets, a qualified name (``ai.onnx.ml:Foo``, ``a::b``).
_SPECIFIC: Final = re.compile(r"""\d|^['"`<]|['"`>]$|[/()\[\]{}<>=]|\w[:.]\w""")
#: A line that names an exception: ``NotImplementedError: ...``, ``onnx.checker.
#: ValidationError: ...``, ``Error: ...`` (Node.js), ``std::runtime_error: ...``,
#: ``KeyboardInterrupt``.
_EXCEPTION_LINE: Final = re.compile(
    r"^(?:[A-Za-z_]\w*(?:\.|::))*[A-Za-z_]\w*"
    r"(?:Error|Exception|Exit|Interrupt|Failure|Fault|error|exception)(?::\s|:?$)"
)


def cause_line(error: str) -> str:
    """The line of ``error`` that says its cause: of an error with more lines (a runner's,
    its stderr's last lines after its own), the last that names an exception; else the
    error's first line (without the ``; its stderr ends:`` that announces lines it has
    none of).

    >>> cause_line("RunnerError: the command exited with status 1; its stderr ends:\\n"
    ...            "Traceback (most recent call last):\\n  File \\"run.py\\", line 3\\n"
    ...            "NotImplementedError: no kernel for 'Gradient'")
    "NotImplementedError: no kernel for 'Gradient'"
    >>> cause_line("RunnerError: cannot start 'pyhton': No such file or directory")
    "RunnerError: cannot start 'pyhton': No such file or directory"
    """
    first, _, rest = error.lstrip("\n").partition("\n")
    for line in reversed(rest.splitlines()):
        if _EXCEPTION_LINE.match(line.strip()):
            return line.strip()
    head, sep, tail = first.rpartition("; ")
    return head if sep and tail.endswith(":") else first


def error_cause(error: str) -> str:
    """The cause of an error (``"TypeName: message"``, as a report's ``error`` column has
    it): the type and the first words of the message of its :func:`cause_line`,
    specific words as ``…``.

    >>> error_cause("NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not "
    ...             "find an implementation for Add(14) node with name ''")
    'NotImplemented: Could not find an implementation for … node with name …'
    >>> error_cause("RuntimeError: Numpy_type 256 can't be converted to MLDataType.")
    "RuntimeError: Numpy_type … can't be converted to MLDataType."
    >>> error_cause("RunnerError: the command exited with status 1; its stderr ends:\\n"
    ...             "Traceback (most recent call last):\\n"
    ...             "NotImplementedError: no kernel for 'Gradient'")
    'NotImplementedError: no kernel for …'
    """
    kind, sep, message = cause_line(error).partition(": ")
    if not sep:
        kind, message = "", kind
    words: list[str] = []
    general = 0
    for word in _ORT_PREFIX.sub("", message.strip()).split():
        if general == _CAUSE_WORDS:
            break
        if _SPECIFIC.search(word):
            if not words or words[-1] != "…":
                words.append("…")
            continue
        words.append(word)
        general += 1
    text = " ".join(words) or "(no message)"
    return f"{kind}: {text}" if kind else text


def failing(report: Report | pd.DataFrame, *, strict: bool = False) -> pd.DataFrame:
    """The rows of a report that fail a run (statuses outside
    :data:`~onnx_arrow.compare.statuses.PASSING`; ``xpass`` too with ``strict``), in the
    report's order."""
    df = as_frame(report)
    fails = ~df["status"].isin(sorted(PASSING))
    if strict:
        fails |= df["status"] == "xpass"
    return df[fails.astype(bool)]


def failure_line(row: Any) -> str:
    """One failing output in a line, its strings from the data made printable: the case,
    its data set, the output, the status and the worst element (expected, actual, ULPs),
    or the cause of its error.

    >>> failure_line(pd.Series({"case": "node/test_relu", "data_set": 0, "index": 0,
    ...     "name": "y", "status": "mismatch", "worst_index": "[1, 0]",
    ...     "worst_expected": "0.0", "worst_actual": "-1.5", "max_ulp": 1069547520,
    ...     "max_ulp_index": "[1, 0]", "n_beyond_tolerance": 3, "n_elements": 60,
    ...     "error": None, "detail": None})).split("  ")
    ['node/test_relu', 'data set 0', 'output 0 (y)', 'mismatch', 'at [1, 0]: expected 0.0, \
actual -1.5, 1069547520 ULP; 3 of 60 elements beyond']
    """
    where = [str(row["case"])]
    if _given(row.get("data_set")):
        where.append(f"data set {int(row['data_set'])}")
    if _given(row.get("index")):
        name = row.get("name")
        where.append(f"output {int(row['index'])}" + (f" ({name})" if _given(name) else ""))
    what = " ".join(_what(row))
    return printable("  ".join([*where, str(row["status"]), what]).rstrip())


def _what(row: Any) -> Iterator[str]:
    if _given(row.get("error")):
        yield cause_line(str(row["error"]))
        return
    if _given(row.get("worst_index")):
        text = (
            f"at {row['worst_index']}: expected {row['worst_expected']}, "
            f"actual {row['worst_actual']}"
        )
        ulp, ulp_at = row.get("max_ulp"), row.get("max_ulp_index")
        if _given(ulp) and ulp_at == row["worst_index"]:
            text += f", {int(ulp)} ULP"
        elif _given(ulp):
            text += f"; at most {int(ulp)} ULP, at {ulp_at}"
        beyond, n = row.get("n_beyond_tolerance"), row.get("n_elements")
        if _given(beyond) and _given(n):
            text += f"; {int(beyond)} of {int(n)} elements beyond"
        yield text
        return
    if _given(row.get("detail")):
        yield str(row["detail"])


def _given(value: Any) -> bool:
    return value is not None and not (pd.api.types.is_scalar(value) and pd.isna(value))

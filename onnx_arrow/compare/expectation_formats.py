"""The expectation files of other runtimes' test suites, and how each names a case:
burn-onnx's ``expectations.toml`` (a table per node test with its ``status``), IREE's
test-suite config JSON (``expected_compile_failures``, ``expected_run_failures`` and
its skip lists of test folders), tract's manifests (allow-lists of test-name regexes)
and the names onnx-arrow writes into them.

Each reader gives plain :class:`Entry` rows (a skip or xfail regular expression over
onnx-arrow's case names, its line, its list or status, its reason);
:mod:`~onnx_arrow.compare.expectation_files` makes patterns of them, within its limits.

burn-onnx (``crates/onnx-official-tests/expectations.toml``): a table per test of
onnx's node suite, ``[test_abs]``, with ``status`` one of :data:`BURN_STATUSES` and the
optional ``reason``, ``tracking`` and ``wontfix``.  ``pass`` expects the test to pass,
``flaky`` is a skip (the runner ignores it), the three others are xfails.  A table
names the case ``node/<table>``.

tract (``test-rt/suite-onnx/*.txt``): a manifest per folder of onnx's test data
(:data:`TRACT_SUITES`, told by the file's name), a line per test-name regex that
runs, matched whole, with options: ``since:N`` and ``until:N`` (the opsets it runs
at), and others (``input:x``, ``not-nnef``...) onnx-arrow keeps but does not use.  A
test no line matches is not run: an allow-list (``only``).

IREE (``iree-test-suites``' ``onnx_ops/configs/*.json``): lists of test folders,
``onnx/node/generated/test_abs``, the case ``node/test_abs``:
``expected_compile_failures`` and ``expected_run_failures`` are xfails,
``skip_compile_tests`` and ``skip_run_tests`` skips.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

import tomllib

from onnx_arrow.errors import CompareError

__all__ = [
    "BURN_STATUSES",
    "IREE_LISTS",
    "TRACT_SUITES",
    "Entry",
    "burn_entries",
    "burn_name",
    "iree_entries",
    "iree_name",
    "is_iree",
    "is_tract",
    "looks_like_toml",
    "text_kind",
    "toml_headers",
    "tract_entries",
    "tract_line",
]

#: burn-onnx's statuses, and what each expects of a test: ``None`` to pass.
BURN_STATUSES: Final[Mapping[str, str | None]] = {
    "pass": None,
    "skip-codegen": "xfail",
    "skip-compile": "xfail",
    "fail-compare": "xfail",
    "flaky": "skip",
}
#: The keys of a burn-onnx table onnx-arrow reads, with their TOML types.
_BURN_KEYS: Final[Mapping[str, type]] = {
    "status": str,
    "reason": str,
    "tracking": str,
    "wontfix": bool,
}
#: IREE's lists of test folders, and what each is.
IREE_LISTS: Final[Mapping[str, str]] = {
    "skip_compile_tests": "skip",
    "skip_run_tests": "skip",
    "expected_compile_failures": "xfail",
    "expected_run_failures": "xfail",
}


class Entry(NamedTuple):
    """An entry of an expectation file: ``kind`` (skip or xfail), the regular expression
    it is over onnx-arrow's case names, its ``line`` (None: not located), ``group`` (its
    list or status) and ``reason``."""

    kind: str
    regex: str
    line: int | None
    group: str
    reason: str | None
    #: Conditions on the corpus, as ``when`` takes them (``opset>=13``).
    when: str = ""


def burn_name(case: str) -> str | None:
    """The table of burn-onnx's file that names ``case`` (``node/test_abs``: ``test_abs``);
    None for a case outside onnx's node suite, which that file does not hold."""
    kind, sep, test = case.partition("/")
    return test if sep and kind == "node" and "/" not in test else None


def iree_name(case: str) -> str:
    """The test folder IREE's config names ``case`` by (``onnx/node/generated/test_abs``)."""
    kind, _, test = case.rpartition("/")
    return f"onnx/{kind or 'node'}/generated/{test}"


def _iree_regex(folder: str) -> str:
    """The case names an IREE test folder stands for, as a regular expression."""
    parts = folder.split("/")
    if len(parts) == 4 and parts[0] == "onnx" and parts[2] == "generated":
        return f"^{re.escape(parts[1])}/{re.escape(parts[3])}$"
    return f"(?:^|/){re.escape(parts[-1])}$"


def is_iree(doc: Mapping[str, Any]) -> bool:
    """Whether a JSON object is an IREE test-suite config."""
    return bool({"expected_compile_failures", "expected_run_failures"} & set(doc))


def iree_entries(doc: Mapping[str, Any], lines: Mapping[str, Sequence[Any]]) -> list[Entry]:
    """The entries of IREE's config ``doc``; ``lines`` the located entries of each list
    (:func:`~onnx_arrow.compare.commented_text.scan_jsonc`), by list name.

    Raises
    ------
    CompareError
        If a list is not a list of strings.
    """
    found = []
    for name, kind in IREE_LISTS.items():
        values = doc.get(name, [])
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise CompareError(f"{name} must be a list of test folders (strings)")
        located = list(lines.get(name, []))
        if [s.value for s in located] != values:
            located = []
        for k, folder in enumerate(values):
            line = located[k].line if located else None
            found.append(Entry(kind, _iree_regex(folder), line, name, None))
    return found


#: The start of a TOML document's first line of content: a table header or a key.
_TOML_KEY: Final = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_TOML_START: Final = re.compile(rf"\[|{_TOML_KEY}(?:\s*\.\s*{_TOML_KEY})*\s*=")


def looks_like_toml(text: str) -> bool:
    r"""Whether ``text``'s first line of content is a TOML table header or ``key =``
    (never so in onnx-arrow's lines, which start with a word and a space).

    >>> looks_like_toml("# burn\n[test_abs]\nstatus = 'pass'"), looks_like_toml("skip x")
    (True, False)
    """
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            return _TOML_START.match(line) is not None
    return False


def text_kind(text: str) -> str:
    r"""What an expectation file's text is written in: ``"json"`` (JSON or JSONC: it starts
    with ``{`` or ``//``, or ``[`` on a line of its own), ``"toml"`` or ``"lines"``.

    >>> text_kind('{"skip": []}'), text_kind("[test_abs]\nstatus = 'pass'"), text_kind("skip x")
    ('json', 'toml', 'lines')
    """
    start = text.lstrip()
    if start.startswith(("{", "//")):
        return "json"
    if start.startswith("[") and not _TOML_HEADER.match(start.partition("\n")[0].strip()):
        return "json"
    return "toml" if looks_like_toml(text) else "lines"


#: A TOML table header on its line: ``[name]``, ``["quoted.name"]``, with a comment.
_TOML_HEADER: Final = re.compile(r"""\[\s*(?:[A-Za-z0-9_.-]+|"[^"]*"|'[^']*')\s*\](?:\s*#.*)?""")


def toml_headers(text: str) -> list[tuple[int, Any]]:
    """The table headers of a TOML document (line numbers from 0, in order) with the key
    each names, as tomllib reads it: a string, or a tuple of strings for a dotted one
    (``[a.b]``); arrays of tables (``[[x]]``) as a tuple too."""
    headers: list[tuple[int, Any]] = []
    in_string: str | None = None
    for number, raw in enumerate(text.splitlines()):
        if in_string is not None:  # inside a multi-line string: no header here
            if raw.count(in_string) % 2 == 1:
                in_string = None
            continue
        line = raw.strip()
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 == 1:
                in_string = quote
        if not line.startswith("[") or in_string is not None:
            continue
        code = line if line.startswith("[[") else f"{line}\n"
        try:
            doc = tomllib.loads(code)
        except tomllib.TOMLDecodeError:
            continue  # the second line of an array: not a header
        if line.startswith("[["):
            headers.append((number, ("[[",)))
            continue
        key, value = next(iter(doc.items()))
        path = [key]
        while isinstance(value, dict) and value:
            key, value = next(iter(value.items()))
            path.append(key)
        headers.append((number, path[0] if len(path) == 1 else tuple(path)))
    return headers


def burn_entries(text: str) -> list[Entry]:
    """The entries of burn-onnx's ``expectations.toml``: an xfail or skip per table whose
    status expects the test not to pass, the reason its ``reason`` (and ``tracking``).

    Raises
    ------
    CompareError
        If the text is not TOML (at its line), or a table is not one test's: a status
        not one of :data:`BURN_STATUSES`, or a known key of another type.
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CompareError(f"not TOML as burn-onnx's expectations.toml is: {exc}") from None
    lines = {key: n + 1 for n, key in toml_headers(text) if isinstance(key, str)}
    found = []
    for test, table in doc.items():
        at = f"line {lines[test]}: " if test in lines else ""
        if not isinstance(table, dict):
            raise CompareError(
                f"{at}{test!r} is not a table; each test is a table [{test}] with a status"
            )
        for key, typed in _BURN_KEYS.items():
            if key in table and not isinstance(table[key], typed):
                raise CompareError(
                    f"{at}[{test}] {key} must be a {'boolean' if typed is bool else 'string'}"
                )
        status = table.get("status")
        if not isinstance(status, str) or status not in BURN_STATUSES:
            raise CompareError(
                f"{at}[{test}] status is {status!r}; expected one of {', '.join(BURN_STATUSES)}"
            )
        kind = BURN_STATUSES[status]
        if kind is None:
            continue
        reason = "; ".join(str(table[k]) for k in ("reason", "tracking") if k in table)
        found.append(
            Entry(kind, f"^node/{re.escape(test)}$", lines.get(test), status, reason or None)
        )
    return found


#: tract's manifests, by file name, and the folder of onnx's test data each lists.
TRACT_SUITES: Final[Mapping[str, str]] = {
    "node.txt": "node",
    "simple.txt": "simple",
    "pytorch-operator.txt": "pytorch-operator",
    "pytorch-converted.txt": "pytorch-converted",
}
#: The words of onnx-arrow's own lines.
_OWN_WORDS: Final = frozenset({"skip", "xfail", "tolerance"})


def tract_line(raw: str) -> tuple[str, list[str]] | None:
    """A manifest line as tract reads it: None for a comment or a line of one character
    or less, else its regex and options."""
    line = raw.strip()
    if len(line) <= 1 or line.startswith("#"):
        return None
    words = line.split()
    return words[0], words[1:]


def is_tract(text: str) -> bool:
    """Whether ``text`` is a tract manifest: its first line of content a test name
    (``test_...``), not one of onnx-arrow's words."""
    for raw in text.splitlines():
        found = tract_line(raw)
        if found is not None:
            return found[0] not in _OWN_WORDS and found[0].startswith("test")
    return False


def tract_entries(text: str, name: str) -> list[Entry]:
    """The allow-list of the tract manifest ``text`` named ``name`` (``node.txt``): an
    ``only`` entry per line, its group the folder it lists, ``since:N`` / ``until:N`` as
    conditions on the corpus's opset.

    Raises
    ------
    CompareError
        If the file's name is not one of :data:`TRACT_SUITES`, or an opset is not a
        whole number.
    """
    suite = TRACT_SUITES.get(name)
    if suite is None:
        raise CompareError(
            f"a tract manifest is named for the folder it lists ({', '.join(TRACT_SUITES)}); "
            f"{name!r} is none of them"
        )
    found = []
    for number, raw in enumerate(text.splitlines(), 1):
        parsed = tract_line(raw)
        if parsed is None:
            continue
        regex, options = parsed
        when = []
        for option in options:
            key, _, value = option.partition(":")
            if key in ("since", "until"):
                if not re.fullmatch(r"[0-9]{1,9}", value):
                    raise CompareError(
                        f"line {number}: {option!r}: the opset must be a whole number"
                    )
                when.append(f"opset{'>=' if key == 'since' else '<='}{value}")
        found.append(Entry("only", regex, number, suite, None, " ".join(when)))
    return found

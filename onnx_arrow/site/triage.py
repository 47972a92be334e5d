"""A triage file: per runtime, the case patterns a known failure covers, with the tracker
URL that follows it and a note, read from TOML and checked strictly.

The format (``format = 1``), an ``[[entry]]`` table per known failure::

    format = 1

    [[entry]]
    runtime = "onnxruntime"              # as the results store names it; "*": every runtime
    cases = ["node/test_resize_*", "test_gridsample"]   # globs, as compare --case takes
    url = "https://github.com/microsoft/onnxruntime/issues/12345"
    note = "cubic Resize rounds half away from zero"

An entry has ``runtime`` and ``cases`` and at least one of ``url`` and ``note``; no other
key.  A pattern matches a case's whole name or its name without the kind folder
(``test_add*`` matches ``node/test_add_bcast``).  A ``url`` is ``http`` or ``https``
with a host, nothing else (a ``javascript:`` or ``file:`` URL is refused, so every link
the site draws from the file goes to a web page).

Examples
--------
>>> text = 'format = 1\\n[[entry]]\\nruntime = "mine"\\ncases = ["test_add*"]\\n'
>>> entries = parse_triage(text + 'note = "off by one"\\n', where="triage.toml")
>>> [e.note for e in matching(entries, "mine", "node/test_add_bcast")]
['off by one']
>>> matching(entries, "other", "node/test_add_bcast")
[]
"""

from __future__ import annotations

import fnmatch
import os
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, Final

import tomllib

from onnx_arrow.errors import SiteError

__all__ = ["TRIAGE_FORMAT", "TriageEntry", "matching", "parse_triage", "read_triage"]

#: The format of the triage files this version reads (their ``format`` key).
TRIAGE_FORMAT: Final = 1

#: The keys of an entry, required first.
_REQUIRED: Final = ("runtime", "cases")
_OPTIONAL: Final = ("url", "note")
#: The longest triage file read, and the longest string in one: a file past these is no
#: hand-kept triage file.
_MAX_BYTES: Final = 4 << 20
_MAX_TEXT: Final = 4000
_GLOB: Final = frozenset("*?[")


@dataclass(frozen=True)
class TriageEntry:
    """One known failure: the ``runtime`` it is of (``*``: any), the case ``patterns`` it
    covers, its tracker ``url`` (http or https, or None) and ``note``; ``where`` it is in
    its file (``triage.toml: entry[2]``)."""

    runtime: str
    patterns: tuple[str, ...]
    url: str | None
    note: str | None
    where: str

    def covers(self, runtime: str | None, case: str) -> bool:
        """Whether the entry is of ``runtime`` and a pattern matches ``case``."""
        if self.runtime not in ("*", runtime):
            return False
        short = case.split("/", 1)[-1]
        for pattern in self.patterns:
            if _GLOB.isdisjoint(pattern):
                if pattern in (case, short):
                    return True
            elif fnmatch.fnmatchcase(case, pattern) or fnmatch.fnmatchcase(short, pattern):
                return True
        return False


def read_triage(path: str | os.PathLike[str]) -> list[TriageEntry]:
    """The entries of the triage file at ``path`` (see the module for its format).

    Raises
    ------
    SiteError
        Located at the file (and the entry and key, or the TOML line and column): a file
        that does not read, is no TOML, is of another format, or whose entries are not as
        the format says.
    """
    where = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_BYTES + 1)
    except OSError as exc:
        raise SiteError(f"cannot read the triage file ({exc.strerror})", where=where) from None
    if len(data) > _MAX_BYTES:
        raise SiteError(f"the triage file is larger than {_MAX_BYTES >> 20} MiB", where=where)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SiteError(
            f"the triage file is not UTF-8 text (byte {exc.start})", where=where
        ) from None
    return parse_triage(text, where=where)


def parse_triage(text: str, *, where: str = "the triage file") -> list[TriageEntry]:
    """The entries of a triage file's ``text``; errors located at ``where``, as
    :func:`read_triage` says."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message says the line and column
        raise SiteError(f"not TOML: {exc}", where=where) from None
    extra = sorted(set(doc) - {"format", "entry"})
    if extra:
        raise SiteError(
            f"unknown key {extra[0]!r}; a triage file has format and [[entry]] tables",
            where=where,
        )
    version = doc.get("format")
    if version != TRIAGE_FORMAT or isinstance(version, bool):
        raise SiteError(
            f"format is {version!r:.40}; this onnx-arrow reads triage files of format "
            f"{TRIAGE_FORMAT} (write format = {TRIAGE_FORMAT} first)",
            where=where,
        )
    entries = doc.get("entry", [])
    if not isinstance(entries, list):
        raise SiteError("entry is not an array of tables; write each as [[entry]]", where=where)
    return [_entry(raw, f"{where}: entry[{k}]") for k, raw in enumerate(entries)]


def _entry(raw: Any, where: str) -> TriageEntry:
    if not isinstance(raw, dict):
        raise SiteError("not a table; write each entry as [[entry]]", where=where)
    for key in _REQUIRED:
        if key not in raw:
            raise SiteError(f"no {key}; an entry has {' and '.join(_REQUIRED)}", where=where)
    unknown = sorted(set(raw) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise SiteError(
            f"unknown key {unknown[0]!r}; an entry's keys are "
            f"{', '.join((*_REQUIRED, *_OPTIONAL))}",
            where=where,
        )
    runtime = _text(raw["runtime"], f"{where}.runtime")
    cases = raw["cases"]
    if not isinstance(cases, list) or not cases:
        raise SiteError("not a non-empty array of case patterns", where=f"{where}.cases")
    patterns = tuple(_text(p, f"{where}.cases[{k}]") for k, p in enumerate(cases))
    url = None if "url" not in raw else _url(raw["url"], f"{where}.url")
    note = None if "note" not in raw else _text(raw["note"], f"{where}.note")
    if url is None and note is None:
        raise SiteError("neither url nor note: say where the failure is followed", where=where)
    return TriageEntry(runtime, patterns, url, note, where)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise SiteError(f"a {type(value).__name__}, not a string", where=where)
    if not value.strip():
        raise SiteError("an empty string", where=where)
    if len(value) > _MAX_TEXT:
        raise SiteError(f"longer than {_MAX_TEXT} characters", where=where)
    if re.search("[\x00-\x08\x0b-\x1f\x7f]", value):
        raise SiteError("holds a control character", where=where)
    return value


def _url(value: Any, where: str) -> str:
    text = _text(value, where)
    try:
        parts = urllib.parse.urlsplit(text)
    except ValueError as exc:
        raise SiteError(f"not a URL ({exc})", where=where) from None
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or any(c.isspace() for c in text)
    ):
        raise SiteError(
            f"{text!r:.200} is not an http or https URL with a host; a triage link goes to a "
            "web page",
            where=where,
        )
    return text


def matching(entries: list[TriageEntry], runtime: str | None, case: str) -> list[TriageEntry]:
    """The entries that cover ``case`` of ``runtime``, in the file's order."""
    return [e for e in entries if e.covers(runtime, case)]

"""The expectation files backend projects keep, read as they are: onnx-arrow's own patterns
(lines or JSON) and onnxruntime's ``onnx_backend_test_series_filters.jsonc`` and
``onnx_backend_test_series_overrides.jsonc``, and burn-onnx's and IREE's files
(:mod:`~onnx_arrow.compare.expectation_formats`), told apart by their content.

Every entry becomes a :class:`Pattern`: the regular expression, with where it came from
(file and line, and the onnxruntime list), why (the entry's comment) and when it applies
(:class:`Clause`\\ s on the corpus's opset and onnx version; those on the provider and
the platform are settled as the file is read).

onnxruntime's files are read the way its ``onnx_backend_test_series.py`` reads them:
``//`` starts a comment (the rest of the line); of the filters' named lists, those the
script applies for the provider (:data:`ONNXRUNTIME_LISTS`), each entry a regex or an
``[opset regex, test regex]`` pair that applies when the opset regex matches
(``re.match``) ``opset<N>``, N the highest opset of the onnx release that built the
corpus; plus the ``(FLOAT16)`` exclusion the script makes itself.  Its entries are skip
patterns.  The overrides give each test named in ``rtol_overrides`` / ``atol_overrides``
(by its exact name) its tolerances, the others ``rtol_default`` / ``atol_default``.

A file is read in one pass, in time linear in its size, within limits far above the
files projects keep (onnxruntime's filters file: 52 KB, about 850 entries, patterns of
at most 200 characters): :data:`MAX_PATTERNS_BYTES`, :data:`MAX_ENTRIES`,
:data:`MAX_PATTERN_CHARS` and :data:`MAX_REPEAT` (a ``{m,n}`` count), a ULP budget
at most :data:`MAX_ULP`.  The text must be UTF-8, a JSON object's keys distinct and a
``when`` clause exactly one of its forms; anything else is a :class:`CompareError`
naming the file and the line.
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import numpy as np

from onnx_arrow.compare.commented_text import (
    Scanned,
    commented_lines,
    scan_jsonc,
)
from onnx_arrow.compare.expectation_formats import (
    Entry,
    burn_entries,
    iree_entries,
    is_iree,
    is_tract,
    text_kind,
    tract_entries,
)
from onnx_arrow.core.model import load_json, read_regular_file
from onnx_arrow.errors import CompareError, CorpusError

__all__ = [
    "MAX_ENTRIES",
    "MAX_PATTERNS_BYTES",
    "MAX_PATTERN_CHARS",
    "MAX_REPEAT",
    "MAX_ULP",
    "ONNXRUNTIME_ALWAYS",
    "ONNXRUNTIME_LISTS",
    "Clause",
    "Pattern",
    "PatternLists",
    "check_tolerance",
    "check_ulp",
    "compile_pattern",
    "highest_opset",
    "holds",
    "parse_clauses",
    "parse_tolerance",
    "platform_bits",
    "read_patterns",
    "supports_device",
]


@dataclass(frozen=True)
class Clause:
    """One condition of a pattern: ``subject op value``.

    Subjects: ``opset`` (the highest opset of the onnx release that built the corpus; ``~``
    matches a regular expression against ``opset<N>`` as onnxruntime's pairs do), ``onnx``
    (that release, compared on the parts given: ``onnx=1.16`` holds for 1.16.2),
    ``provider`` (``=`` the device supports that provider, as onnxruntime's
    ``supports_device`` says; ``!=`` it does not) and ``bits`` (of the platform, 32 or 64).
    """

    subject: str
    op: str
    value: str

    def __str__(self) -> str:
        return f"{self.subject}{self.op}{self.value}"

    @property
    def of_corpus(self) -> bool:
        """Whether it is settled by the corpus (opset, onnx), not by the reader."""
        return self.subject in ("opset", "onnx")


class Pattern(str):
    """A pattern of an expectation file: the text of its regular expression, with where it
    came from (``where``, ``file:line``; ``group``, the onnxruntime list), why
    (``reason``, its comment) and when it applies (``when``, clauses on the corpus).

    It is that text everywhere a ``str`` is; its ``repr`` names where it came from and
    why, so that a report's ``detail`` (``skip pattern '^test_adam' (filters.jsonc:61
    current_failing_tests: NOT_IMPLEMENTED ...)``) says it.

    >>> p = Pattern("^test_adam", where="f.jsonc:3", group="current_failing_tests")
    >>> p == "^test_adam", repr(p)
    (True, "'^test_adam' (f.jsonc:3 current_failing_tests)")
    """

    where: str | None
    group: str | None
    reason: str | None
    when: tuple[Clause, ...]

    def __new__(
        cls,
        text: str,
        *,
        where: str | None = None,
        group: str | None = None,
        reason: str | None = None,
        when: Sequence[Clause] = (),
    ) -> Pattern:
        self = super().__new__(cls, text)
        self.where, self.group, self.reason, self.when = where, group, reason, tuple(when)
        return self

    def __repr__(self) -> str:
        place = " ".join(x for x in (self.where, self.group) if x)
        about = ": ".join(x for x in (place, self.reason) if x)
        return f"{str.__repr__(self)} ({about})" if about else str.__repr__(self)


class PatternLists(NamedTuple):
    """What an expectation file gives: skip and xfail patterns, tolerances ``(pattern,
    rtol, atol)`` and ULP budgets ``(pattern, ulp)``, in the file's order."""

    skip: list[str]
    xfail: list[str]
    tolerance: list[tuple[str, float, float]]
    ulp: list[tuple[str, int]]
    #: Allow-lists (tract's manifests): the tests of a kind folder (the pattern's
    #: ``group``) that run; a test none of them matches whole is skipped.
    only: tuple[str, ...] = ()


#: The script's own exclusion, made for every provider whatever the files say.
ONNXRUNTIME_ALWAYS: Final = (("(FLOAT16)", "the script excludes it itself: type not supported"),)


def _always(device: str, bits: int) -> bool:
    return True


def _provider(*names: str) -> Callable[[str, int], bool]:
    return lambda device, bits: any(supports_device(device, n) for n in names)


#: The lists of onnxruntime's filters file its ``onnx_backend_test_series.py`` applies,
#: and for which device (as ``onnxruntime.get_device()`` names it) and platform.  A list
#: the script does not apply (``failing_permanently_nodejs_binding``) is not read.
ONNXRUNTIME_LISTS: Final[Mapping[str, Callable[[str, int], bool]]] = {
    "current_failing_tests": _always,
    "current_failing_tests_x86": lambda device, bits: bits == 32,
    "current_failing_tests_DNNL": _provider("DNNL"),
    "current_failing_tests_NNAPI": _provider("NNAPI"),
    "current_failing_tests_OPENVINO_GPU": _provider("OPENVINO_GPU"),
    "current_failing_tests_OPENVINO_CPU_FP32": _provider("OPENVINO_CPU"),
    "current_failing_tests_OPENVINO_CPU_FP16": _provider("OPENVINO_CPU"),
    "current_failing_tests_OPENVINO_NPU": _provider("OPENVINO_NPU"),
    "current_failing_tests_OPENVINO_opset18": _provider("OPENVINO"),
    "current_failing_tests_MIGRAPHX": _provider("MIGRAPHX"),
    "current_failing_tests_WEBGPU": _provider("WEBGPU"),
    "current_failing_tests_QNN": _provider("QNN"),
    "current_failing_tests_pure_DML": lambda device, bits: (
        supports_device(device, "DML") and not supports_device(device, "GPU")
    ),
    "tests_with_pre_opset7_dependencies": _always,
    "unsupported_usages": _always,
    "failing_permanently": _always,
    "test_with_types_disabled_due_to_binary_size_concerns": _always,
}


def supports_device(device: str, name: str) -> bool:
    """Whether onnxruntime built for ``device`` (``"CPU"``, ``"GPU"``, ``"CPU-DNNL"``,
    ``"GPU-DML"``: what ``onnxruntime.get_device()`` says) supports ``name``, as
    onnxruntime's backend answers ``supports_device`` (``CUDA`` is ``GPU``).

    >>> supports_device("CPU-DNNL", "DNNL"), supports_device("CPU", "DML")
    (True, False)
    """
    name = "GPU" if name == "CUDA" else name
    return f"-{name}" in device or f"{name}-" in device or name == device


def highest_opset(onnx_version: str) -> int:
    """The highest ai.onnx opset of the onnx release ``onnx_version`` (``1.16.2``: its
    ``major.minor`` row of ``onnx.helper.VERSION_TABLE``).

    Raises
    ------
    CompareError
        If the installed onnx does not know that release.
    """
    from onnx import __version__ as installed
    from onnx.helper import VERSION_TABLE

    key = _version(onnx_version)[:2]
    opsets = [row[2] for row in VERSION_TABLE if _version(row[0])[:2] == key]
    if not opsets:
        raise CompareError(
            f"onnx {onnx_version} is not in onnx.helper.VERSION_TABLE of the installed onnx "
            f"{installed}, so its highest opset is unknown; install an onnx at least as new"
        )
    return max(opsets)


def _version(text: str) -> tuple[int, ...]:
    parts = re.match(r"\d+(?:\.\d+)*", text.strip())
    if parts is None:
        raise CompareError(f"{text!r} is not a version; give one like 1.16 or 1.16.2")
    return tuple(int(p) for p in parts[0].split("."))


_COMPARE: Final[Mapping[str, Callable[[Any, Any], bool]]] = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
_CLAUSE: Final = re.compile(r"(opset|onnx|provider|bits)(>=|<=|!=|=|<|>|~)([^<>=!~\s]\S*)")
#: What a clause's value must be, by subject (``opset~`` takes a regular expression).
_VALUES: Final[Mapping[str, tuple[re.Pattern[str], str]]] = {
    "opset": (re.compile(r"[0-9]{1,9}"), "a whole number"),
    "bits": (re.compile(r"32|64"), "32 or 64"),
    "onnx": (re.compile(r"[0-9]{1,9}(?:\.[0-9]{1,9})*"), "a release of dotted integers, like 1.16"),
    "provider": (re.compile(r"[A-Za-z][A-Za-z0-9_]*"), "a provider name, like DML"),
}
_OPS: Final[Mapping[str, tuple[str, ...]]] = {
    "opset": ("=", "!=", "<", "<=", ">", ">=", "~"),
    "onnx": ("=", "!=", "<", "<=", ">", ">="),
    "provider": ("=", "!="),
    "bits": ("=", "!="),
}


def parse_clauses(text: str) -> tuple[Clause, ...]:
    """The clauses of ``when`` text: terms like ``opset>=18``, ``onnx<1.17``,
    ``provider=DML``, ``provider!=CUDA``, ``bits=32``, ``opset~opset1[0-9]``, apart by
    spaces or commas.

    >>> [str(c) for c in parse_clauses("opset>=18, onnx<1.17 provider=DML")]
    ['opset>=18', 'onnx<1.17', 'provider=DML']

    Raises
    ------
    CompareError
        If a term is not one of those: an unknown subject or operator, or a value not of
        its subject's form (``onnx<1.x.y``).
    """
    clauses = []
    for term in re.split(r"[\s,]+", text.strip()):
        found = _CLAUSE.fullmatch(term)
        if found is None or found[2] not in _OPS[found[1]]:
            raise CompareError(
                f"condition {term!r}: expected opset, onnx, provider or bits, an operator "
                "and a value: 'opset>=18', 'onnx<1.17', 'provider=DML', 'opset~opset1[0-9]'"
            )
        clause = Clause(found[1], found[2], found[3])
        if clause.op == "~":
            compile_pattern(clause.value, what=f"condition {term!r}: regular expression")
        elif not _VALUES[clause.subject][0].fullmatch(clause.value):
            raise CompareError(
                f"condition {term!r}: {clause.subject}'s value must be "
                f"{_VALUES[clause.subject][1]}, not {clause.value!r}"
            )
        clauses.append(clause)
    return tuple(clauses)


def holds(clause: Clause, *, device: str, bits: int, onnx_version: str, opset: int) -> bool:
    """Whether ``clause`` holds for that device, platform and corpus."""
    if clause.subject == "provider":
        return supports_device(device, clause.value) == (clause.op == "=")
    if clause.subject == "bits":
        return _COMPARE[clause.op](bits, int(clause.value))
    if clause.subject == "onnx":
        wanted = _version(clause.value)
        return _COMPARE[clause.op](_version(onnx_version)[: len(wanted)], wanted)
    if clause.op == "~":
        return re.match(clause.value, f"opset{opset}") is not None
    return _COMPARE[clause.op](opset, int(clause.value))


def platform_bits() -> int:
    """The bits of this platform, as onnxruntime's script tells them."""
    return 32 if platform.architecture()[0] == "32bit" else 64


def read_patterns(
    path: str | os.PathLike[str], *, provider: str = "CPU", bits: int | None = None
) -> PatternLists:
    """The patterns of an expectation file, for onnxruntime built for ``provider`` (its
    ``get_device()``: ``CPU``, ``GPU``, ``CPU-DNNL``, ``GPU-DML``...) on a platform of
    ``bits`` (this one's unless given).

    onnx-arrow's lines (``skip REGEX``, ``xfail REGEX``, ``tolerance REGEX=RTOL,ATOL``,
    ``tolerance REGEX ulp=N``, each optionally followed by ``when CLAUSES`` and a
    ``# reason``), its JSON, and onnxruntime's filters and overrides files (see the
    module), told apart by their content.  An entry whose provider or platform
    clauses do not hold is left out; its corpus clauses stay in its :class:`Pattern`.

    Raises
    ------
    CompareError
        If the file cannot be read, is not UTF-8, is none of those or passes a limit of
        the module's; the error names the file and line.
    """
    where = os.fspath(path)
    try:
        # a file the caller names may be a symlink; read_regular_file refuses one
        data = read_regular_file(
            os.path.realpath(where),
            max_bytes=MAX_PATTERNS_BYTES,
            where=where,
            fix="pass a text or JSON file",
        )
    except CorpusError as exc:
        raise CompareError(exc.message, where=where) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CompareError(
            f"line {line}: byte {data[exc.start : exc.start + 1]!r} is not UTF-8 ({exc.reason}); "
            "an expectation file is UTF-8 text",
            where=where,
        ) from None
    reader = _Reader(where, provider, platform_bits() if bits is None else bits)
    kind = text_kind(text)
    if kind == "json":
        return reader.json(text)
    try:
        if kind == "toml":
            return reader.entries(burn_entries(text))
        if is_tract(text):
            return reader.entries(tract_entries(text, os.path.basename(where)))
    except CompareError as exc:
        raise CompareError(exc.message, where=where) from None
    return reader.lines(text)


#: Largest expectation file read, in bytes (onnxruntime's filters file is 52 KB).
MAX_PATTERNS_BYTES: Final = 4 << 20
#: Most entries (lines, list items, keys) read from one expectation file (onnxruntime's
#: filters file holds about 850).
MAX_ENTRIES: Final = 100_000
#: Longest pattern, in characters (the longest of onnxruntime's is about 200).
MAX_PATTERN_CHARS: Final = 16_384
#: Largest repetition count (``{m,n}``) of a pattern: no test name is that long.
MAX_REPEAT: Final = 1_000
#: Largest ULP budget: ULP distances are 64-bit integers (``max_ulp_budget`` is int64).
MAX_ULP: Final = 2**63 - 1

#: A ``tolerance`` line's ULP budget: ``REGEX ulp=N``.
_ULP_LINE: Final = re.compile(r"(.*?\S)\s+ulp=([0-9]+)")
#: A line's reason: a ``#`` after a space, to the end of the line.
_REASON: Final = re.compile(r"\s#(?:\s|$)")
#: Where a line's conditions start: ``when`` between spaces (the last one counts).
_WHEN: Final = re.compile(r"(?=\swhen\s)")
#: A repetition count, as ``re`` reads one: ``{m}``, ``{m,}``, ``{,n}``, ``{m,n}``.
_COUNT: Final = re.compile(r"\{([0-9]*)(?:,([0-9]*))?\}")


def compile_pattern(pattern: str, *, what: str = "pattern") -> re.Pattern[str]:
    """``pattern`` compiled, within the limits of the module: at most
    :data:`MAX_PATTERN_CHARS` characters, no repetition count above :data:`MAX_REPEAT`.

    >>> compile_pattern("^test_(abs|neg){1,2}$").pattern
    '^test_(abs|neg){1,2}$'

    Raises
    ------
    CompareError
        If it passes a limit or is not a regular expression; the message names ``what``
        and the pattern (a :class:`Pattern` names its file and line too).
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise CompareError(
            f"{what} {pattern[:40]!r}...{_origin(pattern)} is {len(pattern)} characters "
            f"long, more than the {MAX_PATTERN_CHARS} onnx-arrow reads".lstrip()
        )
    named = f"{what} {pattern!r}".lstrip()
    for count in _repetitions(pattern):
        if len(count) > len(str(MAX_REPEAT)) or int(count) > MAX_REPEAT:
            raise CompareError(
                f"{named}: repetition count {count} is more than the {MAX_REPEAT} onnx-arrow allows"
            )
    try:
        return re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        why = "it nests too deep" if isinstance(exc, RecursionError) else exc
        raise CompareError(f"{named} is not a regular expression ({why})") from None


def _origin(pattern: str) -> str:
    """What a :class:`Pattern`'s ``repr`` says after its text: where it came from."""
    return repr(pattern)[len(str.__repr__(pattern)) :]


def _repetitions(pattern: str) -> Iterator[str]:
    """The repetition counts of ``pattern`` as written (escapes and sets skipped), in one pass."""
    i, end = 0, len(pattern) if "{" in pattern else 0
    while i < end:
        c = pattern[i]
        if c == "\\":
            i += 2
        elif c == "[":  # a set: to its closing bracket, a first ']' (after '^') is literal
            i += 2 if pattern.startswith("^", i + 1) else 1
            i += 1 if pattern.startswith("]", i) else 0
            while i < end and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
        elif c == "{" and (found := _COUNT.match(pattern, i)) is not None:
            yield from (n for n in found.groups() if n)
            i = found.end()
        else:
            i += 1


@dataclass
class _Reader:
    where: str
    device: str
    bits: int

    def count(self, entries: int, line: int | None = None) -> None:
        """Refuse a file of more than :data:`MAX_ENTRIES` entries."""
        if entries > MAX_ENTRIES:
            at = f"line {line}: " if line else ""
            raise CompareError(
                f"{at}more than {MAX_ENTRIES} entries, the most onnx-arrow reads from an "
                "expectation file",
                where=self.where,
            )

    def keep(self, when: Sequence[Clause]) -> bool:
        """Whether the reader's clauses hold (the corpus's are settled later)."""
        return all(
            holds(c, device=self.device, bits=self.bits, onnx_version="0", opset=0)
            for c in when
            if not c.of_corpus
        )

    def pattern(
        self,
        text: str,
        line: int | None,
        group: str | None,
        reason: str | None,
        when: Sequence[Clause] = (),
    ) -> Pattern:
        """The pattern, checked by :func:`compile_pattern` (the caller locates an error;
        a line's names the pattern with its file and line, as the patterns of a file
        are named when the patterns are used)."""
        found = Pattern(
            text,
            where=self.where if line is None else f"{self.where}:{line}",
            group=group,
            reason=reason,
            when=tuple(c for c in when if c.of_corpus),
        )
        if group is None:
            compile_pattern(found)
        else:
            compile_pattern(text, what="")
        return found

    def entries(self, entries: Sequence[Entry]) -> PatternLists:
        """Another runtime's entries (:mod:`~onnx_arrow.compare.expectation_formats`)."""
        self.count(len(entries))
        found = PatternLists([], [], [], [])
        only = []
        for entry in entries:
            try:
                when = parse_clauses(entry.when) if entry.when else ()
                p = self.pattern(entry.regex, entry.line, entry.group, entry.reason, when)
            except CompareError as exc:
                at = f"line {entry.line}: " if entry.line else ""
                raise CompareError(f"{at}{exc.message}") from None
            if entry.kind == "only":
                only.append(p)
            else:
                (found.skip if entry.kind == "skip" else found.xfail).append(p)
        return found._replace(only=tuple(only))

    def lines(self, text: str) -> PatternLists:
        found = PatternLists([], [], [], [])
        for entries, (number, line, above) in enumerate(commented_lines(text, "#"), 1):
            self.count(entries, number)
            body, reason = line, above
            marker = _REASON.search(body)
            if marker is not None:
                body, reason = body[: marker.start()].rstrip(), body[marker.end() :].strip()
            when: tuple[Clause, ...] = ()
            split = None
            for split in _WHEN.finditer(body):  # noqa: B007 (the last counts)
                pass
            try:
                if split is not None:
                    clauses = body[split.start() + 5 :].lstrip()
                    body, when = body[: split.start()].rstrip(), parse_clauses(clauses)
                word, _, rest = body.partition(" ")
                rest = rest.strip()
                if word not in ("skip", "xfail", "tolerance") or not rest:
                    raise CompareError(
                        "expected 'skip REGEX', 'xfail REGEX' or 'tolerance REGEX=RTOL,ATOL' "
                        f"(or 'tolerance REGEX ulp=N'), then 'when CLAUSES' and '# reason' if "
                        f"need be, got {line!r}"
                    )
                if not self.keep(when):
                    continue
                budget = _ULP_LINE.fullmatch(rest) if word == "tolerance" else None
                if budget is not None:
                    p = self.pattern(budget[1], number, None, reason or None, when)
                    found.ulp.append((p, _ulp(budget[2])))
                elif word == "tolerance":
                    regex, rtol, atol = parse_tolerance(rest)
                    p = self.pattern(regex, number, None, reason or None, when)
                    found.tolerance.append((p, rtol, atol))
                else:
                    getattr(found, word).append(
                        self.pattern(rest, number, None, reason or None, when)
                    )
            except CompareError as exc:
                raise CompareError(f"line {number}: {exc.message}", where=self.where) from None
        return found

    def json(self, text: str) -> PatternLists:
        try:
            doc = load_json(text, what="the patterns file", where=self.where, error=CompareError)
        except CompareError:
            if "//" not in text:
                raise
            code = "\n".join(line.partition("//")[0] for line in text.splitlines())
            doc = load_json(code, what="the patterns file", where=self.where, error=CompareError)
        if not isinstance(doc, dict):
            raise CompareError(_KINDS, where=self.where)
        try:
            if set(doc) <= {"skip", "xfail", "tolerance"}:
                return self.own_json(doc)
            if set(doc) & {"rtol_default", "atol_default", "rtol_overrides", "atol_overrides"}:
                return self.overrides(doc, text)
            if is_iree(doc):
                return self.entries(iree_entries(doc, scan_jsonc(text)))
            if all(isinstance(v, list) for v in doc.values()):
                return self.filters(doc, text)
        except CompareError as exc:
            if exc.where is None:
                raise CompareError(exc.message, where=self.where) from None
            raise
        raise CompareError(_KINDS, where=self.where)

    def own_json(self, doc: dict[str, Any]) -> PatternLists:
        for key in ("skip", "xfail"):
            values = doc.get(key, [])
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise CompareError(f"{key} must be a list of strings", where=self.where)
        tolerances = doc.get("tolerance", {})
        if not isinstance(tolerances, dict) or not all(
            (isinstance(v, list) and len(v) == 2 and all(_is_number(x) for x in v))
            or (isinstance(v, dict) and list(v) == ["ulp"] and _is_count(v["ulp"]))
            for v in tolerances.values()
        ):
            raise CompareError(
                "tolerance must map patterns to [RTOL, ATOL] or to a ULP budget "
                '{"ulp": N}: {"test_dft": [1e-2, 1e-4], "test_softmax": {"ulp": 4}}',
                where=self.where,
            )
        self.count(len(doc.get("skip", [])) + len(doc.get("xfail", [])) + len(tolerances))

        def listed(key: str, text: str) -> Pattern:
            try:
                return self.pattern(text, None, key, None)
            except CompareError as exc:
                raise CompareError(f"{key}: {exc.message}", where=self.where) from None

        return PatternLists(
            [listed("skip", v) for v in doc.get("skip", [])],
            [listed("xfail", v) for v in doc.get("xfail", [])],
            [
                (listed("tolerance", k), float(v[0]), float(v[1]))
                for k, v in tolerances.items()
                if isinstance(v, list)
            ],
            [
                (listed("tolerance", k), _ulp(v["ulp"]))
                for k, v in tolerances.items()
                if isinstance(v, dict)
            ],
        )

    def filters(self, doc: dict[str, Any], text: str) -> PatternLists:
        """onnxruntime's filters file: the lists the script applies, as skip patterns."""
        scanned = scan_jsonc(text)
        skip: list[str] = [  # not the file's: where is None
            Pattern(regex, group="onnx_backend_test_series.py", reason=why)
            for regex, why in ONNXRUNTIME_ALWAYS
        ]
        self.count(sum(len(entries) for entries in doc.values()))
        for name, entries in doc.items():
            if not all(
                isinstance(e, str)
                or (isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) for x in e))
                for e in entries
            ):
                raise CompareError(
                    f"list {name!r}: expected regexes and [opset regex, test regex] pairs",
                    where=self.where,
                )
            if name not in ONNXRUNTIME_LISTS or not ONNXRUNTIME_LISTS[name](self.device, self.bits):
                continue
            located = scanned.get(name, [])
            if [e.value for e in located] != entries:  # laid out unlike the file's own
                located = [Scanned(e, None, None) for e in entries]
            for entry in located:
                when: tuple[Clause, ...] = ()
                regex = entry.value
                try:
                    if isinstance(regex, list):
                        compile_pattern(regex[0], what="opset pattern")
                        when, regex = (Clause("opset", "~", regex[0]),), regex[1]
                    skip.append(self.pattern(regex, entry.line, name, entry.reason, when))
                except CompareError as exc:
                    line = f"line {entry.line}: " if entry.line else ""
                    raise CompareError(
                        f"{line}list {name!r}: {exc.message}", where=self.where
                    ) from None
        return PatternLists(skip, [], [], [])

    def overrides(self, doc: dict[str, Any], text: str) -> PatternLists:
        """onnxruntime's overrides file: a tolerance for each test it names, then the
        defaults for every other test."""
        missing = [
            k
            for k in ("rtol_default", "atol_default", "rtol_overrides", "atol_overrides")
            if k not in doc
        ]
        if missing:
            raise CompareError(
                f"an onnxruntime overrides file needs rtol_default, atol_default, "
                f"rtol_overrides and atol_overrides; {', '.join(missing)} missing",
                where=self.where,
            )
        rtol, atol = doc["rtol_default"], doc["atol_default"]
        by_test: dict[str, dict[str, Any]] = {}
        for key in ("rtol_overrides", "atol_overrides"):
            if not isinstance(doc[key], dict) or not all(_is_number(v) for v in doc[key].values()):
                raise CompareError(f"{key} must map test names to numbers", where=self.where)
            for test, value in doc[key].items():
                by_test.setdefault(test, {})[key] = value
        self.count(len(by_test))
        if not (_is_number(rtol) and _is_number(atol)):
            raise CompareError("rtol_default and atol_default must be numbers", where=self.where)
        lines = {(entry.group, entry.value): entry for entry in scan_jsonc(text, keys=True)[""]}
        tolerance: list[tuple[str, float, float]] = []
        for test, given in by_test.items():
            key = "rtol_overrides" if "rtol_overrides" in given else "atol_overrides"
            entry = lines.get((key, test), Scanned(test, None, None))
            p = self.pattern(f"^{re.escape(test)}$", entry.line, key, entry.reason)
            values = (given.get("rtol_overrides", rtol), given.get("atol_overrides", atol))
            tolerance.append((p, float(values[0]), float(values[1])))
        entry = lines.get((None, "rtol_default"), Scanned("rtol_default", None, None))
        default = self.pattern(".*", entry.line, "rtol_default, atol_default", None)
        tolerance.append((default, float(rtol), float(atol)))
        return PatternLists([], [], tolerance, [])


_KINDS: Final = (
    "expected onnx-arrow's patterns JSON {skip, xfail, tolerance}, onnxruntime's filters "
    "file (named lists of regexes) or its overrides file (rtol_default, atol_default, "
    "rtol_overrides, atol_overrides), or IREE's config (expected_compile_failures, "
    "expected_run_failures)"
)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _is_count(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _ulp(value: str | int) -> int:
    """A ULP budget of a file (digits, or a whole number of 0 or more) within :data:`MAX_ULP`."""
    text = str(value)
    if len(text) > len(str(MAX_ULP)) or int(text) > MAX_ULP:
        shown = text if len(text) <= 40 else f"{text[:40]}... ({len(text)} digits)"
        raise CompareError(
            f"ULP budget {shown} is more than {MAX_ULP}: ULP distances are 64-bit integers"
        )
    return int(text)


def parse_tolerance(text: str) -> tuple[str, float, float]:
    """``"REGEX=RTOL,ATOL"`` (the ``--tolerance`` of the command line) as ``(REGEX, RTOL,
    ATOL)``; the last ``=`` ends the pattern.

    Raises
    ------
    CompareError
        If the text is not of that form, or a tolerance not a number of 0 or more.
    """
    pattern, equals, numbers = text.rpartition("=")
    rtol_text, comma, atol_text = numbers.partition(",")
    try:
        if not (equals and comma and pattern):
            raise ValueError
        rtol, atol = float(rtol_text), float(atol_text)
    except ValueError:
        raise CompareError(
            f"tolerance {text!r}: expected REGEX=RTOL,ATOL, for example 'test_dft=1e-2,1e-4'"
        ) from None
    try:
        check_tolerance(rtol, atol)
    except CompareError as exc:
        raise CompareError(f"tolerance {text!r}: {exc.message}") from None
    return pattern, rtol, atol


def check_tolerance(rtol: float, atol: float) -> None:
    """Refuse a tolerance that is not a finite number of 0 or more (NaN included)."""
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not (_is_number(value) and 0 <= value < np.inf):  # NaN too
            raise CompareError(f"{name} is {value!r}; give a finite number of 0 or more")


def check_ulp(max_ulp: int | None, ulp_floor: float = 0.0) -> None:
    """Refuse a ULP budget that is not a whole number from 0 to :data:`MAX_ULP`, or a
    floor that is not a finite number of 0 or more.

    Raises
    ------
    CompareError
        Saying which.
    """
    if max_ulp is not None and not (_is_count(max_ulp) and max_ulp <= MAX_ULP):
        raise CompareError(
            f"max_ulp is {max_ulp!r}; give a whole number from 0 to {MAX_ULP} "
            "(ULP distances are 64-bit integers)"
        )
    if not (_is_number(ulp_floor) and 0 <= ulp_floor < np.inf):
        raise CompareError(f"ulp_floor is {ulp_floor!r}; give a finite number of 0 or more")

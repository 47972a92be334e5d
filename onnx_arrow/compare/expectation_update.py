"""An expectation file written again with what a run showed (``compare
--update-expectations FILE``, and ``--check``): the entries that no longer fail or find
no case removed, the new failures added with their cause as the reason, everything else
kept byte for byte (:mod:`~onnx_arrow.compare.expectation_edits`), in the file's own
format and with each runtime's names for the cases.

An entry is judged on the cases of the store it finds (as the file's reader makes it a
pattern: :func:`~onnx_arrow.compare.expectation_files.read_patterns`):

* it finds no case of the store (and no other device's test, ``test_x_cuda``): removed;
* its cases all ran and all passed (``match`` or ``xpass``): removed (burn-onnx's table
  set to ``pass``); a skip entry only when its cases ran (``--run-skipped``), and never
  a burn-onnx ``flaky`` one;
* (tract's allow-lists) the line of a failing test made a comment with the cause, and a
  test left out that passes (with ``--run-skipped``) added;
* otherwise (a case still fails, or was not run): kept as it is.

A case that failed (a status outside
:data:`~onnx_arrow.compare.statuses.PASSING`) is added, its reason the failure's line
without the case (the worst element, or the error's cause).  Entries whose conditions
do not hold for this run (another provider, another onnx release) are not judged.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pandas as pd
import tomllib

from onnx_arrow.compare.commented_text import scan_jsonc
from onnx_arrow.compare.expectation_edits import (
    TomlTable,
    code_and_comment,
    edit_json_lists,
    edit_toml_tables,
)
from onnx_arrow.compare.expectation_files import MAX_PATTERNS_BYTES, Pattern
from onnx_arrow.compare.expectation_formats import (
    BURN_STATUSES,
    burn_name,
    iree_name,
    is_iree,
    text_kind,
    tract_line,
)
from onnx_arrow.compare.failures import failure_line
from onnx_arrow.compare.plans import Expectations, searched_names
from onnx_arrow.compare.statuses import PASSING
from onnx_arrow.core.model import load_json, read_regular_file
from onnx_arrow.errors import CompareError, CorpusError
from onnx_arrow.reports import Report, as_frame

__all__ = ["MAX_REASON_CHARS", "Outcome", "Update", "update_expectations", "write_update"]

#: Longest reason written for a new entry, in characters (a cause is cut there, with ``…``).
MAX_REASON_CHARS: Final = 200
#: The statuses of a case whose entry is no longer needed.
_PASSED: Final = frozenset({"match", "xpass"})


@dataclass(frozen=True)
class Outcome:
    """What a run showed: each case's statuses, the failing cases with their cause, in
    store order, and whether the skip entries' cases ran (``--run-skipped``)."""

    cases: Sequence[str]
    statuses: dict[str, set[str]]
    failures: list[tuple[str, str]]
    ran_skips: bool

    @classmethod
    def of(cls, report: Report | pd.DataFrame, cases: Sequence[str], *, ran_skips: bool) -> Outcome:
        """The outcome of ``report`` over a store of ``cases``."""
        df = as_frame(report)
        statuses: dict[str, set[str]] = {}
        for case, status in zip(df["case"], df["status"], strict=True):
            statuses.setdefault(str(case), set()).add(str(status))
        causes: dict[str, str] = {}
        for _, row in df[~df["status"].isin(sorted(PASSING))].iterrows():
            causes.setdefault(str(row["case"]), _reason(failure_line(row), str(row["case"])))
        order = {case: k for k, case in enumerate(cases)}
        failing = sorted(causes, key=lambda c: order.get(c, len(order)))
        return cls(list(cases), statuses, [(c, causes[c]) for c in failing], ran_skips)

    @functools.cached_property
    def _names(self) -> list[tuple[str, tuple[str, str, str]]]:
        """Each case with the names a pattern is searched in."""
        return [(case, searched_names(case)) for case in self.cases]

    def verdict(self, regex: str, *, skip: bool = False) -> str | None:
        """Why the entry of ``regex`` can go (``finds no case``, ``its case passes``), or
        None to keep it; ``skip``: a skip entry, judged on its cases only if they ran."""
        search = re.compile(regex).search
        found = [c for c, names in self._names if any(search(n) for n in names)]
        if not found:
            if any(search(f"{names[1]}_cuda") for _, names in self._names):
                return None  # another device's test
            return "finds no case"
        if skip and not self.ran_skips:
            return None
        if all(c in self.statuses and self.statuses[c] <= _PASSED for c in found):
            return "its case passes" if len(found) == 1 else f"its {len(found)} cases pass"
        return None


def _reason(line: str, case: str) -> str:
    text = line[len(case) :].strip() if line.startswith(case) else line
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


@dataclass(frozen=True)
class Update:
    """An expectation file before and after: its ``path``, the ``old`` and ``new`` text and
    a line per change (``removed`` and ``added``)."""

    path: str
    old: str
    new: str
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)

    @property
    def stale(self) -> bool:
        """Whether the file says other than the run showed."""
        return self.old != self.new

    def diff(self) -> str:
        """The change as a unified diff."""
        name = os.path.basename(self.path)
        return "".join(
            difflib.unified_diff(
                self.old.splitlines(keepends=True),
                self.new.splitlines(keepends=True),
                f"{name} (as it is)",
                f"{name} (as the run showed)",
            )
        )


def _read_text(path: str) -> str:
    try:
        data = read_regular_file(
            os.path.realpath(path), max_bytes=MAX_PATTERNS_BYTES, where=path, fix="pass a text file"
        )
    except CorpusError as exc:
        raise CompareError(exc.message, where=path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CompareError("is not UTF-8 text", where=path) from None


def _line(pattern: str) -> int | None:
    where = pattern.where if isinstance(pattern, Pattern) else None
    if not where:
        return None
    tail = where.rpartition(":")[2]
    return int(tail) if tail.isdigit() else None


def update_expectations(
    path: str | os.PathLike[str],
    report: Report | pd.DataFrame,
    cases: Sequence[str],
    *,
    ran_skips: bool = False,
    provider: str = "CPU",
    onnx_version: str | None = None,
) -> Update:
    """The expectation file at ``path`` as the run of ``report`` over a store of ``cases``
    shows it should be (nothing written: see :func:`write_update`).

    ``ran_skips``: the report was made with the skip patterns run as xfail ones;
    ``provider`` and ``onnx_version`` say which entries apply, as for reading.

    Raises
    ------
    CompareError
        If the file cannot be read as an expectation file, or an entry to change is not
        laid out so that it can be changed alone (the error says how to lay it out).
    """
    where = os.fspath(path)
    text = _read_text(where)
    read = Expectations.read(where, provider=provider)
    applied = read.for_corpus(onnx_version)
    outcome = Outcome.of(report, cases, ran_skips=ran_skips)
    try:
        kind = text_kind(text)
        if kind == "json":
            return _json(where, text, read, applied, outcome)
        if kind == "toml":
            return _burn(where, text, outcome)
        if read.only:
            return _tract(where, text, read, applied, outcome)
        return _lines(where, text, applied, outcome)
    except CompareError as exc:
        raise exc.at(where) from None


def _judged(applied: Expectations, outcome: Outcome) -> Iterable[tuple[str, str, str]]:
    """``(kind, pattern, why)`` of each entry of a file that can go."""
    kinds: list[tuple[str, Iterable[str]]] = [
        ("skip", applied.skip),
        ("xfail", applied.xfail),
        ("tolerance", (t[0] for t in applied.tolerance)),
        ("ulp", (u[0] for u in applied.ulp)),
    ]
    for kind, patterns in kinds:
        for pattern in patterns:
            if not (isinstance(pattern, Pattern) and pattern.where):
                continue
            why = outcome.verdict(pattern, skip=kind == "skip")
            if why is not None and (kind in ("skip", "xfail") or why == "finds no case"):
                yield kind, pattern, why


def _lines(where: str, text: str, applied: Expectations, outcome: Outcome) -> Update:
    """onnx-arrow's lines: an entry's line removed, a new failure an xfail line at the end."""
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    removed, added = [], []
    gone: set[int] = set()
    for kind, pattern, why in _judged(applied, outcome):
        line = _line(pattern)
        if line is not None:
            gone.add(line)
            removed.append(f"line {line}: {kind} {str(pattern)!r} ({why})")
    out = [line for k, line in enumerate(lines, 1) if k not in gone]
    new = []
    for case, cause in outcome.failures:
        entry = _test_regex(case)
        new.append(f"xfail {entry}  # {cause.replace(' # ', ' - ')}{nl}")
        added.append(f"xfail {entry!r}: {cause}")
    if new and out and not out[-1].endswith(("\n", "\r")):
        out[-1] += nl
    return Update(where, text, "".join(out + new), removed, added)


def _json(
    where: str, text: str, read: Expectations, applied: Expectations, outcome: Outcome
) -> Update:
    """onnx-arrow's JSON, onnxruntime's filters file and IREE's config: entries' lines
    removed, new failures into the list of that format's failures."""
    code = "\n".join(code_and_comment(line)[0] for line in text.splitlines())
    doc = load_json(code, what="the expectation file", where=where, error=CompareError)
    scanned = scan_jsonc(text)
    removed, added = [], []
    gone: set[int] = set()
    own = isinstance(doc, dict) and set(doc) <= {"skip", "xfail", "tolerance"}
    if isinstance(doc, dict) and {"rtol_default", "atol_default"} & set(doc):
        raise CompareError(
            "an onnxruntime overrides file holds tolerances, not failures; give its filters file"
        )
    # own JSON's patterns say no line: found by their list and value, in order
    by_value: dict[tuple[str, str], list[int]] = {}
    for name, entries in scanned.items():
        for entry in entries:
            if isinstance(entry.value, str) and entry.line is not None:
                by_value.setdefault((name, entry.value), []).append(entry.line)
    for kind, pattern, why in _judged(applied, outcome):
        if kind not in ("skip", "xfail"):
            continue
        line = _line(pattern)
        if line is None and own:
            lines = by_value.get((kind, str(pattern)), [])
            line = lines.pop(0) if lines else None
        if line is not None:
            gone.add(line)
            group = f" [{pattern.group}]" if isinstance(pattern, Pattern) and pattern.group else ""
            removed.append(f"line {line}{group}: {str(pattern)!r} ({why})")
    name_of: Callable[[str], str]
    if own:
        target, name_of, comments = "xfail", _test_regex, False
    elif isinstance(doc, dict) and is_iree(doc):
        target, name_of, comments = "expected_run_failures", iree_name, False
    else:
        target, name_of, comments = "current_failing_tests", _cpu_test, True
    new = [(name_of(case), cause) for case, cause in outcome.failures]
    added = [f"{target}: {value!r}: {cause}" for value, cause in new]
    result = edit_json_lists(text, gone, {target: new} if new else {}, comments=comments)
    return Update(where, text, result, removed, added)


def _test_regex(case: str) -> str:
    """onnx-arrow's entry for a case: its test name, whole."""
    return f"^{re.escape(searched_names(case)[1])}$"


def _cpu_test(case: str) -> str:
    """onnxruntime's entry for a case: the name its script gives the CPU test."""
    return f"^{re.escape(searched_names(case)[2])}"


def _burn(where: str, text: str, outcome: Outcome) -> Update:
    """burn-onnx's tables: a table that finds no case removed, a failing status whose
    case passes set to ``pass``, a failure ``fail-compare`` with its cause."""
    doc: dict[str, Any] = tomllib.loads(text)
    edits: dict[str, TomlTable] = {}
    removed, added = [], []
    for test, table in doc.items():
        status = table.get("status") if isinstance(table, dict) else None
        if not isinstance(status, str) or status not in BURN_STATUSES:
            continue
        regex = f"^node/{re.escape(test)}$"
        kind = BURN_STATUSES[status]
        why = outcome.verdict(regex, skip=kind == "skip")
        if why == "finds no case":
            edits[test] = TomlTable(remove=True)
            removed.append(f"[{test}] ({why})")
        elif why is not None and kind == "xfail":
            edits[test] = TomlTable(set_={"status": "pass"}, drop=("reason", "tracking", "wontfix"))
            removed.append(f"[{test}] status {status} -> pass ({why})")
    new: list[tuple[str, dict[str, Any]]] = []
    for case, cause in outcome.failures:
        name = burn_name(case)
        if name is None:
            added.append(f"{case}: not written (burn-onnx's file holds onnx's node tests only)")
            continue
        keys = {"status": "fail-compare", "reason": cause}
        if name in doc:
            edits[name] = TomlTable(set_=keys, drop=("tracking", "wontfix"))
            added.append(f"[{name}] status {doc[name].get('status')} -> fail-compare: {cause}")
        else:
            new.append((name, keys))
            added.append(f"[{name}] status fail-compare: {cause}")
    return Update(where, text, edit_toml_tables(text, edits, new), removed, added)


def _tract(
    where: str, text: str, read: Expectations, applied: Expectations, outcome: Outcome
) -> Update:
    """tract's manifests (allow-lists): a line that matches no test of its folder removed,
    the line of a test that fails made a comment with the cause, and, with the skips run,
    a test the manifest leaves out that passes added as a line of its own name."""
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    kept = {_line(p) for p in applied.only}
    suite = getattr(read.only[0], "group", "")
    tests = [(c, c.rpartition("/")[2]) for c in outcome.cases if c.rpartition("/")[0] == suite]
    first: dict[int | None, list[str]] = {}  # a line to the cases it is the first to match
    for case, test in tests:
        line = next((_line(p) for p in read.only if re.fullmatch(p, test)), None)
        if line is not None:
            first.setdefault(line, []).append(case)
    causes = dict(outcome.failures)
    edits: dict[int, str] = {}
    removed, added = [], []
    for p in read.only:
        line = _line(p)
        if line is None:
            continue
        if not any(re.fullmatch(p, t) for _, t in tests):
            edits[line] = ""
            removed.append(f"line {line}: {str(p)!r} (finds no test of {suite}/)")
            continue
        cases = first.get(line, [])
        failing = [c for c in cases if c in causes]
        if line not in kept or not failing:
            continue
        if len(cases) == 1:
            raw = lines[line - 1].rstrip("\r\n")
            edits[line] = f"# {raw.strip()}  (fails: {causes[failing[0]]}){nl}"
            removed.append(f"line {line}: {str(p)!r} (fails: {causes[failing[0]]})")
        else:
            added.append(
                f"line {line}: {str(p)!r} finds failing {', '.join(failing)} among "
                f"{len(cases)} tests: not changed; narrow it by hand"
            )
    new: list[tuple[int, str]] = []  # (insert before this line, from 1; the text)
    if outcome.ran_skips:
        names = [(n, r) for n, raw in enumerate(lines, 1) if (r := tract_line(raw)) is not None]
        for case, test in tests:
            if (
                read.unlisted(case)
                and outcome.statuses.get(case, set())
                and (outcome.statuses[case] <= _PASSED)
            ):
                at = next((n for n, r in names if r[0] > test), len(lines) + 1)
                new.append((at, f"{test}{nl}"))
                added.append(f"{test!r} (passes)")
    out: list[str] = []
    for n, raw in enumerate(lines, 1):
        out += [t for at, t in new if at == n]
        out.append(edits.get(n, raw))
    if any(at > len(lines) for at, _ in new) and out and not out[-1].endswith(("\n", "\r")):
        out[-1] += nl
    out += [t for at, t in new if at > len(lines)]
    return Update(where, text, "".join(out), removed, added)


def write_update(update: Update) -> None:
    """Write ``update``'s new text over its file, atomically (a temporary file beside it,
    renamed into place; a symbolic link's target, as it was read); nothing when the file
    is not stale."""
    if not update.stale:
        return
    from onnx_arrow.corpus.tree import atomic_file

    with (
        atomic_file(os.path.realpath(update.path), what="the expectation file") as tmp,
        open(tmp, "w", encoding="utf-8", newline="") as f,
    ):
        f.write(update.new)

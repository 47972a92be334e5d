"""What a comparison is asked to do: which cases (glob patterns), which not to run or are
known to fail (skip and xfail patterns), where each case's tolerances come from (a
pattern, the case's own, the defaults), which actual values a report keeps, and how
all of that is recorded in the report.

Each case is compared with the first of: the tolerance of a pattern that names it
(``tolerance={"test_dft": (1e-2, 1e-4)}``, as onnx's backend test files override
theirs per test), the case's own as its store keeps it (onnx's ``TestCase.rtol`` /
``atol``, a case folder's ``data.json``: densenet121's rtol is 2e-3), and the ``rtol``
/ ``atol`` given (1e-3 and 1e-7, onnx's defaults).  Each row says which it used.

ULP budgets make ULPs the verdict of a case's floats: the budget of a pattern that names
it (``tolerance REGEX ulp=4``), over any tolerance, else ``max_ulp`` given, unless a
tolerance pattern names the case.  Each row says which rule judged it (``rule``:
``tolerance`` or ``ulp``) and where the rule came from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from onnx_arrow.core.model import load_json, read_regular_file
from onnx_arrow.corpus.sources import Tolerance, case_matches
from onnx_arrow.corpus.store import Store
from onnx_arrow.errors import CompareError, CorpusError

__all__ = [
    "KEEP_ACTUAL",
    "Expectations",
    "Plan",
    "check_ulp",
    "given_expectations",
    "parse_tolerance",
    "plan_provenance",
    "select_cases",
]


#: Which actual values a report keeps (its ``actual`` column): of the outputs that
#: differ from the expected ones (``failed``, the default), of all, or of none.
KEEP_ACTUAL: Final = ("failed", "all", "none")


def select_cases(store: Store, patterns: Iterable[str] | None = None) -> list[str]:
    """The cases of ``store`` (in store order) that match any of the glob ``patterns``.

    A pattern matches the whole name (``node/test_abs``, ``node/test_add*``) or the
    name without its kind folder (``test_abs``).  None selects every case.

    Raises
    ------
    CompareError
        If a pattern matches no case.
    """
    names = store.cases()
    if patterns is None:
        return names
    patterns = list(patterns)
    chosen: set[str] = set()
    for pattern in patterns:
        hits = {n for n in names if case_matches(n, pattern)}
        if not hits:
            raise CompareError(
                f"no case matches {pattern!r}; the store's cases are named like {names[0]!r}"
                if names
                else f"no case matches {pattern!r}: the store is empty",
                where=str(store.path),
            )
        chosen |= hits
    return [n for n in names if n in chosen]


@dataclass(frozen=True)
class Expectations:
    """Which cases not to run (``skip``), which are known to fail (``xfail``) and which
    to compare with a tolerance of their own (``tolerance``, pattern to ``(rtol, atol)``):
    regular expressions as onnx's ``BackendTest`` takes them, searched in a case's name
    (``node/test_abs``), its test name (``test_abs``) and that with ``_cpu``
    (``test_abs_cpu``).  The first pattern that finds a case applies.

    :meth:`read` takes them from a file.

    Raises
    ------
    CompareError
        If a pattern is not a regular expression, or a tolerance not a number of 0 or more.
    """

    skip: Sequence[str] = ()
    xfail: Sequence[str] = ()
    tolerance: Sequence[tuple[str, float, float]] = ()
    #: ULP budgets: pattern to the ULPs the floats of the cases it finds may be off.
    ulp: Sequence[tuple[str, int]] = ()

    def __post_init__(self) -> None:
        for pattern, budget in self.ulp:
            try:
                check_ulp(budget)
            except CompareError as exc:
                raise CompareError(f"ulp budget of pattern {pattern!r}: {exc}") from None
        patterns = (*self.skip, *self.xfail, *(t[0] for t in self.tolerance))
        for pattern in (*patterns, *(u[0] for u in self.ulp)):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise CompareError(
                    f"pattern {pattern!r} is not a regular expression ({exc})"
                ) from None
        for pattern, rtol, atol in self.tolerance:
            try:
                _check_tolerance(rtol, atol)
            except CompareError as exc:
                raise CompareError(f"tolerance of pattern {pattern!r}: {exc}") from None

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Expectations:
        """Patterns from a file: JSON ``{"skip": [REGEX, ...], "xfail": [...],
        "tolerance": {REGEX: [RTOL, ATOL], REGEX: {"ulp": N}}}`` (every key optional), or
        lines ``skip REGEX``, ``xfail REGEX``, ``tolerance REGEX=RTOL,ATOL`` and
        ``tolerance REGEX ulp=N`` (a ULP budget), with ``#`` comments.

        Raises
        ------
        CompareError
            If the file cannot be read, or a line or key is not one of those; the error
            names the file and line.
        """
        where = os.fspath(path)
        try:
            # a file the caller names may be a symlink; read_regular_file refuses one
            real = os.path.realpath(where)
            data = read_regular_file(
                real, max_bytes=_MAX_PATTERNS_FILE, where=where, fix="pass a text or JSON file"
            )
        except CorpusError as exc:
            raise CompareError(exc.message, where=where) from None
        text = data.decode("utf-8", "replace")
        if text.lstrip().startswith("{"):
            return cls._from_json(text, where)
        found: dict[str, list[Any]] = {"skip": [], "xfail": [], "tolerance": [], "ulp": []}
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            word, _, pattern = line.partition(" ")
            pattern = pattern.strip()
            if word not in ("skip", "xfail", "tolerance") or not pattern:
                raise CompareError(
                    f"line {number}: expected 'skip REGEX', 'xfail REGEX' or "
                    f"'tolerance REGEX=RTOL,ATOL' (or 'tolerance REGEX ulp=N'), got {line!r}",
                    where=where,
                )
            budget = _ULP_LINE.fullmatch(pattern) if word == "tolerance" else None
            if budget is not None:
                found["ulp"].append((budget[1], int(budget[2])))
            elif word == "tolerance":
                try:
                    found[word].append(parse_tolerance(pattern))
                except CompareError as exc:
                    raise CompareError(f"line {number}: {exc.message}", where=where) from None
            else:
                found[word].append(pattern)
        try:
            return cls(found["skip"], found["xfail"], found["tolerance"], found["ulp"])
        except CompareError as exc:
            raise exc.at(where) from None

    @classmethod
    def _from_json(cls, text: str, where: str) -> Expectations:
        doc = load_json(text, what="the patterns file", where=where, error=CompareError)
        keys = ("skip", "xfail", "tolerance")
        unknown = sorted(set(doc) - set(keys)) if isinstance(doc, dict) else ["(not an object)"]
        if unknown:
            raise CompareError(f"expected the keys {', '.join(keys)}; found {unknown}", where=where)
        lists = {}
        for key in ("skip", "xfail"):
            values = doc.get(key, [])
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise CompareError(f"{key} must be a list of strings", where=where)
            lists[key] = values
        tolerances = doc.get("tolerance", {})
        if not isinstance(tolerances, dict) or not all(
            (isinstance(v, list) and len(v) == 2 and all(_is_number(x) for x in v))
            or (isinstance(v, dict) and list(v) == ["ulp"] and _is_count(v["ulp"]))
            for v in tolerances.values()
        ):
            raise CompareError(
                "tolerance must map patterns to [RTOL, ATOL] or to a ULP budget "
                '{"ulp": N}: {"test_dft": [1e-2, 1e-4], "test_softmax": {"ulp": 4}}',
                where=where,
            )
        try:
            return cls(
                lists["skip"],
                lists["xfail"],
                [
                    (k, float(v[0]), float(v[1]))
                    for k, v in tolerances.items()
                    if isinstance(v, list)
                ],
                [(k, int(v["ulp"])) for k, v in tolerances.items() if isinstance(v, dict)],
            )
        except CompareError as exc:
            raise exc.at(where) from None

    def __add__(self, other: Expectations) -> Expectations:
        """Both sets of patterns, ``self``'s first (so they win where both find a case)."""
        return Expectations(
            [*self.skip, *other.skip],
            [*self.xfail, *other.xfail],
            [*self.tolerance, *other.tolerance],
            [*self.ulp, *other.ulp],
        )

    @staticmethod
    def _first(patterns: Sequence[str], case: str) -> int | None:
        test = case.rsplit("/", 1)[-1]
        names = (case, test, f"{test}_cpu")
        return next(
            (i for i, p in enumerate(patterns) if any(re.search(p, n) for n in names)), None
        )

    def skips(self, case: str) -> str | None:
        """The skip pattern ``case`` matches, if any."""
        i = self._first(self.skip, case)
        return None if i is None else self.skip[i]

    def tolerance_for(
        self, case: str, own: Tolerance | None, rtol: float, atol: float
    ) -> tuple[float, float, str]:
        """``(rtol, atol, where from)`` for ``case``: the first tolerance pattern that
        finds it, else the case's own (``own``, a part it does not state from ``rtol`` /
        ``atol``), else ``rtol`` and ``atol``."""
        i = self._first([t[0] for t in self.tolerance], case)
        if i is not None:
            pattern, p_rtol, p_atol = self.tolerance[i]
            return p_rtol, p_atol, f"pattern {pattern!r}"
        if own is not None:
            return (
                rtol if own.rtol is None else own.rtol,
                atol if own.atol is None else own.atol,
                "case",
            )
        return rtol, atol, "default"

    def ulp_for(
        self, case: str, max_ulp: int | None, tolerance_source: str
    ) -> tuple[int, str] | None:
        """``(budget, where from)`` of the ULP budget that judges ``case``: the first ULP
        pattern that finds it, else ``max_ulp`` (``default``) unless a tolerance pattern
        found it (``tolerance_source``, from :meth:`tolerance_for`); None: the tolerances
        judge it."""
        i = self._first([u[0] for u in self.ulp], case)
        if i is not None:
            pattern, budget = self.ulp[i]
            return budget, f"pattern {pattern!r}"
        if max_ulp is None or tolerance_source.startswith("pattern"):
            return None
        return max_ulp, "default"

    def applied(self, case: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A case's rows, its failures ``xfail`` if an xfail pattern matches it, or all its
        rows ``xpass`` if it matches one and nothing failed."""
        i = self._first(self.xfail, case)
        if i is None:
            return rows
        pattern = self.xfail[i]
        failed = [r for r in rows if r["status"] not in ("match", "skipped")]
        if not failed:
            note = f"passed, but xfail pattern {pattern!r} expects it to fail"
            return [{**r, "status": "xpass", "detail": note} for r in rows]
        out = []
        for r in rows:
            if r["status"] in ("match", "skipped"):
                out.append(r)
                continue
            detail = f"{r['status']} (xfail pattern {pattern!r})"
            if r.get("detail"):
                detail += f": {r['detail']}"
            out.append({**r, "status": "xfail", "detail": detail})
        return out


#: Largest patterns file read (onnxruntime's exclusion lists are a few tens of KB).
_MAX_PATTERNS_FILE: Final = 16 << 20


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _is_count(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


#: A ``tolerance`` line's ULP budget: ``REGEX ulp=N``.
_ULP_LINE: Final = re.compile(r"(.*?\S)\s+ulp=(\d+)")


def check_ulp(max_ulp: int | None, ulp_floor: float = 0.0) -> None:
    """Refuse a ULP budget that is not a whole number of 0 or more, or a floor that is not
    a finite number of 0 or more.

    Raises
    ------
    CompareError
        Saying which.
    """
    if max_ulp is not None and not _is_count(max_ulp):
        raise CompareError(f"max_ulp is {max_ulp!r}; give a whole number of 0 or more")
    if not (_is_number(ulp_floor) and 0 <= ulp_floor < np.inf):
        raise CompareError(f"ulp_floor is {ulp_floor!r}; give a finite number of 0 or more")


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
        _check_tolerance(rtol, atol)
    except CompareError as exc:
        raise CompareError(f"tolerance {text!r}: {exc.message}") from None
    return pattern, rtol, atol


def _check_tolerance(rtol: float, atol: float) -> None:
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not (_is_number(value) and 0 <= value < np.inf):  # NaN too
            raise CompareError(f"{name} is {value!r}; give a finite number of 0 or more")


def given_expectations(
    skip: Sequence[str],
    xfail: Sequence[str],
    tolerance: Mapping[str, tuple[float, float]] | None,
    patterns: Expectations | None,
) -> Expectations:
    """The patterns of ``skip``, ``xfail`` and ``tolerance``, then those of ``patterns``."""
    given = Expectations(list(skip), list(xfail), [(k, *v) for k, v in (tolerance or {}).items()])
    return given if patterns is None else given + patterns


@dataclass(frozen=True)
class Plan:
    """How a case's outputs are compared: the patterns, the default tolerances, which
    actual values a row keeps, the default ULP budget (None: tolerances judge) and the
    absolute floor of zero under a ULP budget."""

    expect: Expectations
    rtol: float
    atol: float
    keep_actual: str
    max_ulp: int | None = None
    ulp_floor: float = 0.0

    def __post_init__(self) -> None:
        _check_tolerance(self.rtol, self.atol)
        check_ulp(self.max_ulp, self.ulp_floor)
        if self.keep_actual not in KEEP_ACTUAL:
            raise CompareError(
                f"keep_actual is {self.keep_actual!r}; expected one of {', '.join(KEEP_ACTUAL)}"
            )


def plan_provenance(plan: Plan, cases: Iterable[str] | None) -> dict[str, Any]:
    """What a report records of ``plan`` and of the ``cases`` asked for."""
    expect = plan.expect
    return {
        "rtol": plan.rtol,
        "atol": plan.atol,
        "cases": None if cases is None else list(cases),
        "skip": list(expect.skip),
        "xfail": list(expect.xfail),
        "tolerance": [list(t) for t in expect.tolerance],
        "keep_actual": plan.keep_actual,
        "ulp": [list(u) for u in expect.ulp],
        "max_ulp": plan.max_ulp,
        "ulp_floor": plan.ulp_floor,
    }

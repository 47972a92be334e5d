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

The patterns may come from the expectation files projects keep (onnxruntime's among them,
read by :mod:`~onnx_arrow.compare.expectation_files`): each says where it came from and
why, and :meth:`Expectations.for_corpus` keeps those whose conditions hold for a store.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final, TypedDict, cast

from onnx_arrow.compare.expectation_files import (
    Pattern,
    check_tolerance,
    check_ulp,
    compile_pattern,
    highest_opset,
    holds,
    parse_tolerance,
    read_patterns,
)
from onnx_arrow.corpus.sources import Tolerance
from onnx_arrow.corpus.store import Store
from onnx_arrow.errors import CompareError

__all__ = [
    "KEEP_ACTUAL",
    "PLAN_SETTINGS",
    "Expectations",
    "Plan",
    "PlanSettings",
    "Rules",
    "check_ulp",
    "given_expectations",
    "matching_names",
    "parse_tolerance",
    "plan_of",
    "plan_provenance",
    "searched_names",
    "select_cases",
]


#: Which actual values a report keeps (its ``actual`` column): of the outputs that
#: differ from the expected ones (``failed``, the default), of all, or of none.
KEEP_ACTUAL: Final = ("failed", "all", "none")


def select_cases(store: Store, patterns: Iterable[str] | None = None) -> list[str]:
    """The cases of ``store`` (in store order) that match any of the glob ``patterns``.

    A pattern matches the whole name (``node/test_abs``, ``node/test_add*``) or the
    name without its kind folder (``test_abs``).  None selects every case.  An exact
    name is looked up, not matched against every name, so thousands of names cost
    no more than reading them (see :func:`matching_names`).

    Raises
    ------
    CompareError
        If a pattern matches no case.
    """
    names = store.cases()
    if patterns is None:
        return names
    return matching_names(names, patterns, where=str(store.path))


#: The characters that make a glob pattern more than a name.
_GLOB_MAGIC: Final = frozenset("*?[")


def matching_names(
    names: Sequence[str], patterns: Iterable[str], *, where: str | None = None
) -> list[str]:
    """The ``names`` (in their order) that match any of the glob ``patterns``, as
    :func:`select_cases` matches them: a pattern matches a whole name or the name
    without its kind folder.

    A pattern without ``*``, ``?`` or ``[`` is a name and is looked up in a table of the
    names, so the cost is linear in the number of names and patterns; a glob is
    translated to a regular expression once and matched against each name.

    >>> matching_names(["node/test_abs", "node/test_add", "real/test_add"], ["test_add"])
    ['node/test_add', 'real/test_add']

    Raises
    ------
    CompareError
        If a pattern matches no name (at ``where``).
    """
    whole: dict[str, list[int]] = {}
    short: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        whole.setdefault(name, []).append(i)
        test = name.split("/", 1)[-1]
        if test != name:
            short.setdefault(test, []).append(i)
    chosen = bytearray(len(names))
    for pattern in patterns:
        if _GLOB_MAGIC.isdisjoint(pattern):
            hits = whole.get(pattern, []) + short.get(pattern, [])
        else:
            match = re.compile(fnmatch.translate(pattern)).match
            hits = [
                i for i, name in enumerate(names) if match(name) or match(name.split("/", 1)[-1])
            ]
        if not hits:
            raise CompareError(
                f"no case matches {pattern!r}; the store's cases are named like {names[0]!r}"
                if names
                else f"no case matches {pattern!r}: the store is empty",
                where=where,
            )
        for i in hits:
            chosen[i] = 1
    return [name for name, chosen_ in zip(names, chosen, strict=True) if chosen_]


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
    #: Allow-lists (tract's manifests): patterns, each of a kind folder (its ``group``),
    #: matched against a test name whole; a case of a folder they list that none of
    #: them matches is skipped (run as an xfail with ``only_ran``).
    only: Sequence[str] = ()
    only_ran: bool = False

    def __post_init__(self) -> None:
        for pattern, budget in self.ulp:
            try:
                check_ulp(budget)
            except CompareError as exc:
                raise CompareError(f"ulp budget of pattern {pattern!r}: {exc}") from None
        patterns = (*self.skip, *self.xfail, *(t[0] for t in self.tolerance), *self.only)
        for pattern in (*patterns, *(u[0] for u in self.ulp)):
            try:
                compile_pattern(pattern)
            except re.error as exc:
                raise CompareError(
                    f"pattern {pattern!r} is not a regular expression ({exc})"
                ) from None
        for pattern, rtol, atol in self.tolerance:
            try:
                check_tolerance(rtol, atol)
            except CompareError as exc:
                raise CompareError(f"tolerance of pattern {pattern!r}: {exc}") from None

    @classmethod
    def read(
        cls, path: str | os.PathLike[str], *, provider: str = "CPU", bits: int | None = None
    ) -> Expectations:
        """Patterns from an expectation file, told apart by its content:

        * lines ``skip REGEX``, ``xfail REGEX``, ``tolerance REGEX=RTOL,ATOL`` and
          ``tolerance REGEX ulp=N`` (a ULP budget), each optionally followed by ``when
          CLAUSES`` (``opset>=18 onnx<1.17 provider=DML``: see
          :func:`~onnx_arrow.compare.expectation_files.parse_clauses`) and ``# reason``,
          with ``#`` comment lines (the comment above a run of lines is their reason);
        * JSON ``{"skip": [REGEX, ...], "xfail": [...], "tolerance": {REGEX: [RTOL,
          ATOL], REGEX: {"ulp": N}}}`` (every key optional);
        * onnxruntime's ``onnx_backend_test_series_filters.jsonc`` (the lists its
          ``onnx_backend_test_series.py`` applies for onnxruntime built for ``provider``,
          as ``onnxruntime.get_device()`` names it, on a platform of ``bits``: this one's
          unless given) and ``onnx_backend_test_series_overrides.jsonc``, as they are.

        Each pattern is a :class:`~onnx_arrow.compare.expectation_files.Pattern` that
        says where it came from and why; those with clauses on the corpus (opset, onnx
        version) apply to a store as :meth:`for_corpus` says.

        Raises
        ------
        CompareError
            If the file cannot be read, or a line or key is not one of those; the error
            names the file and line.
        """
        found = read_patterns(path, provider=provider, bits=bits)
        try:
            return cls(found.skip, found.xfail, found.tolerance, found.ulp, found.only)
        except CompareError as exc:
            raise exc.at(os.fspath(path)) from None

    def for_corpus(self, onnx_version: str | None) -> Expectations:
        """The patterns that apply to a corpus built by onnx ``onnx_version`` (as its
        store records it): those without clauses on the corpus, and those whose clauses
        hold for that release and its highest opset (``onnx.helper.VERSION_TABLE``).

        Raises
        ------
        CompareError
            If a pattern has such clauses and ``onnx_version`` is None or unknown to the
            installed onnx.
        """
        conditional = [
            p
            for p in (
                *self.skip,
                *self.xfail,
                *(t[0] for t in self.tolerance),
                *(u[0] for u in self.ulp),
                *self.only,
            )
            if isinstance(p, Pattern) and p.when
        ]
        if not conditional:
            return self
        if onnx_version is None:
            raise CompareError(
                f"pattern {conditional[0]!r} applies under "
                f"{' '.join(str(c) for c in conditional[0].when)}, but the store does not "
                "record the onnx release that built it; import it again with onnx-arrow"
            )
        opset = highest_opset(onnx_version)

        def applies(pattern: str) -> bool:
            when = pattern.when if isinstance(pattern, Pattern) else ()
            return all(
                holds(c, device="", bits=0, onnx_version=onnx_version, opset=opset) for c in when
            )

        return Expectations(
            [p for p in self.skip if applies(p)],
            [p for p in self.xfail if applies(p)],
            [t for t in self.tolerance if applies(t[0])],
            [u for u in self.ulp if applies(u[0])],
            [p for p in self.only if applies(p)],
            self.only_ran,
        )

    def running_skips(self) -> Expectations:
        """The same patterns with every skip pattern an xfail one (first, in order): the
        cases they skip are run, so that a report shows which of them still fail and
        which pass (see :func:`~onnx_arrow.compare.unneeded.unneeded_entries`)."""
        return Expectations(
            [], [*self.skip, *self.xfail], self.tolerance, self.ulp, self.only, only_ran=True
        )

    def __add__(self, other: Expectations) -> Expectations:
        """Both sets of patterns, ``self``'s first (so they win where both find a case)."""
        return Expectations(
            [*self.skip, *other.skip],
            [*self.xfail, *other.xfail],
            [*self.tolerance, *other.tolerance],
            [*self.ulp, *other.ulp],
            [*self.only, *other.only],
            self.only_ran or other.only_ran,
        )

    @staticmethod
    def _first(patterns: Sequence[str], case: str) -> int | None:
        names = searched_names(case)
        return next(
            (i for i, p in enumerate(patterns) if any(re.search(p, n) for n in names)), None
        )

    def skips(self, case: str) -> str | None:
        """The skip pattern ``case`` matches, if any (or what says an allow-list leaves
        it out)."""
        i = self._first(self.skip, case)
        if i is not None:
            return self.skip[i]
        return None if self.only_ran else self.unlisted(case)

    def unlisted(self, case: str) -> str | None:
        """What says that the allow-lists (:attr:`only`) of ``case``'s kind folder leave
        it out (``not in node.txt``), or None."""
        kind, _, test = case.rpartition("/")
        lists = [p for p in self.only if getattr(p, "group", None) == kind]
        if not lists or any(re.fullmatch(p, test) for p in lists):
            return None
        where = getattr(lists[0], "where", None) or "the allow-list"
        return f"not in {where.rpartition(':')[0] or where}"

    def tolerance_for(
        self, case: str, own: Tolerance | None, rtol: float, atol: float
    ) -> tuple[float, float, str]:
        """``(rtol, atol, where from)`` for ``case``: the first tolerance pattern that
        finds it, else the case's own (``own``, a part it does not state from ``rtol`` /
        ``atol``), else ``rtol`` and ``atol``."""
        i = self._first([t[0] for t in self.tolerance], case)
        if i is not None:
            pattern, p_rtol, p_atol = self.tolerance[i]
            return p_rtol, p_atol, f"pattern {str(pattern)!r}"
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
            return budget, f"pattern {str(pattern)!r}"
        if max_ulp is None or tolerance_source.startswith("pattern"):
            return None
        return max_ulp, "default"

    def applied(self, case: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A case's rows, its failures ``xfail`` if an xfail pattern matches it, or all its
        rows ``xpass`` if it matches one and nothing failed."""
        i = self._first(self.xfail, case)
        pattern = None if i is None else self.xfail[i]
        if pattern is None and self.only_ran:
            pattern = self.unlisted(case)
        if pattern is None:
            return rows
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


def searched_names(case: str) -> tuple[str, str, str]:
    """The names a pattern is searched in: the case's (``node/test_abs``), its test name
    (``test_abs``) and that with ``_cpu`` (``test_abs_cpu``, as onnx's runner names it).

    >>> searched_names("node/test_abs")
    ('node/test_abs', 'test_abs', 'test_abs_cpu')
    """
    test = case.rsplit("/", 1)[-1]
    return case, test, f"{test}_cpu"


def given_expectations(
    skip: Sequence[str],
    xfail: Sequence[str],
    tolerance: Iterable[tuple[str, float, float]],
    patterns: Expectations | None,
    onnx_version: str | None = None,
) -> Expectations:
    """The patterns of ``skip``, ``xfail`` and ``tolerance`` (``(pattern, rtol, atol)``),
    then those of ``patterns`` that apply to a corpus built by onnx ``onnx_version`` (see
    :meth:`Expectations.for_corpus`)."""
    given = Expectations(list(skip), list(xfail), list(tolerance))
    return given if patterns is None else given + patterns.for_corpus(onnx_version)


@dataclass(frozen=True)
class Plan:
    """How a comparison judges what a backend gives: the verdict settings that
    :func:`~onnx_arrow.compare.compare`, :func:`~onnx_arrow.compare.compare_stores`,
    :func:`~onnx_arrow.trace.trace`, the pytest plugin and the command line share.

    Each of those takes ``plan=Plan(...)``, or the same settings as keywords
    (``compare(store, rtol=1e-4)`` is ``compare(store, plan=Plan(rtol=1e-4))``); a plan
    and keywords together are refused.  Every setting is checked here, once.

    Parameters
    ----------
    skip, xfail
        Regular expressions (searched as onnx's ``BackendTest`` searches them: see
        :class:`Expectations`) of the cases not to run (one ``skipped`` row each, naming
        the pattern) and of those known to fail (their failures ``xfail``; ``xpass`` when
        they pass).
    tolerance
        ``{pattern: (rtol, atol)}`` (or ``(pattern, rtol, atol)`` triples): the
        tolerances of the cases a pattern finds, over their own (the first pattern that
        finds a case applies).  Kept as a tuple of triples.
    patterns
        More skip, xfail, tolerance and ULP patterns (:meth:`Expectations.read` of a
        file), after those of ``skip``, ``xfail`` and ``tolerance``; those with conditions
        apply as the store's onnx release says (:meth:`Expectations.for_corpus`).
    keep_actual
        Whose actual values a report's ``actual`` column keeps (see :data:`KEEP_ACTUAL`):
        of the outputs that differ (``"failed"``), of all, or of none.
    rtol, atol
        The tolerances of a case that has none of its own and that no ``tolerance``
        pattern finds (onnx's defaults): an element is beyond tolerance when ``|actual -
        expected| > atol + rtol * |expected|`` (NaN equal to NaN).
    max_ulp, ulp_floor
        Make ULPs the verdict of the floats (of a case no tolerance pattern finds; a
        ``tolerance REGEX ulp=N`` pattern gives a case a budget of its own): an element
        passes within ``max_ulp`` ULPs of the expected one (counted on the dtype's own
        codes, complex part by part), or where the expected value is 0 and ``|actual| <=
        ulp_floor``; two NaNs are equal.  ``max_ulp=0`` is a bit-exactness check (-0.0
        and +0.0 are 0 apart).

    Notes
    -----
    A trace judges one case: its ``skip``, ``xfail`` and ``keep_actual`` do not apply
    there, its tolerance and ULP patterns do.

    Raises
    ------
    CompareError
        Located at the setting (``Plan(rtol)``): a pattern that is not a regular
        expression, a tolerance or floor that is not a finite number of 0 or more, a
        budget that is not a whole number of 0 or more, an unknown ``keep_actual``, or
        a setting of another type (a string where a list of patterns is asked for).

    Examples
    --------
    >>> Plan(rtol=1e-4, xfail=["test_dft"], tolerance={"test_stft": (1e-2, 1e-4)})
    Plan(skip=(), xfail=('test_dft',), tolerance=(('test_stft', 0.01, 0.0001),), \
patterns=None, keep_actual='failed', rtol=0.0001, atol=1e-07, max_ulp=None, ulp_floor=0.0)
    >>> Plan(skip="test_abs")
    Traceback (most recent call last):
    ...
    onnx_arrow.errors.CompareError: Plan(skip): expected a list of regular expressions, \
got the str 'test_abs'; give ['test_abs'] for one
    """

    skip: Sequence[str] = ()
    xfail: Sequence[str] = ()
    tolerance: Mapping[str, tuple[float, float]] | Sequence[tuple[str, float, float]] = ()
    patterns: Expectations | None = None
    keep_actual: str = "failed"
    rtol: float = 1e-3
    atol: float = 1e-7
    max_ulp: int | None = None
    ulp_floor: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "skip", _regexes(self.skip, "skip"))
        object.__setattr__(self, "xfail", _regexes(self.xfail, "xfail"))
        object.__setattr__(self, "tolerance", _tolerances(self.tolerance))
        if self.patterns is not None and not isinstance(self.patterns, Expectations):
            raise CompareError(
                "expected the Expectations of a file (Expectations.read) or None, got "
                f"{_type_name(self.patterns)}",
                where="Plan(patterns)",
            )
        if not isinstance(self.keep_actual, str) or self.keep_actual not in KEEP_ACTUAL:
            raise CompareError(
                f"keep_actual is {self.keep_actual!r}; expected one of {', '.join(KEEP_ACTUAL)}",
                where="Plan(keep_actual)",
            )
        for name, value in (
            ("rtol", self.rtol),
            ("atol", self.atol),
            ("ulp_floor", self.ulp_floor),
        ):
            try:
                check_tolerance(value, 0.0)
            except CompareError:
                raise CompareError(
                    f"{name} is {value!r}; give a finite number of 0 or more", where=f"Plan({name})"
                ) from None
        try:
            check_ulp(self.max_ulp)
        except CompareError as exc:
            raise CompareError(exc.message, where="Plan(max_ulp)") from None

    def expectations(self, onnx_version: str | None = None) -> Expectations:
        """The plan's patterns, in order (``skip``, ``xfail``, ``tolerance``, then those of
        ``patterns`` that apply to a corpus built by onnx ``onnx_version``)."""
        return given_expectations(
            self.skip,
            self.xfail,
            cast("tuple[tuple[str, float, float], ...]", self.tolerance),  # __post_init__ made it
            self.patterns,
            onnx_version,
        )

    def rules(self, onnx_version: str | None = None) -> Rules:
        """The plan as a store built by onnx ``onnx_version`` is judged by it."""
        return Rules(
            self.expectations(onnx_version),
            self.rtol,
            self.atol,
            self.keep_actual,
            self.max_ulp,
            self.ulp_floor,
        )


#: The names of :class:`Plan`'s settings, in order.
PLAN_SETTINGS: Final = tuple(f.name for f in fields(Plan))


class PlanSettings(TypedDict, total=False):
    """:class:`Plan`'s settings as keywords (``compare(store, rtol=1e-4)``)."""

    skip: Sequence[str]
    xfail: Sequence[str]
    tolerance: Mapping[str, tuple[float, float]] | Sequence[tuple[str, float, float]]
    patterns: Expectations | None
    keep_actual: str
    rtol: float
    atol: float
    max_ulp: int | None
    ulp_floor: float


def plan_of(plan: Plan | None, settings: Mapping[str, Any], *, where: str) -> Plan:
    """The plan a function was given: ``plan``, or one of the ``settings`` it was given as
    keywords (at ``where``, the function's name), never both.

    Raises
    ------
    CompareError
        If a keyword is not a setting of :class:`Plan`, both a plan and settings are
        given, ``plan`` is not a :class:`Plan`, or a setting is bad (see :class:`Plan`).
    """
    unknown = sorted(k for k in settings if k not in PLAN_SETTINGS)
    if unknown:
        raise CompareError(
            f"unexpected keyword {', '.join(map(repr, unknown))}; the plan's settings are "
            f"{', '.join(PLAN_SETTINGS)}",
            where=f"{where}({unknown[0]})",
        )
    if plan is None:
        return Plan(**settings)
    if not isinstance(plan, Plan):
        raise CompareError(
            f"expected a Plan, got {_type_name(plan)}; build one with Plan(rtol=..., ...)",
            where=f"{where}(plan)",
        )
    if settings:
        raise CompareError(
            f"{', '.join(sorted(settings))} given both as keywords and in plan=; give the "
            "settings in the plan (dataclasses.replace(plan, ...)) or as keywords, not both",
            where=f"{where}({sorted(settings)[0]})",
        )
    return plan


def _type_name(value: object) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def _regexes(patterns: object, name: str) -> tuple[str, ...]:
    """``patterns`` as a tuple of regular expressions, each compiled once to check it."""
    where = f"Plan({name})"
    if isinstance(patterns, str | bytes) or not isinstance(patterns, Iterable):
        hint = f"; give [{patterns!r}] for one" if isinstance(patterns, str) else ""
        raise CompareError(
            f"expected a list of regular expressions, got the {_type_name(patterns)} "
            f"{patterns!r:.60}{hint}",
            where=where,
        )
    out = tuple(patterns)
    for k, pattern in enumerate(out):
        if not isinstance(pattern, str):
            raise CompareError(
                f"expected a regular expression (str), got {_type_name(pattern)}",
                where=f"Plan({name}[{k}])",
            )
        try:
            re.compile(pattern)
        except re.error as exc:
            raise CompareError(
                f"pattern {pattern!r} is not a regular expression ({exc})",
                where=f"Plan({name}[{k}])",
            ) from None
    return out


def _tolerances(tolerance: object) -> tuple[tuple[str, float, float], ...]:
    """``{pattern: (rtol, atol)}`` or ``(pattern, rtol, atol)`` triples as triples, each
    pattern compiled and each tolerance checked."""
    where = "Plan(tolerance)"
    if tolerance is None:
        return ()
    if isinstance(tolerance, Mapping):
        items = []
        for pattern, pair in tolerance.items():
            if not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2:
                raise CompareError(
                    f"expected (rtol, atol) for pattern {pattern!r}, got {pair!r:.60}",
                    where=where,
                )
            items.append((pattern, *pair))
    elif isinstance(tolerance, Iterable) and not isinstance(tolerance, str | bytes):
        items = [tuple(t) if isinstance(t, Sequence) and not isinstance(t, str) else t
                 for t in tolerance]  # fmt: skip
    else:
        raise CompareError(
            f"expected {{pattern: (rtol, atol)}}, got {_type_name(tolerance)}", where=where
        )
    out = []
    for k, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 3):
            raise CompareError(
                f"expected (pattern, rtol, atol), got {item!r:.60}", where=f"Plan(tolerance[{k}])"
            )
        pattern, rtol, atol = item
        _regexes([pattern], "tolerance")
        try:
            check_tolerance(rtol, atol)
        except CompareError as exc:
            raise CompareError(f"pattern {pattern!r}: {exc.message}", where=where) from None
        out.append((pattern, rtol, atol))
    return tuple(out)


@dataclass(frozen=True)
class Rules:
    """A :class:`Plan` as one store is judged by it: its patterns resolved for the store's
    onnx release (:meth:`Plan.rules`), the default tolerances, which actual values a row
    keeps, the default ULP budget (None: tolerances judge) and the absolute floor of zero
    under a ULP budget."""

    expect: Expectations
    rtol: float
    atol: float
    keep_actual: str
    max_ulp: int | None = None
    ulp_floor: float = 0.0

    def __post_init__(self) -> None:
        check_tolerance(self.rtol, self.atol)
        check_ulp(self.max_ulp, self.ulp_floor)
        if self.keep_actual not in KEEP_ACTUAL:
            raise CompareError(
                f"keep_actual is {self.keep_actual!r}; expected one of {', '.join(KEEP_ACTUAL)}"
            )


def plan_provenance(plan: Rules, cases: Iterable[str] | None) -> dict[str, Any]:
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
        **({"only": list(expect.only)} if expect.only else {}),
        "max_ulp": plan.max_ulp,
        "ulp_floor": plan.ulp_floor,
    }

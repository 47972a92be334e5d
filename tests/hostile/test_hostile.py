"""The hostile-input suite: every case in a child process, under a memory cap and a timeout.

The families and what each case must do are in :mod:`hostile.families` and
:mod:`hostile.readers`; how they run and are judged in :mod:`hostile.harness`.  A case
with a ``known`` bug runs as a strict xfail: it must fail, with that bug.  The slow test
runs the rest of the readers' cases (:data:`hostile.readers.MORE`).
``PYTHONPATH=.:tests python -m hostile.harness [FAMILY ...]`` prints the outcomes counted by family;
``PYTHONPATH=.:tests python -m hostile.fuzz --minutes 10`` is the longer random run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile import families, owned, readers
from hostile.harness import Case, Expect, Outcome, run_cases

CASES = families.CASES + readers.CASES + owned.CASES


def _param(case: Case) -> object:
    if case.known is None:
        return case
    mark = pytest.mark.xfail(strict=True, raises=AssertionError, reason=case.known)
    return pytest.param(case, marks=mark)


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    return run_cases(CASES, tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="session")
def more_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    return run_cases(readers.MORE, tmp_path_factory.mktemp("hostile-more"))


def _check(outcome: Outcome) -> None:
    known = outcome.case.known
    if known is not None and outcome.problem and known not in outcome.problem:
        pytest.fail(f"fails otherwise than the known bug {known!r}: {outcome.problem}")
    assert outcome.problem is None, f"{outcome.verdict}: {outcome.problem}"


@pytest.mark.parametrize("case", [_param(c) for c in CASES], ids=lambda c: c.id)
def test_hostile_input(outcomes: dict[str, Outcome], case: Case) -> None:
    _check(outcomes[case.id])


@pytest.mark.slow
@pytest.mark.parametrize("case", [_param(c) for c in readers.MORE], ids=lambda c: c.id)
def test_more_hostile_input(more_outcomes: dict[str, Outcome], case: Case) -> None:
    _check(more_outcomes[case.id])


def test_every_family_has_cases() -> None:
    families = {c.family for c in CASES}
    assert families == {
        "pb-truncated",
        "pb-mutated",
        "pb-declared",
        "huge",
        "store-forged",
        "arrow-ipc",
        "arrow-built",
        "pandas",
        "confinement",
        "fifo",
        "names",
        "external-data",
        "dataset-forged",
        "engine-rows",
        "portable",
        "diff",
        "report-files",
        "bounds",
    }
    assert {c.family for c in readers.MORE} <= families
    every = CASES + readers.MORE
    assert len({c.id for c in every}) == len(every)


def test_the_harness_tells_a_crash_a_hang_and_a_foreign_error(tmp_path: Path) -> None:
    def nothing(root: Path) -> dict[str, object]:
        return {}

    cases = [
        Case("self", "crash", "crash", nothing, Expect(clean=True)),
        Case("self", "hang", "hang", nothing, Expect(clean=True)),
        Case("self", "foreign", "foreign", nothing, Expect(clean=True)),
    ]
    got = run_cases(cases, tmp_path, timeout=2)
    assert got["self/crash"].verdict == "crash (signal 11)"
    assert got["self/hang"].verdict == "hang"
    assert got["self/foreign"].verdict == "foreign IndexError"
    assert all(o.problem for o in got.values())

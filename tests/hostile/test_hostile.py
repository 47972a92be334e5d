"""The hostile-input suite: every case in a child process, under a memory cap and a timeout.

The families and what each case must do are in :mod:`hostile.families` and
:mod:`hostile.readers`; how they run and are judged in :mod:`hostile.harness`.  A case
with a ``known`` bug runs as a strict xfail: it must fail, with that bug.
``PYTHONPATH=.:tests python -m hostile.harness [FAMILY ...]`` prints the outcomes counted by family;
``PYTHONPATH=.:tests python -m hostile.fuzz --minutes 10`` is the longer random run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile import families, readers
from hostile.harness import Case, Expect, Outcome, run_cases

CASES = families.CASES + readers.CASES


def _param(case: Case) -> object:
    if case.known is None:
        return case
    mark = pytest.mark.xfail(strict=True, raises=AssertionError, reason=case.known)
    return pytest.param(case, marks=mark)


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    return run_cases(CASES, tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("case", [_param(c) for c in CASES], ids=lambda c: c.id)
def test_hostile_input(outcomes: dict[str, Outcome], case: Case) -> None:
    outcome = outcomes[case.id]
    if case.known is not None and outcome.problem and case.known not in outcome.problem:
        pytest.fail(f"fails otherwise than the known bug {case.known!r}: {outcome.problem}")
    assert outcome.problem is None, f"{outcome.verdict}: {outcome.problem}"


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
    }
    assert len({c.id for c in CASES}) == len(CASES)


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

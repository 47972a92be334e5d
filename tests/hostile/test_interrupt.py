"""Ctrl-C at every phase of import and export: exit 130 promptly, one line, nothing left
half-written and nothing left running.

See :mod:`hostile.interrupt` for the points and how each is reached; ``python -m
hostile.interrupt`` prints the time from the signal to the exit at each, and ``python -m
hostile.interrupt --trials 20`` repeats ``import --jobs 2`` under a CPU load, as the
slow test below does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile.interrupt import (
    DELAYS,
    WORKERS,
    Interrupted,
    attempt,
    cpu_load,
    inputs,
    outcome,
    points,
    trials,
)

#: Far above the measured times (well under a second, see the module): a hang bound,
#: not a speed goal.
PROMPTLY = 30.0

POINTS = list(points(Path("."), Path("."), Path(".")))


@pytest.fixture(scope="module")
def tried(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    work = tmp_path_factory.mktemp("interrupt")
    store, corpus = inputs(work)
    return dict(points(work, store, corpus))


def check(result: Interrupted) -> None:
    assert result.seconds is not None, f"still running {PROMPTLY} s after SIGINT: {result.stderr}"
    assert result.seconds < PROMPTLY
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1:] == ["onnx-arrow: interrupted"], result.stderr
    assert result.leftovers == []
    assert result.survivors == [], f"left running after the command exited: {result.survivors}"


@pytest.mark.parametrize("point", POINTS)
def test_ctrl_c_exits_130_at_once_with_one_line_and_leaves_nothing(tried, point: str) -> None:
    check(tried[point]())


@pytest.mark.parametrize("delay", DELAYS[1:6:2])
def test_ctrl_c_later_into_the_pool_work_leaves_no_worker(tried, delay: float) -> None:
    """The signal falls while the workers start, run their first tasks, hand results back."""
    check(attempt(tried[WORKERS], delay))


@pytest.mark.slow
def test_twenty_ctrl_c_of_import_jobs_2_under_load_all_end_well(tried) -> None:
    """A loaded machine gives the pool's processes and threads their turns late: every one
    of 20 trials, each signal later into the work, still exits 130 and leaves nothing."""
    with cpu_load():
        results = trials(tried[WORKERS], 20)
    outcomes = [outcome(r) for r in results]
    assert outcomes == ["exit 130"] * 20, outcomes
    for result in results:
        check(result)


def test_the_check_sees_a_process_left_behind() -> None:
    """What the command leaves running is found by its session, orphaned or not, and
    killed: a worker that outlives the command fails the points above."""
    import subprocess

    from hostile.interrupt import session_processes, survivors

    proc = subprocess.Popen(["sh", "-c", "sleep 120 & exit 0"], start_new_session=True)
    proc.wait()
    left = survivors(proc.pid)
    assert len(left) == 1, left
    assert "sleep 120" in left[0], left
    assert session_processes(proc.pid) == {} or all(
        s.split()[1] == "Z" for s in session_processes(proc.pid).values()
    )

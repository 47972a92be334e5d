"""The worker pool of import, export, compare and run (onnx_arrow/pool.py), with real
processes: a worker's death or silence loses its own task alone, respawn, heartbeats,
and under errors and Ctrl-C nothing outlives the pool's block."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from onnx_arrow.errors import CaseLostError, CorpusError
from onnx_arrow.pool import WORKER_NAME, Pool, TaskLost, heartbeat

ROOT = Path(__file__).resolve().parents[1]


def _gone(pid: int) -> bool:
    """Ended: no such process, or a zombie (this process reaps orphans, see conftest)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    if stat[stat.rindex(")") + 2 :].split()[0] != "Z":
        return False
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    return True


def _all_gone(pids: list[int], seconds: float = 10) -> bool:
    end = time.monotonic() + seconds
    while not all(map(_gone, pids)) and time.monotonic() < end:
        time.sleep(0.05)
    return all(map(_gone, pids))


def _workers() -> list[int]:
    return [p.pid for p in multiprocessing.active_children() if p.name == WORKER_NAME]


def _raise_corpus_error(where: str) -> None:
    raise CorpusError("a case of its own kind", where=where)


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _pid_then_sleep(path: str, seconds: float) -> None:
    """Say which worker runs the task (its pid in ``path``), then sleep."""
    Path(path).write_text(str(os.getpid()))
    time.sleep(seconds)


def _beating(seconds: float, every: float) -> int:
    """Run for ``seconds``, saying so every ``every`` seconds."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        heartbeat()
        time.sleep(every)
    return os.getpid()


def _pid_of(path: Path) -> int:
    end = time.monotonic() + 30
    while not path.exists() or not path.read_text():
        assert time.monotonic() < end, "the task did not start"
        time.sleep(0.02)
    return int(path.read_text())


# --- tasks, results, errors ---------------------------------------------------------------


def test_tasks_run_in_workers_their_errors_come_back_and_no_worker_outlives_the_block() -> None:
    with Pool(2) as pool:
        tasks = [pool.submit(pow, 2, n) for n in range(10)]
        assert [pool.result(t) for t in tasks] == [2**n for n in range(10)]
        assert pool.result(pool.submit(os.getpid)) != os.getpid()
        with pytest.raises(CorpusError, match="a case of its own kind") as info:
            pool.result(pool.submit(_raise_corpus_error, "case/x.pb"))
        assert info.value.where == "case/x.pb"
        pids = _workers()
        assert len(pids) == 2
        assert sorted(pool.pids) == sorted(pids)
    assert _workers() == []
    assert all(map(_gone, pids))


def test_completed_gives_every_task_once_and_raises_what_a_task_raised() -> None:
    with Pool(2) as pool:
        tasks = {pool.submit(pow, 3, n): n for n in range(20)}
        got = dict(pool.completed())
        assert got == {task: 3**n for task, n in tasks.items()}
        pool.submit(_raise_corpus_error, "case/y.pb")
        with pytest.raises(CorpusError, match="a case of its own kind"):
            list(pool.completed())


def _refuse_unpickling() -> Exception:
    raise TypeError("why: this exception does not unpickle")


class _Unreadable(Exception):
    """An exception that pickles in the worker and does not unpickle in the parent (by its
    own ``__reduce__``: libraries that install exception pickling, such as tblib through
    Dask or Ray, would otherwise make it unpickle)."""

    def __init__(self, what: str, *, why: str) -> None:
        super().__init__(what)

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return _refuse_unpickling, ()


def _raise_unreadable() -> None:
    raise _Unreadable("x", why="y")


def test_a_task_or_reply_that_does_not_pickle_is_that_tasks_error() -> None:
    with Pool(1) as pool:
        (pid,) = pool.pids
        local = pool.submit(lambda: 1)  # a local function does not pickle
        unreadable = pool.submit(_raise_unreadable)
        after = pool.submit(os.getpid)
        with pytest.raises(AttributeError, match="local object"):
            pool.result(local)
        with pytest.raises(TypeError, match="why"):
            pool.result(unreadable)
        assert pool.result(after) == pid


def test_an_initializer_that_raises_is_raised_by_every_task() -> None:
    with Pool(1, initializer=_raise_corpus_error, initargs=("start",)) as pool:
        for _ in range(2):
            with pytest.raises(CorpusError, match="a case of its own kind"):
                pool.result(pool.submit(os.getpid))


def _busy_then_error() -> list[int]:
    with Pool(2) as pool:
        pool.submit(time.sleep, 60)
        pool.submit(time.sleep, 60)
        pids = _workers()
        raise RuntimeError(f"stop {pids}")


def test_an_error_stops_the_busy_workers_at_once() -> None:
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="stop") as info:
        _busy_then_error()
    pids = [int(p) for p in str(info.value).strip("stop []").split(",")]
    assert len(pids) == 2
    assert time.monotonic() - start < 20
    assert all(map(_gone, pids))


# --- a worker lost: its task alone --------------------------------------------------------


def test_a_worker_that_dies_running_a_task_is_a_lost_case_error() -> None:
    with Pool(1) as pool, pytest.raises(CaseLostError, match=r"died \(SIGKILL\)"):
        pool.result(pool.submit(_kill_self))


def test_a_worker_killed_by_a_signal_mid_task_loses_that_task_alone(tmp_path: Path) -> None:
    """Killed from outside while it runs a task: that task is lost, the tasks submitted
    after it complete on the other worker (nothing replaces the dead one unasked)."""
    started = tmp_path / "pid"
    with Pool(2) as pool:
        doomed = pool.submit(_pid_then_sleep, str(started), 60)
        later = [pool.submit(pow, 2, n) for n in range(8)]
        victim = _pid_of(started)
        os.kill(victim, signal.SIGTERM)
        with pytest.raises(CaseLostError, match=r"died \(SIGTERM\); nothing was kept"):
            pool.result(doomed)
        assert [pool.result(t) for t in later] == [2**n for n in range(8)]
        assert victim not in pool.pids
        assert len(pool.pids) == 1
    assert _gone(victim)


def test_respawn_replaces_a_lost_worker_and_the_tasks_go_on() -> None:
    with Pool(1, respawn=True) as pool:
        first = pool.pids
        tasks = [
            pool.submit(_kill_self),
            pool.submit(os.getpid),
            pool.submit(_kill_self),
            pool.submit(os.getpid),
        ]
        got = dict(pool.completed())
        assert [type(got[t]) for t in tasks] == [TaskLost, int, TaskLost, int]
        assert got[tasks[0]] == got[tasks[2]] == TaskLost(ending="SIGKILL")
        assert got[tasks[0]].message() == "the worker process running the task died (SIGKILL)"
        pids = [got[tasks[1]], got[tasks[3]]]
        assert len({*first, *pids}) == 3  # a new worker after each death
        assert pool.pids == [pids[1]]
    assert _all_gone([*first, *pids])


def test_without_respawn_the_tasks_no_worker_is_left_for_are_lost_saying_so() -> None:
    with Pool(1) as pool:
        killed, waiting = pool.submit(_kill_self), pool.submit(os.getpid)
        got = dict(pool.completed())
        assert got == {killed: TaskLost(ending="SIGKILL"), waiting: TaskLost()}
        assert "no worker process was left" in got[waiting].message()
        assert pool.pids == []


def test_a_worker_that_died_between_tasks_is_replaced_before_its_next_task() -> None:
    with Pool(1, respawn=True) as pool:
        (pid,) = pool.pids
        assert pool.result(pool.submit(os.getpid)) == pid
        os.kill(pid, signal.SIGKILL)
        while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            time.sleep(0.02)  # dead, not reaped: the pool finds out when it hands out a task
        assert pool.result(pool.submit(os.getpid)) not in (pid, os.getpid())


# --- silence and heartbeats -----------------------------------------------------------------


def test_a_silent_worker_is_stopped_at_the_timeout_and_the_next_task_runs() -> None:
    start = time.monotonic()
    with Pool(1, respawn=True, timeout=0.5) as pool:
        (pid,) = pool.pids
        stuck, after = pool.submit(time.sleep, 3600), pool.submit(os.getpid)
        got = dict(pool.completed())
        assert got[stuck] == TaskLost(silent=0.5)
        assert "sent nothing for 0.5 s" in got[stuck].message()
        assert got[after] not in (pid, os.getpid())
    assert time.monotonic() - start < 20
    assert _all_gone([pid])


def test_heartbeats_keep_a_long_task_within_the_timeout() -> None:
    with Pool(1, timeout=0.5) as pool:
        (pid,) = pool.pids
        assert pool.result(pool.submit(_beating, 2.0, 0.1)) == pid


def test_a_heartbeat_outside_a_worker_does_nothing() -> None:
    heartbeat()


# --- Ctrl-C ---------------------------------------------------------------------------------


def test_workers_leave_ctrl_c_to_the_parent() -> None:
    with Pool(1) as pool:
        task = pool.submit(time.sleep, 0.5)
        (pid,) = pool.pids
        time.sleep(0.1)
        os.kill(pid, signal.SIGINT)
        assert pool.result(task) is None


@pytest.mark.parametrize("respawn", [False, True])
def test_ctrl_c_ends_every_worker_before_the_block_is_left(ctrl_c: None, respawn: bool) -> None:
    main = threading.main_thread().ident
    assert main is not None
    pids: list[int] = []
    timer = threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGINT))
    with pytest.raises(KeyboardInterrupt), Pool(2, respawn=respawn, timeout=60) as pool:  # noqa: PT012
        pids += pool.pids
        for _ in range(4):
            pool.submit(time.sleep, 60)
        timer.start()
        list(pool.completed())
    timer.join()
    assert len(pids) == 2
    assert not set(_workers()) & set(pids)
    assert all(map(_gone, pids))


_TERMINAL = """
import sys, time
from onnx_arrow.pool import Pool
with Pool(2, respawn=True) as pool:
    print(*pool.pids, flush=True)
    tasks = [pool.submit(time.sleep, 60) for _ in range(4)]
    try:
        list(pool.completed())
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        raise
"""


def test_a_terminals_ctrl_c_ends_the_process_and_every_worker() -> None:
    """SIGINT to the whole process group, as a terminal sends it: the workers ignore it,
    the parent stops them and exits of it, nothing is left running."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, "-c", _TERMINAL],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        pids = [int(p) for p in process.stdout.readline().split()]
        assert len(pids) == 2
        time.sleep(0.3)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGINT, err  # python's exit of a KeyboardInterrupt
    assert "KeyboardInterrupt" in err
    assert out == "interrupted\n"
    assert _all_gone(pids)


def test_workers_die_with_their_parent_killed() -> None:
    """A parent killed (SIGKILL: no clean-up of its own) takes its workers with it; they
    do not stay behind waiting for work."""
    script = (
        "import os, signal\n"
        "from onnx_arrow.pool import Pool\n"
        "pool = Pool(2)\n"
        "print(*pool.pids, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2
    assert _all_gone(pids), [Path(f"/proc/{p}/cmdline").read_bytes() for p in pids]

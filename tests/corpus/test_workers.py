"""The worker pool of import and export, and the writer thread, under errors and Ctrl-C:
nothing outlives the call, nothing is closed under a writer's feet."""

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

from onnx_arrow.corpus.workers import WorkerPool
from onnx_arrow.corpus.write import BackgroundWriter, RowGroup
from onnx_arrow.errors import CaseLostError, CorpusError

ROOT = Path(__file__).resolve().parents[2]


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


def _workers() -> list[int]:
    return [p.pid for p in multiprocessing.active_children() if p.name == "onnx-arrow-worker"]


def _raise_corpus_error(where: str) -> None:
    raise CorpusError("a case of its own kind", where=where)


def test_tasks_run_in_workers_their_errors_come_back_and_no_worker_outlives_the_block() -> None:
    with WorkerPool(2) as pool:
        tasks = [pool.submit(pow, 2, n) for n in range(10)]
        assert [pool.result(t) for t in tasks] == [2**n for n in range(10)]
        assert pool.result(pool.submit(os.getpid)) != os.getpid()
        with pytest.raises(CorpusError, match="a case of its own kind") as info:
            pool.result(pool.submit(_raise_corpus_error, "case/x.pb"))
        assert info.value.where == "case/x.pb"
        pids = _workers()
        assert len(pids) == 2
    assert _workers() == []
    assert all(map(_gone, pids))


def _busy_then_error() -> list[int]:
    with WorkerPool(2) as pool:
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


def test_a_worker_that_dies_running_a_task_is_a_lost_case_error() -> None:
    with WorkerPool(1) as pool, pytest.raises(CaseLostError, match=r"died \(SIGKILL\)"):
        pool.result(pool.submit(_kill_self))


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_workers_leave_ctrl_c_to_the_parent() -> None:
    with WorkerPool(1) as pool:
        task = pool.submit(time.sleep, 0.5)
        (pid,) = _workers()
        time.sleep(0.1)
        os.kill(pid, signal.SIGINT)
        assert pool.result(task) is None


def test_workers_die_with_their_parent_killed() -> None:
    """A parent killed (SIGKILL: no clean-up of its own) takes its workers with it; they
    do not stay behind waiting for work."""
    script = (
        "import os, signal\n"
        "from onnx_arrow.corpus.workers import WorkerPool\n"
        "pool = WorkerPool(2)\n"
        "print(*[w.process.pid for w in pool._workers], flush=True)\n"
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
    end = time.monotonic() + 10
    while not all(map(_gone, pids)) and time.monotonic() < end:
        time.sleep(0.05)
    assert all(map(_gone, pids)), [Path(f"/proc/{p}/cmdline").read_bytes() for p in pids]


def test_ctrl_c_while_finish_waits_for_room_in_the_queue_waits_for_the_writer(ctrl_c: None) -> None:
    """A Ctrl-C while ``finish`` waits to queue its end (a row group written, another
    queued) is raised only once the writer thread has left the file, and the queued row
    group is not written: the file is never closed under the writer's feet."""
    inside, left = threading.Event(), threading.Event()
    written: list[RowGroup] = []

    def write(group: RowGroup) -> None:
        inside.set()
        time.sleep(0.6)  # a row group being encoded, the GIL released
        written.append(group)
        left.set()

    background = BackgroundWriter(write)
    first, second = RowGroup(), RowGroup()
    background.write(first)
    assert inside.wait(10)
    background.write(second)  # the queue is full now: finish() waits for room
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        background.finish()
    timer.join()
    assert left.is_set()
    time.sleep(0.7)
    assert written == [first]


def test_a_second_ctrl_c_while_the_writing_is_abandoned_waits_too(ctrl_c: None) -> None:
    inside = threading.Event()
    written: list[RowGroup] = []

    def write(group: RowGroup) -> None:
        inside.set()
        time.sleep(0.6)
        written.append(group)

    background = BackgroundWriter(write)
    background.write(RowGroup())
    assert inside.wait(10)
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        background.abandon()  # the Ctrl-C is raised after, not in the middle
    timer.join()
    assert len(written) == 1

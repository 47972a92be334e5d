"""Worker processes of a store's parallel import and export: a pool of them, each taking
one task at a time over a pipe of its own, and how the pool ends, on Ctrl-C too.

A worker leaves Ctrl-C to the parent and dies with it (:mod:`onnx_arrow._interrupt`).
The parent stops its pool itself, whatever stopped it: every worker is told to end, or
killed, and waited for before the pool's block is left, so that no worker outlives the
call, none is left waiting for work, and none holds a file the call is abandoning.
There is no thread behind the pool (a pool thread stuck on a half-sent message is what
kept an interrupted process from exiting).
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing as mp
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from types import TracebackType
from typing import Any, Final

from onnx_arrow._interrupt import child_started, deferred_interrupt, forking
from onnx_arrow.errors import CaseLostError

__all__ = ["WorkerPool", "ending", "process_context"]


def ending(process: Any) -> str:
    """How a worker process ended, in words (``SIGSEGV``, ``exit status 1``), once it has
    ended (waited for up to 5 s)."""
    process.join(5)
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


#: Seconds a worker told to end may take before it is killed.
_END_WAIT: Final = 10.0


def process_context() -> BaseContext:
    """The start method of worker processes: fork where the platform has it, else spawn."""
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


@dataclass
class _Worker:
    process: Any  # a context's Process
    conn: Connection
    task: int | None = None  # the task it runs, if any


def _serve(
    conn: Connection,
    parent: int,
    initializer: Callable[..., None] | None,
    initargs: tuple[Any, ...],
) -> None:
    """A worker's loop: a task in, its result (or the exception it raised) out, until
    told to stop or the parent is gone."""
    child_started(parent)
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            item = conn.recv()
        except (EOFError, OSError):
            return
        if item is None:
            return
        func, args = item
        try:
            reply: tuple[bool, Any] = (True, func(*args))
        except BaseException as exc:  # handed over, raised in the parent
            reply = (False, exc)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # a result or an exception that does not pickle
            conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))


class WorkerPool:
    """``jobs`` worker processes, forked at once, for a ``with`` block.

    Tasks run in the order they are submitted (a task submitted ``first`` runs before
    those waiting); :meth:`result` waits for one.  Leaving the block normally ends the
    workers once they are idle; leaving it by an exception (an error, Ctrl-C) stops
    them at once, or, with ``grace``, gives the tasks running that many seconds to end
    (a task that writes files stops between two files) before killing them.  Either
    way every worker has ended when the block is left.  A worker that dies running a
    task makes :meth:`result` raise :class:`~onnx_arrow.errors.CaseLostError`.
    """

    def __init__(
        self,
        jobs: int,
        *,
        initializer: Callable[..., None] | None = None,
        initargs: tuple[Any, ...] = (),
        grace: float = 0.0,
    ) -> None:
        self._grace = grace
        self._workers: list[_Worker] = []
        self._waiting: collections.deque[tuple[int, Callable[..., Any], tuple[Any, ...]]] = (
            collections.deque()
        )
        self._done: dict[int, tuple[bool, Any]] = {}
        self._count = 0
        context = process_context()
        parent = os.getpid()
        try:
            with forking():  # a Ctrl-C meanwhile is raised once every worker is recorded
                for _ in range(max(jobs, 1)):
                    conn, child = context.Pipe()
                    process = context.Process(  # type: ignore[attr-defined]
                        target=_serve,
                        args=(child, parent, initializer, initargs),
                        name="onnx-arrow-worker",
                        daemon=True,
                    )
                    self._workers.append(_Worker(process, conn))
                    process.start()
                    child.close()
        except BaseException:
            self._stop(grace=0.0)
            raise

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self._end()
        else:
            self._stop(grace=self._grace)

    def submit(self, func: Callable[..., Any], *args: Any, first: bool = False) -> int:
        """Queue ``func(*args)`` for a worker; returns the task's number for :meth:`result`."""
        task = self._count
        self._count += 1
        item = (task, func, args)
        self._waiting.appendleft(item) if first else self._waiting.append(item)
        self._hand_out()
        return task

    def result(self, task: int) -> Any:
        """What the task returned, once it has run; raises what it raised."""
        while task not in self._done:
            busy = {w.conn: w for w in self._workers if w.task is not None}
            if not busy:
                raise ValueError(f"no task {task} is waiting or running")
            ends = {w.process.sentinel: w for w in busy.values()}
            for ready in wait([*busy, *ends]):
                worker = busy.get(ready) or ends[ready]  # type: ignore[call-overload]
                if worker.task is not None:
                    self._receive(worker)
            self._hand_out()
        ok, value = self._done.pop(task)
        if ok:
            return value
        raise value

    def _receive(self, worker: _Worker) -> None:
        assert worker.task is not None
        if not worker.conn.poll():
            if worker.process.is_alive():  # woken by its end, but its reply is coming
                return
            raise self._lost(worker)
        try:
            self._done[worker.task] = worker.conn.recv()
        except (EOFError, OSError):
            raise self._lost(worker) from None
        worker.task = None

    def _lost(self, worker: _Worker) -> CaseLostError:
        why = ending(worker.process)
        return CaseLostError(f"a worker process died ({why}) running its task; nothing was kept")

    def _hand_out(self) -> None:
        for worker in self._workers:
            if worker.task is None and self._waiting:
                task, func, args = self._waiting.popleft()
                worker.conn.send((func, args))
                worker.task = task

    def _end(self) -> None:
        """Tell every worker to end once idle, and wait for it; kill what is still running
        after a while (a task nobody asked the result of)."""
        self._stop(grace=_END_WAIT)

    def _stop(self, *, grace: float) -> None:
        """End every worker: each is told to end after its task, the tasks running get
        ``grace`` seconds (their replies read and dropped), then what is left is killed;
        all are waited for."""
        with deferred_interrupt():  # a second Ctrl-C does not cut the stopping short
            self._waiting.clear()
            for worker in self._workers:
                with contextlib.suppress(OSError):
                    worker.conn.send(None)
            deadline = time.monotonic() + grace
            running = [w for w in self._workers if w.process.is_alive()]
            while running and (left := deadline - time.monotonic()) > 0:
                conns = {w.conn: w for w in running if not w.conn.closed}
                ends = {w.process.sentinel: w for w in running}
                for ready in wait([*conns, *ends], timeout=left):
                    if ready in conns:
                        try:
                            conns[ready].conn.recv()  # a reply nobody waits for
                        except (EOFError, OSError):
                            conns[ready].conn.close()
                running = [w for w in running if w.process.is_alive()]
            for worker in running:
                worker.process.kill()
            for worker in self._workers:
                if worker.process.pid is not None:  # started
                    worker.process.join()
                if not worker.conn.closed:
                    worker.conn.close()
            self._workers.clear()

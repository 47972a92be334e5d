"""The worker processes of every parallel command (import, export, compare, run): a pool of
them, each taking one task at a time over a pipe of its own, what a worker's death or
silence costs, and how the pool ends, on Ctrl-C too.

* A worker that dies running a task (a crash in native code, the kernel's OOM killer)
  loses that task alone: its result is a :class:`TaskLost` (:meth:`Pool.result` raises
  it as a :class:`~onnx_arrow.errors.CaseLostError`) and the tasks after it go on, on
  the other workers and, with ``respawn``, on a worker forked in its place.
* With a ``timeout``, a worker that sends nothing for that many seconds while it runs a
  task (neither its result nor a :func:`heartbeat`) is killed and its task lost the same
  way: a task stuck in native code, which no signal inside the worker can stop.
* Fork-safety is handled here once: workers are forked (:func:`process_context`) with
  Ctrl-C held, so that none dies of one before it ignores it, and each starts by leaving
  Ctrl-C to the parent and tying its life to the parent's
  (:mod:`onnx_arrow._interrupt`).  A worker is forked in place of a lost one only where
  the caller asks (``respawn``): compare and run, whose backends may crash on one case,
  ask; import and export, which stop at their first lost task, fork once, at the start.
* The parent stops its pool itself, whatever stopped it: every worker is told to end,
  or killed, and waited for before the pool's block is left, so that no worker outlives
  the call, none is left waiting for work, and none holds a file the call is abandoning.
  A Ctrl-C while a message is sent or the pool is stopped is raised once that is done.
  There is no thread behind the pool (a pool thread stuck on a half-sent message is
  what kept an interrupted process from exiting).
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing as mp
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from types import TracebackType
from typing import Any, Final

from onnx_arrow._interrupt import child_started, deferred_interrupt, forking
from onnx_arrow.errors import CaseLostError

__all__ = [
    "WORKER_NAME",
    "Pool",
    "TaskLost",
    "ending",
    "heartbeat",
    "in_worker",
    "process_context",
]

#: Seconds the workers of a pool left normally may take to end before they are killed.
_END_WAIT: Final = 10.0
#: The name of every worker process (``multiprocessing.active_children()`` shows it).
WORKER_NAME: Final = "onnx-arrow-worker"


def process_context() -> BaseContext:
    """The start method of worker processes: fork where the platform has it, else spawn."""
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


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


@dataclass(frozen=True)
class TaskLost:
    """A task that gave no result because its worker was lost: it died (``ending`` says
    how, as ``SIGSEGV``), or it was stopped after ``silent`` seconds without a word, or
    no worker was left to run the task (``ending`` and ``silent`` both None)."""

    ending: str | None = None
    silent: float | None = None

    def message(self, unit: str = "task") -> str:
        """Why, in words, calling the task ``unit`` (a case, say)."""
        if self.ending is not None:
            return f"the worker process running the {unit} died ({self.ending})"
        if self.silent is not None:
            return (
                f"the worker process running the {unit} sent nothing for {self.silent:g} s "
                "(stuck outside Python); it was stopped"
            )
        return f"no worker process was left to run the {unit} (each died; none replaces them)"


# --- in a worker ------------------------------------------------------------------------

#: The pipe to the parent, in a worker process only.
_beat: list[Connection] = []


def heartbeat() -> None:
    """Tell the parent the worker is alive and starts a new step (a data set): the silence
    deadline of its task starts again.  Does nothing outside a worker process."""
    for conn in _beat:
        conn.send(("beat", None))


def in_worker() -> bool:
    """Whether this is a worker process of a :class:`Pool` (where no Ctrl-C arrives: a
    ``KeyboardInterrupt`` there was raised by the task's own code)."""
    return bool(_beat)


def _serve(
    conn: Connection,
    parent: int,
    initializer: Callable[..., None] | None,
    initargs: tuple[Any, ...],
) -> None:
    """A worker's loop: a task in, its result (or the exception it raised) out, until
    told to stop or the parent is gone.  An initializer that raises makes every task
    raise that.  The worker then ends at once (its output flushed): a thread its tasks
    started and left running (a backend's) does not keep it alive."""
    try:
        _loop(conn, parent, initializer, initargs)
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)


def _loop(
    conn: Connection,
    parent: int,
    initializer: Callable[..., None] | None,
    initargs: tuple[Any, ...],
) -> None:
    child_started(parent)
    _beat[:] = [conn]
    failed: BaseException | None = None
    if initializer is not None:
        try:
            initializer(*initargs)
        except Exception as exc:  # handed over with each task, raised in the parent
            failed = exc
    while True:
        try:
            item = conn.recv()
        except (EOFError, OSError):
            return
        if item is None:
            return
        func, args = item
        try:
            if failed is not None:
                raise failed
            reply: tuple[str, Any] = ("done", func(*args))
        except Exception as exc:  # handed over, raised in the parent
            reply = ("raised", exc)
        except BaseException as exc:  # sys.exit, a KeyboardInterrupt the task raised itself
            # (no Ctrl-C reaches a worker): the task's error, never the parent's exit
            reply = ("raised", CaseLostError(f"the task raised {type(exc).__name__}({exc})"))
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # a result or an exception that does not pickle
            conn.send(("raised", RuntimeError(f"{type(exc).__name__}: {exc}")))


# --- in the parent ----------------------------------------------------------------------


@dataclass
class _Worker:
    process: Any  # a context's Process
    conn: Connection
    task: int | None = None  # the task it runs, if any
    since: float = 0.0  # when it last said something while running it


class Pool:
    """``jobs`` worker processes, forked at once, for a ``with`` block.

    Tasks run in the order they are submitted (a task submitted ``first`` runs before
    those waiting).  :meth:`result` waits for one task; :meth:`completed` gives every
    task's result as it completes.  A task's worker lost (it died, or sent nothing for
    ``timeout`` seconds) loses that task alone; with ``respawn`` a new worker takes its
    place, else the pool goes on with the others.  ``initializer(*initargs)`` runs first
    in every worker (forked, they are not pickled).

    Leaving the block normally ends the workers once they are idle; leaving it by an
    exception (an error, Ctrl-C) stops them at once, or, with ``grace``, gives the tasks
    running that many seconds to end (a task that writes files stops between two files)
    before killing them.  Either way every worker has ended when the block is left.
    """

    def __init__(
        self,
        jobs: int,
        *,
        initializer: Callable[..., None] | None = None,
        initargs: tuple[Any, ...] = (),
        respawn: bool = False,
        timeout: float | None = None,
        grace: float = 0.0,
    ) -> None:
        self._start_args = (initializer, initargs)
        self._respawn, self._timeout, self._grace = respawn, timeout, grace
        self._context = process_context()
        self._workers: list[_Worker] = []
        self._waiting: collections.deque[tuple[int, Callable[..., Any], tuple[Any, ...]]] = (
            collections.deque()
        )
        self._done: dict[int, tuple[str, Any]] = {}  # in the order the tasks completed
        self._count = 0
        try:
            for _ in range(max(jobs, 1)):
                self._workers.append(self._fork())
        except BaseException:
            self._stop(grace=0.0)
            raise

    def _fork(self) -> _Worker:
        conn, child = self._context.Pipe()
        process = self._context.Process(  # type: ignore[attr-defined]
            target=_serve,
            args=(child, os.getpid(), *self._start_args),
            name=WORKER_NAME,
            daemon=True,
        )
        try:
            with forking():  # a Ctrl-C meanwhile is raised once the worker is recorded
                process.start()
        except BaseException:
            if process.pid is not None:
                process.kill()
                process.join()
            conn.close()
            raise
        finally:
            child.close()
        return _Worker(process, conn)

    def __enter__(self) -> Pool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop(grace=_END_WAIT if exc is None else self._grace)

    @property
    def pids(self) -> list[int]:
        """The process ids of the workers now."""
        return [w.process.pid for w in self._workers]

    def submit(self, func: Callable[..., Any], *args: Any, first: bool = False) -> int:
        """Queue ``func(*args)`` for a worker; returns the task's number for :meth:`result`."""
        task = self._count
        self._count += 1
        item = (task, func, args)
        self._waiting.appendleft(item) if first else self._waiting.append(item)
        self._hand_out()
        return task

    def result(self, task: int) -> Any:
        """What the task returned, once it has run; raises what it raised, or a
        :class:`~onnx_arrow.errors.CaseLostError` if its worker was lost."""
        while task not in self._done:
            if not self._step():
                raise ValueError(f"no task {task} is waiting or running")
        kind, value = self._done.pop(task)
        if kind == "raised":
            raise value
        if kind == "lost":
            raise CaseLostError(f"{value.message()}; nothing was kept")
        return value

    def completed(self) -> Iterator[tuple[int, Any]]:
        """``(task, what it returned)`` for every task submitted, as each completes, until
        none is waiting or running; a task whose worker was lost gives a :class:`TaskLost`.
        What a task raised is raised here."""
        while self._done or self._step():
            while self._done:
                task = next(iter(self._done))
                kind, value = self._done.pop(task)
                if kind == "raised":
                    raise value
                yield task, value

    # --- the parent's loop ---------------------------------------------------------------

    def _step(self) -> bool:
        """Wait until a worker says something or ends, or a silence deadline passes, and
        take it in; False if no task is waiting or running."""
        self._hand_out()
        busy = {w.conn: w for w in self._workers if w.task is not None}
        if not busy:
            if not self._waiting:
                return False
            while self._waiting:  # no worker is left to run them
                self._done[self._waiting.popleft()[0]] = ("lost", TaskLost())
            return True
        ends = {w.process.sentinel: w for w in busy.values()}
        limit = None
        if self._timeout is not None:
            soonest = min(w.since for w in busy.values()) + self._timeout
            limit = max(0.0, soonest - time.monotonic())
        for ready in wait([*busy, *ends], timeout=limit):
            worker = busy.get(ready) or ends[ready]  # type: ignore[call-overload]
            if worker.task is not None:
                self._receive(worker)
        if self._timeout is not None:
            now = time.monotonic()
            for worker in list(self._workers):
                if worker.task is not None and now - worker.since >= self._timeout:
                    worker.process.kill()
                    self._lose(worker, TaskLost(silent=self._timeout))
        self._hand_out()
        return True

    def _receive(self, worker: _Worker) -> None:
        """Read what ``worker`` sent (heartbeats, its task's result); a worker whose pipe
        or process ended without a result has lost its task."""
        while worker.task is not None and worker.conn.poll():
            try:
                with deferred_interrupt():  # a message is read whole
                    kind, payload = worker.conn.recv()
            except (EOFError, OSError):  # it can no longer answer
                self._lose(worker, TaskLost(ending=ending(worker.process)))
                return
            except Exception as exc:  # a reply read whole that does not unpickle here
                kind, payload = "raised", exc
            if kind == "beat":
                worker.since = time.monotonic()
                continue
            self._done[worker.task] = (kind, payload)
            worker.task = None
        if worker.task is not None and not worker.process.is_alive():
            self._lose(worker, TaskLost(ending=ending(worker.process)))

    def _lose(self, worker: _Worker, lost: TaskLost) -> None:
        """``worker`` is lost with its task (if any): it is waited for, and replaced with
        ``respawn``."""
        if worker.task is not None:
            self._done[worker.task] = ("lost", lost)
            worker.task = None
        i = self._workers.index(worker)
        self._end_one(worker)
        if self._respawn:
            self._workers[i] = self._fork()
        else:
            del self._workers[i]

    def _end_one(self, worker: _Worker) -> None:
        with deferred_interrupt():
            if worker.process.is_alive():
                worker.process.kill()
            worker.process.join()
            worker.conn.close()

    def _hand_out(self) -> None:
        """Give each idle worker the next task waiting."""
        while self._waiting:
            idle = next((w for w in self._workers if w.task is None), None)
            if idle is None:
                return
            task, func, args = self._waiting.popleft()
            try:
                with deferred_interrupt():  # a message is sent whole
                    idle.conn.send((func, args))
            except OSError:  # a worker that died between tasks: the task waits on
                self._waiting.appendleft((task, func, args))
                self._lose(idle, TaskLost())
                continue
            except Exception as exc:  # a task that does not pickle (nothing was sent)
                self._done[task] = ("raised", exc)
                continue
            idle.task, idle.since = task, time.monotonic()

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
                        except Exception:  # the pipe's end, or a reply that cannot be read
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

"""Ctrl-C and the work it stops: child processes that leave it to their parent and never
outlive it, and blocks of work it does not cut in two.

A terminal's Ctrl-C is a SIGINT to every process of the foreground group: the parent
and the worker processes it forked.  A worker must not die of it mid-task, nor stay
behind when its parent is gone, whatever the parent died of:

* :func:`forking` holds Ctrl-C while children are forked, so that a child starts with
  it blocked; :func:`child_started`, the first thing a child runs, ignores it, unblocks
  it and ties the child's life to its parent's (``PR_SET_PDEATHSIG`` on Linux, a
  thread watching the parent elsewhere).
* :func:`deferred_interrupt` runs a block whole: a Ctrl-C that comes meanwhile is raised
  once the block has ended (a row group being written, a pool being started or stopped).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Final

__all__ = ["child_started", "deferred_interrupt", "forking"]

#: ``prctl`` option: the signal the kernel sends a process when its parent ends.
_PR_SET_PDEATHSIG: Final = 1


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def forking() -> Iterator[None]:
    """Fork children in this block: they start with Ctrl-C blocked, so that none dies of
    one before :func:`child_started` ignores it; here, a Ctrl-C that came meanwhile is
    raised at the end of the block (a child forked is never left unrecorded)."""
    holds = hasattr(signal, "pthread_sigmask")
    with deferred_interrupt():
        if holds:
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            if holds and signal.SIGINT not in blocked:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def child_started(parent: int) -> None:
    """In a child process of ``parent``, first thing: Ctrl-C is the parent's to handle (it
    stops what it handed out), and the child ends when the parent does, even killed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if not _die_with_parent():
        threading.Thread(
            target=_watch_parent, args=(parent,), name="onnx-arrow-parent", daemon=True
        ).start()
    if os.getppid() != parent:  # it ended before the child was tied to it
        os._exit(1)


def _die_with_parent() -> bool:
    """Ask the kernel to kill this process when its parent ends; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


@contextlib.contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Run the block whole: a Ctrl-C that comes meanwhile is raised when it ends.

    Only the main thread is interrupted, and only through a Python handler (not where
    SIGINT is ignored or left to the system): elsewhere the block runs as it is.
    """
    previous = signal.getsignal(signal.SIGINT) if _in_main_thread() else None
    if not callable(previous):
        yield
        return
    came: list[FrameType | None] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        came.append(frame)

    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if came:  # the handler of before decides: KeyboardInterrupt, as a rule
            previous(signal.SIGINT, came[-1])

"""Deadlines: a backend that runs longer than the timeout on one data set is stopped with
a :class:`~onnx_arrow.errors.BackendTimeoutError`, by ``SIGALRM`` in the main thread and
by an exception set on the thread elsewhere (a Dask worker's thread)."""

from __future__ import annotations

import contextlib
import ctypes
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Final

from onnx_arrow.errors import BackendTimeoutError, CompareError

__all__ = ["MAX_TIMEOUT", "check_timeout", "deadline"]


#: The longest timeout of one data set, in seconds (a week): a finite range, which the
#: timers that keep it (``setitimer``, a thread's ``Timer``) can all hold.
MAX_TIMEOUT: Final = 7 * 24 * 3600


def check_timeout(timeout: float | None) -> None:
    """Refuse a timeout that is not a number of seconds above 0 and at most
    :data:`MAX_TIMEOUT`, or one this system cannot keep (no ``SIGALRM``), before any
    work; None is no limit."""
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise CompareError(
            f"timeout is a {type(timeout).__name__}; give a number of seconds, or None"
        )
    if not 0 < timeout <= MAX_TIMEOUT:
        raise CompareError(
            f"timeout is {timeout}; give a number of seconds above 0 and at most "
            f"{MAX_TIMEOUT} (a week), or no limit (None; --timeout 0)"
        )
    if not hasattr(signal, "setitimer"):
        raise CompareError("a timeout needs a POSIX system (SIGALRM); pass None")


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`BackendTimeoutError` in the block after ``seconds``: by ``SIGALRM`` in
    the main thread, else (a Dask worker's thread) by an exception set on the thread.
    Either lands only once the backend runs Python code again."""
    if seconds is None:
        yield
        return
    if threading.current_thread() is not threading.main_thread():
        with _thread_deadline(seconds):
            yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise BackendTimeoutError(f"the backend ran longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _ThreadTimeout(Exception):
    """Raised in a thread past its deadline: set by class, so without a message, and
    turned into a :class:`BackendTimeoutError` where the block ends."""


@contextlib.contextmanager
def _thread_deadline(seconds: float) -> Iterator[None]:
    ident = threading.get_ident()
    lock = threading.Lock()
    inside = [True]

    def expire() -> None:
        with lock:
            if inside[0]:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(ident), ctypes.py_object(_ThreadTimeout)
                )

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except _ThreadTimeout:
        raise BackendTimeoutError(f"the backend ran longer than {seconds:g} s") from None
    finally:
        with lock:
            inside[0] = False
        timer.cancel()

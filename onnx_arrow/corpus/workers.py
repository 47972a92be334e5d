"""Worker processes of a store's parallel import and export: how they are started, and
how Ctrl-C reaches them (the parent handles it; a worker never dies mid-task)."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import signal
import threading
from collections.abc import Iterator
from multiprocessing.context import BaseContext

__all__ = ["held_interrupt", "no_interrupt", "process_context"]


def process_context() -> BaseContext:
    """The start method of worker processes: fork where the platform has it, else spawn."""
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


def no_interrupt() -> None:
    """In a worker: Ctrl-C (sent to the whole process group) is the parent's to handle;
    it stops handing out work and waits for what runs, so a worker never dies mid-task.
    A Ctrl-C held since the fork (:func:`held_interrupt`) is dropped here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def held_interrupt() -> Iterator[None]:
    """Hold Ctrl-C while workers are forked: a child starts with it blocked, so it cannot
    die of one before :func:`no_interrupt` runs (its pool would then never finish
    shutting down); in this process a Ctrl-C that came meanwhile is raised on the way out."""
    holds = (
        hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    )
    if holds:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if holds:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

"""A Ctrl-C ends the command line with one line and exit status 130, whenever it comes:
at once while it starts and after its work, by unwinding (and cleaning up) during it.

Importing onnx and ml_dtypes takes the first second or so of every ``onnx-arrow``
command that runs (``--help`` and a usage error import neither; a command imports them
once its arguments have parsed).  Python's own handler turns a Ctrl-C there into a
``KeyboardInterrupt`` traceback from deep inside one of them.  When the process was
started as the command line (the ``onnx-arrow`` script, ``python -m onnx_arrow``),
importing this module, the first thing the package does, installs a handler that
prints ``onnx-arrow: interrupted`` and exits with status 130 at once instead.  The
command line hands Ctrl-C to its work as the work starts (:func:`work_starts`): from
then on it raises ``KeyboardInterrupt``, which unwinds and cleans up, and is recorded
(:func:`interrupted`), so that one swallowed on the way (in a finalizer) still ends the
command as interrupted.  Once the work has ended (:func:`work_ended`) the handler of
the start is back: a Ctrl-C while the process exits exits 130 at once, with nothing
left to clean up; and the process ends with its exit status right after the last
``atexit`` function, without the interpreter's own teardown, during which Python's
handlers are gone and a Ctrl-C would kill it (status -2).  Imported as a library, this
module changes nothing.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from types import FrameType

__all__ = ["interrupted", "work_ended", "work_starts"]

_SCRIPT_NAMES = frozenset({"onnx-arrow", "onnx-arrow.exe"})
_MODULES = frozenset({"onnx_arrow", "onnx_arrow.cli", "onnx_arrow.__main__"})

#: Whether this process is the command line and its Ctrl-C is this module's to handle.
_handling: list[bool] = [False]
#: Set once a Ctrl-C came during the work.
_came = threading.Event()
#: The exit status the command ended with, once it has.
_status: list[int | None] = [None]


def _started_as_command_line() -> bool:
    argv = list(getattr(sys, "orig_argv", ()))
    if "-m" in argv:
        return argv[argv.index("-m") + 1 : argv.index("-m") + 2] in ([m] for m in _MODULES)
    return os.path.basename(sys.argv[0]) in _SCRIPT_NAMES if sys.argv else False


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    # nothing is being written before the command starts nor after it ends, so nothing
    # needs cleaning up; an exception would wait for the extension being initialised
    # (ml_dtypes: a second), or be swallowed by the interpreter's shutdown
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    sys.stderr.write("onnx-arrow: interrupted\n")
    sys.stderr.flush()
    os._exit(128 + signal.SIGINT)


def _raise(signum: int, frame: FrameType | None) -> None:
    _came.set()
    raise KeyboardInterrupt


def work_starts() -> None:
    """From now on a Ctrl-C raises ``KeyboardInterrupt`` (and is recorded), so that the
    command's work unwinds and cleans up."""
    if _handling[0]:
        signal.signal(signal.SIGINT, _raise)


def interrupted() -> bool:
    """Whether a Ctrl-C came since the work started (command line only)."""
    return _came.is_set()


def work_ended(status: int | None = None) -> None:
    """From now on a Ctrl-C exits 130 at once: the work has cleaned up (what it printed is
    flushed first).  With ``status``, the command has ended: the process exits with it
    once the ``atexit`` functions have run."""
    if _handling[0]:
        signal.signal(signal.SIGINT, _exit_at_once)
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        if status is not None:
            _status[0] = status


def _exit_after_the_command() -> None:
    """Registered first, so run last of the ``atexit`` functions: the command's status, at
    once, while a Ctrl-C is still this module's to handle."""
    if _status[0] is not None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(_status[0])


if (
    threading.current_thread() is threading.main_thread()
    and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    and _started_as_command_line()
):
    _handling[0] = True
    signal.signal(signal.SIGINT, _exit_at_once)
    atexit.register(_exit_after_the_command)
